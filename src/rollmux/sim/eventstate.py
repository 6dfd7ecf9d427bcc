"""The event model's state: one object per admitted job and per node (rollmux.sim.eventmodel).

Two small slotted classes, :class:`_Job` and :class:`_Node`, reference each other
directly (a job holds its nodes, a node its cyclic order of jobs), so the event model's
hot path does no dictionary lookup; the job states and the resumption of a phase carried
over a move are here too. Private to the event model, which imports them.
"""

from __future__ import annotations

import math

from rollmux.phases import Tail
from rollmux.sim.progress import PhaseDraws
from rollmux.sim.records import POOL_CODES

__all__: list[str] = []

# Job states.
_OUT, _WANTS_ROLLOUT, _WANTS_TRAIN, _ROLLING, _TRAINING = -1, 0, 1, 2, 3

_ROLLOUT_POOL = POOL_CODES["rollout"]


class _Node:
    """One node: its cyclic order of jobs, where the order stands, and who holds it.

    ``order[k]`` is a job and ``occurrence[k]`` which of that job's appearances in the
    order slot ``k`` is (0 for its first); the node serves slot ``pos`` of round
    ``round`` next. ``holder``: the job whose phase holds the node (None: free);
    ``shared``: the node hosts more than one job; ``tails``: migrated tails holding a
    share of its GPUs, (end time, share) (ended ones are dropped lazily); ``queue``: the
    co-located (time-sliced) jobs waiting for it, first come first served.
    """

    __slots__ = ("holder", "occurrence", "order", "pool", "pos", "queue", "round", "serial",
                 "shared", "tails")

    def __init__(self, serial: int, pool: int) -> None:
        """An empty node of ``pool`` (0 rollout, 1 training)."""
        self.serial = serial
        self.pool = pool
        self.order: list[_Job] = []
        self.occurrence: list[int] = []
        self.pos = 0
        self.round = 0
        self.holder: _Job | None = None
        self.shared = False
        self.tails: list[Tail] = []
        self.queue: list[_Job] = []


