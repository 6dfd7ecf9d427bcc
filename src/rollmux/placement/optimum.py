"""The `optimal` baseline: minimum-cost partition of concurrent jobs into co-execution groups.

Two layers (formulation, pinning space and pruning proofs: docs/optimum.md):

* :func:`min_cost_group` - the cheapest way to run exactly a given set of jobs as one
  group: node counts, each job's pinning to rollout and training nodes, and a
  round-robin order, such that every node's resident state fits its host memory and
  every job's worst-case slowdown (exact group model,
  ``CoExecutionGroup.metrics(worst_case=True)``) is within its SLO. Pinnings are
  enumerated up to node relabelling (a side of a pinning is a multiset of per-node job
  sets), node counts in increasing cost order, stopping at the first feasible one.
* :func:`optimal_partition` - set partitioning over the feasible groups, solved exactly
  by HiGHS through :func:`scipy.optimize.milp`; :func:`bruteforce_partition` enumerates
  every set partition (restricted growth strings) as the cross-check.

Only *connected* groups (every job shares a node with another, transitively) are
searched: a disconnected group costs exactly its components' nodes and no component
runs slower alone, so the partition optimum is unchanged (docs/optimum.md, Lemma 2).
A pinning is rejected before its orders are tried when some proper subset of its jobs
has no order within the budget (P6), and the orders are tried with a Bellman-Ford
decision first (P7). :class:`ColumnCache` keeps the columns across calls on
overlapping job sets (the ``optimal`` and ``regroup`` policies re-solve at every
decision), with the same results.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from rollmux.closedform import pools_from_hardware
from rollmux.group import (
    CoExecutionGroup,
    group_job_from_rljob,
    node_capacity_from_hardware,
)
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.phasetimes import (
    PhaseTimes,
    phase_times,
    rollout_mem_gb_per_node,
    train_mem_gb_per_node,
)
from rollmux.schedule.maxplus import (
    build_event_graph,
    period_is_at_most,
    period_of_event_graph,
    simple_cycle_bound,
)

__all__ = [
    "BRUTEFORCE_AUTO_MAX_JOBS",
    "BRUTEFORCE_TIME_LIMIT_S",
    "ColumnCache",
    "GroupPlan",
    "Partition",
    "bench_optimum",
    "bruteforce_partition",
    "min_cost_group",
    "optimal_partition",
    "solo_cost_usd_per_h",
]

Space = Literal["full", "rollmux"]
Orders = Literal["all", "index"]

# Relative tolerance of the SLO and memory checks, the same as rollmux.group's.
REL_TOL = 1e-9
# bench_optimum runs the brute force by itself up to this many jobs ...
BRUTEFORCE_AUTO_MAX_JOBS = 10
# ... and gives it this much wall time before recording it as unfinished.
BRUTEFORCE_TIME_LIMIT_S = 120.0


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GroupPlan:
    """One co-execution group of a partition: its jobs, nodes, pinning, order, cost.

    Pinnings are local node indices: job ``job_ids[k]`` runs its rollout on nodes
    ``rollout_pinning[k]`` of ``range(rollout_nodes)`` and its training on
    ``train_pinning[k]`` of ``range(train_nodes)``; ``order`` is the round-robin order
    (indices into ``job_ids``). ``meta_iteration_s`` is the exact worst-case
    (max-token) meta-iteration time.
    """

    job_ids: tuple[str, ...]
    rollout_nodes: int
    train_nodes: int
    rollout_pinning: tuple[tuple[int, ...], ...]
    train_pinning: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    cost_usd_per_h: float
    meta_iteration_s: float

    def co_execution_group(self, jobs: Sequence[RLJob], hw: Hardware) -> CoExecutionGroup:
        """The :class:`CoExecutionGroup` of this plan (``jobs`` must hold its job ids)."""
        by_id = {job.job_id: job for job in jobs}
        missing = [job_id for job_id in self.job_ids if job_id not in by_id]
        if missing:
            raise ValueError(f"jobs: no job with id {missing[0]!r} (the plan's jobs)")
        first = by_id[self.job_ids[0]]
        members = tuple(
            group_job_from_rljob(by_id[job_id], hw, rollout, train)
            for job_id, rollout, train in zip(
                self.job_ids, self.rollout_pinning, self.train_pinning, strict=True
            )
        )
        return CoExecutionGroup(
            jobs=members,
            rollout_node_ids=tuple(range(self.rollout_nodes)),
            train_node_ids=tuple(range(self.train_nodes)),
            pools=pools_from_hardware(hw, first.rollout_gpu_type, first.train_gpu_type),
            node_capacity=node_capacity_from_hardware(hw),
            order=self.order,
        )


@dataclass(frozen=True)
class Partition:
    """A partition of jobs into groups with its hourly cost, solver status and wall time."""

    groups: tuple[GroupPlan, ...]
    cost_usd_per_h: float
    solver: str
    seconds: float
    n_columns: int = 0  # candidate groups handed to the solver (0: not a column method)
    # True when the partition is proven minimum-cost: every column was enumerated and
    # HiGHS reported optimality (brute force: always).
    proven_optimal: bool = True
    # Candidate groups searched in this call (the rest came from a ColumnCache).
    n_searched: int = 0


# --------------------------------------------------------------------------- job data


@dataclass(frozen=True)
class _JobData:
    """What the search needs of one job, computed once (phase_times costs milliseconds)."""

    job: RLJob
    times: PhaseTimes
    rollout_type: str
    train_type: str
    n_rollout_nodes: int
    n_train_nodes: int
    rollout_s: float  # worst case
    train_s: float  # worst case + sync (the effective training phase before switches)
    warm_s: float
    solo_s: float  # worst-case solo iteration, the group model's T_solo
    slo: float
    budget_s: float  # largest meta-iteration the SLO allows
    rollout_mem_gb: float
    train_mem_gb: float


@dataclass(frozen=True)
class _Context:
    """Per-call constants: node size, prices per node and host memory."""

    gpus_per_node: int
    host_mem_gb: float
    hw: Hardware

    def node_price(self, gpu_type: str) -> float:
        """Hourly price of one node of ``gpu_type``."""
        return self.hw.price_usd_per_h(gpu_type, self.gpus_per_node)

    def fits(self, gb: float) -> bool:
        """Whether ``gb`` of resident state fits one node's host memory."""
        return gb <= self.host_mem_gb * (1.0 + REL_TOL)


