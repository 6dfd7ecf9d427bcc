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

import pandas as pd

from rollmux.group import GroupJob
from rollmux.phases import (
    DeadlockError,
    appearances,
    node_release_s,
    order_multiplicities,
    rollout_release_s,
    switch_paid,
    switch_s,
    tail_gpus_per_node,
)
from rollmux.sim.analytic import InFlight, gpus_per_node
from rollmux.sim.eventstate import (
    _OUT,
    _ROLLING,
    _TRAINING,
    _WANTS_ROLLOUT,
    _WANTS_TRAIN,
    _Job,
    _Node,
    _resume_rollout,
    _resume_train,
)
from rollmux.sim.phaserows import PHASE_FIELDS, PhaseRows
from rollmux.sim.phasesink import PhaseSink
from rollmux.sim.progress import PhaseDraws
from rollmux.sim.records import PHASE_CODES, POOL_CODES

__all__ = ["DeadlockError", "EventModel"]

# Event kinds of the heap; the kind is also the priority at equal times (nodes are freed
# before phases complete, phases complete before paused jobs resume, and a finished job
# passes its remaining slots last: the replay driver removes it first, which cancels that).
_NODE_FREE, _ROLL_END, _TRAIN_END, _READY, _LEAVE = 0, 1, 2, 3, 4

# The round of a finished job: every node passes over its slots.
_NEVER = 1 << 62

_ROLLOUT_POOL, _TRAIN_POOL = POOL_CODES["rollout"], POOL_CODES["train"]

