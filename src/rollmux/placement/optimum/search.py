"""The group search: the cheapest feasible plan running exactly a given set of jobs.

:func:`search_group` visits node counts in increasing cost, the pinnings of each count
pair (:mod:`.layouts`) and, per pinning, round-robin orders, and returns the first
feasible plan, so it has least cost. Everything it knows about the set lives in one
:class:`SearchState`; each pruning rule of docs/optimum.md (P1-P8) is one function
below, named after the rule, over that state. All rules are necessary conditions, so
they only cut work, never a feasible plan; every plan returned is re-checked with the
group model itself (:func:`verified`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rollmux.group import CoExecutionGroup, group_job_of
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.placement.optimum.layouts import LazyList, connected, layouts, pins, shared
from rollmux.placement.optimum.periods import PeriodCache, orders
from rollmux.placement.optimum.plans import (
    REL_TOL,
    Context,
    GroupPlan,
    Orders,
    Space,
    budget_s,
    check_max_cost,
    check_orders,
    check_space,
    context,
    resolved_jobs,
    solo_plan,
    solo_s,
    worst_train_s,
)

__all__ = [
    "DeadlineError",
    "Effort",
    "EffortError",
    "SearchState",
    "carried_least_cost",
    "compatible",
    "min_cost",
    "min_cost_group",
    "p1_cycle_bound_exceeds",
    "p2_node_masks",
    "p2_pinning_lower_bound",
    "p2_side_load",
    "p3_node_count_pairs",
    "p4_index_order_reaches_bound",
    "p5_split_cap_reached",
    "p6_some_subset_exceeds",
    "p7_order_may_fit",
    "p8_below_subset_floor",
    "search_group",
    "verified",
]


class DeadlineError(Exception):
    """The time limit of an optimum call ran out inside one group's search."""


class EffortError(Exception):
    """A search's effort budget ran out; no plan costs less than ``lower_bound``.

    Node-count pairs are visited in increasing cost, so when the budget runs out inside
    the pair of cost ``lower_bound`` every cheaper pair has been refuted (or skipped by
    P8): ``lower_bound`` is a proven lower bound on the set's least cost.
    """

    def __init__(self, lower_bound: float) -> None:
        """Record the proven lower bound."""
        super().__init__(f"effort budget exhausted; no plan costs less than {lower_bound}")
        self.lower_bound = lower_bound


class Effort:
    """A deterministic work budget shared by searches: one unit per pinning or order tried.

    Unlike a time limit it gives the same answer on every machine and load.
    """

    __slots__ = ("left", "used")

    def __init__(self, units: int) -> None:
        """A budget of ``units`` (> 0)."""
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError(f"effort = {units!r}: expected an integer > 0")
        self.left = units
        self.used = 0

    def spend(self, lower_bound: float) -> None:
        """Spend one unit; EffortError(lower_bound) when none is left."""
        if self.left <= 0:
            raise EffortError(lower_bound)
        self.left -= 1
        self.used += 1


@dataclass
class SearchState:
    """Everything the search of one job set knows: its jobs, budget, caps and memos.

    ``budget_s`` is the set's SLO budget $B_S$ (the largest meta-iteration every member
    allows), ``max_cost`` the P5 split cap (only plans strictly cheaper count),
    ``cost_floor`` the P8 bound (no plan is cheaper), ``masks_r``/``masks_t`` the
    per-node job sets P2 allows, ``load_r``/``load_t`` each mask's load when its jobs
    share the node, ``killer`` the proper subset that rejected the last pinning by P6
    (tried first on the next one).
    """

    data: Sequence[ResolvedJob]
    ctx: Context
    max_cost: float
    prune: bool
    all_orders: bool
    full_space: bool
    periods: PeriodCache
    deadline: float
    budget_s: float
    price_r: float
    price_t: float
    need_r: tuple[int, ...]
    need_t: tuple[int, ...]
    cost_floor: float = 0.0
    masks_r: tuple[int, ...] = ()
    masks_t: tuple[int, ...] = ()
    load_r: list[float] = field(default_factory=list)
    load_t: list[float] = field(default_factory=list)
    killer: list[tuple[int, ...]] = field(default_factory=list)
    effort: Effort | None = None

    @property
    def n(self) -> int:
        """Number of jobs in the set."""
        return len(self.data)


# --------------------------------------------------------------------------- P1-P8


def p1_cycle_bound_exceeds(data: Sequence[ResolvedJob], budget: float) -> bool:
    """P1: in a connected group each job pays a warm switch, so M >= max_j (T_solo_j + w_j).

    The bound only grows with the set, so a set failing it has no feasible superset.
    """
    return max(solo_s(d) + d.times.warm_switch_s for d in data) > budget


