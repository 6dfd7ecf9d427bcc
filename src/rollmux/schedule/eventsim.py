"""Event-level execution of an intra-group schedule: one row per phase and node.

Two dispatch disciplines, both deterministic (a heap keyed on time and a sequence
number, as in SimPy), sharing one execution (:class:`_Execution`):

* :func:`simulate`, the reference: every node serves its phases in the schedule's fixed cyclic order
  (:attr:`Schedule.node_sequences`), the paper's round-robin meta-iteration. A
  phase starts once its job's previous phase has ended (plus the job's lag) and it
  is next in line, and free, on every node it occupies.
* :func:`simulate_fifo`: the paper's runtime form. Each node keeps a FIFO queue; when a phase
  ends, the job's next phase is enqueued on the nodes of the other pool. A phase
  that spans several nodes (gang) starts when all are free and no phase enqueued
  before it waits for any of them, so queues cannot deadlock. The initial queues
  follow the order of the schedule's first node sequences.

Phases execute by :mod:`rollmux.phases`, the rules every simulator follows: with
per-iteration tail tables, a rollout's duration is how long it holds all its GPUs; its
migrated tail then keeps ``tail_gpus`` of its nodes' GPUs for ``tail_s`` (the next
rollout on those nodes runs on the GPUs left free) and the job's training waits for it.

This is the slow, readable reference: the exact period of
:func:`rollmux.schedule.maxplus.steady_state_period`, the cluster replay's
:class:`rollmux.sim.eventmodel.EventModel` and the micro-benchmark simulation are
checked against it, not derived from it.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from rollmux.phases import DeadlockError, Tail, rollout_release_s, tail_gpus_per_node
from rollmux.schedule.graph import NodeKey, Schedule

TIMELINE_COLUMNS: tuple[str, ...] = ("job", "phase", "node", "iteration", "start_s", "end_s")
"""Columns of the per-phase table: ``phase`` is rollout, tail or train; ``node`` is
``"R<id>"`` or ``"T<id>"`` (a tail has one row per node it keeps GPUs on); ``iteration``
counts the job's iterations from 0."""

__all__ = ["TIMELINE_COLUMNS", "DeadlockError", "PhaseRecord", "measured_period", "node_label",
           "simulate", "simulate_fifo", "to_frame"]


@dataclass(frozen=True, slots=True)
class PhaseRecord:
    """One executed phase on one node."""

    job: int
    phase: str
    node: str
    iteration: int
    start_s: float
    end_s: float


def node_label(node: NodeKey) -> str:
    """Printable node name: ``("R", 0)`` -> ``"R0"``."""
    return f"{node[0]}{node[1]}"


def _durations(
    schedule: Schedule, rollout_s: Sequence[Sequence[float]] | None,
    train_s: Sequence[Sequence[float]] | None,
) -> tuple[Sequence[Sequence[float]] | None, Sequence[Sequence[float]] | None]:
    """Validate optional per-iteration duration tables ``[iteration][job]``."""
    for name, table in (("rollout_s", rollout_s), ("train_s", train_s)):
        if table is None:
            continue
        for k, row in enumerate(table):
            if len(row) != schedule.n_jobs:
                raise ValueError(
                    f"{name}[{k}]: expected {schedule.n_jobs} durations, got {len(row)}"
                )
            for j, v in enumerate(row):
                if not math.isfinite(v) or v <= 0:
                    raise ValueError(
                        f"{name}[{k}][{j}] = {v!r}: durations must be positive and finite"
                    )
    return rollout_s, train_s


def _tails(
    schedule: Schedule, tail_s: Sequence[Sequence[float]] | None,
    tail_gpus: Sequence[Sequence[int]] | None, rollout_gpus: Sequence[Sequence[int]] | None,
    gpus_per_node: int,
) -> None:
    """Validate the optional tail tables ``[iteration][job]`` and per-node GPU counts."""
    if (tail_s is None) != (tail_gpus is None):
        raise ValueError("tail_s and tail_gpus go together: give both or neither")
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, int) or (
            gpus_per_node < 1):
        raise ValueError(f"gpus_per_node must be an integer >= 1, got {gpus_per_node!r}")
    for name, table in (("tail_s", tail_s), ("tail_gpus", tail_gpus)):
        for k, row in enumerate(table or ()):
            if len(row) != schedule.n_jobs:
                raise ValueError(
                    f"{name}[{k}]: expected {schedule.n_jobs} values, got {len(row)}"
                )
            for j, v in enumerate(row):
                if not math.isfinite(v) or v < 0:
                    raise ValueError(f"{name}[{k}][{j}] = {v!r}: must be finite and >= 0")
    if rollout_gpus is not None and len(rollout_gpus) != schedule.n_jobs:
        raise ValueError(f"rollout_gpus: expected {schedule.n_jobs} entries (one per job), "
                         f"got {len(rollout_gpus)}")


