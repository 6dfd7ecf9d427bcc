"""The fast analytical replay path and the expected phase times both paths share.

Between cluster events (arrivals, completions, kills, resubmissions, regroupings) each
group progresses at its exact steady-state rate, one iteration of every member per
meta-iteration, where the meta-iteration comes from the max-plus model of the group's
round-robin schedule with expected phase times (docs/model.md). Jobs advance by
fractional iterations; a job completes when its remaining iterations run out. A group
with a paused member (migration after a regrouping, cold restart) does not progress until
every member is ready (the round-robin order waits for it).

Effective phases (as in :mod:`rollmux.group`): rollout ``rollout_s`` plus a warm switch
when any of the job's rollout nodes hosts another job; training ``train_s + sync_s`` plus
a warm switch when any of its training nodes hosts another job. A veRL (co-located) job:
``rollout_s * (n_r bw_r) / (n_t bw_t) + train_s + 2 warm_switch_s``, no sync.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from rollmux.hardware import Hardware
from rollmux.phasetimes import PhaseTimes
from rollmux.schedule.maxplus import period_of_event_graph
from rollmux.sim.records import PHASE_COLUMNS

__all__ = [
    "AnalyticModel",
    "InFlight",
    "JobRuntime",
    "colocation_ratio",
    "effective_phases_s",
    "group_period_s",
]


@dataclass(frozen=True, slots=True)
class JobRuntime:
    """What both replay paths need of an admitted job (built once at admission).

    ``rollout_nodes``/``train_nodes`` are node serials (for a co-located job its rollout
    runs on its training nodes); ``sync_s`` the sync of the chosen mode; ``coloc_ratio``
    the factor turning its rollout time into rollout time on its training GPUs;
    ``rollout_gpus_per_node``/``train_gpus_per_node`` the job's GPUs on each pinned node.
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

    ``shared`` holds the serials of nodes that host more than one member.
    """
    rollout, train = [], []
    for m in members:
        t = m.times
        if m.colocated:
            rollout.append(t.rollout_s * m.coloc_ratio + t.warm_switch_s)
            train.append(t.train_s + t.warm_switch_s)
            continue
        r_sw = t.warm_switch_s if any(n in shared for n in m.rollout_nodes) else 0.0
        t_sw = t.warm_switch_s if any(n in shared for n in m.train_nodes) else 0.0
        rollout.append(t.rollout_s + r_sw)
        train.append(t.train_s + m.sync_s + t_sw)
    return rollout, train


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
    """Exact steady-state meta-iteration (s) of a group with expected phase times.

    ``node_orders`` maps a node serial to the order of member indices (into
    ``members``) on it; default: the members' order on every node (round robin).
    """
    if not members:
        raise ValueError("members must hold at least one job")
    rollout, train = effective_phases_s(members, shared_nodes(members))
    if len(members) == 1 and members[0].colocated:
        return rollout[0] + train[0]
    n = len(members)
    sequences: dict[tuple[int, int], list[int]] = {}
    if node_orders is None:
        for j, m in enumerate(members):
            for node in m.rollout_nodes:
                sequences.setdefault((0, node), []).append(j)
        for j, m in enumerate(members):
            for node in m.train_nodes:
                sequences.setdefault((1, node), []).append(n + j)
    else:
        r_nodes = {node for m in members for node in m.rollout_nodes}
        for node, order in sorted(node_orders.items()):
            pool = 0 if node in r_nodes else 1
            sequences[(pool, node)] = [j if pool == 0 else n + j for j in order]
    return period_of_event_graph(
        [*rollout, *train], [[j, n + j] for j in range(n)], [0.0] * n,
        [sequences[k] for k in sorted(sequences)],
    )


def _iteration_share(rt: JobRuntime, in_flight: InFlight | None) -> float:
    """The share of an iteration ``in_flight`` stands for (rollout first, then train)."""
    if in_flight is None:
        return 0.0
    rho = _rollout_share(rt)
    if in_flight.phase == "rollout":
        return rho * in_flight.done
    return rho + (1.0 - rho) * in_flight.done


class AnalyticModel:
    """Fluid progress: each group advances at 1 / meta-iteration between cluster events."""

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
        self.orders: dict[str, dict[int, list[int]] | None] = {}
        self.period: dict[str, float] = {}
        self.busy: dict[int, list[float]] = {}

    # ------------------------------------------------------------------ membership

    def add_job(self, rt: JobRuntime, t: float, done: int, target: int, ready_s: float,
                resident: bool, draws: object = None, in_flight: InFlight | None = None
                ) -> None:
        """Admit a job into its group at time ``t`` (cold restart when not ``resident``).

        ``draws`` is ignored: this path runs on the expected phase times. ``in_flight``:
        the unfinished iteration it resumes (a share of an iteration here).
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
            pause += 2.0 * rt.times.cold_switch_s
        self.ready_s[i] = t + max(0.0, pause)
        self.busy.setdefault(i, [0.0, 0.0])
        self.groups.setdefault(rt.group_id, []).append(i)
        self.orders.setdefault(rt.group_id, None)
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
        # A partial iteration is lost: its useful work stays in the busy time, the job
        # resumes from its last whole iteration.
        whole = math.floor(done + 1e-9)
        if members:
            self._refresh(rt.group_id)
        else:
            del self.groups[rt.group_id]
            self.period.pop(rt.group_id, None)
            self.orders.pop(rt.group_id, None)
        return whole

    def set_node_orders(self, group_id: str, orders: Mapping[int, Sequence[int]] | None) -> None:
        """Use per-node job orders (job indices) for ``group_id`` (None: round robin)."""
        self.orders[group_id] = None if orders is None else {k: list(v) for k, v in
                                                              orders.items()}
        self._refresh(group_id)

    def _refresh(self, group_id: str) -> None:
        """Recompute a group's meta-iteration from its current members."""
        members = self.groups[group_id]
        rts = [self.runtime[i] for i in members]
        orders = self.orders.get(group_id)
        local = None
        if orders is not None:
            pos = {i: k for k, i in enumerate(members)}
            local = {n: [pos[i] for i in seq if i in pos] for n, seq in orders.items()}
            local = {n: seq for n, seq in local.items() if seq}
        self.period[group_id] = group_period_s(rts, local)

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
            period = self.period[group_id]
            delta = (t - start) / period
            for i in members:
                gained = min(delta, self.target[i] - self.done[i])
                if gained <= 0:
                    continue
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
            period = self.period[group_id]
            for i in members:
                t = start + (self.target[i] - self.done[i]) * period
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
        return pd.DataFrame(columns=list(PHASE_COLUMNS))