class _Job:
    """One admitted job: where it stands, its nodes, its phase constants and draws.

    ``round``/``occurrence``: the round of its nodes' orders it is in and which of its
    ``multiplicity`` appearances per round it runs next. ``start_s``/``switch_s``/
    ``work_s``: the running phase; ``next_train_s``: the training time of the current
    iteration (drawn with its rollout); ``tail_s``/``tail_gpus``: the current rollout's
    migrated tail, running from ``tail_start_s`` to ``tail_end_s`` once it started (0
    GPUs: no tail running; ``tail_layout``: its rows); ``tail_placements``: per tail size,
    its row layout and the share of each node it holds (built once per size).
    """

    __slots__ = (
        "busy_rollout_gpu_s",
        "busy_train_gpu_s",
        "carry",
        "carry_from",
        "carry_stamp",
        "cold_left",
        "cold_phase_switch_s",
        "cold_switch_s",
        "coloc_ratio",
        "colocated",
        "draws",
        "epoch",
        "expected_rollout_s",
        "expected_train_s",
        "handover_s",
        "holding",
        "index",
        "iteration",
        "iteration_above",
        "iteration_k",
        "iteration_limit_s",
        "iteration_start_s",
        "multiplicity",
        "next_train_s",
        "nodes",
        "occurrence",
        "ready_s",
        "rolled",
        "rolling_k",
        "rollout_gpus",
        "rollout_gpus_per_node",
        "rollout_layout",
        "rollout_nodes",
        "rollout_switch_s",
        "round",
        "stale_roll_start_s",
        "staleness",
        "start_s",
        "state",
        "switch_s",
        "sync_s",
        "tail_end_s",
        "tail_gpus",
        "tail_layout",
        "tail_placements",
        "tail_s",
        "tail_start_s",
        "target",
        "train_gpus",
        "train_layout",
        "train_nodes",
        "train_start_s",
        "train_switch_s",
        "warm_switch_s",
        "work_s",
    )

    def __init__(self, index: int) -> None:
        """A job that was never admitted (``add_job`` sets its fields)."""
        self.index = index
        self.epoch = 0  # incremented at each removal: its pending events become stale
        self.state = _OUT
        self.iteration = 0
        self.target = 0
        self.round = 0
        self.occurrence = 0
        self.multiplicity = 1
        self.ready_s = 0.0
        self.holding = False
        self.draws: PhaseDraws | None = None
        self.cold_left: set[int] = set()
        self.nodes: tuple[_Node, ...] = ()
        self.rollout_nodes: tuple[_Node, ...] = ()
        self.train_nodes: tuple[_Node, ...] = ()
        self.colocated = False
        self.warm_switch_s = 0.0
        self.cold_switch_s = 0.0
        self.cold_phase_switch_s = 0.0
        self.rollout_switch_s = 0.0
        self.train_switch_s = 0.0
        self.sync_s = 0.0
        self.coloc_ratio = 1.0
        self.handover_s = 0.0
        # Asynchronous jobs (staleness > 0): rollouts completed, the running rollout's
        # iteration (-1: none) and start, the running training's start.
        self.staleness = 0
        self.rolled = 0
        self.rolling_k = -1
        self.stale_roll_start_s = 0.0
        self.train_start_s = -1.0
        self.expected_rollout_s = 0.0
        self.expected_train_s = 0.0
        self.rollout_layout = -1
        self.train_layout = -1
        self.rollout_gpus = 0
        self.train_gpus = 0
        self.start_s = 0.0
        self.switch_s = 0.0
        self.work_s = 0.0
        self.next_train_s = 0.0
        self.rollout_gpus_per_node: tuple[int, ...] = ()
        self.tail_s = 0.0
        self.tail_gpus = 0
        self.tail_start_s = 0.0
        self.tail_end_s = 0.0
        self.tail_layout = -1
        self.tail_placements: dict[int, tuple[int, tuple[tuple[_Node, float], ...]]] = {}
        self.busy_rollout_gpu_s = 0.0
        self.busy_train_gpu_s = 0.0
        # A free move's carried phase: the share of its next phase already done, and of
        # the running phase that started from a carried share, the share and which
        # (iteration, state) it belongs to.
        self.carry = 0.0
        self.carry_from = 0.0
        self.carry_stamp = (-1, _OUT)
        # The per-iteration tail: the iteration whose first rollout started last
        # (-1: none) and when, the job's SLO x T_solo and its iterations above it.
        self.iteration_k = -1
        self.iteration_start_s = 0.0
        self.iteration_limit_s = math.inf
        self.iteration_above = 0

    def next_key(self, pool: int) -> tuple[int, int]:
        """(round, occurrence) of the job's next phase on a node of ``pool``."""
        r, o = self.round, self.occurrence
        st = self.state
        if st < 0:
            return r, o
        ahead = st != _WANTS_ROLLOUT if pool == _ROLLOUT_POOL else st == _TRAINING
        if not ahead:
            return r, o
        o += 1
        return (r + 1, 0) if o == self.multiplicity else (r, o)


def _resume_rollout(job: _Job, roll_s: float, node_s: float) -> tuple[float, float]:
    """The rest of a rollout resumed with ``job.carry`` of it done: (rollout, node) times.

    The node time is cut by the work done; a rollout carried past its node time (in its
    migrated tail) runs the rest on the job's nodes.
    """
    share = job.carry
    job.carry = 0.0
    job.carry_from = share
    job.carry_stamp = (job.iteration, _ROLLING)
    rest_s = roll_s * (1.0 - share)
    node_rest_s = node_s - roll_s * share
    return rest_s, node_rest_s if node_rest_s > 0.0 else rest_s


def _resume_train(job: _Job, train_s: float, sync_s: float) -> tuple[float, float]:
    """The rest of a training (then sync) resumed with ``job.carry`` of it done."""
    share = job.carry
    job.carry = 0.0
    job.carry_from = share
    job.carry_stamp = (job.iteration, _TRAINING)
    done_s = (train_s + sync_s) * share
    return max(0.0, train_s - done_s), sync_s - max(0.0, done_s - train_s)