class _Execution:
    """One execution of a schedule: durations, tails, job progress, node state, events.

    The subclasses say only in which order a node serves its phases (:meth:`dispatch`,
    and the hooks :meth:`freed`, :meth:`ready`); how a phase runs, when a job may go on
    and what is recorded is here, once.
    """

    def __init__(
        self,
        schedule: Schedule,
        iterations: int,
        rollout_s: Sequence[Sequence[float]] | None,
        train_s: Sequence[Sequence[float]] | None,
        tail_s: Sequence[Sequence[float]] | None,
        tail_gpus: Sequence[Sequence[int]] | None,
        rollout_gpus: Sequence[Sequence[int]] | None,
        gpus_per_node: int,
    ) -> None:
        """Validate the tables and set every node free and every job at its first phase."""
        if iterations < 1:
            raise ValueError(f"iterations = {iterations!r}: expected a positive integer")
        self.r_table, self.t_table = _durations(schedule, rollout_s, train_s)
        _tails(schedule, tail_s, tail_gpus, rollout_gpus, gpus_per_node)
        self.schedule = schedule
        self.iterations = iterations
        self.tail_s, self.tail_gpus = tail_s, tail_gpus
        self.rollout_gpus, self.gpus_per_node = rollout_gpus, gpus_per_node
        self.phases = schedule.phases
        self.mult = schedule.multiplicity()
        self.chains = schedule.job_chains
        self.chain_pos = {p: (j, i) for j, chain in enumerate(self.chains)
                          for i, p in enumerate(chain)}
        # Migrated tails holding a share of each node's GPUs: (end time, share).
        self.tails: dict[NodeKey, list[Tail]] = {node: [] for node in schedule.nodes()}
        # Job progress: position in its chain and meta-iteration, and when it may go on.
        self.job_ready_s = [0.0] * schedule.n_jobs
        self.job_next = [(0, 0)] * schedule.n_jobs  # (chain index, meta-iteration)
        self.node_free = dict.fromkeys(schedule.nodes(), True)
        self.seq_of = dict(schedule.node_sequences)
        self.events: list[tuple[float, int, int, int]] = []  # (end, seq, phase, meta-iteration)
        self.event_seq = 0
        self.records: list[PhaseRecord] = []

    def duration(self, p: int, k: int) -> float:
        """Phase ``p``'s duration in meta-iteration ``k`` (its table row, else the schedule's)."""
        ph = self.phases[p]
        it = k * self.mult[ph.job] + ph.occurrence
        table = self.r_table if ph.kind == "rollout" else self.t_table
        if table is None:
            return ph.duration_s
        if it >= len(table):
            raise ValueError(
                f"{ph.kind}_s: needs at least {it + 1} rows for job {ph.job}, got {len(table)}"
            )
        return float(table[it][ph.job])

    def tail_of(self, p: int, k: int) -> tuple[float, int]:
        """The migrated tail (seconds, GPUs) of rollout ``p`` in meta-iteration ``k``."""
        ph = self.phases[p]
        if self.tail_s is None or self.tail_gpus is None or ph.kind != "rollout":
            return 0.0, 0
        it = k * self.mult[ph.job] + ph.occurrence
        return float(self.tail_s[it][ph.job]), int(self.tail_gpus[it][ph.job])

    def start(self, p: int, k: int, now: float) -> None:
        """Start phase ``p`` of meta-iteration ``k`` at ``now`` on all its nodes."""
        ph = self.phases[p]
        if ph.kind == "rollout":
            for node in ph.nodes:
                self.tails[node] = [tail for tail in self.tails[node] if tail[0] > now]
            end = rollout_release_s(now, self.duration(p, k),
                                    [self.tails[node] for node in ph.nodes])
        else:
            end = now + self.duration(p, k)
        it = k * self.mult[ph.job] + ph.occurrence
        for node in ph.nodes:
            self.node_free[node] = False
            self.records.append(PhaseRecord(ph.job, ph.kind, node_label(node), it, now, end))
        heapq.heappush(self.events, (end, self.event_seq, p, k))
        self.event_seq += 1

    def job_wants(self, j: int, now: float) -> tuple[int, int] | None:
        """(phase, meta-iteration) job ``j`` may start at ``now``, None if it may not."""
        idx, k = self.job_next[j]
        if idx < 0 or k >= self.iterations or self.job_ready_s[j] > now:
            return None
        return self.chains[j][idx], k

    def dispatch(self, now: float) -> None:
        """Start every phase the discipline lets start at ``now``."""
        raise NotImplementedError

    def freed(self, node: NodeKey) -> None:
        """``node`` finished the phase it served (before :meth:`dispatch`)."""

    def ready(self, j: int) -> None:
        """Job ``j`` may go on with its next phase (its ``job_next``)."""

    def run(self) -> list[PhaseRecord]:
        """Execute until every job has run its meta-iterations; records by start, node."""
        chains, phases, iterations = self.chains, self.phases, self.iterations
        total = sum(len(chain) for chain in chains) * iterations
        done = 0
        releases: list[tuple[float, int, int]] = []  # (time, seq, job): a lagged job goes on
        self.dispatch(0.0)
        while done < total:
            if releases and (not self.events or releases[0][0] <= self.events[0][0]):
                now, _, j = heapq.heappop(releases)
                self.ready(j)
            elif self.events:
                now, _, p, k = heapq.heappop(self.events)
                done += 1
                for node in phases[p].nodes:
                    self.node_free[node] = True
                    self.freed(node)
                j, idx = self.chain_pos[p]
                idx += 1
                # The job goes on after its migrated tail (a rollout's) or its lag
                # (wrap-around).
                lag, gpus = self.tail_of(p, k)
                if lag > 0.0:
                    ph = phases[p]
                    it = k * self.mult[j] + ph.occurrence
                    job_gpus = (self.rollout_gpus[j] if self.rollout_gpus is not None
                                else [self.gpus_per_node] * len(ph.nodes))
                    for node, here in zip(ph.nodes, tail_gpus_per_node(gpus, job_gpus),
                                          strict=True):
                        if here > 0:
                            self.tails[node].append((now + lag, here / self.gpus_per_node))
                            self.records.append(PhaseRecord(j, "tail", node_label(node), it,
                                                            now, now + lag))
                if idx == len(chains[j]):
                    idx, k, lag = 0, k + 1, self.schedule.lag_s[j]
                self.job_next[j] = (idx, k)
                self.job_ready_s[j] = now + lag
                if k < iterations:
                    if lag > 0:
                        heapq.heappush(releases, (now + lag, self.event_seq, j))
                        self.event_seq += 1
                    else:
                        self.ready(j)
            else:
                raise DeadlockError(
                    "schedule deadlocks: no phase can start (node orders contradict job chains)"
                )
            self.dispatch(now)
        self.records.sort(key=lambda r: (r.start_s, r.node, r.job))
        return self.records


