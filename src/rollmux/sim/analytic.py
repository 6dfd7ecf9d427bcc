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

Both paths take an admitted job as the group model's member,
:class:`rollmux.group.GroupJob`, pinned to node serials (ints). Effective phases and the
period are the group model's (:meth:`rollmux.group.GroupJob.effective_phases_s`,
:func:`rollmux.model.cycle.cycle`), as for placement's group metrics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import pandas as pd

from rollmux.group import GroupJob, NodeId
from rollmux.hardware import Hardware
from rollmux.model.cycle import cycle
from rollmux.phases import DeadlockError, switch_paid, switch_s
from rollmux.sim.records import PHASE_RECORD_COLUMNS

__all__ = [
    "AnalyticModel",
    "InFlight",
    "colocation_ratio",
    "effective_phases_s",
    "group_cycle",
    "group_period_s",
]


class InFlight(NamedTuple):
    """A job's unfinished iteration as it leaves its nodes: what a free move carries.

    ``phase``: "rollout" (running) or "train" (running, or next once the rollout is
    complete); ``done``: the share of that phase's work already done, in [0, 1].
    """

    phase: str
    done: float


def _rollout_share(m: GroupJob) -> float:
    """The rollout's share of the job's solo iteration work (rollout, train + sync)."""
    times = m.phases.times
    rollout = times.rollout_s * (m.coloc_ratio if m.colocated else 1.0)
    train = times.train_s + m.sync_s
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
    members: Sequence[GroupJob], shared: set[NodeId]
) -> tuple[list[float], list[float]]:
    """Expected effective (rollout, training) durations of a group's members.

    ``shared`` holds the serials of nodes that host more than one member; each member's
    phases are :meth:`rollmux.group.GroupJob.effective_phases_s`.
    """
    rollout, train = [], []
    for m in members:
        r, t = m.effective_phases_s(rollout_shared=any(n in shared for n in m.rollout_nodes),
                                    train_shared=any(n in shared for n in m.train_nodes))
        rollout.append(r)
        train.append(t)
    return rollout, train


def _nodes(m: GroupJob) -> tuple[NodeId, ...]:
    """Serials of every node a job runs on (a co-located job: its training nodes)."""
    return tuple(dict.fromkeys((*m.rollout_nodes, *m.train_nodes)))


def shared_nodes(members: Sequence[GroupJob]) -> set[NodeId]:
    """Serials of the nodes that host more than one of ``members``."""
    seen: set[NodeId] = set()
    shared: set[NodeId] = set()
    for m in members:
        for n in (*m.rollout_nodes, *m.train_nodes) if not m.colocated else m.train_nodes:
            if n in seen:
                shared.add(n)
            seen.add(n)
    return shared


def group_period_s(
    members: Sequence[GroupJob],
    node_orders: Mapping[NodeId, Sequence[int]] | None = None,
) -> float:
    """Exact steady-state period (s) of a group's cycle with expected phase times.

    ``node_orders`` maps each node serial of the members to its cyclic order of member
    indices (into ``members``; a member may appear several times); default: the members'
    order on every node (round robin). ValueError on orders that break the rules of
    :func:`rollmux.phases.order_multiplicities`.
    """
    return group_cycle(members, node_orders)[0]