def compatible(a: ResolvedJob, b: ResolvedJob) -> bool:
    """Whether two jobs may ever share a group: same GPU types and P1 for the pair."""
    if (a.job.rollout_gpu_type != b.job.rollout_gpu_type
            or a.job.train_gpu_type != b.job.train_gpu_type):
        return False
    return not p1_cycle_bound_exceeds((a, b), min(budget_s(a), budget_s(b)))


def p2_node_masks(state: SearchState) -> None:
    """P2: the per-node job sets (bit masks) whose state fits a node and whose load fits $B_S$.

    A node holding two or more jobs makes each pay its warm switch. Sets
    ``state.masks_r/t`` and each mask's shared load ``state.load_r/t``; sums run in
    increasing job order (the same floats as summing the members).
    """
    data, budget, prune = state.data, state.budget_s, state.prune
    limit_gb = state.ctx.mem_limit_gb
    # Per-job values as plain lists: this loop runs over 2^n masks of every searched set.
    roll_mem = [d.rollout_mem_gb for d in data]
    train_mem = [d.train_mem_gb for d in data]
    roll_alone = [d.times.rollout_max_s for d in data]
    train_alone = [worst_train_s(d) for d in data]
    roll_shared = [d.times.rollout_max_s + d.times.warm_switch_s for d in data]
    train_shared = [worst_train_s(d) + d.times.warm_switch_s for d in data]
    size = 1 << len(data)
    mem_r, mem_t = [0.0] * size, [0.0] * size
    shared_r, shared_t = [0.0] * size, [0.0] * size
    masks_r, masks_t = [], []
    for mask in range(1, size):
        top = mask.bit_length() - 1
        rest = mask ^ (1 << top)
        gb_r = mem_r[mask] = mem_r[rest] + roll_mem[top]
        gb_t = mem_t[mask] = mem_t[rest] + train_mem[top]
        load_r = shared_r[mask] = shared_r[rest] + roll_shared[top]
        load_t = shared_t[mask] = shared_t[rest] + train_shared[top]
        if not rest:  # one job alone on the node: no switch
            load_r = roll_alone[top] + 0.0
            load_t = train_alone[top] + 0.0
        if gb_r <= limit_gb and (not prune or load_r <= budget):
            masks_r.append(mask)
        if gb_t <= limit_gb and (not prune or load_t <= budget):
            masks_t.append(mask)
    state.masks_r, state.masks_t = tuple(masks_r), tuple(masks_t)
    state.load_r, state.load_t = shared_r, shared_t


def p2_side_load(
    state: SearchState, layout: Sequence[int], rollout: bool
) -> tuple[list[float], float]:
    """P2: one pool's effective phase per job (warm switch when sharing) and busiest node load.

    A node of two or more jobs has its precomputed shared load; a node of one job, that
    job's effective phase (the same floats as summing the node's jobs in index order).
    """
    sharing = shared(layout)
    if rollout:
        durations = [
            d.times.rollout_max_s + (d.times.warm_switch_s if sharing >> k & 1 else 0.0)
            for k, d in enumerate(state.data)
        ]
        mask_load = state.load_r
    else:
        durations = [
            worst_train_s(d) + (d.times.warm_switch_s if sharing >> k & 1 else 0.0)
            for k, d in enumerate(state.data)
        ]
        mask_load = state.load_t
    load = max(mask_load[m] if m & (m - 1) else durations[m.bit_length() - 1] for m in layout)
    return durations, load


def p2_pinning_lower_bound(
    roll: Sequence[float], train: Sequence[float], load_r: float, load_t: float
) -> float:
    """P2: M >= max(T_load, T_cycle) (node sequences and job chains are cycles)."""
    return max(load_r, load_t, max(r + t for r, t in zip(roll, train, strict=True)))