class _Static(_Execution):
    """Every node serves its phases in the schedule's fixed cyclic order."""

    def __init__(self, *args: object) -> None:
        """Every node at the first slot of its sequence, meta-iteration 0."""
        super().__init__(*args)  # type: ignore[arg-type]
        self.node_ptr = {node: (0, 0) for node in self.seq_of}  # (position, meta-iteration)

    def freed(self, node: NodeKey) -> None:
        """The node moves on to the next slot of its sequence."""
        pos, nk = self.node_ptr[node]
        pos += 1
        if pos == len(self.seq_of[node]):
            pos, nk = 0, nk + 1
        self.node_ptr[node] = (pos, nk)

    def dispatch(self, now: float) -> None:
        """Start each job's next phase that is next in line, and free, on all its nodes."""
        progress = True
        while progress:
            progress = False
            for j in range(self.schedule.n_jobs):
                want = self.job_wants(j, now)
                if want is None:
                    continue
                p, k = want
                if all(
                    self.node_free[node]
                    and self.seq_of[node][self.node_ptr[node][0]] == p
                    and self.node_ptr[node][1] == k
                    for node in self.phases[p].nodes
                ):
                    self.job_next[j] = (-1, k)  # running
                    self.start(p, k, now)
                    progress = True


class _Fifo(_Execution):
    """Every node serves the phases enqueued on it first come, first served."""

    def __init__(self, *args: object) -> None:
        """Enqueue each job's first phase, in the order of the first node sequences."""
        super().__init__(*args)  # type: ignore[arg-type]
        self.queue: dict[NodeKey, list[tuple[int, int, int]]] = {
            node: [] for node in self.seq_of}
        self.enqueue_seq = 0
        first: list[int] = []
        for _, seq in self.schedule.node_sequences:
            for p in seq:
                j = self.phases[p].job
                if self.chains[j][0] == p and j not in first:
                    first.append(j)
        for j in first:
            self.enqueue(self.chains[j][0], 0)

    def enqueue(self, p: int, k: int) -> None:
        """Phase ``p`` of meta-iteration ``k`` joins the queue of each of its nodes."""
        for node in self.phases[p].nodes:
            self.queue[node].append((self.enqueue_seq, p, k))
        self.enqueue_seq += 1

    def ready(self, j: int) -> None:
        """The job's next phase is enqueued on its nodes."""
        idx, k = self.job_next[j]
        self.enqueue(self.chains[j][idx], k)

    def dispatch(self, now: float) -> None:
        """Start a phase first in the queue, and free, on all its nodes, one at a time."""
        progress = True
        while progress:
            progress = False
            heads = sorted({q[0] for q in self.queue.values() if q}, key=lambda item: item[0])
            for seq_no, p, k in heads:
                nodes = self.phases[p].nodes
                if all(
                    self.node_free[node] and self.queue[node]
                    and self.queue[node][0][0] == seq_no
                    for node in nodes
                ):
                    for node in nodes:
                        self.queue[node].pop(0)
                    self.start(p, k, now)
                    progress = True
                    break