def _context(hw: Hardware) -> _Context:
    if not isinstance(hw, Hardware):
        raise ValueError(f"hw = {hw!r}: expected a rollmux.hardware.Hardware")
    return _Context(hw.node.gpus_per_node, hw.node.host_mem_gb, hw)


def _job_data(
    jobs: Sequence[RLJob], ctx: _Context, memo: dict[RLJob, _JobData] | None = None
) -> list[_JobData]:
    """Validate the jobs (non-empty, unique ids, each fits a node) and precompute their data.

    ``memo`` (a :class:`ColumnCache`'s) keeps each job's data across calls.
    """
    if isinstance(jobs, RLJob) or not isinstance(jobs, Sequence) or not jobs:
        raise ValueError(f"jobs = {jobs!r}: expected a non-empty sequence of RLJob")
    seen: set[str] = set()
    out = []
    for i, job in enumerate(jobs):
        if not isinstance(job, RLJob):
            raise ValueError(f"jobs[{i}] = {job!r}: expected an RLJob")
        if job.job_id in seen:
            raise ValueError(f"jobs[{i}].job_id = {job.job_id!r}: repeated job id")
        seen.add(job.job_id)
        if memo is not None and job in memo:
            out.append(memo[job])
            continue
        times = phase_times(job, ctx.hw)
        mem_r = rollout_mem_gb_per_node(job, ctx.hw)
        mem_t = train_mem_gb_per_node(job, ctx.hw)
        for pool, gb in (("rollout", mem_r), ("training", mem_t)):
            if not ctx.fits(gb):
                raise ValueError(
                    f"job {job.job_id!r} fits no node: its {pool} state needs {gb:g} GB of "
                    f"host memory per node, a node has {ctx.host_mem_gb:g} GB"
                )
        solo = times.rollout_max_s + times.train_max_s + times.sync_s
        out.append(
            _JobData(
                job=job,
                times=times,
                rollout_type=job.rollout_gpu_type,
                train_type=job.train_gpu_type,
                n_rollout_nodes=math.ceil(job.rollout_gpus / ctx.gpus_per_node),
                n_train_nodes=math.ceil(job.train_gpus / ctx.gpus_per_node),
                rollout_s=times.rollout_max_s,
                train_s=times.train_max_s + times.sync_s,
                warm_s=times.warm_switch_s,
                solo_s=solo,
                slo=job.slo,
                budget_s=job.slo * solo * (1.0 + REL_TOL),
                rollout_mem_gb=mem_r,
                train_mem_gb=mem_t,
            )
        )
        if memo is not None:
            memo[job] = out[-1]
    return out


def _check_max_cost(value: float | None) -> float:
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"max_cost_usd_per_h = {value!r}: expected a number or None")
    return float(value)


def _check_time_limit(value: float | None) -> float:
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"time_limit_s = {value!r}: expected a positive number or None")
    return float(value)


def _check_orders(value: Orders) -> bool:
    """True for ``"all"``, False for ``"index"``; ValueError otherwise."""
    if value not in ("all", "index"):
        raise ValueError(f"orders = {value!r}: expected 'all' or 'index'")
    return value == "all"


def _check_space(value: Space) -> bool:
    """True for ``"full"``, False for ``"rollmux"``; ValueError otherwise."""
    if value not in ("full", "rollmux"):
        raise ValueError(f"space = {value!r}: expected 'full' or 'rollmux'")
    return value == "full"