def group_cycle(
    members: Sequence[GroupJob],
    node_orders: Mapping[NodeId, Sequence[int]] | None = None,
    shared: set[NodeId] | None = None,
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


def _iteration_share(m: GroupJob, in_flight: InFlight | None) -> float:
    """The share of an iteration ``in_flight`` stands for (rollout first, then train)."""
    if in_flight is None:
        return 0.0
    rho = _rollout_share(m)
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
        self.member: dict[int, GroupJob] = {}
        self.group_of: dict[int, str] = {}
        self.done: dict[int, float] = {}  # fractional iterations done
        self.target: dict[int, int] = {}
        self.ready_s: dict[int, float] = {}
        self.groups: dict[str, list[int]] = {}
        # Per group, node serial -> cyclic order of job indices; None: round robin in the
        # order the members joined.
        self.orders: dict[str, dict[NodeId, list[int]] | None] = {}
        self.period: dict[str, float] = {}
        self.iteration_s: dict[int, float] = {}  # P / m_j: seconds per iteration
        self.finished: set[int] = set()  # completions reported, jobs not yet removed
        self.busy: dict[int, list[float]] = {}

    # ------------------------------------------------------------------ membership

    def add_job(self, i: int, group_id: str, member: GroupJob, t: float, done: int,
                target: int, ready_s: float, resident: bool, draws: object = None,
                in_flight: InFlight | None = None, iteration_limit_s: float = math.inf
                ) -> None:
        """Admit job ``i`` into group ``group_id`` at ``t`` (cold restart when not ``resident``).

        It takes the last place of each of its nodes' orders. ``draws`` and
        ``iteration_limit_s`` are ignored: this path runs on the expected phase times and
        has no iterations. ``in_flight``: the unfinished iteration it resumes (a share of
        an iteration here).
        """
        del draws, iteration_limit_s
        self._advance(t)
        self.member[i] = member
        self.group_of[i] = group_id
        self.done[i] = float(done) + _iteration_share(member, in_flight)
        self.target[i] = target
        pause = ready_s - t
        if not resident:
            # First phase on each pool reloads state from disk: a cold switch each.
            times = member.phases.times
            pause += 2.0 * switch_s(switch_paid(True, member.colocated, False),
                                    times.warm_switch_s, times.cold_switch_s)
        self.ready_s[i] = t + max(0.0, pause)
        self.busy.setdefault(i, [0.0, 0.0])
        self.finished.discard(i)
        self.groups.setdefault(group_id, []).append(i)
        orders = self.orders.setdefault(group_id, None)
        if orders is not None:
            for n in _nodes(member):
                orders.setdefault(n, []).append(i)
        self._refresh(group_id)

    def in_flight(self, i: int, t: float) -> InFlight | None:
        """Job ``i``'s unfinished iteration at ``t`` (None: none begun)."""
        self._advance(t)
        share = self.done[i] - math.floor(self.done[i] + 1e-9)
        if share <= 1e-9:
            return None
        rho = _rollout_share(self.member[i])
        if share < rho:
            return InFlight("rollout", share / rho)
        return InFlight("train", (share - rho) / (1.0 - rho) if rho < 1.0 else 1.0)

    def remove_job(self, i: int, t: float) -> int:
        """Take a job out at ``t``; returns its whole iterations done (progress kept)."""
        self._advance(t)
        member = self.member.pop(i)
        group_id = self.group_of.pop(i)
        members = self.groups[group_id]
        members.remove(i)
        done = self.done.pop(i)
        self.target.pop(i)
        self.ready_s.pop(i)
        self.iteration_s.pop(i, None)
        self.finished.discard(i)
        # A partial iteration is lost: its useful work stays in the busy time, the job
        # resumes from its last whole iteration.
        whole = math.floor(done + 1e-9)
        orders = self.orders.get(group_id)
        if orders is not None:
            for n in _nodes(member):
                left = [j for j in orders[n] if j != i]
                if left:
                    orders[n] = left
                else:
                    del orders[n]
        if members:
            self._refresh(group_id)
        else:
            del self.groups[group_id]
            self.period.pop(group_id, None)
            self.orders.pop(group_id, None)
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
        current: dict[NodeId, list[int]] = before if before is not None else {
            n: [i for i in members if n in _nodes(self.member[i])]
            for n in dict.fromkeys(n for i in members for n in _nodes(self.member[i]))}
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
        group = [self.member[i] for i in members]
        active = [i for i in members if i not in self.finished]
        if not active:
            self.period[group_id] = math.inf
            return
        orders = self.orders.get(group_id)
        local: dict[NodeId, list[int]] | None = None
        if orders is not None:
            pos = {i: k for k, i in enumerate(active)}
            local = {n: [pos[i] for i in seq if i in pos] for n, seq in orders.items()}
            local = {n: seq for n, seq in local.items() if seq}
        period, mult = group_cycle([self.member[i] for i in active], local, shared_nodes(group))
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
                m = self.member[i]
                times, b = m.phases.times, self.busy[i]
                if m.colocated:
                    b[1] += gained * (times.rollout_s * m.coloc_ratio + times.train_s) \
                        * m.phases.train_gpus
                else:
                    b[0] += gained * times.rollout_s * m.phases.rollout_gpus
                    b[1] += gained * times.train_s * m.phases.train_gpus
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
        self._refresh(self.group_of[i])
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