def p3_node_count_pairs(state: SearchState) -> list[tuple[float, int, int]]:
    """P3: the (cost, n_T, n_R) pairs worth visiting, in increasing cost.

    n_R is at least the largest need and, pruning, the rollout work over $B_S$; at most
    the summed needs, likewise n_T (fixed to the largest need in space ``rollmux``);
    the pair with every node private is dropped (disconnected, Lemma 2).
    """
    need_r, need_t, data = state.need_r, state.need_t, state.data
    hi_r, hi_t = sum(need_r), sum(need_t)
    all_private = (hi_r, hi_t)
    if not state.full_space:
        hi_t = max(need_t)  # Algorithm 1 never adds training nodes to a group
    lo_r, lo_t = max(need_r), max(need_t)
    if state.prune:
        work_r = sum(k * d.times.rollout_max_s for k, d in zip(need_r, data, strict=True))
        work_t = sum(k * worst_train_s(d) for k, d in zip(need_t, data, strict=True))
        lo_r = max(lo_r, math.ceil(work_r / state.budget_s - REL_TOL))
        lo_t = max(lo_t, math.ceil(work_t / state.budget_s - REL_TOL))
    return sorted(
        (r * state.price_r + t * state.price_t, t, r)
        for r in range(lo_r, hi_r + 1)
        for t in range(lo_t, hi_t + 1)
        if (r, t) != all_private  # every node private: disconnected
    )


def p4_index_order_reaches_bound(meta_s: float, lower_s: float) -> bool:
    """P4: the index order's period equals max(T_load, T_cycle), so no order does better."""
    return meta_s <= lower_s * (1.0 + REL_TOL)


def p5_split_cap_reached(cost: float, max_cost: float) -> bool:
    """P5: a plan costing at least the set's best split (the cap) is never a useful column."""
    return cost >= max_cost * (1.0 - REL_TOL)


def p8_below_subset_floor(cost: float, cost_floor: float) -> bool:
    """P8: a plan cheaper than some proper subset's optimal partition cannot be feasible.

    Any feasible plan of S induces one of each subset T (Lemma 1), whose connected
    components are a feasible partition of T at no more cost, so cost >= opt(T).
    """
    return cost < cost_floor * (1.0 - REL_TOL)


def p6_some_subset_exceeds(
    state: SearchState,
    roll: Sequence[float],
    train: Sequence[float],
    lay_r: tuple[int, ...],
    lay_t: tuple[int, ...],
) -> bool:
    """P6: some proper subset has no order within $B_S$, so no order of the set has (Lemma 1)."""
    return state.periods.some_subset_exceeds(
        roll, train, lay_r, lay_t, state.budget_s, state.killer
    )


def p7_order_may_fit(
    state: SearchState,
    roll: Sequence[float],
    train: Sequence[float],
    lay_r: tuple[int, ...],
    lay_t: tuple[int, ...],
    order: tuple[int, ...],
) -> bool:
    """P7: the Bellman-Ford decision "period <= $B_S$"; False proves the order infeasible."""
    return state.periods.at_most(roll, train, lay_r, lay_t, order, state.budget_s)


# --------------------------------------------------------------------------- the search


def search_state(
    data: Sequence[ResolvedJob],
    ctx: Context,
    max_cost: float,
    prune: bool,
    all_orders: bool,
    full_space: bool = True,
    periods: PeriodCache | None = None,
    deadline: float = math.inf,
    cost_floor: float = 0.0,
    effort: Effort | None = None,
) -> SearchState | None:
    """The search state of a set of >= 2 jobs, or None when no useful plan can exist.

    None: mixed GPU types, P1, or the P8 floor already at the P5 cap.
    """
    first = data[0].job
    if any(d.job.rollout_gpu_type != first.rollout_gpu_type
           or d.job.train_gpu_type != first.train_gpu_type for d in data):
        return None  # jobs of different GPU types cannot share a node
    budget = min(budget_s(d) for d in data)
    if prune and p1_cycle_bound_exceeds(data, budget):
        return None
    if p5_split_cap_reached(cost_floor, max_cost):
        return None
    state = SearchState(
        data=data,
        ctx=ctx,
        max_cost=max_cost,
        prune=prune,
        all_orders=all_orders,
        full_space=full_space,
        periods=PeriodCache() if periods is None else periods,
        deadline=deadline,
        budget_s=budget,
        price_r=ctx.node_price(first.rollout_gpu_type),
        price_t=ctx.node_price(first.train_gpu_type),
        need_r=tuple(d.rollout_nodes for d in data),
        need_t=tuple(d.train_nodes for d in data),
        cost_floor=cost_floor,
        effort=effort,
    )
    p2_node_masks(state)
    return state


# Relative margin by which a carried plan must meet its budget (far above the 1e-9 of the
# checks, so the search's own check of that pinning and the group model's agree).
CARRY_MARGIN = 1e-6


