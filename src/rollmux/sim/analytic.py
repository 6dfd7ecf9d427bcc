"""The fast analytical replay path and the expected phase times both paths share.

Between cluster events (arrivals, completions, kills, resubmissions, regroupings) each
group progresses at its exact steady-state rate: the group's node orders (round robin, or
the orders a policy planned, where job j appears ``m_j`` times) run cycles of period
``P``, the max-plus period of their timed event graph with expected phase times
(docs/model.md), and job j advances ``m_j / P`` iterations per second
(:mod:`rollmux.phases`, "Order"). Jobs advance by fractional iterations; a job completes
when its remaining iterations run out. A group with a paused member (migration after a
regrouping, cold restart) does not progress until every member is ready (its orders wait
for it).

Effective phases and the period are the group model's
(:func:`rollmux.model.group.member_phases_s`, :func:`rollmux.model.group.cycle`), as for
placement's group metrics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from rollmux.hardware import Hardware
from rollmux.model.group import cycle, member_phases_s
from rollmux.phases import DeadlockError, switch_paid, switch_s
from rollmux.phasetimes import PhaseTimes
from rollmux.sim.records import PHASE_RECORD_COLUMNS

__all__ = [
    "AnalyticModel",
    "InFlight",
    "JobRuntime",
    "colocation_ratio",
    "effective_phases_s",
    "group_cycle",
    "group_period_s",
]


@dataclass(frozen=True, slots=True)
class JobRuntime:
    """What both replay paths need of an admitted job (built once at admission).

    ``rollout_nodes``/``train_nodes`` are node serials (for a co-located job its rollout
    runs on its training nodes); ``sync_s`` the sync of the chosen mode; ``coloc_ratio``
    the factor turning its rollout time into rollout time on its training GPUs;
    ``rollout_gpus_per_node``/``train_gpus_per_node`` the job's GPUs on each pinned node;
    ``staleness`` how many iterations its rollout may run ahead of its training (0:
    synchronous; docs/designs.md); ``handover_s`` the snapshot a co-located phase pays at
    its end when its nodes host another job (a time-sliced hand-over, docs/designs.md).
    ``iteration_limit_s``: the job's ``SLO x T_solo`` (the event model counts its
    iterations that take longer; ``inf``: none counted).
    """

    index: int
    group_id: str
    colocated: bool
    times: PhaseTimes
    sync_s: float
    coloc_ratio: float
    rollout_nodes: tuple[int, ...]
    train_nodes: tuple[int, ...]
    rollout_gpus: int
    train_gpus: int
    rollout_gpus_per_node: tuple[int, ...]
    train_gpus_per_node: tuple[int, ...]
    staleness: int = 0
    handover_s: float = 0.0
    iteration_limit_s: float = math.inf


class InFlight(NamedTuple):
    """A job's unfinished iteration as it leaves its nodes: what a free move carries.

    ``phase``: "rollout" (running) or "train" (running, or next once the rollout is
    complete); ``done``: the share of that phase's work already done, in [0, 1].
    """

    phase: str
    done: float


def _rollout_share(rt: JobRuntime) -> float:
    """The rollout's share of the job's solo iteration work (rollout, train + sync)."""
    times = rt.times
    rollout = times.rollout_s * (rt.coloc_ratio if rt.colocated else 1.0)
    train = times.train_s + (0.0 if rt.colocated else rt.sync_s)
    return rollout / (rollout + train) if rollout + train > 0 else 0.0


def colocation_ratio(hw: Hardware, rollout_gpu_type: str, rollout_gpus: int,
                     train_gpu_type: str, train_gpus: int) -> float:
    """Rollout time on the training GPUs over rollout time on the rollout GPUs.

    Decode is HBM-bandwidth bound, so the time scales with the aggregate bandwidth, over the
    co-located speed-up ``perf.colocated_rollout_speedup`` (fit ``production_mix``), as in
    :func:`rollmux.closedform.colocated_rollout_s`.
    """
    rollout_bw = rollout_gpus * hw.gpu(rollout_gpu_type).hbm_bw_gbps
    train_bw = train_gpus * hw.gpu(train_gpu_type).hbm_bw_gbps
    return rollout_bw / train_bw / hw.perf.colocated_rollout_speedup


def gpus_per_node(total: int, nodes: int, gpus_per_node_max: int) -> tuple[int, ...]:
    """How ``total`` GPUs spread over ``nodes`` nodes filled in turn (at least one each)."""
    out = []
    left = total
    for _k in range(nodes):
        here = max(1, min(gpus_per_node_max, left))
        out.append(here)
        left -= here
    return tuple(out)


def effective_phases_s(
    members: Sequence[JobRuntime], shared: set[int]
) -> tuple[list[float], list[float]]:
    """Expected effective (rollout, training) durations of a group's members.

    ``shared`` holds the serials of nodes that host more than one member; each member's
    phases are :func:`rollmux.model.group.member_phases_s`.
    """
    rollout, train = [], []
    for m in members:
        r, t = member_phases_s(
            m.times, m.sync_s, colocated=m.colocated, coloc_ratio=m.coloc_ratio,
            rollout_shared=any(n in shared for n in m.rollout_nodes),
            train_shared=any(n in shared for n in m.train_nodes), handover_s=m.handover_s)
        rollout.append(r)
        train.append(t)
    return rollout, train


def _nodes(rt: JobRuntime) -> tuple[int, ...]:
    """Serials of every node a job runs on (a co-located job: its training nodes)."""
    return tuple(dict.fromkeys((*rt.rollout_nodes, *rt.train_nodes)))


def shared_nodes(members: Sequence[JobRuntime]) -> set[int]:
    """Serials of the nodes that host more than one of ``members``."""
    seen: set[int] = set()
    shared: set[int] = set()
    for m in members:
        for n in (*m.rollout_nodes, *m.train_nodes) if not m.colocated else m.train_nodes:
            if n in seen:
                shared.add(n)
            seen.add(n)
    return shared


def group_period_s(
    members: Sequence[JobRuntime],
    node_orders: Mapping[int, Sequence[int]] | None = None,
) -> float:
    """Exact steady-state period (s) of a group's cycle with expected phase times.

    ``node_orders`` maps each node serial of the members to its cyclic order of member
    indices (into ``members``; a member may appear several times); default: the members'
    order on every node (round robin). ValueError on orders that break the rules of
    :func:`rollmux.phases.order_multiplicities`.
    """
    return group_cycle(members, node_orders)[0]


def group_cycle(
    members: Sequence[JobRuntime],
    node_orders: Mapping[int, Sequence[int]] | None = None,
    shared: set[int] | None = None,
) -> tuple[float, list[int]]:
    """The period (s) of a group's cycle and each member's multiplicity (iterations per cycle).

    As :func:`group_period_s`; ``shared``: serials of the nodes whose switch the members pay
    (default: those hosting more than one member). ``inf`` when the orders deadlock.
    """
    if not members:
        raise ValueError("members must hold at least one job")
    rollout, train = effective_phases_s(members, shared_nodes(members) if shared is None
                                        else shared)
    n = len(members)
    if all(m.colocated for m in members):
        if len({frozenset(m.train_nodes) for m in members}) > 1:
            raise ValueError("co-located members of one group must hold the same nodes")
        # veRL alone, or a time slice: every member holds the same nodes for both phases,
        # one phase at a time (docs/designs.md), so a cycle serves every phase once.
        return sum(rollout) + sum(train), [1] * n
    if n == 1 and members[0].staleness > 0:
        # Asynchronous: the rollout of the next iterations overlaps this training.
        return max(rollout[0], train[0]), [1]
    return cycle(rollout, train, [m.rollout_nodes for m in members],
                 [m.train_nodes for m in members], node_orders)


def _iteration_share(rt: JobRuntime, in_flight: InFlight | None) -> float:
    """The share of an iteration ``in_flight`` stands for (rollout first, then train)."""
    if in_flight is None:
        return 0.0
    rho = _rollout_share(rt)
    if in_flight.phase == "rollout":
        return rho * in_flight.done
    return rho + (1.0 - rho) * in_flight.done


class AnalyticModel:
    """Fluid progress: job j of a group advances at ``m_j / P`` between cluster events."""

    def __init__(self) -> None:
        """Start with no job."""
        self.events = 0  # no phase events on this path
        self.loop_s = 0.0
        self.now = 0.0
        self.runtime: dict[int, JobRuntime] = {}
        self.done: dict[int, float] = {}  # fractional iterations done
        self.target: dict[int, int] = {}
        self.ready_s: dict[int, float] = {}
        self.groups: dict[str, list[int]] = {}
        # Per group, node serial -> cyclic order of job indices; None: round robin in the
        # order the members joined.
        self.orders: dict[str, dict[int, list[int]] | None] = {}
        self.period: dict[str, float] = {}
        self.iteration_s: dict[int, float] = {}  # P / m_j: seconds per iteration
        self.finished: set[int] = set()  # completions reported, jobs not yet removed
        self.busy: dict[int, list[float]] = {}

    # ------------------------------------------------------------------ membership

    def add_job(self, rt: JobRuntime, t: float, done: int, target: int, ready_s: float,
                resident: bool, draws: object = None, in_flight: InFlight | None = None
                ) -> None:
        """Admit a job into its group at time ``t`` (cold restart when not ``resident``).

        It takes the last place of each of its nodes' orders. ``draws`` is ignored: this
        path runs on the expected phase times. ``in_flight``: the unfinished iteration it
        resumes (a share of an iteration here).
        """
        del draws
        self._advance(t)
        i = rt.index
        self.runtime[i] = rt
        self.done[i] = float(done) + _iteration_share(rt, in_flight)
        self.target[i] = target
        pause = ready_s - t
        if not resident:
            # First phase on each pool reloads state from disk: a cold switch each.
            pause += 2.0 * switch_s(switch_paid(True, rt.colocated, False),
                                    rt.times.warm_switch_s, rt.times.cold_switch_s)
        self.ready_s[i] = t + max(0.0, pause)
        self.busy.setdefault(i, [0.0, 0.0])
        self.finished.discard(i)
        self.groups.setdefault(rt.group_id, []).append(i)
        orders = self.orders.setdefault(rt.group_id, None)
        if orders is not None:
            for n in _nodes(rt):
                orders.setdefault(n, []).append(i)
        self._refresh(rt.group_id)

    def in_flight(self, i: int, t: float) -> InFlight | None:
        """Job ``i``'s unfinished iteration at ``t`` (None: none begun)."""
        self._advance(t)
        share = self.done[i] - math.floor(self.done[i] + 1e-9)
        if share <= 1e-9:
            return None
        rho = _rollout_share(self.runtime[i])
        if share < rho:
            return InFlight("rollout", share / rho)
        return InFlight("train", (share - rho) / (1.0 - rho) if rho < 1.0 else 1.0)

    def remove_job(self, i: int, t: float) -> int:
        """Take a job out at ``t``; returns its whole iterations done (progress kept)."""
        self._advance(t)
        rt = self.runtime.pop(i)
        members = self.groups[rt.group_id]
        members.remove(i)
        done = self.done.pop(i)
        self.target.pop(i)
        self.ready_s.pop(i)
        self.iteration_s.pop(i, None)
        self.finished.discard(i)
        # A partial iteration is lost: its useful work stays in the busy time, the job
        # resumes from its last whole iteration.
        whole = math.floor(done + 1e-9)
        orders = self.orders.get(rt.group_id)
        if orders is not None:
            for n in _nodes(rt):
                left = [j for j in orders[n] if j != i]
                if left:
                    orders[n] = left
                else:
                    del orders[n]
        if members:
            self._refresh(rt.group_id)
        else:
            del self.groups[rt.group_id]
            self.period.pop(rt.group_id, None)
            self.orders.pop(rt.group_id, None)
        return whole

    def set_node_orders(self, group_id: str, orders: Mapping[int, Sequence[int]]) -> None:
        """Serve ``group_id``'s nodes (by serial) in these cyclic orders of job indices.

        Applied only once every job they name is a member (a regrouping adds its jobs one
        by one). ValueError on orders that break :func:`rollmux.phases.order_multiplicities`
        (the group keeps its orders).
        """
        members = self.groups.get(group_id, [])
        if not {i for seq in orders.values() for i in seq} <= set(members):
            return  # not every member is admitted yet
        before = self.orders.get(group_id)
        current = before if before is not None else {
            n: [i for i in members if n in _nodes(self.runtime[i])]
            for n in dict.fromkeys(n for i in members for n in _nodes(self.runtime[i]))}
        self.orders[group_id] = {**current, **{n: list(seq) for n, seq in orders.items()}}
        try:
            self._refresh(group_id)
        except ValueError:
            self.orders[group_id] = before
            raise

    def _refresh(self, group_id: str) -> None:
        """Recompute a group's period and its members' rates.

        Members whose completion was reported are passed over (rollmux.phases, "Order");
        they still count as sharing their nodes until they are removed, as in the event
        model.
        """
        members = self.groups[group_id]
        rts = [self.runtime[i] for i in members]
        active = [i for i in members if i not in self.finished]
        if not active:
            self.period[group_id] = math.inf
            return
        orders = self.orders.get(group_id)
        local = None
        if orders is not None:
            pos = {i: k for k, i in enumerate(active)}
            local = {n: [pos[i] for i in seq if i in pos] for n, seq in orders.items()}
            local = {n: seq for n, seq in local.items() if seq}
        period, mult = group_cycle([self.runtime[i] for i in active], local, shared_nodes(rts))
        if not math.isfinite(period):
            raise DeadlockError(f"group {group_id}: its node orders {local} deadlock "
                                f"(no phase can start)")
        self.period[group_id] = period
        for i, m in zip(active, mult, strict=True):
            self.iteration_s[i] = period / m

    # ------------------------------------------------------------------ progress

    def _group_start(self, group_id: str) -> float:
        """When the group next progresses: once every member is ready."""
        return max(self.ready_s[i] for i in self.groups[group_id])

    def _advance(self, t: float) -> None:
        """Move every group's jobs forward to time ``t``."""
        if t <= self.now:
            return
        for group_id, members in self.groups.items():
            start = max(self.now, self._group_start(group_id))
            if t <= start:
                continue
            elapsed = t - start
            for i in members:
                left = self.target[i] - self.done[i]
                if left <= 0:
                    continue
                gained = min(elapsed / self.iteration_s[i], left)
                self.done[i] += gained
                rt = self.runtime[i]
                b = self.busy[i]
                if rt.colocated:
                    b[1] += gained * (rt.times.rollout_s * rt.coloc_ratio + rt.times.train_s) \
                        * rt.train_gpus
                else:
                    b[0] += gained * rt.times.rollout_s * rt.rollout_gpus
                    b[1] += gained * rt.times.train_s * rt.train_gpus
        self.now = t

    def next_completion(self) -> tuple[float, int] | None:
        """Earliest (time, job index) at which a job finishes, None without jobs."""
        best: tuple[float, int] | None = None
        for group_id, members in self.groups.items():
            start = max(self.now, self._group_start(group_id))
            for i in members:
                if i in self.finished:
                    continue
                t = start + max(0.0, self.target[i] - self.done[i]) * self.iteration_s[i]
                if best is None or (t, i) < best:
                    best = (t, i)
        return best

    def run_until(self, t_limit: float) -> list[tuple[int, float]]:
        """Advance to the next completion if it is at or before ``t_limit``, else to it."""
        nxt = self.next_completion()
        if nxt is None or nxt[0] > t_limit:
            if math.isfinite(t_limit):
                self._advance(t_limit)
            return []
        t, i = nxt
        self._advance(t)
        self.done[i] = float(self.target[i])
        self.finished.add(i)
        self._refresh(self.runtime[i].group_id)
        return [(i, t)]

    def iterations_done(self, i: int) -> int:
        """Whole iterations job ``i`` has completed."""
        return math.floor(self.done[i] + 1e-9)

    def busy_gpu_s(self, i: int) -> tuple[float, float]:
        """Useful (rollout-pool, training-pool) GPU-seconds of job ``i`` so far."""
        b = self.busy.get(i, [0.0, 0.0])
        return b[0], b[1]

    def phase_table(self) -> pd.DataFrame:
        """The analytic path has no per-phase rows: an empty table of the same columns."""
        return pd.DataFrame(columns=list(PHASE_RECORD_COLUMNS))
