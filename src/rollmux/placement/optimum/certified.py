"""The certified optimum: column generation with a proven lower bound (docs/optimum.md, sec. 6).

Where enumerating and searching every candidate group is too slow (a single five-job
set of two-node jobs can take minutes to search exactly), the partition comes from
column generation over the same candidate groups (the cliques of the compatibility
graph, rule P1):

1. *Master.* The LP relaxation of set partitioning over the columns found so far
   (every job alone, every group whose least cost is known) gives duals $y_j$.
2. *Pricing.* A group $S$ can lower the LP only if its least cost $c_S$ is below
   $y(S) = \\sum_{j \\in S} y_j$. Every candidate carries a proven lower bound
   $\\ell_S \\le c_S$ (node counts from work and memory, rule P3, then whatever its
   searches proved); only candidates with $\\ell_S < y(S)$ are searched, with $y(S)$
   as the cap (rule P5), under a deterministic effort budget. A search finds the
   least-cost plan (exact), proves $c_S \\ge y(S)$, or runs out of effort inside the
   node-count pair of cost $X$, which proves $c_S \\ge X$ (pairs are visited in
   increasing cost); the last adds a *bound column* of cost $\\ell_S$ to the master.
3. *Bound.* For any partition $x$, $\\sum_S c_S x_S = \\sum_j y_j + \\sum_S (c_S - y(S))
   x_S \\ge \\sum_j y_j + n \\min(0, \\min_S (\\ell_S - y(S)))$ (at most $n$ groups), so
   this is a proven lower bound with any duals; at convergence it is the LP bound.
4. *Integer.* HiGHS solves the MILP over the columns with a plan: a feasible
   partition, the upper bound. Any cheaper partition uses only groups whose reduced
   cost $c_S - y(S)$ is below the gap, so when few candidates' bounds fall within the
   gap they are searched too (cap $y(S)$ + gap); if none runs out of effort, the MILP
   over the columns is the exact optimum and the gap is 0.

Everything is deterministic (effort is counted in pinnings and orders tried, not
seconds), so a replay gives the same bytes on every machine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rollmux.model import ResolvedJob
from rollmux.placement.optimum.periods import PeriodCache
from rollmux.placement.optimum.plans import (
    Context,
    GroupPlan,
    Partition,
    budget_s,
    solo_plan,
    worst_train_s,
)
from rollmux.placement.optimum.search import DeadlineError, Effort, EffortError, min_cost

if TYPE_CHECKING:
    from rollmux.placement.optimum.partition import ColumnCache

# The MILP over chosen columns: (n, subsets, costs, deadline) -> (chosen, status, solved, ...).
MilpSolver = Callable[..., tuple[Any, ...]]

__all__ = ["CertifyOptions", "certified_partition", "cheap_lower_bounds"]

# Reduced costs above -TOL count as non-negative (HiGHS's dual feasibility is 1e-7).
TOL = 1e-6


@dataclass(frozen=True)
class CertifyOptions:
    """Budgets of the certified method (all counted in work units, never in seconds).

    ``set_effort``: pinnings and orders one search of a candidate group may try; a
    group whose bound column the LP uses is searched again with four times as much, up
    to ``max_effort``. ``batch``: candidates searched per pricing round. ``close_limit``:
    the most candidates within the gap searched to close it (beyond: the gap stays).
    ``max_rounds``: pricing rounds per call (the bound stays valid when it stops early).
    """

    set_effort: int = 2_000
    max_effort: int = 128_000
    batch: int = 48
    close_limit: int = 600
    max_rounds: int = 400

    def __post_init__(self) -> None:
        """Validate every budget (positive integers)."""
        for name in ("set_effort", "max_effort", "batch", "close_limit", "max_rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} = {value!r}: expected an integer > 0")


def cheap_lower_bounds(
    data: Sequence[ResolvedJob], ctx: Context, members: np.ndarray
) -> np.ndarray:
    """A proven lower bound on the least cost of each group (rows of ``members``, -1 padded).

    Rule P3 with memory: a group needs at least as many rollout nodes as its largest
    need, as its rollout work over its budget $B_S$ (every node-second of work fits in
    one meta-iteration of at most $B_S$), and as its resident state over a node's host
    memory; likewise training nodes. Its cost is at least that pair's.
    """
    n = len(data)
    def col(values: list[float]) -> np.ndarray:
        return np.array([*values, 0.0])

    r = col([d.rollout_nodes for d in data])
    t = col([d.train_nodes for d in data])
    work_r = col([d.rollout_nodes * d.times.rollout_max_s for d in data])
    work_t = col([d.train_nodes * worst_train_s(d) for d in data])
    mem_r = col([d.rollout_nodes * d.rollout_mem_gb for d in data])
    mem_t = col([d.train_nodes * d.train_mem_gb for d in data])
    budget = np.array([budget_s(d) for d in data] + [math.inf])
    price_r = np.array([ctx.node_price(d.job.rollout_gpu_type) for d in data] + [0.0])
    price_t = np.array([ctx.node_price(d.job.train_gpu_type) for d in data] + [0.0])
    idx = np.where(members < 0, n, members)
    b = budget[idx].min(axis=1)
    limit = ctx.mem_limit_gb
    rel = 1e-9
    lo_r = np.maximum.reduce([
        r[idx].max(axis=1),
        np.ceil(work_r[idx].sum(axis=1) / b - rel),
        np.ceil(mem_r[idx].sum(axis=1) / limit - rel),
    ])
    lo_t = np.maximum.reduce([
        t[idx].max(axis=1),
        np.ceil(work_t[idx].sum(axis=1) / b - rel),
        np.ceil(mem_t[idx].sum(axis=1) / limit - rel),
    ])
    bound: np.ndarray = lo_r * price_r[idx[:, 0]] + lo_t * price_t[idx[:, 0]]
    return bound * (1.0 - rel)


@dataclass
class _Fact:
    """What is proven about one candidate group: a lower bound, and its plan once exact."""

    lower: float
    plan: GroupPlan | None = None  # set: ``lower`` is the exact least cost
    level: int = 0  # effort escalations so far


def _lp(n: int, subsets: Sequence[tuple[int, ...]], costs: Sequence[float]
        ) -> tuple[np.ndarray, np.ndarray, float]:
    """The partitioning LP over the columns: (duals y, solution x, objective)."""
    from scipy import sparse
    from scipy.optimize import linprog

    rows = [i for subset in subsets for i in subset]
    cols = [c for c, subset in enumerate(subsets) for _ in subset]
    matrix = sparse.csr_array(
        (np.ones(len(rows)), (np.array(rows), np.array(cols))), shape=(n, len(subsets))
    )
    res = linprog(np.array(costs), A_eq=matrix, b_eq=np.ones(n), bounds=(0, None),
                  method="highs")
    if res.status != 0:  # singletons make it always feasible and bounded
        raise RuntimeError(f"master LP: {res.message}")
    return np.asarray(res.eqlin.marginals, dtype=float), np.asarray(res.x), float(res.fun)


def certified_partition(
    data: Sequence[ResolvedJob],
    ctx: Context,
    candidates: Sequence[tuple[int, ...]],
    known: dict[tuple[int, ...], GroupPlan],
    dominated: set[tuple[int, ...]],
    *,
    all_orders: bool,
    full_space: bool,
    periods: PeriodCache,
    deadline: float,
    options: CertifyOptions,
    cache: ColumnCache | None = None,
    uids: Sequence[int] = (),
    start: float | None = None,
    searched_before: int = 0,
    solve: MilpSolver,
) -> Partition:
    """A partition of ``data`` and a proven lower bound, by column generation.

    ``candidates``: the groups of two or more jobs that may be columns (job index
    tuples, cliques of the compatibility graph); ``known``: those whose least cost is
    known, with a plan; ``dominated``: those proven no cheaper than a split into known
    columns (never needed). ``cache`` keeps what the searches prove for later calls.
    ``solve`` is the set-partitioning MILP (``partition.solve_set_partitioning``, passed
    in by the caller so this module does not import its caller).
    """
    start = time.perf_counter() if start is None else start
    n = len(data)
    width = max((len(c) for c in candidates), default=1)
    members = np.full((len(candidates), width), -1, dtype=np.int64)
    for q, subset in enumerate(candidates):
        members[q, : len(subset)] = subset
    lower = cheap_lower_bounds(data, ctx, members) if len(candidates) else np.zeros(0)
    facts: list[_Fact | None] = [None] * len(candidates)
    keys: list[frozenset[int] | None] = [None] * len(candidates)
    skip = np.zeros(len(candidates), dtype=bool)
    for q, subset in enumerate(candidates):
        plan = known.get(subset)
        if subset in dominated:
            skip[q] = True
            continue
        if cache is not None:
            key = keys[q] = frozenset(uids[i] for i in subset)
            fact = cache.certified.get(key)
            if fact is not None:
                facts[q] = fact
                lower[q] = max(lower[q], fact.lower)
        if plan is not None:
            fact = facts[q] = _Fact(plan.cost_usd_per_h, plan)
            lower[q] = plan.cost_usd_per_h
    # The master's columns: every job alone, then every group with a known plan.
    subsets: list[tuple[int, ...]] = []
    costs: list[float] = []
    plans: list[GroupPlan | None] = []
    in_master = np.zeros(len(candidates), dtype=bool)
    column_of: dict[int, int] = {}
    for i, d in enumerate(data):
        solo = solo_plan(d, ctx)
        subsets.append((i,))
        costs.append(solo.cost_usd_per_h)
        plans.append(solo)

    def add(q: int) -> None:
        fact = facts[q]
        assert fact is not None
        if q in column_of:
            c = column_of[q]
            costs[c], plans[c] = float(lower[q]), fact.plan
            return
        column_of[q] = len(subsets)
        subsets.append(candidates[q])
        costs.append(float(lower[q]))
        plans.append(fact.plan)
        in_master[q] = True

    for q, fact in enumerate(facts):
        if fact is not None and fact.plan is not None and not skip[q]:
            add(q)
    searched = 0
    timed_out = False

    def search(q: int, cap: float, unlimited: bool = False) -> bool:
        """Search candidate q below ``cap``; False when the deadline passed."""
        nonlocal searched
        fact = facts[q]
        if fact is None:
            fact = facts[q] = _Fact(float(lower[q]))
        if fact.plan is not None:
            add(q)
            return True
        if unlimited:
            fact.level += 1
        effort = min(options.set_effort * 4**fact.level, options.max_effort)
        group = [data[i] for i in candidates[q]]
        searched += 1
        try:
            found = min_cost(group, ctx, cap, True, all_orders, full_space, periods, deadline,
                             float(lower[q]), Effort(effort))
        except DeadlineError:
            return False
        except EffortError as exc:
            lower[q] = max(lower[q], exc.lower_bound)
            fact.lower = float(lower[q])
            add(q)  # a bound column: its cost is the proven bound, it has no plan
        else:
            if found is not None:
                lower[q] = fact.lower = found.cost_usd_per_h
                fact.plan = found
                add(q)
            else:
                # No plan cheaper than the cap (rule P5's test rejects cost >= cap (1 - 1e-9)).
                lower[q] = max(lower[q], cap * (1.0 - 1e-9))
                fact.lower = float(lower[q])
                if q in column_of:
                    add(q)
        key = keys[q]
        if cache is not None and key is not None:
            cache.certified[key] = fact
        return True

    y = np.zeros(n)
    x = np.zeros(len(subsets))
    rounds = 0
    bound = -math.inf
    escalated = True
    while escalated and not timed_out:
        escalated = False
        while rounds < options.max_rounds:
            rounds += 1
            y, x, _ = _lp(n, subsets, costs)
            y_ext = np.append(y, 0.0)
            ysum = y_ext[np.where(members < 0, n, members)].sum(axis=1) if len(
                candidates) else np.zeros(0)
            reduced = lower - ysum
            open_ = ~skip & ~in_master & (reduced < -TOL)
            if not open_.any():
                break
            order = np.flatnonzero(open_)
            order = order[np.argsort(reduced[order], kind="stable")][: options.batch]
            for q in order.tolist():
                if time.perf_counter() > deadline or not search(q, float(ysum[q])):
                    timed_out = True
                    break
            if timed_out:
                break
        if timed_out or rounds >= options.max_rounds:
            break
        # Bound columns the LP uses: search them again with more effort (exact cost or a
        # higher bound), then price again.
        for q, c in sorted(column_of.items()):
            fact = facts[q]
            if fact is not None and fact.plan is None and x[c] > 1e-9 and (
                options.set_effort * 4**fact.level < options.max_effort
            ):
                if not search(q, math.inf, unlimited=True):
                    timed_out = True
                    break
                escalated = True
    y, x, _ = _lp(n, subsets, costs)
    bound = _lagrangian_bound(y, members, lower, skip, subsets, costs, n)

    def integer() -> tuple[list[int], str, bool, float]:
        usable = [c for c, plan in enumerate(plans) if plan is not None]
        chosen, status, solved, *_ = solve(
            n, [subsets[c] for c in usable], [costs[c] for c in usable], deadline
        )
        picked = [usable[c] for c in chosen]
        return picked, status, solved, sum(costs[c] for c in picked)

    chosen, status, solved, upper = integer()
    uncertain = 0
    closed = False
    gap = upper - bound
    if gap > TOL * max(1.0, upper) and not timed_out:
        # Close the gap: a cheaper partition uses only groups of reduced cost < gap.
        y_ext = np.append(y, 0.0)
        ysum = y_ext[np.where(members < 0, n, members)].sum(axis=1) if len(
            candidates) else np.zeros(0)
        within = ~skip & (lower - ysum < gap - TOL)
        pending = [q for q in np.flatnonzero(within).tolist() if not _exact(facts[q])]
        if len(pending) <= options.close_limit:
            # Each pending group at its own effort first; those still open, with four
            # times as much (up to max_effort) while any remain.
            escalate = False
            while pending and not timed_out:
                still = []
                for q in pending:
                    cap = float(ysum[q]) + gap
                    if time.perf_counter() > deadline or not search(q, cap, escalate):
                        timed_out = True
                        break
                    fact = facts[q]
                    if fact is not None and fact.plan is None and fact.lower < cap * (1 - 1e-9):
                        still.append(q)
                escalate = True
                pending = [q for q in still if (facts[q] is not None and options.set_effort
                           * 4**facts[q].level < options.max_effort)]  # type: ignore[union-attr]
                uncertain = len(still)
            if not timed_out:
                chosen, status, solved, upper = integer()
                if uncertain == 0 and solved:
                    bound = max(bound, upper)
                    closed = True
    groups = sorted((min(subsets[c]), plans[c]) for c in chosen)
    result = tuple(plan for _, plan in groups if plan is not None)
    cost = sum(g.cost_usd_per_h for g in result)
    proven = closed or upper - bound <= 1e-9 * max(1.0, upper)
    bound = cost if proven else min(bound, cost)
    n_bound_columns = sum(not _exact(facts[q]) for q in column_of)
    text = (f"certified column generation: {rounds} pricing rounds, "
            f"{len(subsets)} columns ({n_bound_columns} bound only), lower bound "
            f"{bound:.4f}" + ("; gap closed" if closed else "")
            + (f"; {uncertain} groups within the gap not resolved" if uncertain else "")
            + ("; time limit hit" if timed_out else "") + f"; {status}")
    return Partition(
        groups=result,
        cost_usd_per_h=cost,
        solver=text,
        seconds=time.perf_counter() - start,
        n_columns=len(subsets),
        proven_optimal=proven,
        n_searched=searched_before + searched,
        lower_bound_usd_per_h=bound,
        method="certified",
    )


def _exact(fact: _Fact | None) -> bool:
    """Whether the fact holds the group's least cost (a plan)."""
    return fact is not None and fact.plan is not None


def _lagrangian_bound(
    y: np.ndarray,
    members: np.ndarray,
    lower: np.ndarray,
    skip: np.ndarray,
    subsets: Sequence[tuple[int, ...]],
    costs: Sequence[float],
    n: int,
) -> float:
    """$\\sum_j y_j + n \\min(0, \\text{least reduced cost})$: a lower bound for any duals."""
    least = 0.0
    for subset, cost in zip(subsets, costs, strict=True):
        least = min(least, cost - float(sum(y[i] for i in subset)))
    if len(lower):
        y_ext = np.append(y, 0.0)
        ysum = y_ext[np.where(members < 0, n, members)].sum(axis=1)
        reduced = np.where(skip, np.inf, lower - ysum)
        least = min(least, float(reduced.min()))
    return float(y.sum()) + n * least
