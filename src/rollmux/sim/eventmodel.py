"""The event-level progress model: every phase of every admitted job is an event.

A deterministic heap keyed on (time, kind, sequence number). Each node serves its jobs
in a fixed cyclic order (the group's round-robin order: jobs in the order they joined,
or the group's ``node_orders``, where a job may appear several times). What a phase does
(its switch, when its nodes free, what a migrated tail holds, the sync) and in which order
(appearances, cycles, joins, new orders, finished jobs) is :mod:`rollmux.phases`; this
module only schedules it.

Cycles are counted as *rounds*: a node is at slot ``pos`` of round ``round``; a job's next
phase of a pool is its appearance ``occurrence`` of round ``round`` (one more once that
phase has started: :meth:`_Job.next_key`). A phase starts when that key is the current slot
of every node of the phase. A node passes over slots whose job is already beyond them
(:meth:`EventModel._normalise`); new orders restart every node of the group and recount
each job's rounds from its state (:meth:`EventModel.set_node_orders`).

State is kept in two small slotted classes, :class:`_Job` and :class:`_Node`, that
reference each other directly (a job holds its nodes, a node its cyclic order of jobs),
so the hot path does no dictionary lookup.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rollmux.phases import (
    DeadlockError,
    Tail,
    appearances,
    node_release_s,
    order_multiplicities,
    rollout_release_s,
    switch_paid,
    switch_s,
    tail_gpus_per_node,
)
from rollmux.sim.analytic import InFlight, JobRuntime
from rollmux.sim.phasesink import PhaseSink
from rollmux.sim.progress import PhaseDraws
from rollmux.sim.records import PHASE_CODES, PHASE_RECORD_COLUMNS, POOL_CODES

__all__ = ["DeadlockError", "EventModel"]

# Event kinds of the heap; the kind is also the priority at equal times (nodes are freed
# before phases complete, phases complete before paused jobs resume, and a finished job
# passes its remaining slots last: the replay driver removes it first, which cancels that).
_NODE_FREE, _ROLL_END, _TRAIN_END, _READY, _LEAVE = 0, 1, 2, 3, 4

# The round of a finished job: every node passes over its slots.
_NEVER = 1 << 62

# Job states.
_OUT, _WANTS_ROLLOUT, _WANTS_TRAIN, _ROLLING, _TRAINING = -1, 0, 1, 2, 3

_ROLLOUT_POOL, _TRAIN_POOL = POOL_CODES["rollout"], POOL_CODES["train"]

# The hot loop buffers five numbers per released phase in a flat list (its layout id,
# iteration, start, end and work); every _BATCH_ROWS phases are expanded into one row
# per node (the layout gives job, phase, pool, nodes and GPUs) and packed into a block of
# _BLOCK_ROWS rows (about 40 MB). Blocks that large are memory-mapped by malloc, so the
# memory of each block goes back to the system when the final table has copied it.
_BATCH_ROWS = 1 << 16
_PHASE_FIELDS = 5  # numbers buffered per released phase
_BLOCK_ROWS = 1 << 20
_PHASE_DTYPE = np.dtype([
    ("job", "<i4"), ("phase", "i1"), ("iteration", "<i4"), ("node", "<i4"), ("pool", "i1"),
    ("start_s", "<f8"), ("end_s", "<f8"), ("work_s", "<f8"), ("gpus", "<i2"),
])


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


class EventModel:
    """Per-phase event simulation of every admitted job on its pinned nodes."""

    def __init__(self, n_jobs: int, record_phases: bool = True, gpus_per_node: int = 8,
                 sink: PhaseSink | None = None) -> None:
        """Room for ``n_jobs`` jobs (indexed 0..n_jobs-1) on nodes of ``gpus_per_node``.

        With a ``sink``, recorded rows go to it block by block instead of into the table
        :meth:`phase_table` returns (which is then empty).
        """
        self.sink = sink
        self.gpus_per_node = gpus_per_node
        self.now = 0.0
        self.heap: list[tuple[float, int, int, _Job, int]] = []
        self.counter = itertools.count()
        self.events = 0
        self.loop_s = 0.0
        self.record_phases = record_phases
        self.jobs: list[_Job] = [_Job(i) for i in range(n_jobs)]
        self.nodes: dict[int, _Node] = {}
        # Flat: layout id, iteration, start, end, work of each released phase in turn.
        # (Extending by a short-lived tuple keeps no tuple alive: cheaper to build, to
        # convert and to free, and no work for the cyclic garbage collector.)
        self.rows: list[float] = []
        # Phase layouts, one per phase kind of each admission (see _layout): job, phase
        # code, pool code, number of nodes, offset into the flat node/GPU lists; and
        # their numpy copies for _flush (rebuilt when layouts were added since).
        self.lay_cols: tuple[list[int], ...] = ([], [], [], [], [])
        self.lay_nodes: list[int] = []
        self.lay_gpus: list[int] = []
        self.lay_np: tuple[np.ndarray, ...] = ()
        self.chunks: list[np.ndarray] = []
        self.block_used = 0
        self._build_hot_path()

    # ------------------------------------------------------------------ membership

    def add_job(self, rt: JobRuntime, t: float, done: int, target: int, ready_s: float,
                resident: bool, draws: PhaseDraws | None, in_flight: InFlight | None = None
                ) -> None:
        """Admit job ``rt.index`` at ``t`` with ``done`` of ``target`` iterations done.

        ``in_flight``: the unfinished iteration it resumes (its phase starts with the
        share already done; a rollout already complete resumes at its training).
        """
        self.now = max(self.now, t)
        job = self.jobs[rt.index]
        job.iteration = done
        job.target = target
        job.state = _WANTS_ROLLOUT
        job.ready_s = ready_s
        job.holding = False
        job.draws = draws
        coloc = rt.colocated
        times = rt.times
        job.carry = 0.0
        if in_flight is not None:
            job.carry = min(1.0, max(0.0, in_flight.done))
            if in_flight.phase == "train":
                job.state = _WANTS_TRAIN
                job.next_train_s = times.train_s if draws is None else draws.train_s[done]
        serials = rt.train_nodes if coloc else (*rt.rollout_nodes, *rt.train_nodes)
        job.cold_left = set() if resident else set(serials)
        for n in serials:
            node = self.nodes.get(n)
            if node is None:
                pool = _TRAIN_POOL if coloc or n in rt.train_nodes else _ROLLOUT_POOL
                node = self.nodes[n] = _Node(n, pool)
            node.order.append(job)
            node.occurrence.append(0)
        r_serials = rt.train_nodes if coloc else rt.rollout_nodes
        r_gpus = rt.train_gpus_per_node if coloc else rt.rollout_gpus_per_node
        job.nodes = tuple(self.nodes[n] for n in serials)
        job.rollout_nodes = tuple(self.nodes[n] for n in r_serials)
        job.train_nodes = tuple(self.nodes[n] for n in rt.train_nodes)
        job.colocated = coloc
        job.warm_switch_s = times.warm_switch_s
        job.cold_switch_s = times.cold_switch_s
        job.cold_phase_switch_s = switch_s(switch_paid(True, coloc, False),
                                           times.warm_switch_s, times.cold_switch_s)
        job.sync_s = 0.0 if coloc else rt.sync_s
        job.coloc_ratio = rt.coloc_ratio
        job.handover_s = rt.handover_s
        job.staleness = rt.staleness
        job.rolled = done
        job.rolling_k = -1
        job.train_start_s = -1.0
        if job.staleness:
            job.carry = 0.0  # an asynchronous job restarts its unfinished iterations
            job.state = _WANTS_ROLLOUT
        job.expected_rollout_s = times.rollout_s
        job.expected_train_s = times.train_s
        job.rollout_layout = self._layout(job.index, PHASE_CODES["rollout"],
                                          _TRAIN_POOL if coloc else _ROLLOUT_POOL,
                                          r_serials, r_gpus)
        job.train_layout = self._layout(job.index, PHASE_CODES["train"], _TRAIN_POOL,
                                        rt.train_nodes, rt.train_gpus_per_node)
        job.rollout_gpus = sum(r_gpus)
        job.rollout_gpus_per_node = tuple(r_gpus)
        job.tail_gpus = 0
        job.tail_placements = {}
        job.train_gpus = sum(rt.train_gpus_per_node)
        job.multiplicity = 1
        job.occurrence = 0
        # The job joins every node at the end of the node's order, from the latest of
        # its nodes' current rounds on.
        job.round = max(node.round for node in job.nodes)
        self._membership_changed(job.nodes)
        for node in job.nodes:
            self._normalise(node)
        if job.staleness and any(len(node.order) > 1 for node in job.nodes):
            raise ValueError(f"job {rt.index}: an asynchronous job must hold its nodes alone")
        if ready_s > t:
            self._push(ready_s, _READY, job)
        if job.staleness:
            self._async_try(job, t)
        else:
            self._try(job, t)

    def in_flight(self, i: int, t: float) -> InFlight | None:
        """Job ``i``'s unfinished iteration at ``t``: its phase and the share done (None: none).

        A running phase's share is its work done over the whole phase's (rollout: node
        time then migrated tail; training: train then sync); a phase that itself resumed
        a carried share starts from it.
        """
        job = self.jobs[i]
        st = job.state
        if job.staleness:
            return None  # an asynchronous job's unfinished iterations are lost
        if st == _WANTS_ROLLOUT:
            return InFlight("rollout", job.carry) if job.carry else None
        if st == _WANTS_TRAIN:
            return InFlight("train", job.carry)
        if st not in (_ROLLING, _TRAINING):
            return None
        start = job.carry_from if job.carry_stamp == (job.iteration, st) else 0.0
        elapsed = max(0.0, t - job.start_s - job.switch_s)
        if st == _TRAINING:
            total = job.next_train_s + job.sync_s
            done = min(elapsed, total * (1.0 - start))
            return InFlight("train", min(1.0, start + done / total) if total > 0 else 1.0)
        draws = job.draws
        total = job.expected_rollout_s if draws is None else draws.rollout_s[job.iteration]
        if job.colocated:
            total *= job.coloc_ratio
        if job.holding:
            done = min(elapsed, job.work_s)
        else:  # the nodes are free; a migrated tail (if any) is still running
            done = job.work_s + (min(max(0.0, t - job.tail_start_s), job.tail_s)
                                 if job.tail_gpus else 0.0)
        return InFlight("rollout", min(1.0, start + done / total) if total > 0 else 1.0)

    def remove_job(self, i: int, t: float) -> int:
        """Take job ``i`` out at ``t`` (aborting a running phase); returns iterations done.

        A running phase is lost; the job keeps its whole iterations.
        """
        self.now = max(self.now, t)
        job = self.jobs[i]
        if job.staleness:
            self._async_abort(job, t)
        elif job.holding:
            self._release(job, t, True)
        elif job.state == _ROLLING and job.tail_gpus:
            self._end_tail(job, t)
        job.epoch += 1
        job.state = _OUT
        job.draws = None
        job.carry = 0.0
        touched = []
        for node in job.nodes:
            if self.nodes.get(node.serial) is not node:
                continue
            if job in node.queue:
                node.queue.remove(job)
            slots = [k for k, other in enumerate(node.order) if other is job]
            if not slots:
                continue
            before = len([k for k in slots if k < node.pos])
            keep = [k for k in range(len(node.order)) if node.order[k] is not job]
            node.order = [node.order[k] for k in keep]
            node.occurrence = [node.occurrence[k] for k in keep]
            if not node.order:
                del self.nodes[node.serial]
                continue
            node.pos -= before
            if node.pos >= len(node.order):
                node.pos = 0
                node.round += 1
            touched.append(node)
        self._membership_changed(touched)
        for node in touched:
            self._normalise(node)
        for node in touched:
            nxt = node.queue[0] if node.queue else node.order[node.pos]
            if nxt.staleness:
                self._async_try(nxt, t)
            else:
                self._try(nxt, t)
        return job.iteration

    def set_node_orders(self, group_id: str, orders: Mapping[int, Sequence[int]]) -> None:
        """Replace nodes' cyclic orders (job indices; a job may appear several times).

        Applied only once every job the orders name is admitted (a regrouping adds its
        jobs one by one). The new orders take over at once, as :mod:`rollmux.phases`
        ("Order", new orders) states: every node of the group (the nodes named, and every
        node of a job on them) restarts at round 0; a job whose rollout has started but
        not its training finishes that iteration in round 0, at its last appearance on
        its training nodes; every other job starts its next iteration in round 1. Then
        every waiting job of the group starts what it can. ValueError (nothing changed)
        when the orders break :func:`rollmux.phases.order_multiplicities`.
        """
        del group_id  # the orders name their nodes; groups never share a node
        for indices in orders.values():
            for i in indices:
                if not 0 <= i < len(self.jobs):
                    raise ValueError(f"node orders: job index {i} is not a job of this model "
                                     f"(0..{len(self.jobs) - 1})")
                job = self.jobs[i]
                if not job.nodes or job not in job.nodes[0].order:
                    return  # not every member is admitted yet
        # The group: the nodes named and, transitively, every node of a job on them.
        group: dict[int, _Node] = {}
        stack = [self.nodes[n] for n in orders if n in self.nodes]
        while stack:
            node = stack.pop()
            if node.serial not in group:
                group[node.serial] = node
                stack.extend(s for job in node.order for s in job.nodes)
        jobs = {job.index: job for node in group.values() for job in node.order}
        merged = {n: [job.index for job in node.order] for n, node in group.items()}
        merged.update({n: list(seq) for n, seq in orders.items()})
        mult = order_multiplicities(merged, {i: [s.serial for s in job.nodes]
                                             for i, job in jobs.items()})
        for n, node in group.items():
            node.order = [self.jobs[i] for i in merged[n]]
            node.occurrence = appearances(merged[n])
            node.pos = 0
            node.round = 0
        for i, job in sorted(jobs.items()):
            job.multiplicity = mult[i]
            if job.state < 0:
                job.round, job.occurrence = _NEVER, 0
            elif job.state == _WANTS_ROLLOUT:
                job.round, job.occurrence = 1, 0
            else:  # its iteration is under way: it ends at the last appearance of round 0
                job.round, job.occurrence = 0, job.multiplicity - 1
        self._membership_changed(list(group.values()))
        for node in group.values():
            self._normalise(node)
        for _, job in sorted(jobs.items()):
            if 0 <= job.state <= _WANTS_TRAIN:
                self._try(job, self.now)

    def _membership_changed(self, nodes: Sequence[_Node]) -> None:
        """Refresh the nodes' shared flags and the switches of every job on them."""
        jobs: dict[int, _Job] = {}
        for node in nodes:
            members = {job.index: job for job in node.order}
            node.shared = len(members) > 1
            jobs.update(members)
        for job in jobs.values():
            shared_r = any(node.shared for node in job.rollout_nodes)
            shared_t = any(node.shared for node in job.train_nodes)
            warm, cold = job.warm_switch_s, job.cold_switch_s
            job.rollout_switch_s = switch_s(switch_paid(False, job.colocated, shared_r),
                                            warm, cold)
            job.train_switch_s = switch_s(switch_paid(False, job.colocated, shared_t),
                                          warm, cold)
            if job.colocated and shared_t:
                # A time-sliced hand-over: the outgoing phase's state is snapshotted too
                # (charged to the phase that leaves, at its end; docs/designs.md).
                job.rollout_switch_s += job.handover_s
                job.train_switch_s += job.handover_s

    def _tail_placement(self, job: _Job) -> tuple[int, tuple[tuple[_Node, float], ...]]:
        """Where the job's tail of ``job.tail_gpus`` GPUs sits: its row layout, node shares.

        The tail's GPUs fill the job's rollout nodes in order (:mod:`rollmux.phases`).
        """
        placed = job.tail_placements.get(job.tail_gpus)
        if placed is None:
            here = tail_gpus_per_node(job.tail_gpus, job.rollout_gpus_per_node)
            nodes = [(node, g) for node, g in zip(job.rollout_nodes, here, strict=True) if g]
            layout = self._layout(job.index, PHASE_CODES["tail"], _ROLLOUT_POOL,
                                  [node.serial for node, _ in nodes], [g for _, g in nodes])
            placed = (layout, tuple((node, g / self.gpus_per_node) for node, g in nodes))
            job.tail_placements[job.tail_gpus] = placed
        return placed

    def _end_tail(self, job: _Job, t: float) -> None:
        """The job's tail is cut at ``t`` (the job is removed): record it, free its GPUs."""
        layout, nodes = self._tail_placement(job)
        for node, _ in nodes:
            node.tails = [x for x in node.tails if x[0] != job.tail_end_s]
        work = t - job.tail_start_s
        job.busy_rollout_gpu_s += work * job.tail_gpus
        if self.record_phases:
            self.rows.extend((layout, job.iteration, job.tail_start_s, t, work))
        job.tail_gpus = 0

    # ------------------------------------------------------------------ internals

    def _layout(self, i: int, phase: int, pool: int, nodes: Sequence[int],
                gpus: Sequence[int]) -> int:
        """Register the rows a phase of job ``i`` on ``nodes`` writes; returns its id.

        A released phase is buffered as its layout id plus its own times; _flush turns
        it into one row per node, in the order of ``nodes``.
        """
        if len(nodes) != len(gpus):
            raise ValueError("one GPU count per node expected")
        jobs, phases, pools, counts, offsets = self.lay_cols
        jobs.append(i)
        phases.append(phase)
        pools.append(pool)
        counts.append(len(nodes))
        offsets.append(len(self.lay_nodes))
        self.lay_nodes.extend(nodes)
        self.lay_gpus.extend(gpus)
        return len(jobs) - 1

    def _push(self, t: float, kind: int, job: _Job) -> None:
        """Schedule an event of ``job`` (stale once the job's epoch changes)."""
        heapq.heappush(self.heap, (t, kind, next(self.counter), job, job.epoch))

    def _normalise(self, node: _Node) -> None:
        """Move the node's pointer past slots whose job is already beyond them.

        A job joining a running group starts in a later round than some of its nodes;
        after a reorder a node may point at a slot its job already served this round.
        Such slots are skipped for the node's current round.
        """
        order, occurrence, pool = node.order, node.occurrence, node.pool
        pos, rnd = node.pos, node.round
        for _ in range(len(order) * 2 + 2):
            if order[pos].next_key(pool) <= (rnd, occurrence[pos]):
                break
            pos += 1
            if pos == len(order):
                pos = 0
                rnd += 1
        else:
            rnd = min(job.next_key(pool)[0] for job in order)
            pos = next(k for k, job in enumerate(order)
                       if job.next_key(pool) <= (rnd, occurrence[k]))
        node.pos = pos
        node.round = rnd

    def _build_hot_path(self) -> None:
        """Bind :meth:`_try` and :meth:`_release` as closures over the model's state.

        Closures read their free variables from cells, which is markedly faster than
        ``self.<attribute>`` lookups in the two functions every phase runs through.
        """
        heap, rows = self.heap, self.rows
        put = rows.extend
        batch_len = _BATCH_ROWS * _PHASE_FIELDS
        counter = self.counter
        push = heapq.heappush
        record = self.record_phases
        normalise = self._normalise
        flush = self._flush
        release_s = rollout_release_s
        release_one_s = node_release_s
        resume_rollout = _resume_rollout
        resume_train = _resume_train

        def try_(job: _Job, t: float) -> None:
            """Start the job's next phase at ``t`` if it is ready and next on its nodes."""
            st = job.state
            if st > _WANTS_TRAIN or st < 0 or job.ready_s > t:
                return
            nodes = job.rollout_nodes if st == _WANTS_ROLLOUT else job.train_nodes
            if job.colocated:
                # Co-located jobs of a time slice acquire their nodes first come, first
                # served; a lone (veRL) job never waits for another.
                for s in nodes:
                    if s.holder is not None or (s.queue and s.queue[0] is not job):
                        for q in nodes:
                            if job not in q.queue:
                                q.queue.append(job)
                        return
                for s in nodes:
                    if s.queue and s.queue[0] is job:
                        del s.queue[0]
            else:
                r, o = job.round, job.occurrence
                for s in nodes:
                    pos = s.pos
                    if s.holder is not None or s.round != r or s.order[pos] is not job or (
                            s.occurrence[pos] != o):
                        return
            cold_left = job.cold_left
            if cold_left and not cold_left.isdisjoint([s.serial for s in nodes]):
                switch = job.cold_phase_switch_s
                cold_left.difference_update([s.serial for s in nodes])
            else:
                switch = job.rollout_switch_s if st == _WANTS_ROLLOUT else job.train_switch_s
            job.holding = True
            ep = job.epoch
            if st == _WANTS_ROLLOUT:
                draws = job.draws
                if draws is None:
                    roll = roll_node = job.expected_rollout_s
                    job.next_train_s = job.expected_train_s
                else:
                    k = job.iteration
                    roll, roll_node = draws.rollout_s[k], draws.node_s[k]
                    job.next_train_s = draws.train_s[k]
                if job.carry:
                    roll, roll_node = resume_rollout(job, roll, roll_node)
                job.state = _ROLLING
                if job.colocated:
                    work = roll * job.coloc_ratio
                    push(heap, (t + switch + work, _ROLL_END, next(counter), job, ep))
                else:
                    work = roll_node
                    # Migrated tails of earlier rollouts may still hold GPUs of its nodes
                    # (the release time ignores those that have ended).
                    if len(nodes) == 1 and nodes[0].tails:
                        free_at = release_one_s(t, switch + roll_node, nodes[0].tails)
                    elif len(nodes) > 1 and any(s.tails for s in nodes):
                        free_at = release_s(t, switch + roll_node, [s.tails for s in nodes])
                    else:
                        free_at = t + switch + roll_node
                    if roll_node < roll:
                        job.tail_s = roll - roll_node
                        job.tail_gpus = draws.tail_gpus[job.iteration] if draws else 0
                        push(heap, (free_at, _NODE_FREE, next(counter), job, ep))
                        push(heap, (free_at + job.tail_s, _ROLL_END, next(counter), job, ep))
                    else:
                        push(heap, (free_at, _ROLL_END, next(counter), job, ep))
            else:
                work = job.next_train_s
                sync = job.sync_s
                if job.carry:
                    work, sync = resume_train(job, work, sync)
                job.state = _TRAINING
                push(heap, (t + switch + work + sync, _TRAIN_END, next(counter), job, ep))
            job.start_s = t
            job.switch_s = switch
            job.work_s = work
            if job.colocated:
                for s in nodes:
                    s.holder = job
                return
            for s in nodes:
                s.holder = job
                order = s.order
                pos = s.pos + 1
                if pos == len(order):
                    pos = 0
                    s.round += 1
                s.pos = pos
                if len(order) > 1:
                    # The next slot's job must not be beyond it already (else skip it):
                    # _Job.next_key inlined.
                    nxt = order[pos]
                    rn, on = nxt.round, nxt.occurrence
                    sj = nxt.state
                    if (sj > _WANTS_ROLLOUT if s.pool == _ROLLOUT_POOL else sj == _TRAINING):
                        on += 1
                        if on == nxt.multiplicity:
                            rn += 1
                            on = 0
                    if rn > s.round or (rn == s.round and on > s.occurrence[pos]):
                        normalise(s)

        def release(job: _Job, t: float, truncate: bool = False) -> tuple[_Node, ...]:
            """Free the nodes the job holds at ``t``; record rows and busy time."""
            start, work = job.start_s, job.work_s
            if truncate:
                work = min(work, max(0.0, t - start - job.switch_s))
            if job.state == _ROLLING:
                nodes = job.rollout_nodes
                if record:
                    # One record per phase, not per node: _flush expands it (layout).
                    put((job.rollout_layout, job.iteration, start, t, work))
                if job.colocated:  # a co-located rollout runs on the training pool
                    job.busy_train_gpu_s += work * job.rollout_gpus
                else:
                    job.busy_rollout_gpu_s += work * job.rollout_gpus
            else:
                nodes = job.train_nodes
                if record:
                    put((job.train_layout, job.iteration, start, t, work))
                job.busy_train_gpu_s += work * job.train_gpus
            if record and len(rows) >= batch_len:
                flush()
            for s in nodes:
                s.holder = None
            job.holding = False
            return nodes

        self._try = try_
        self._release = release

    def _flush(self) -> None:
        """Expand the buffered phases into rows; pack them into the current block.

        Each buffered phase becomes one row per node of its layout, in the layout's node
        order, so the rows are those the loop would have written one by one. Iterations
        and layout ids are far below 2**53, so the float64 batch holds them exactly.
        """
        rows = self.rows
        if not rows:
            return
        batch = np.fromiter(rows, dtype=np.float64, count=len(rows))
        batch = batch.reshape(-1, _PHASE_FIELDS)
        rows.clear()
        jobs, phases, pools, counts, offsets = self.lay_cols
        if not self.lay_np or len(self.lay_np[0]) != len(jobs):
            self.lay_np = (
                np.array(jobs, dtype=_PHASE_DTYPE["job"]),
                np.array(phases, dtype=_PHASE_DTYPE["phase"]),
                np.array(pools, dtype=_PHASE_DTYPE["pool"]),
                np.array(counts, dtype=np.intp),
                np.array(offsets, dtype=np.intp),
                np.array(self.lay_nodes, dtype=_PHASE_DTYPE["node"]),
                np.array(self.lay_gpus, dtype=_PHASE_DTYPE["gpus"]),
            )
        l_job, l_phase, l_pool, l_count, l_off, l_nodes, l_gpus = self.lay_np
        lid = batch[:, 0].astype(np.intp)
        n_rows = l_count[lid]
        # The phase of each row, and the row's node: its layout's offset plus its rank
        # among the phase's rows.
        of_row = np.repeat(np.arange(len(lid)), n_rows)
        first = np.cumsum(n_rows) - n_rows
        at = l_off[lid][of_row] + (np.arange(len(of_row)) - first[of_row])
        lid = lid[of_row]
        flat = np.empty(len(of_row), dtype=_PHASE_DTYPE)
        flat["job"] = l_job[lid]
        flat["phase"] = l_phase[lid]
        flat["iteration"] = batch[of_row, 1].astype(_PHASE_DTYPE["iteration"])
        flat["node"] = l_nodes[at]
        flat["pool"] = l_pool[lid]
        flat["start_s"] = batch[of_row, 2]
        flat["end_s"] = batch[of_row, 3]
        flat["work_s"] = batch[of_row, 4]
        flat["gpus"] = l_gpus[at]
        del batch
        if self.sink is not None:
            self.sink.write(flat)
            return
        done = 0
        while done < len(flat):
            if not self.chunks or self.block_used == len(self.chunks[-1]):
                self.chunks.append(np.empty(_BLOCK_ROWS, dtype=_PHASE_DTYPE))
                self.block_used = 0
            block = self.chunks[-1]
            take = min(len(flat) - done, len(block) - self.block_used)
            block[self.block_used:self.block_used + take] = flat[done:done + take]
            self.block_used += take
            done += take

    # ------------------------------------------------------------------ the loop

    def run_until(self, t_limit: float) -> list[tuple[int, float]]:
        """Process events up to ``t_limit``; stop early at the first job completion."""
        clock = time.thread_time()
        try:
            return self._loop(t_limit)
        finally:
            self.loop_s += time.thread_time() - clock

    def _loop(self, t_limit: float) -> list[tuple[int, float]]:
        """The event loop of :meth:`run_until`."""
        heap = self.heap
        pop = heapq.heappop
        release = self._release
        try_ = self._try
        placement = self._tail_placement
        record = self.record_phases
        rows = self.rows
        put = rows.extend
        batch_len = _BATCH_ROWS * _PHASE_FIELDS
        count = 0
        try:
            while heap:
                event = pop(heap)
                t, kind, _seq, job, ep = event
                if t > t_limit:
                    heapq.heappush(heap, event)  # not due yet: put it back
                    break
                if ep != job.epoch:
                    continue
                count += 1
                if job.staleness:
                    if kind == _READY:
                        self._async_try(job, t)
                    elif kind != _LEAVE and self._async_event(kind, job, t):
                        heapq.heappush(heap, (t, _LEAVE, next(self.counter), job, ep))
                        self.now = t
                        return [(job.index, t)]
                    continue
                if kind == _TRAIN_END:
                    freed = release(job, t)
                    job.iteration += 1
                    if job.iteration >= job.target:
                        job.state = _OUT
                        job.round, job.occurrence = _NEVER, 0
                        for s in freed:
                            nxt = s.queue[0] if s.queue else s.order[s.pos]
                            if 0 <= nxt.state <= _WANTS_TRAIN:
                                try_(nxt, t)
                        heapq.heappush(heap, (t, _LEAVE, next(self.counter), job, ep))
                        self.now = t
                        return [(job.index, t)]
                    job.state = _WANTS_ROLLOUT
                    job.occurrence += 1
                    if job.occurrence == job.multiplicity:
                        job.occurrence = 0
                        job.round += 1
                    try_(job, t)
                elif kind == _ROLL_END:
                    if job.holding:
                        freed = release(job, t)
                    else:  # the migrated tail ends: the rollout is complete
                        freed = ()
                        if job.tail_gpus:
                            work = t - job.tail_start_s
                            job.busy_rollout_gpu_s += work * job.tail_gpus
                            if record:
                                put((job.tail_layout, job.iteration, job.tail_start_s, t,
                                     work))
                                if len(rows) >= batch_len:
                                    self._flush()
                            job.tail_gpus = 0
                    job.state = _WANTS_TRAIN
                    try_(job, t)
                elif kind == _NODE_FREE:
                    # The rollout releases its nodes; its migrated tail keeps its GPUs.
                    freed = release(job, t)
                    if job.tail_gpus:
                        end = job.tail_end_s = t + job.tail_s
                        job.tail_start_s = t
                        job.tail_layout, shares = (job.tail_placements.get(job.tail_gpus)
                                                   or placement(job))
                        for s, share in shares:
                            tails = s.tails
                            if len(tails) > 2:  # ended tails are ignored; drop them now
                                tails = s.tails = [x for x in tails if x[0] > t]
                            tails.append((end, share))
                elif kind == _LEAVE:
                    # Not removed at once (no replay driver): its nodes pass its slots.
                    for s in job.nodes:
                        if self.nodes.get(s.serial) is s:
                            self._normalise(s)
                            nxt = s.queue[0] if s.queue else s.order[s.pos]
                            if 0 <= nxt.state <= _WANTS_TRAIN:
                                try_(nxt, t)
                    continue
                else:
                    try_(job, t)
                    continue
                for s in freed:
                    nxt = s.queue[0] if s.queue else s.order[s.pos]
                    if 0 <= nxt.state <= _WANTS_TRAIN:
                        try_(nxt, t)
        finally:
            self.events += count
        if not heap and math.isinf(t_limit) and any(job.state >= 0 for job in self.jobs):
            waiting = [job.index for job in self.jobs if job.state >= 0]
            raise DeadlockError(f"no phase can start; waiting jobs (indices): {waiting[:10]}")
        if math.isfinite(t_limit):
            self.now = max(self.now, t_limit)
        return []

    # ------------------------------------------------------------------ asynchronous jobs

    def _async_try(self, job: _Job, t: float) -> None:
        """Start what an asynchronous job can start at ``t`` (docs/designs.md, "async").

        Rollout k may start once the rollout nodes are free and training k - 1 - s has
        ended (s: the staleness; s = 0 would be synchronous); training k once rollout k
        is complete and training k - 1 has ended (with its sync).
        """
        if job.state < 0 or job.ready_s > t:
            return
        draws = job.draws
        k = job.rolled
        if job.rolling_k < 0 and k < job.target and job.iteration >= k - job.staleness:
            roll = job.expected_rollout_s if draws is None else draws.rollout_s[k]
            switch = self._async_switch(job, job.rollout_nodes)
            job.rolling_k = k
            job.stale_roll_start_s = t
            for s in job.rollout_nodes:
                s.holder = job
            self._push(t + switch + roll, _ROLL_END, job)
        k = job.iteration
        if job.train_start_s < 0 and k < job.rolled:
            work = job.expected_train_s if draws is None else draws.train_s[k]
            switch = self._async_switch(job, job.train_nodes)
            job.train_start_s = t
            job.next_train_s = work
            for s in job.train_nodes:
                s.holder = job
            self._push(t + switch + work + job.sync_s, _TRAIN_END, job)

    def _async_switch(self, job: _Job, nodes: Sequence[_Node]) -> float:
        """The switch an asynchronous job's phase pays: cold on a node not yet loaded."""
        cold_left = job.cold_left
        if cold_left and not cold_left.isdisjoint([s.serial for s in nodes]):
            cold_left.difference_update([s.serial for s in nodes])
            return job.cold_phase_switch_s
        return 0.0

    def _async_record(self, job: _Job, layout: int, k: int, start: float, end: float,
                      work: float) -> None:
        """One phase row of an asynchronous job (buffered like the hot path's)."""
        if self.record_phases:
            self.rows.extend((layout, k, start, end, work))
            if len(self.rows) >= _BATCH_ROWS * _PHASE_FIELDS:
                self._flush()

    def _async_event(self, kind: int, job: _Job, t: float) -> bool:
        """A rollout or training of an asynchronous job ends; True when the job completes."""
        draws = job.draws
        if kind == _ROLL_END:
            k = job.rolling_k
            roll = job.expected_rollout_s if draws is None else draws.rollout_s[k]
            job.busy_rollout_gpu_s += roll * job.rollout_gpus
            self._async_record(job, job.rollout_layout, k, job.stale_roll_start_s, t, roll)
            for s in job.rollout_nodes:
                s.holder = None
            job.rolling_k = -1
            job.rolled += 1
        elif kind == _TRAIN_END:
            k = job.iteration
            work = job.next_train_s
            job.busy_train_gpu_s += work * job.train_gpus
            self._async_record(job, job.train_layout, k, job.train_start_s, t, work)
            for s in job.train_nodes:
                s.holder = None
            job.train_start_s = -1.0
            job.iteration += 1
            if job.iteration >= job.target:
                job.state = _OUT
                job.round, job.occurrence = _NEVER, 0
                return True
        self._async_try(job, t)
        return False

    def _async_abort(self, job: _Job, t: float) -> None:
        """An asynchronous job is removed at ``t``: its running phases are cut and recorded."""
        if job.rolling_k >= 0:
            work = max(0.0, t - job.stale_roll_start_s)
            job.busy_rollout_gpu_s += work * job.rollout_gpus
            self._async_record(job, job.rollout_layout, job.rolling_k, job.stale_roll_start_s,
                               t, work)
            job.rolling_k = -1
        if job.train_start_s >= 0:
            work = min(job.next_train_s, max(0.0, t - job.train_start_s))
            job.busy_train_gpu_s += work * job.train_gpus
            self._async_record(job, job.train_layout, job.iteration, job.train_start_s, t,
                               work)
            job.train_start_s = -1.0
        for s in job.nodes:
            if s.holder is job:
                s.holder = None
        job.rolled = job.iteration

    def iterations_done(self, i: int) -> int:
        """Whole iterations job ``i`` has completed."""
        return self.jobs[i].iteration

    def busy_gpu_s(self, i: int) -> tuple[float, float]:
        """Useful (rollout-pool, training-pool) GPU-seconds of job ``i`` so far."""
        job = self.jobs[i]
        return job.busy_rollout_gpu_s, job.busy_train_gpu_s

    def phase_table(self) -> pd.DataFrame:
        """The per-phase table (columns :data:`PHASE_RECORD_COLUMNS`), rows in order of release.

        Chunks are copied column by column into preallocated arrays and dropped as they
        go, so the peak memory is one table plus one chunk. With a sink, the last rows
        go to it and the table is empty.
        """
        self._flush()
        chunks = self.chunks
        if chunks:
            chunks[-1] = chunks[-1][:self.block_used]
        self.chunks = []
        self.block_used = 0
        total = sum(len(c) for c in chunks)
        columns = {name: np.empty(total, dtype=_PHASE_DTYPE[name]) for name in PHASE_RECORD_COLUMNS}
        at = 0
        chunks.reverse()
        while chunks:
            chunk = chunks.pop()
            for name in PHASE_RECORD_COLUMNS:
                columns[name][at:at + len(chunk)] = chunk[name]
            at += len(chunk)
            del chunk
        return pd.DataFrame(columns, columns=list(PHASE_RECORD_COLUMNS), copy=False)