def simulate(
    schedule: Schedule,
    iterations: int,
    rollout_s: Sequence[Sequence[float]] | None = None,
    train_s: Sequence[Sequence[float]] | None = None,
    *,
    tail_s: Sequence[Sequence[float]] | None = None,
    tail_gpus: Sequence[Sequence[int]] | None = None,
    rollout_gpus: Sequence[Sequence[int]] | None = None,
    gpus_per_node: int = 8,
) -> list[PhaseRecord]:
    """Execute ``schedule`` until every job has run ``iterations`` meta-iterations.

    The reference: every node serves its phases in the schedule's fixed cyclic order.
    Phase durations come from the schedule unless per-iteration tables
    ``rollout_s[iteration][job]`` / ``train_s[iteration][job]`` are given (iteration
    counted per job, so a job with multiplicity 2 uses two rows per meta-iteration).
    Long-tail migration (:mod:`rollmux.phases`): ``tail_s``/``tail_gpus`` tables give each
    rollout's migrated tail, which keeps GPUs of the job's rollout nodes (the job's GPUs
    on each: ``rollout_gpus[job]``, default whole nodes of ``gpus_per_node``) after the
    rollout releases them; the rollout's duration is then its full-capacity occupancy.
    Returns records sorted by start time, then node.
    """
    return _Static(schedule, iterations, rollout_s, train_s, tail_s, tail_gpus, rollout_gpus,
                   gpus_per_node).run()


def simulate_fifo(
    schedule: Schedule,
    iterations: int,
    rollout_s: Sequence[Sequence[float]] | None = None,
    train_s: Sequence[Sequence[float]] | None = None,
    *,
    tail_s: Sequence[Sequence[float]] | None = None,
    tail_gpus: Sequence[Sequence[int]] | None = None,
    rollout_gpus: Sequence[Sequence[int]] | None = None,
    gpus_per_node: int = 8,
) -> list[PhaseRecord]:
    """As :func:`simulate`, with the paper's runtime form: a FIFO queue per node."""
    return _Fifo(schedule, iterations, rollout_s, train_s, tail_s, tail_gpus, rollout_gpus,
                 gpus_per_node).run()


def to_frame(records: Sequence[PhaseRecord]) -> pd.DataFrame:
    """The per-phase table (columns :data:`TIMELINE_COLUMNS`)."""
    return pd.DataFrame(
        {
            "job": [r.job for r in records],
            "phase": [r.phase for r in records],
            "node": [r.node for r in records],
            "iteration": [r.iteration for r in records],
            "start_s": [r.start_s for r in records],
            "end_s": [r.end_s for r in records],
        },
        columns=list(TIMELINE_COLUMNS),
    )


def measured_period(
    records: Sequence[PhaseRecord], schedule: Schedule, skip: int, max_cyclicity: int = 24
) -> float:
    """Meta-iteration time measured from a simulation, after ``skip`` warm-up meta-iterations.

    Max-plus systems become periodic after a transient, possibly with a cyclicity
    ``c > 1`` (increments repeat every ``c`` meta-iterations). Per job, we find the
    smallest such ``c <= max_cyclicity`` in the increments of its first rollout's
    start times and average over a whole number of cycles; without one, the plain
    slope. Returns the maximum over jobs.
    """
    mult = schedule.multiplicity()
    starts: dict[int, dict[int, float]] = {}
    for r in records:
        if r.phase == "rollout" and r.iteration % mult[r.job] == 0:
            starts.setdefault(r.job, {})[r.iteration // mult[r.job]] = r.start_s
    best = 0.0
    for per_job in starts.values():
        xs = [per_job[k] for k in sorted(per_job) if k >= skip]
        if len(xs) < 3:
            raise ValueError(
                f"skip = {skip}: need at least 3 meta-iterations after it, got {len(xs)}"
            )
        inc = [b - a for a, b in itertools.pairwise(xs)]
        tol = 1e-9 * max(1.0, max(abs(x) for x in xs))
        estimate = (xs[-1] - xs[0]) / (len(xs) - 1)
        for c in range(1, min(max_cyclicity, len(inc) // 2) + 1):
            tail = inc[len(inc) % c :]
            if all(abs(tail[i] - tail[i - c]) <= tol for i in range(c, len(tail))):
                estimate = sum(tail[-c:]) / c
                break
        best = max(best, estimate)
    return best