# The hot loop buffers the released phases (rollmux.sim.phaserows) and flushes them every
# _BATCH_ROWS phases.
_BATCH_ROWS = 1 << 16


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
        # Released phases, buffered flat and packed into blocks of rows (or streamed to
        # the sink); the hot path extends ``rows`` and flushes it (rollmux.sim.phaserows).
        self.out = PhaseRows(sink)
        self.rows = self.out.rows
        self._layout = self.out.layout
        self._flush = self.out.flush
        self._build_hot_path()

    # ------------------------------------------------------------------ membership

    def add_job(self, i: int, group_id: str, member: GroupJob, t: float, done: int,
                target: int, ready_s: float, resident: bool, draws: PhaseDraws | None = None,
                in_flight: InFlight | None = None, iteration_limit_s: float = math.inf
                ) -> None:
        """Admit job ``i`` (of group ``group_id``) at ``t`` with ``done`` of ``target`` done.

        ``member``: its phases and node serials (its GPUs fill its nodes in turn);
        ``in_flight``: the unfinished iteration it resumes (its phase starts with the
        share already done; a rollout already complete resumes at its training);
        ``iteration_limit_s``: iterations longer than this are counted as above its SLO.
        """
        del group_id  # the nodes hold the orders; groups never share a node
        self.now = max(self.now, t)
        job = self.jobs[i]
        job.iteration = done
        job.target = target
        job.state = _WANTS_ROLLOUT
        job.ready_s = ready_s
        job.holding = False
        job.draws = draws
        coloc = member.colocated
        times = member.phases.times
        gpn = self.gpus_per_node
        r_serials = tuple(int(n) for n in member.rollout_nodes)
        t_serials = tuple(int(n) for n in member.train_nodes)
        r_gpus = gpus_per_node(member.phases.rollout_gpus, len(r_serials), gpn)
        t_gpus = gpus_per_node(member.phases.train_gpus, len(t_serials), gpn)
        job.carry = 0.0
        if in_flight is not None:
            job.carry = min(1.0, max(0.0, in_flight.done))
            if in_flight.phase == "train":
                job.state = _WANTS_TRAIN
                job.next_train_s = times.train_s if draws is None else draws.train_s[done]
        serials = t_serials if coloc else (*r_serials, *t_serials)
        job.cold_left = set() if resident else set(serials)
        for n in serials:
            node = self.nodes.get(n)
            if node is None:
                pool = _TRAIN_POOL if coloc or n in t_serials else _ROLLOUT_POOL
                node = self.nodes[n] = _Node(n, pool)
            node.order.append(job)
            node.occurrence.append(0)
        job.nodes = tuple(self.nodes[n] for n in serials)
        job.rollout_nodes = tuple(self.nodes[n] for n in r_serials)
        job.train_nodes = tuple(self.nodes[n] for n in t_serials)
        job.colocated = coloc
        job.warm_switch_s = times.warm_switch_s
        job.cold_switch_s = times.cold_switch_s
        job.cold_phase_switch_s = switch_s(switch_paid(True, coloc, False),
                                           times.warm_switch_s, times.cold_switch_s)
        job.sync_s = member.sync_s
        job.coloc_ratio = member.coloc_ratio
        job.handover_s = member.handover_s
        job.staleness = member.staleness
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
                                        t_serials, t_gpus)
        job.rollout_gpus = sum(r_gpus)
        job.rollout_gpus_per_node = tuple(r_gpus)
        job.tail_gpus = 0
        job.tail_placements = {}
        job.train_gpus = sum(t_gpus)
        job.multiplicity = 1
        job.occurrence = 0
        job.iteration_limit_s = iteration_limit_s
        # The job joins every node at the end of the node's order, from the latest of
        # its nodes' current rounds on.
        job.round = max(node.round for node in job.nodes)
        self._membership_changed(job.nodes)
        for node in job.nodes:
            self._normalise(node)
        if job.staleness and any(len(node.order) > 1 for node in job.nodes):
            raise ValueError(f"job {i}: an asynchronous job must hold its nodes alone")
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
        batch_len = _BATCH_ROWS * PHASE_FIELDS
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
                k = job.iteration
                if k != job.iteration_k:
                    # The first rollout of iteration k ends iteration k - 1 (its waits
                    # included): the per-iteration tail (iteration_tail).
                    if k == job.iteration_k + 1 and job.iteration_k >= 0 and (
                            t - job.iteration_start_s > job.iteration_limit_s):
                        job.iteration_above += 1
                    job.iteration_k = k
                    job.iteration_start_s = t
                draws = job.draws
                if draws is None:
                    roll = roll_node = job.expected_rollout_s
                    job.next_train_s = job.expected_train_s
                else:
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
        batch_len = _BATCH_ROWS * PHASE_FIELDS
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
                        # The last iteration ends with its training.
                        if job.iteration_k == job.iteration - 1 and (
                                t - job.iteration_start_s > job.iteration_limit_s):
                            job.iteration_above += 1
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
            if len(self.rows) >= _BATCH_ROWS * PHASE_FIELDS:
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

    def iteration_tail(self) -> tuple[int, int]:
        """Iterations longer than their job's ``SLO x T_solo`` and the jobs with any.

        An iteration lasts from the start of its first rollout to the start of the next
        iteration's first rollout (the last: to the end of its training), waits and
        pauses included, as :func:`rollmux.sim.policy_compare.iteration_tail` reads
        ``phases.csv``; asynchronous jobs (their rollouts run ahead) are not counted.
        """
        above = [job.iteration_above for job in self.jobs]
        return sum(above), sum(1 for a in above if a)

    def iterations_done(self, i: int) -> int:
        """Whole iterations job ``i`` has completed."""
        return self.jobs[i].iteration

    def busy_gpu_s(self, i: int) -> tuple[float, float]:
        """Useful (rollout-pool, training-pool) GPU-seconds of job ``i`` so far."""
        job = self.jobs[i]
        return job.busy_rollout_gpu_s, job.busy_train_gpu_s

    def phase_table(self) -> pd.DataFrame:
        """The per-phase table (columns :data:`PHASE_RECORD_COLUMNS`), rows in order of release.

        With a sink, the last rows go to it and the table is empty
        (:meth:`rollmux.sim.phaserows.PhaseRows.table`).
        """
        return self.out.table()