def carried_least_cost(
    data: Sequence[ResolvedJob],
    ctx: Context,
    plan: GroupPlan,
    max_cost: float,
    full_space: bool,
    periods: PeriodCache,
    cost_floor: float = 0.0,
) -> float | None:
    """The least cost of ``data``'s set proven from an earlier plan of the same jobs, or None.

    ``plan`` is any plan of these job ids (e.g. found an hour earlier, before their
    profiles drifted). It is checked again under the current data with the search's own
    criteria: each node's job set allowed by P2 (memory and load), P2's lower bound and
    its order's period within $B_S$ (with :data:`CARRY_MARGIN`). If it passes and
    costs as much as the first node-count pair :func:`search_group` would visit (P3 pairs
    in increasing cost, that pair below the P5 cap ``max_cost`` and not below the P8
    floor ``cost_floor``), that search returns a plan of exactly this cost: no plan costs
    less than that pair, and one of that cost is feasible. None when it does not pass
    (then search). Its plan may be another of that cost: re-search a chosen column.
    Orders ``"all"`` only (the carried order need not be the index order).
    """
    n = len(data)
    if n < 2 or len(plan.job_ids) != n:
        return None
    pos = {d.job_id: k for k, d in enumerate(data)}
    if len(pos) != n or any(job_id not in pos for job_id in plan.job_ids):
        return None
    state = search_state(data, ctx, max_cost, True, True, full_space, periods,
                         cost_floor=cost_floor)
    if state is None:
        return None
    pairs = p3_node_count_pairs(state)
    first = math.nan
    for cost, _, _ in pairs:
        if p5_split_cap_reached(cost, max_cost):
            return None  # the search returns None at once: nothing to carry
        if not p8_below_subset_floor(cost, cost_floor):
            first = cost
            break
    pair = (plan.rollout_nodes * state.price_r + plan.train_nodes * state.price_t,
            plan.train_nodes, plan.rollout_nodes)
    if pair[0] != first or pair not in pairs:
        return None

    def layout(nodes: int, pinning: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
        masks = [0] * nodes
        for job_id, on in zip(plan.job_ids, pinning, strict=True):
            for node in on:
                masks[node] |= 1 << pos[job_id]
        return tuple(sorted(masks))

    lay_r = layout(plan.rollout_nodes, plan.rollout_pinning)
    lay_t = layout(plan.train_nodes, plan.train_pinning)
    need_r = [sum(mask >> k & 1 for mask in lay_r) for k in range(n)]
    need_t = [sum(mask >> k & 1 for mask in lay_t) for k in range(n)]
    if tuple(need_r) != state.need_r or tuple(need_t) != state.need_t:
        return None  # the jobs' node needs changed
    allowed_r, allowed_t = set(state.masks_r), set(state.masks_t)
    if any(m not in allowed_r for m in lay_r) or any(m not in allowed_t for m in lay_t):
        return None
    if not connected(n, lay_r, lay_t):
        return None
    budget = state.budget_s * (1.0 - CARRY_MARGIN)
    roll, load_r = p2_side_load(state, lay_r, rollout=True)
    train, load_t = p2_side_load(state, lay_t, rollout=False)
    if p2_pinning_lower_bound(roll, train, load_r, load_t) > budget:
        return None
    order = tuple(pos[plan.job_ids[k]] for k in plan.order)
    # The decision "period <= budget" (rule P7's Bellman-Ford test, exact up to 1e-9,
    # far inside the margin) costs a fraction of the period itself.
    if not periods.at_most(roll, train, lay_r, lay_t, order, budget):
        return None
    return first


def search_group(state: SearchState) -> GroupPlan | None:
    """The cheapest feasible connected plan of the state's jobs costing < ``max_cost``.

    Raises :class:`DeadlineError` once ``state.deadline`` (a ``perf_counter`` time) passes,
    :class:`EffortError` once ``state.effort`` runs out (one unit per pinning and per
    order tried beyond the index order).
    """
    layouts_r: dict[int, LazyList] = {}
    layouts_t: dict[int, LazyList] = {}
    for cost, n_t, n_r in p3_node_count_pairs(state):
        if p5_split_cap_reached(cost, state.max_cost):
            return None
        if p8_below_subset_floor(cost, state.cost_floor):
            continue
        if n_r not in layouts_r:
            layouts_r[n_r] = layouts(state.need_r, n_r, state.masks_r)
        if n_t not in layouts_t:
            layouts_t[n_t] = layouts(state.need_t, n_t, state.masks_t)
        for lay_r in layouts_r[n_r]:
            if time.perf_counter() > state.deadline:
                raise DeadlineError
            roll, load_r = p2_side_load(state, lay_r, rollout=True)
            if state.prune and load_r > state.budget_s:
                continue
            for lay_t in layouts_t[n_t]:
                if state.effort is not None:
                    state.effort.spend(cost)
                plan = try_pinning(state, lay_r, lay_t, roll, load_r, cost)
                if plan is not None:
                    return plan
    return None


def try_pinning(
    state: SearchState,
    lay_r: tuple[int, ...],
    lay_t: tuple[int, ...],
    roll: list[float],
    load_r: float,
    cost: float,
) -> GroupPlan | None:
    """A feasible plan for this pinning (trying round-robin orders), or None."""
    n, budget, prune, periods = state.n, state.budget_s, state.prune, state.periods
    if not connected(n, lay_r, lay_t):
        return None
    train, load_t = p2_side_load(state, lay_t, rollout=False)
    lower = p2_pinning_lower_bound(roll, train, load_r, load_t)
    if prune and lower > budget:
        return None
    order = tuple(range(n))
    meta = periods.period(roll, train, lay_r, lay_t, order)
    if meta > budget:
        # P6 only once the index order failed: an order within B_S bounds every proper
        # subset's best order (Lemma 1), so P6 cannot reject a pinning whose index order
        # fits, and most pinnings that reach this point do fit.
        if prune and state.all_orders and n >= 3 and p6_some_subset_exceeds(
            state, roll, train, lay_r, lay_t
        ):
            return None
        if prune and p4_index_order_reaches_bound(meta, lower):
            return None
        candidates = orders(n)[1:] if state.all_orders else ()
        for other in candidates:
            if state.effort is not None:
                state.effort.spend(cost)
            if not p7_order_may_fit(state, roll, train, lay_r, lay_t, other):
                continue
            meta = periods.period(roll, train, lay_r, lay_t, other)
            if meta <= budget:
                order = other
                break
        else:
            return None
    plan = GroupPlan(
        job_ids=tuple(d.job_id for d in state.data),
        rollout_nodes=len(lay_r),
        train_nodes=len(lay_t),
        rollout_pinning=pins(lay_r, n),
        train_pinning=pins(lay_t, n),
        order=order,
        cost_usd_per_h=cost,
        meta_iteration_s=meta,
    )
    return verified(plan, state.data, state.ctx)


def verified(plan: GroupPlan, data: Sequence[ResolvedJob], ctx: Context) -> GroupPlan | None:
    """Re-check a plan with the group model itself; the plan with its exact meta-iteration."""
    by_id = {d.job_id: d for d in data}
    members = tuple(
        group_job_of(by_id[job_id], r, t, worst_case=True)
        for job_id, r, t in zip(plan.job_ids, plan.rollout_pinning, plan.train_pinning, strict=True)
    )
    first = data[0].job
    try:
        group = CoExecutionGroup(
            jobs=members,
            rollout_node_ids=tuple(range(plan.rollout_nodes)),
            train_node_ids=tuple(range(plan.train_nodes)),
            pools=ctx.pools(first.rollout_gpu_type, first.train_gpu_type),
            node_capacity=ctx.node_capacity,
            order=plan.order,
        )
    except ValueError:
        return None
    metrics = group.metrics()  # the members are at their worst case already
    ok = metrics.all_slo_ok and math.isclose(
        metrics.cost_usd_per_h, plan.cost_usd_per_h, rel_tol=REL_TOL
    )
    return replace(plan, meta_iteration_s=metrics.meta_iteration_s) if ok else None


def min_cost(
    data: Sequence[ResolvedJob],
    ctx: Context,
    max_cost: float = math.inf,
    prune: bool = True,
    all_orders: bool = True,
    full_space: bool = True,
    periods: PeriodCache | None = None,
    deadline: float = math.inf,
    cost_floor: float = 0.0,
    effort: Effort | None = None,
) -> GroupPlan | None:
    """The cheapest feasible plan of ``data`` (one job: alone) costing < ``max_cost``.

    ``cost_floor`` is a proven lower bound on the cost of any feasible plan (rule P8);
    ``effort`` a work budget (:class:`EffortError` when it runs out).
    """
    if len(data) == 1:
        plan = solo_plan(data[0], ctx)
        return None if p5_split_cap_reached(plan.cost_usd_per_h, max_cost) else plan
    state = search_state(
        data, ctx, max_cost, prune, all_orders, full_space, periods, deadline, cost_floor,
        effort,
    )
    return None if state is None else search_group(state)


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
    ctx = context(hw)
    data = resolved_jobs(jobs, ctx)
    return min_cost(
        data,
        ctx,
        check_max_cost(max_cost_usd_per_h),
        prune,
        check_orders(orders),
        check_space(space),
    )