def _check_group_size(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_group_size = {value!r}: expected an integer >= 1")
    return value


# --------------------------------------------------------------------------- one group


def _solo_plan(d: _JobData, ctx: _Context) -> GroupPlan:
    """A job alone on its own nodes: slowdown 1, so always feasible when it fits a node."""
    return GroupPlan(
        job_ids=(d.job.job_id,),
        rollout_nodes=d.n_rollout_nodes,
        train_nodes=d.n_train_nodes,
        rollout_pinning=(tuple(range(d.n_rollout_nodes)),),
        train_pinning=(tuple(range(d.n_train_nodes)),),
        order=(0,),
        cost_usd_per_h=_solo_cost(d, ctx),
        meta_iteration_s=d.solo_s,
    )


def _solo_cost(d: _JobData, ctx: _Context) -> float:
    return d.n_rollout_nodes * ctx.node_price(d.rollout_type) + d.n_train_nodes * ctx.node_price(
        d.train_type
    )


def _side_layouts(
    need: Sequence[int], n_nodes: int, masks: Sequence[int]
) -> Iterator[tuple[int, ...]]:
    """Multisets of ``n_nodes`` job sets (bit masks) with job k in exactly ``need[k]`` of them.

    A multiset is one pinning of a pool up to relabelling its nodes. ``masks`` (sorted) are
    the allowed per-node job sets; the multiset is yielded as a non-decreasing tuple, in
    lexicographic order. Dead branches are cut early: a node may only take jobs that still
    need nodes, every such job must appear in some mask not yet passed, and the nodes left
    must be able to hold the placements left.
    """
    n = len(need)
    remaining = list(need)
    chosen: list[int] = []
    bits = [[k for k in range(n) if mask >> k & 1] for mask in masks]
    count = len(masks)
    # union and largest size of the masks from index i on
    suffix_union = [0] * (count + 1)
    suffix_pop = [0] * (count + 1)
    for i in range(count - 1, -1, -1):
        suffix_union[i] = suffix_union[i + 1] | masks[i]
        suffix_pop[i] = max(suffix_pop[i + 1], len(bits[i]))

    def rec(start: int, nodes_left: int, avail: int, total: int) -> Iterator[tuple[int, ...]]:
        if nodes_left == 0:
            if total == 0:
                yield tuple(chosen)
            return
        if (
            total < nodes_left
            or total > nodes_left * suffix_pop[start]
            or avail & ~suffix_union[start]
            or max(remaining) > nodes_left
        ):
            return
        for idx in range(start, count):
            mask = masks[idx]
            if mask & ~avail:
                continue
            members = bits[idx]
            left = avail
            for k in members:
                remaining[k] -= 1
                if remaining[k] == 0:
                    left &= ~(1 << k)
            chosen.append(mask)
            yield from rec(idx, nodes_left - 1, left, total - len(members))
            chosen.pop()
            for k in members:
                remaining[k] += 1

    avail0 = sum(1 << k for k in range(n) if need[k] > 0)
    yield from rec(0, n_nodes, avail0, sum(need))


def _layouts(need: Sequence[int], n_nodes: int, masks: Sequence[int]) -> _LazyList:
    """:func:`_side_layouts`, shared between searches (job sets with equal inputs)."""
    key = (tuple(need), n_nodes, tuple(masks))
    layouts = _LAYOUTS.get(key)
    if layouts is None:
        if len(_LAYOUTS) >= _LAYOUTS_MAX:
            _LAYOUTS.clear()
        layouts = _LAYOUTS[key] = _LazyList(_side_layouts(need, n_nodes, masks))
    return layouts


class _LazyList:
    """A generator's items, produced on demand and kept for repeated iteration."""

    def __init__(self, items: Iterator[tuple[int, ...]]) -> None:
        self._items = items
        self._done: list[tuple[int, ...]] = []
        self._exhausted = False

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        i = 0
        while True:
            if i < len(self._done):
                yield self._done[i]
                i += 1
                continue
            if self._exhausted:
                return
            item = next(self._items, None)
            if item is None:
                self._exhausted = True
                return
            self._done.append(item)


# Layout enumerations kept across searches and calls, by (need, node count, masks).
_LAYOUTS: dict[tuple[tuple[int, ...], int, tuple[int, ...]], _LazyList] = {}
_LAYOUTS_MAX = 4096


def _pins(layout: Sequence[int], n: int) -> tuple[tuple[int, ...], ...]:
    """Per-job node indices of a side layout."""
    return tuple(tuple(i for i, mask in enumerate(layout) if mask >> k & 1) for k in range(n))


def _shared(layout: Sequence[int], n: int) -> list[bool]:
    """Whether job k shares at least one node of this side with another job."""
    out = [False] * n
    for mask in layout:
        if mask & (mask - 1):
            for k in range(n):
                if mask >> k & 1:
                    out[k] = True
    return out


def _connected(n: int, layouts: Sequence[Sequence[int]]) -> bool:
    """Whether the jobs form one component when jobs sharing a node are adjacent."""
    reach = 1
    changed = True
    while changed:
        changed = False
        for layout in layouts:
            for mask in layout:
                if mask & reach and mask & ~reach:
                    reach |= mask
                    changed = True
    return reach == (1 << n) - 1


def _orders(n: int) -> Iterator[tuple[int, ...]]:
    """Every round-robin order up to rotation (rotating all nodes is a retiming)."""
    for rest in itertools.permutations(range(1, n)):
        yield (0, *rest)


class _DeadlineError(Exception):
    """The time limit of :func:`optimal_partition` ran out inside one group's search."""


def _search_group(
    data: Sequence[_JobData],
    ctx: _Context,
    max_cost: float,
    prune: bool,
    all_orders: bool,
    full_space: bool = True,
    periods: _PeriodCache | None = None,
    deadline: float = math.inf,
) -> GroupPlan | None:
    """The cheapest feasible connected pinning of ``data`` (>= 2 jobs) costing < ``max_cost``.

    ``periods`` may be shared between calls: its keys are the (sub)problems themselves.
    Raises :class:`_DeadlineError` once ``deadline`` (a ``perf_counter`` time) passes.
    """
    n = len(data)
    first = data[0]
    if any(d.rollout_type != first.rollout_type or d.train_type != first.train_type for d in data):
        return None  # jobs of different GPU types cannot share a node
    budget = min(d.budget_s for d in data)
    # P1 (docs/optimum.md): in a connected group every job pays a warm switch on some
    # node, so the meta-iteration is at least max_j (T_solo_j + w_j); this only grows with the set.
    if prune and max(d.solo_s + d.warm_s for d in data) > budget:
        return None
    price_r, price_t = ctx.node_price(first.rollout_type), ctx.node_price(first.train_type)
    need_r = [d.n_rollout_nodes for d in data]
    need_t = [d.n_train_nodes for d in data]
    masks_r, masks_t = [], []
    # Per-mask sums in increasing job order (the same floats as summing the members):
    # memory, and loads with (shared node) and without (private node) warm switches.
    size = 1 << n
    mem_r, mem_t = [0.0] * size, [0.0] * size
    shared_r, shared_t = [0.0] * size, [0.0] * size
    for mask in range(1, size):
        top = mask.bit_length() - 1
        rest = mask ^ (1 << top)
        d = data[top]
        mem_r[mask] = mem_r[rest] + d.rollout_mem_gb
        mem_t[mask] = mem_t[rest] + d.train_mem_gb
        shared_r[mask] = shared_r[rest] + (d.rollout_s + d.warm_s)
        shared_t[mask] = shared_t[rest] + (d.train_s + d.warm_s)
        sharing = rest != 0
        if ctx.fits(mem_r[mask]):
            load = shared_r[mask] if sharing else d.rollout_s + 0.0
            if not prune or load <= budget:
                masks_r.append(mask)
        if ctx.fits(mem_t[mask]):
            load = shared_t[mask] if sharing else d.train_s + 0.0
            if not prune or load <= budget:
                masks_t.append(mask)
    hi_r, hi_t = sum(need_r), sum(need_t)
    if not full_space:
        hi_t = max(need_t)  # Algorithm 1 never adds training nodes to a group
    lo_r, lo_t = max(need_r), max(need_t)
    if prune:
        work_r = sum(k * d.rollout_s for k, d in zip(need_r, data, strict=True))
        work_t = sum(k * d.train_s for k, d in zip(need_t, data, strict=True))
        lo_r = max(lo_r, math.ceil(work_r / budget - REL_TOL))
        lo_t = max(lo_t, math.ceil(work_t / budget - REL_TOL))
    sizes = sorted(
        (r * price_r + t * price_t, t, r)
        for r in range(lo_r, hi_r + 1)
        for t in range(lo_t, hi_t + 1)
        if (r, t) != (sum(need_r), sum(need_t))  # every node private: disconnected
    )
    periods = _PeriodCache() if periods is None else periods
    layouts_r: dict[int, _LazyList] = {}
    layouts_t: dict[int, _LazyList] = {}
    killer: list[tuple[int, ...]] = []  # P6's last failing subset, shared by the pinnings
    for cost, n_t, n_r in sizes:
        if cost >= max_cost * (1.0 - REL_TOL):
            return None
        if n_r not in layouts_r:
            layouts_r[n_r] = _layouts(need_r, n_r, masks_r)
        if n_t not in layouts_t:
            layouts_t[n_t] = _layouts(need_t, n_t, masks_t)
        for lay_r in layouts_r[n_r]:
            if time.perf_counter() > deadline:
                raise _DeadlineError
            shared_r = _shared(lay_r, n)
            roll = [
                d.rollout_s + (d.warm_s if s else 0.0) for d, s in zip(data, shared_r, strict=True)
            ]
            load_r = max(sum(roll[k] for k in range(n) if m >> k & 1) for m in lay_r)
            if prune and load_r > budget:
                continue
            for lay_t in layouts_t[n_t]:
                plan = _try_pinning(
                    data,
                    ctx,
                    lay_r,
                    lay_t,
                    roll,
                    load_r,
                    budget,
                    cost,
                    prune,
                    periods,
                    all_orders,
                    killer,
                )
                if plan is not None:
                    return plan
    return None


def _try_pinning(
    data: Sequence[_JobData],
    ctx: _Context,
    lay_r: tuple[int, ...],
    lay_t: tuple[int, ...],
    roll: list[float],
    load_r: float,
    budget: float,
    cost: float,
    prune: bool,
    periods: _PeriodCache,
    all_orders: bool,
    killer: list[tuple[int, ...]] | None = None,
) -> GroupPlan | None:
    """A feasible plan for this pinning (trying round-robin orders), or None.

    ``killer`` (shared by the pinnings of one job set) remembers the last subset whose
    best order broke the budget (P6); it is tried first, since neighbouring pinnings
    usually fail on the same subset.
    """
    n = len(data)
    if not _connected(n, (lay_r, lay_t)):
        return None
    shared_t = _shared(lay_t, n)
    train = [d.train_s + (d.warm_s if s else 0.0) for d, s in zip(data, shared_t, strict=True)]
    load_t = max(sum(train[k] for k in range(n) if m >> k & 1) for m in lay_t)
    lower = max(load_r, load_t, max(r + t for r, t in zip(roll, train, strict=True)))
    if prune and lower > budget:
        return None
    pins_r, pins_t = _pins(lay_r, n), _pins(lay_t, n)
    # P6: every order's period is at least each proper subset's best (Lemma 1).
    if (
        prune
        and all_orders
        and n >= 3
        and periods.some_subset_exceeds(roll, train, lay_r, lay_t, budget, killer)
    ):
        return None
    order = tuple(range(n))
    meta = periods.period(roll, train, lay_r, lay_t, order)
    if meta > budget:
        # P4: the bound max(T_load, T_cycle) is reached, so no order does better.
        if prune and meta <= lower * (1.0 + REL_TOL):
            return None
        for other in itertools.islice(_orders(n), 1, None if all_orders else 1):
            # The decision version first (P7): a Bellman-Ford pass at the budget rejects
            # an order without its exact period; accepted orders are checked exactly.
            if not periods.at_most(roll, train, lay_r, lay_t, other, budget):
                continue
            meta = periods.period(roll, train, lay_r, lay_t, other)
            if meta <= budget:
                order = other
                break
        else:
            return None
    plan = GroupPlan(
        job_ids=tuple(d.job.job_id for d in data),
        rollout_nodes=len(lay_r),
        train_nodes=len(lay_t),
        rollout_pinning=pins_r,
        train_pinning=pins_t,
        order=order,
        cost_usd_per_h=cost,
        meta_iteration_s=meta,
    )
    return _verified(plan, data, ctx)


def _verified(plan: GroupPlan, data: Sequence[_JobData], ctx: _Context) -> GroupPlan | None:
    """Re-check a plan with the group model itself; the plan with its exact meta-iteration."""
    jobs = [d.job for d in data]
    by_id = {d.job.job_id: d for d in data}
    members = tuple(
        group_job_from_rljob(by_id[job_id].job, ctx.hw, r, t, times=by_id[job_id].times)
        for job_id, r, t in zip(plan.job_ids, plan.rollout_pinning, plan.train_pinning, strict=True)
    )
    try:
        group = CoExecutionGroup(
            jobs=members,
            rollout_node_ids=tuple(range(plan.rollout_nodes)),
            train_node_ids=tuple(range(plan.train_nodes)),
            pools=pools_from_hardware(ctx.hw, jobs[0].rollout_gpu_type, jobs[0].train_gpu_type),
            node_capacity=node_capacity_from_hardware(ctx.hw),
            order=plan.order,
        )
    except ValueError:
        return None
    metrics = group.metrics(worst_case=True)
    ok = metrics.all_slo_ok and math.isclose(
        metrics.cost_usd_per_h, plan.cost_usd_per_h, rel_tol=REL_TOL
    )
    return replace(plan, meta_iteration_s=metrics.meta_iteration_s) if ok else None


Key = tuple[tuple[float, ...], tuple[float, ...], tuple[int, ...], tuple[int, ...]]


def _relabel_table(n: int, jobs: tuple[int, ...]) -> list[int]:
    """Node masks over a group's ``n`` jobs mapped to masks over ``jobs`` (bit i: ``jobs[i]``)."""
    table = _RELABEL.get((n, jobs))
    if table is None:
        size = 1 << n
        table = [0] * size
        for mask in range(size):
            out = 0
            for i, j in enumerate(jobs):
                if mask >> j & 1:
                    out |= 1 << i
            table[mask] = out
        _RELABEL[(n, jobs)] = table
    return table


_RELABEL: dict[tuple[int, tuple[int, ...]], list[int]] = {}


class _PeriodCache:
    """Exact round-robin periods, memoised on a canonical form of the (sub)problem.

    A problem is some jobs of a group in round-robin order, with the group's effective
    phase durations and its pinning restricted to them. Its key lists the durations in
    that order and each pool's pinning as the sorted tuple of non-empty node masks (bit
    i: the i-th job of the order), which is the pinning up to node relabelling: equal
    keys give the same event graph (:func:`rollmux.schedule.round_robin_lists`'s, fed
    straight to :mod:`rollmux.schedule.maxplus`). One cache may serve every job set of an
    :func:`optimal_partition` call.
    """

    # Entries kept before a memo is cleared (bounds memory on large job sets).
    MAX_ENTRIES = 1_000_000

    def __init__(self) -> None:
        self._memo: dict[Key, float] = {}
        # Decision results of at_most: key -> (largest budget proven too small,
        # smallest budget proven enough).
        self._bounds: dict[Key, tuple[float, float]] = {}
        # Best-order search of a subproblem: key -> [orders tried, least period so far].
        self._best: dict[Key, list[float]] = {}

    @staticmethod
    def key(
        roll: Sequence[float],
        train: Sequence[float],
        lay_r: Sequence[int],
        lay_t: Sequence[int],
        jobs: tuple[int, ...],
    ) -> Key:
        """The canonical key of ``jobs`` (in this order) of a group pinned as ``lay_r/t``."""
        table = _relabel_table(len(roll), jobs)
        return (
            tuple([roll[j] for j in jobs]),
            tuple([train[j] for j in jobs]),
            tuple(sorted([m for m in [table[mask] for mask in lay_r] if m])),
            tuple(sorted([m for m in [table[mask] for mask in lay_t] if m])),
        )

    @staticmethod
    def _lists(key: Key) -> tuple[list[float], list[list[int]], list[float], list[list[int]]]:
        """The event graph of a key: durations, job chains, lags and node sequences."""
        r, t, mr, mt = key
        n = len(r)
        sequences = [[j for j in range(n) if mask >> j & 1] for mask in mr]
        sequences += [[n + j for j in range(n) if mask >> j & 1] for mask in mt]
        return [*r, *t], [[j, n + j] for j in range(n)], [0.0] * n, sequences

    def period_of(self, key: Key) -> float:
        """Exact steady-state period of a keyed problem."""
        value = self._memo.get(key)
        if value is None:
            if len(self._memo) >= self.MAX_ENTRIES:
                self._memo.clear()
            value = self._memo[key] = period_of_event_graph(*self._lists(key))
        return value

    def period(
        self,
        roll: Sequence[float],
        train: Sequence[float],
        lay_r: Sequence[int],
        lay_t: Sequence[int],
        order: tuple[int, ...],
    ) -> float:
        """Steady-state period of the group's jobs in ``order`` (a permutation)."""
        return self.period_of(self.key(roll, train, lay_r, lay_t, order))

    def at_most(
        self,
        roll: Sequence[float],
        train: Sequence[float],
        lay_r: Sequence[int],
        lay_t: Sequence[int],
        order: tuple[int, ...],
        budget: float,
    ) -> bool:
        """Whether the period in ``order`` is at most ``budget`` (Bellman-Ford decision).

        False proves the period exceeds ``budget`` (a cycle of larger mean exists); True
        may be off by the certificate's 1e-9 relative tolerance, so callers confirm an
        accepted order with :meth:`period`.
        """
        key = self.key(roll, train, lay_r, lay_t, order)
        value = self._memo.get(key)
        if value is not None:
            return value <= budget
        lo, hi = self._bounds.get(key, (-math.inf, math.inf))
        if budget >= hi:
            return True
        if budget <= lo:
            return False
        lists = self._lists(key)
        if simple_cycle_bound(*lists) > budget:
            ok = False
        else:
            graph = build_event_graph(*lists)
            ok = graph is not None and period_is_at_most(graph, budget)
        if len(self._bounds) >= self.MAX_ENTRIES:
            self._bounds.clear()
        self._bounds[key] = (lo, budget) if ok else (budget, hi)
        return ok

    def best_at_most(self, key: Key, budget: float) -> bool:
        """Whether some round-robin order of a keyed problem has period <= ``budget``.

        Orders are tried up to rotation (job 0 first) and the search stops at the first
        good one; asked again with a smaller budget it resumes where it stopped, so each
        order of a problem is evaluated at most once per cache.
        """
        state = self._best.get(key)
        if state is None:
            if len(self._best) >= self.MAX_ENTRIES:
                self._best.clear()
            state = self._best[key] = [0, math.inf]
        if state[1] <= budget:
            return True
        r, t, mr, mt = key
        size = len(r)
        orders = _ORDERS.get(size)
        if orders is None:
            orders = _ORDERS[size] = list(_orders(size))
        while state[0] < len(orders):
            order = orders[int(state[0])]
            state[0] += 1
            value = self.period_of(self.key(r, t, mr, mt, order))
            if value < state[1]:
                state[1] = value
            if value <= budget:
                return True
        return False

    def some_subset_exceeds(
        self,
        roll: Sequence[float],
        train: Sequence[float],
        lay_r: Sequence[int],
        lay_t: Sequence[int],
        budget: float,
        killer: list[tuple[int, ...]] | None = None,
    ) -> bool:
        """Whether some proper subset of >= 2 jobs has no order with period <= ``budget``.

        The subsets keep the group's effective durations and their induced pinning. Then,
        by Lemma 1, no order of the whole group has either (rule P6). ``killer`` holds the
        last subset found (it is tried first and updated in place).
        """
        n = len(roll)
        subsets = _SUBSETS.get(n)
        if subsets is None:
            subsets = _SUBSETS[n] = [
                sub for size in range(2, n) for sub in itertools.combinations(range(n), size)
            ]
        first = killer[0] if killer else None
        if first is not None and not self.best_at_most(
            self.key(roll, train, lay_r, lay_t, first), budget
        ):
            return True
        for sub in subsets:
            if sub == first:
                continue
            if not self.best_at_most(self.key(roll, train, lay_r, lay_t, sub), budget):
                if killer is not None:
                    killer[:] = [sub]
                return True
        return False


# Orders up to rotation and proper subsets of >= 2 jobs, by job count (built on demand).
_ORDERS: dict[int, list[tuple[int, ...]]] = {}
_SUBSETS: dict[int, list[tuple[int, ...]]] = {}


def _min_cost(
    data: Sequence[_JobData],
    ctx: _Context,
    max_cost: float = math.inf,
    prune: bool = True,
    all_orders: bool = True,
    full_space: bool = True,
) -> GroupPlan | None:
    if len(data) == 1:
        plan = _solo_plan(data[0], ctx)
        return plan if plan.cost_usd_per_h < max_cost * (1.0 - REL_TOL) else None
    return _search_group(data, ctx, max_cost, prune, all_orders, full_space)


def min_cost_group(
    jobs: Sequence[RLJob],
    hw: Hardware,
    *,
    max_cost_usd_per_h: float | None = None,
    prune: bool = True,
    orders: Orders = "all",
    space: Space = "full",
) -> GroupPlan | None:
    """The cheapest feasible plan running exactly ``jobs`` as one connected group, or None.

    Feasible: every node's resident state fits its host memory and every job's worst-case
    slowdown is within its SLO. With ``max_cost_usd_per_h`` only plans strictly cheaper
    count. ``prune=False`` switches off the necessary-condition pruning (for checking it).
    ``orders``: ``"all"`` tries every round-robin order (up to rotation) when the index
    order fails, ``"index"`` only the index order. ``space``: ``"full"`` searches every
    pinning, ``"rollmux"`` only those with the training nodes of the job needing most
    (Algorithm 1 never adds training nodes to a group). A job that fits no node raises
    ValueError naming it.
    """
    ctx = _context(hw)
    data = _job_data(jobs, ctx)
    return _min_cost(
        data,
        ctx,
        _check_max_cost(max_cost_usd_per_h),
        prune,
        _check_orders(orders),
        _check_space(space),
    )


def solo_cost_usd_per_h(jobs: Sequence[RLJob], hw: Hardware) -> float:
    """Hourly cost of every job alone in its own group (Solo-D provisioning, whole nodes)."""
    ctx = _context(hw)
    return sum(_solo_cost(d, ctx) for d in _job_data(jobs, ctx))


# --------------------------------------------------------------------------- the optimum


def _compatible(a: _JobData, b: _JobData) -> bool:
    """Whether two jobs may ever share a group (Lemma 3 applied to the pair)."""
    if a.rollout_type != b.rollout_type or a.train_type != b.train_type:
        return False
    worst = max(a.solo_s + a.warm_s, b.solo_s + b.warm_s)
    return worst <= min(a.budget_s, b.budget_s)


def _cliques(adj: Sequence[int], n: int, max_size: int) -> list[list[tuple[int, ...]]]:
    """Cliques of the compatibility graph by size (index 0: size 1), each in lexicographic order."""
    levels: list[list[tuple[int, ...]]] = [[(i,) for i in range(n)]]
    while len(levels) < max_size:
        nxt = []
        for clique in levels[-1]:
            common = (1 << n) - 1
            for i in clique:
                common &= adj[i]
            for j in range(clique[-1] + 1, n):
                if common >> j & 1:
                    nxt.append((*clique, j))
        if not nxt:
            break
        levels.append(nxt)
    return levels


@dataclass
class _SetEntry:
    """What the search found for one job set: its column cost (None: no column) and plans.

    Plans are kept by the job order they were searched in (``GroupPlan.job_ids``), since
    the first feasible pinning found depends on that order.
    """

    cost: float | None
    plans: dict[tuple[str, ...], GroupPlan]


class ColumnCache:
    """Columns of :func:`optimal_partition` kept across calls on overlapping job sets.

    Whether a set of jobs is a column, and its least cost, depend only on the set (its
    jobs' specs), the hardware, ``orders`` and ``space``: a set is a column when it has a
    feasible plan cheaper than its best split into smaller columns, and the smaller
    columns are themselves properties of sets (docs/optimum.md, sec. 3a). A policy that
    re-solves the optimum at every decision can therefore keep one cache: after an
    arrival only the sets containing the new job are searched. Jobs are identified by
    their :class:`RLJob` values (a resubmitted job with other fields is another job), and
    sets with a job absent from a call's job list are dropped at that call.
    """

    def __init__(self) -> None:
        """An empty cache; it binds to the first call's hardware, orders and space."""
        self._config: tuple[Hardware, Orders, Space] | None = None
        self._uid: dict[RLJob, int] = {}  # each job value's serial number
        self._next_uid = 0
        self._sets: dict[frozenset[int], _SetEntry] = {}
        self._by_job: dict[int, list[frozenset[int]]] = {}
        self.job_data: dict[RLJob, _JobData] = {}

    def __len__(self) -> int:
        """Number of job sets whose search result is kept."""
        return len(self._sets)

    def configure(self, hw: Hardware, orders: Orders, space: Space) -> None:
        """Bind to this configuration; clear everything if it is not the bound one."""
        config = (hw, orders, space)
        if self._config is None or self._config[0] is not hw or self._config[1:] != config[1:]:
            self._config = config
            self._uid.clear()
            self._sets.clear()
            self._by_job.clear()
            self.job_data.clear()

    def bind(self, jobs: Sequence[RLJob]) -> list[int]:
        """The serial numbers of ``jobs``; drops every set holding a job not in ``jobs``."""
        uids = []
        for job in jobs:
            uid = self._uid.get(job)
            if uid is None:
                uid = self._uid[job] = self._next_uid
                self._next_uid += 1
            uids.append(uid)
        active = set(uids)
        for job, uid in [(job, uid) for job, uid in self._uid.items() if uid not in active]:
            for key in self._by_job.pop(uid, ()):
                self._sets.pop(key, None)
            self.job_data.pop(job, None)
            del self._uid[job]
        return uids

    def get(self, key: frozenset[int]) -> _SetEntry | None:
        """The search result of a job set (serial numbers), if kept."""
        return self._sets.get(key)

    def put(self, key: frozenset[int], plan: GroupPlan | None) -> None:
        """Record a job set's search result (``plan`` None: not a column)."""
        self._sets[key] = _SetEntry(
            cost=None if plan is None else plan.cost_usd_per_h,
            plans={} if plan is None else {plan.job_ids: plan},
        )
        for uid in key:
            self._by_job.setdefault(uid, []).append(key)


def optimal_partition(
    jobs: Sequence[RLJob],
    hw: Hardware,
    max_group_size: int = 5,
    time_limit_s: float | None = None,
    orders: Orders = "all",
    space: Space = "full",
    cache: ColumnCache | None = None,
) -> Partition:
    """Minimum-cost partition of ``jobs`` into feasible groups, by set-partitioning MILP.

    Columns: every job alone, and every compatible set of 2..``max_group_size`` jobs with
    a feasible plan cheaper than its best split into smaller sets. ``time_limit_s`` bounds
    the whole call; when it runs out the result is feasible but ``solver`` says it is not
    proven optimal (and ``proven_optimal`` is False). Groups are ordered by their first
    job's position in ``jobs``. ``cache`` keeps the columns for later calls on
    overlapping job sets; results are the same with or without it.
    """
    start = time.perf_counter()
    max_group_size = _check_group_size(max_group_size)
    deadline = start + _check_time_limit(time_limit_s)
    all_orders = _check_orders(orders)
    full_space = _check_space(space)
    ctx = _context(hw)
    if cache is not None and not isinstance(cache, ColumnCache):
        raise ValueError(f"cache = {cache!r}: expected a ColumnCache or None")
    if cache is not None:
        cache.configure(hw, orders, space)
    data = _job_data(jobs, ctx, None if cache is None else cache.job_data)
    uids = [] if cache is None else cache.bind([d.job for d in data])
    n = len(data)
    adj = [0] * n
    for i, k in itertools.combinations(range(n), 2):
        if _compatible(data[i], data[k]):
            adj[i] |= 1 << k
            adj[k] |= 1 << i
    column_cost: dict[int, float] = {}
    columns: list[tuple[tuple[int, ...], GroupPlan | None]] = []
    for i, d in enumerate(data):
        plan = _solo_plan(d, ctx)
        column_cost[1 << i] = plan.cost_usd_per_h
        columns.append(((i,), plan))
    best_split: dict[int, float] = {}

    def opt(mask: int) -> float:
        """Optimal cost of partitioning ``mask`` into the columns found so far."""
        if mask == 0:
            return 0.0
        if mask in best_split:
            return best_split[mask]
        low = mask & -mask
        rest = mask ^ low
        best = column_cost.get(mask, math.inf)
        sub = rest
        while True:  # every block A holding the lowest job, A a proper subset
            block = low | sub
            if block != mask and block in column_cost:
                best = min(best, column_cost[block] + opt(mask ^ block))
            if sub == 0:
                break
            sub = (sub - 1) & rest
        best_split[mask] = best
        return best

    periods = _PeriodCache()  # sets of one size reuse the periods of their subsets
    timed_out = False
    searched = 0
    for level in _cliques(adj, n, max_group_size)[1:]:
        best_split.clear()  # new columns below this size may lower the splits
        for subset in level:
            mask = sum(1 << i for i in subset)
            key = None
            if cache is not None:
                key = frozenset([uids[i] for i in subset])
                entry = cache.get(key)
                if entry is not None:
                    if entry.cost is not None:
                        column_cost[mask] = entry.cost
                        ids = tuple(data[i].job.job_id for i in subset)
                        columns.append((subset, entry.plans.get(ids)))
                    continue
            if time.perf_counter() > deadline:
                timed_out = True
                break
            upper = opt(mask)  # no column for ``mask`` yet: its best split
            members = [data[i] for i in subset]
            try:
                plan = _search_group(
                    members, ctx, upper, True, all_orders, full_space, periods, deadline
                )
            except _DeadlineError:
                timed_out = True
                break
            searched += 1
            if cache is not None and key is not None:
                cache.put(key, plan)
            if plan is not None:
                column_cost[mask] = plan.cost_usd_per_h
                columns.append((subset, plan))
        if timed_out:
            break
    costs = [column_cost[sum(1 << i for i in subset)] for subset, _ in columns]
    chosen, status, solved = _solve_set_partitioning(n, columns, costs, deadline)
    if timed_out:
        status += "; column enumeration hit the time limit: not proven optimal"
    groups = []
    for c in sorted(chosen, key=lambda c: columns[c][0]):
        subset, plan = columns[c]
        if plan is None:
            # A cached column searched in another job order: search it again in this
            # order (the same first feasible plan as without the cache; cost is known).
            members = [data[i] for i in subset]
            plan = _search_group(
                members, ctx, costs[c] * (1.0 + 1e-6), True, all_orders, full_space
            )
            if plan is None or not math.isclose(plan.cost_usd_per_h, costs[c], rel_tol=1e-9):
                raise RuntimeError(f"column {plan!r}: cached cost {costs[c]} not reproduced")
            assert cache is not None
            entry = cache.get(frozenset([uids[i] for i in subset]))
            if entry is not None:
                entry.plans[plan.job_ids] = plan
        groups.append(plan)
    return Partition(
        groups=tuple(groups),
        cost_usd_per_h=sum(g.cost_usd_per_h for g in groups),
        solver=status,
        seconds=time.perf_counter() - start,
        n_columns=len(columns),
        proven_optimal=solved and not timed_out,
        n_searched=searched,
    )


def _solve_set_partitioning(
    n: int,
    columns: Sequence[tuple[tuple[int, ...], object]],
    costs: Sequence[float],
    deadline: float,
) -> tuple[list[int], str, bool]:
    """Solve min c.x, A x = 1, x binary with HiGHS.

    Returns the chosen column indices, the status text and whether HiGHS proved the
    solution optimal.
    """
    rows = [i for subset, _ in columns for i in subset]
    cols = [c for c, (subset, _) in enumerate(columns) for _ in subset]
    matrix = sparse.csr_array(
        (np.ones(len(rows)), (np.array(rows), np.array(cols))), shape=(n, len(columns))
    )
    cost = np.array(costs)
    options: dict[str, Any] = {"mip_rel_gap": 0.0}
    left = deadline - time.perf_counter()
    if math.isfinite(left):
        options["time_limit"] = max(left, 1.0)  # the columns are in: let HiGHS finish
    res = milp(
        cost,
        constraints=LinearConstraint(matrix, lb=np.ones(n), ub=np.ones(n)),
        integrality=np.ones(len(columns)),
        bounds=Bounds(0, 1),
        options=options,
    )
    status = f"highs-milp status {res.status}: {res.message}"
    if res.x is None:
        # Every job alone is always feasible; fall back to it when the solver found nothing.
        return (
            [c for c, (subset, _) in enumerate(columns) if len(subset) == 1],
            status + "; fell back to every job alone",
            False,
        )
    return [c for c in range(len(columns)) if res.x[c] > 0.5], status, res.status == 0


# --------------------------------------------------------------------------- brute force


def _restricted_growth_partitions(n: int, max_size: int) -> Iterator[list[int]]:
    """Every set partition of range(n) with blocks of at most ``max_size``, as block masks.

    Restricted growth strings: job i joins an existing block or opens the next one.
    """
    blocks: list[int] = []
    sizes: list[int] = []

    def rec(i: int) -> Iterator[list[int]]:
        if i == n:
            yield blocks
            return
        for b in range(len(blocks)):
            if sizes[b] < max_size:
                blocks[b] |= 1 << i
                sizes[b] += 1
                yield from rec(i + 1)
                blocks[b] ^= 1 << i
                sizes[b] -= 1
        blocks.append(1 << i)
        sizes.append(1)
        yield from rec(i + 1)
        blocks.pop()
        sizes.pop()

    yield from rec(0)


def bruteforce_partition(
    jobs: Sequence[RLJob],
    hw: Hardware,
    max_group_size: int = 5,
    *,
    time_limit_s: float | None = None,
    orders: Orders = "all",
    space: Space = "full",
) -> Partition:
    """Minimum-cost partition by enumerating every set partition (memoised group costs).

    The cross-check of :func:`optimal_partition`; exponential (Bell numbers). Raises
    TimeoutError when ``time_limit_s`` runs out before the enumeration ends.
    """
    start = time.perf_counter()
    max_group_size = _check_group_size(max_group_size)
    deadline = start + _check_time_limit(time_limit_s)
    all_orders = _check_orders(orders)
    full_space = _check_space(space)
    ctx = _context(hw)
    data = _job_data(jobs, ctx)
    n = len(data)
    memo: dict[int, GroupPlan | None] = {}

    def group_plan(mask: int) -> GroupPlan | None:
        if mask not in memo:
            members = [data[i] for i in range(n) if mask >> i & 1]
            memo[mask] = _min_cost(
                members, ctx, all_orders=all_orders, full_space=full_space
            )
        return memo[mask]

    def group_cost(mask: int) -> float:
        plan = group_plan(mask)
        return math.inf if plan is None else plan.cost_usd_per_h

    best_cost, best_blocks = math.inf, [1 << i for i in range(n)]
    for count, blocks in enumerate(_restricted_growth_partitions(n, max_group_size)):
        if count % 4096 == 0 and time.perf_counter() > deadline:
            raise TimeoutError(
                f"bruteforce_partition: time_limit_s = {time_limit_s!r} ran out after "
                f"{count} of the set partitions of {n} jobs"
            )
        total = 0.0
        for block in blocks:
            total += group_cost(block)
            if total >= best_cost:
                break
        if total < best_cost * (1.0 - REL_TOL):
            best_cost, best_blocks = total, list(blocks)
    plans = [group_plan(block) for block in best_blocks]
    groups = tuple(plan for plan in plans if plan is not None)
    return Partition(
        groups=groups,
        cost_usd_per_h=sum(g.cost_usd_per_h for g in groups),
        solver="bruteforce (restricted growth strings)",
        seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------- benchmark


def bench_optimum(
    jobs: int,
    seed: int = 0,
    bruteforce: bool | None = None,
    *,
    max_group_size: int = 5,
    bruteforce_time_limit_s: float = BRUTEFORCE_TIME_LIMIT_S,
    orders: Orders = "all",
    space: Space = "full",
    time_limit_s: float | None = None,
    hw: Hardware | None = None,
) -> dict[str, Any]:
    """Time the exact optimum (and, up to 10 jobs or when asked, the brute force) on a mix.

    The mix is :func:`rollmux.placement.jobmix.production_mix` ``(jobs, seed)``. Brute
    force gets ``bruteforce_time_limit_s``; when it runs out ``bruteforce_finished`` is
    False and its cost is None.
    """
    from rollmux.hardware import load_hardware
    from rollmux.placement.jobmix import production_mix

    hardware = load_hardware() if hw is None else hw
    mix = production_mix(jobs, seed, hardware)
    result = optimal_partition(
        mix, hardware, max_group_size, time_limit_s=time_limit_s, orders=orders, space=space
    )
    run_bruteforce = jobs <= BRUTEFORCE_AUTO_MAX_JOBS if bruteforce is None else bruteforce
    out: dict[str, Any] = {
        "jobs": jobs,
        "seed": seed,
        "max_group_size": max_group_size,
        "orders": orders,
        "space": space,
        "seconds": result.seconds,
        "optimal_cost_usd_per_h": result.cost_usd_per_h,
        "solo_cost_usd_per_h": solo_cost_usd_per_h(mix, hardware),
        "groups": len(result.groups),
        "largest_group": max(len(g.job_ids) for g in result.groups),
        "columns": result.n_columns,
        "solver": result.solver,
        "proven_optimal": result.proven_optimal,
        "bruteforce_seconds": None,
        "bruteforce_cost_usd_per_h": None,
        "bruteforce_finished": None,
        "bruteforce_time_limit_s": None,
    }
    if run_bruteforce:
        out["bruteforce_time_limit_s"] = bruteforce_time_limit_s
        t0 = time.perf_counter()
        try:
            brute = bruteforce_partition(
                mix,
                hardware,
                max_group_size,
                time_limit_s=bruteforce_time_limit_s,
                orders=orders,
                space=space,
            )
        except TimeoutError:
            out["bruteforce_seconds"] = time.perf_counter() - t0
            out["bruteforce_finished"] = False
        else:
            out["bruteforce_seconds"] = brute.seconds
            out["bruteforce_cost_usd_per_h"] = brute.cost_usd_per_h
            out["bruteforce_finished"] = True
    return out
