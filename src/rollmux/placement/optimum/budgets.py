"""The set-partitioning optimum through node budgets: an exact proof from a few LPs.

Every column's cost is ``price_r * R + price_t * T`` for its group's rollout and
training node counts ``R`` and ``T`` (prices of the group's GPU types, which all its jobs
share: rule P1). So every partition of one GPU-type class costs ``price_r * sum(R) +
price_t * sum(T)`` with *integer* totals, and the costs a partition can have are a
lattice of node-count pairs ``(t, r)``. The MILP's own LP bound ignores that the totals
are integers; HiGHS then spends its branch-and-bound proving that no pair between the
LP bound and the optimum is reachable (docs/optimum.md, section 4: about 3 % of LP gap
and 13 distinct column costs on the production trace).

Here, per class:

1. ``r(t)``, the least ``sum(R)`` of a fractional cover with ``sum(T) <= t``, rounded up,
   for every ``t`` from the least ``sum(T)`` until ``r(t)`` stops falling (one LP each);
   every cover with ``sum(T) = t`` has ``sum(R) >= r(t)``.
2. The pairs ``(t, r)`` with ``r >= r(t)``, cheapest first: a cover with ``sum(T) <= t``
   and ``sum(R) <= r`` (a *box*) for each, until one is found. Every cheaper pair was
   proven unreachable, so every cover in the box costs exactly that pair's cost: the
   first one found is optimal. It comes from the row's LP when that was integral, else
   from a dive (LPs with fractional columns fixed to 1, :meth:`_Class.dive`), else from
   the MILP "least-cost cover in the box", whose "infeasible" proves the pair unreachable.

The node counts come from the costs (:func:`node_counts`); any integer pair that
reproduces a column's cost keeps the argument valid, since only the totals' integrality
is used. When a class needs more than :data:`MAX_ROWS` LPs or more than
:data:`MAX_PAIRS` infeasible pairs, or a MILP stops on the time limit, the caller solves
the plain MILP instead (``None``).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MAX_PAIRS", "MAX_ROWS", "NodeCounts", "node_counts", "solve_by_node_budgets"]

#: LPs for ``r(t)`` per class before giving up on the enumeration.
MAX_ROWS = 64
#: Unreachable pairs proven per class before giving up on the enumeration.
MAX_PAIRS = 12
# Tolerances: a column cost matches a node pair within REL_TOL; LP totals are rounded up
# after subtracting LP_TOL (HiGHS's feasibility tolerance is 1e-7).
REL_TOL = 1e-9
LP_TOL = 1e-6
# An LP solution is integral when every value is within INT_TOL of 0 or 1.
INT_TOL = 1e-9
#: LPs of one dive (:meth:`_Class.dive`) before the MILP takes over.
MAX_DIVE = 40


@dataclass(frozen=True)
class NodeCounts:
    """Each column's cost as ``prices[kind][0] * rollout + prices[kind][1] * train``."""

    rollout: tuple[int, ...]
    train: tuple[int, ...]
    kind: tuple[int, ...]
    prices: tuple[tuple[float, float], ...]


def _split_cost(cost: float, price_r: float, price_t: float) -> tuple[int, int] | None:
    """Non-negative integers ``(r, t)`` with ``price_r * r + price_t * t == cost`` (fewest t)."""
    tol = REL_TOL * max(1.0, abs(cost))
    for t in range(int((cost + tol) // price_t) + 1):
        r = round((cost - t * price_t) / price_r)
        if r >= 0 and abs(r * price_r + t * price_t - cost) <= tol:
            return r, t
    return None


def node_counts(
    costs: Sequence[float], kinds: Sequence[int], prices: Sequence[tuple[float, float]]
) -> NodeCounts | None:
    """Each column's node pair from its cost and its class's prices; None if one has none.

    ``kinds[c]`` indexes ``prices`` (rollout and training price of one node). Deterministic
    in its inputs (the pair with the fewest training nodes when several fit).
    """
    if not all(pr > 0 and pt > 0 and math.isfinite(pr + pt) for pr, pt in prices):
        return None
    memo: dict[tuple[float, int], tuple[int, int] | None] = {}
    rollout: list[int] = []
    train: list[int] = []
    for cost, kind in zip(costs, kinds, strict=True):
        key = (cost, kind)
        if key not in memo:
            memo[key] = _split_cost(cost, *prices[kind])
        pair = memo[key]
        if pair is None:
            return None
        rollout.append(pair[0])
        train.append(pair[1])
    return NodeCounts(tuple(rollout), tuple(train), tuple(kinds), tuple(prices))


class _Class:
    """One GPU-type class: its jobs and columns in one HiGHS model (``highspy``).

    Rows: each job covered (at least once with ``cover``, else exactly once), then
    ``sum(T) <= t`` and ``sum(R) <= r`` (unbounded until a pair sets them). The same
    instance solves the LPs of :func:`_rows` (warm-started) and then the pair MILPs.
    """

    def __init__(
        self,
        jobs: list[int],
        cols: list[int],
        subsets: Sequence[tuple[int, ...]],
        nodes: NodeCounts,
        cover: bool,
        new_highs: Callable[[], Any],
    ) -> None:
        import highspy

        self.cols = cols
        local = np.full(max(jobs) + 1, -1, dtype=np.int32)
        local[jobs] = np.arange(len(jobs), dtype=np.int32)
        n = self.n = len(jobs)
        m = len(cols)
        self.r = np.array([nodes.rollout[c] for c in cols], dtype=np.float64)
        self.t = np.array([nodes.train[c] for c in cols], dtype=np.float64)
        self.price_r, self.price_t = nodes.prices[nodes.kind[cols[0]]]
        sizes = np.array([len(subsets[c]) for c in cols], dtype=np.int32)
        members = local[np.fromiter(
            (i for c in cols for i in subsets[c]), dtype=np.int32, count=int(sizes.sum())
        )]
        # Column k: its jobs' rows, then the two budget rows.
        starts = np.zeros(m + 1, dtype=np.int32)
        np.cumsum(sizes + 2, out=starts[1:])
        index = np.empty(int(starts[-1]), dtype=np.int32)
        value = np.ones(int(starts[-1]))
        budget_at = starts[1:] - 2
        job_at = np.ones(int(starts[-1]), dtype=bool)
        job_at[budget_at] = job_at[budget_at + 1] = False
        index[job_at] = members
        index[budget_at], index[budget_at + 1] = n, n + 1
        value[budget_at], value[budget_at + 1] = self.t, self.r
        self.inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = m
        lp.num_row_ = n + 2
        lp.col_cost_ = np.zeros(m)
        lp.col_lower_ = np.zeros(m)
        lp.col_upper_ = np.ones(m)
        lp.row_lower_ = np.concatenate([np.ones(n), np.full(2, -self.inf)])
        row_upper = np.full(n + 2, self.inf)
        if not cover:
            row_upper[:n] = 1.0
        lp.row_upper_ = row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = starts
        lp.a_matrix_.index_ = index
        lp.a_matrix_.value_ = value
        self.highs = new_highs()
        self.highs.setOptionValue("mip_rel_gap", 0.0)
        self.highs.passModel(lp)
        self.all_cols = np.arange(m, dtype=np.int32)
        self.integer = False

    def least(self, objective: np.ndarray, t_budget: float) -> tuple[float, list[int] | None]:
        """Least ``objective . x`` of a fractional cover with ``sum(T) <= t_budget``.

        Also the LP's columns when its solution is integral (a cover in its own right).
        """
        import highspy

        h = self.highs
        h.changeColsCost(len(self.all_cols), self.all_cols, objective)
        h.changeRowBounds(self.n, -self.inf, t_budget)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return math.inf, None
        x = np.asarray(h.getSolution().col_value)
        integral = bool(np.all(np.abs(x - np.round(x)) <= INT_TOL))
        chosen = [self.cols[k] for k in np.flatnonzero(x > 0.5)] if integral else None
        return float(h.getInfo().objective_function_value), chosen

    def dive(self, t: int, r: int) -> list[int] | None:
        """A cover in the box ``(t, r)`` by LP diving, or None (the MILP decides then).

        The least-cost LP in the box, re-solved with the largest fractional column fixed
        to 1 until the solution is integral (a cover in the box: optimal, see
        :func:`_solve_class`) or the LP is infeasible. At most :data:`MAX_DIVE` LPs, each
        warm-started; the fixings are undone. Only while the model is still an LP.
        """
        import highspy

        if self.integer:
            return None
        h = self.highs
        m = len(self.all_cols)
        h.changeColsCost(m, self.all_cols, self.r * self.price_r + self.t * self.price_t)
        h.changeRowBounds(self.n, -self.inf, t + LP_TOL)
        h.changeRowBounds(self.n + 1, -self.inf, r + LP_TOL)
        fixed: list[int] = []
        chosen = None
        for _ in range(MAX_DIVE):
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                break
            x = np.asarray(h.getSolution().col_value)
            gap = np.abs(x - np.round(x))
            if np.all(gap <= INT_TOL):
                chosen = [self.cols[k] for k in np.flatnonzero(x > 0.5)]
                break
            k = int(np.argmax(np.where(gap > INT_TOL, x, -1.0)))
            h.changeColBounds(k, 1.0, 1.0)
            fixed.append(k)
        for k in fixed:
            h.changeColBounds(k, 0.0, 1.0)
        h.changeRowBounds(self.n + 1, -self.inf, self.inf)
        return chosen

    def pair_milp(
        self, t: int, r: int, deadline: float
    ) -> tuple[list[int] | None, tuple[Any, str], bool]:
        """A least-cost cover with ``sum(T) <= t`` and ``sum(R) <= r``.

        Returns its columns (None if there is none), HiGHS's model status and its text,
        and whether HiGHS finished (False when it stopped on the time limit).
        """
        import highspy

        h = self.highs
        m = len(self.all_cols)
        if not self.integer:
            self.integer = True
            h.changeColsIntegrality(
                m, self.all_cols, np.full(m, highspy.HighsVarType.kInteger)
            )
            h.changeColsCost(m, self.all_cols, self.r * self.price_r + self.t * self.price_t)
        left = deadline - time.perf_counter()
        if math.isfinite(left):
            h.setOptionValue("time_limit", max(left, 1.0))
        h.changeRowBounds(self.n, -self.inf, t + 0.5)
        h.changeRowBounds(self.n + 1, -self.inf, r + 0.5)
        h.run()
        model_status = h.getModelStatus()
        status = (model_status, h.modelStatusToString(model_status))
        if model_status == highspy.HighsModelStatus.kInfeasible:
            return None, status, True
        if model_status != highspy.HighsModelStatus.kOptimal:
            return None, status, False
        x = np.asarray(h.getSolution().col_value)
        return [self.cols[k] for k in np.flatnonzero(x > 0.5)], status, True


def _rows(cls: _Class) -> tuple[dict[int, int], dict[int, list[int]]] | None:
    """``t -> r(t)`` from the least ``sum(T)`` until ``r(t)`` reaches its floor.

    Also, for each ``t`` whose LP came out integral, its columns: a cover in the box
    ``(t, r(t))``, found without a MILP.
    """
    t_least = cls.least(cls.t, cls.inf)[0]
    r_floor = cls.least(cls.r, cls.inf)[0]
    if not (math.isfinite(t_least) and math.isfinite(r_floor)):
        return None
    floor = math.ceil(r_floor - LP_TOL)
    rows: dict[int, int] = {}
    covers: dict[int, list[int]] = {}
    t = math.ceil(t_least - LP_TOL)
    while len(rows) < MAX_ROWS:
        value, chosen = cls.least(cls.r, t + LP_TOL)
        rows[t] = r = math.ceil(value - LP_TOL)
        if chosen is not None:
            covers[t] = chosen
        if r <= floor:
            return rows, covers
        t += 1
    return None


def _solve_class(cls: _Class, deadline: float) -> tuple[list[int], tuple[Any, str], int] | None:
    """The optimum of one class by node budgets: columns, HiGHS status, MILPs run."""
    import highspy

    found = _rows(cls)
    if found is None:
        return None
    rows, covers = found
    last = max(rows)
    heap = [(cls.price_t * t + cls.price_r * r, t, r) for t, r in rows.items()]
    heapq.heapify(heap)
    optimal = highspy.HighsModelStatus.kOptimal
    without_milp = (optimal, cls.highs.modelStatusToString(optimal))
    milps = 0
    while milps <= MAX_PAIRS:
        _, t, r = heapq.heappop(heap)
        # A cover in this box without a MILP: the row's LP when it was integral, or a dive.
        cover = covers.get(t) if r == rows[t] else None
        if cover is None:
            cover = cls.dive(t, r)
        if cover is not None:
            return cover, without_milp, milps
        milps += 1
        chosen, status, done = cls.pair_milp(t, r, deadline)
        if not done:
            return None
        if chosen is not None:
            return chosen, status, milps
        heapq.heappush(heap, (cls.price_t * t + cls.price_r * (r + 1), t, r + 1))
        if t == last and r == rows[last]:
            # Past the last row r(t) stays at its floor: the next row starts there.
            last += 1
            rows[last] = rows[t]
            heapq.heappush(heap, (cls.price_t * last + cls.price_r * rows[last], last,
                                  rows[last]))
    return None


def solve_by_node_budgets(
    n: int,
    subsets: Sequence[tuple[int, ...]],
    nodes: NodeCounts,
    deadline: float,
    cover: bool,
    new_highs: Callable[[], Any],
) -> tuple[list[int], tuple[Any, str], int] | None:
    """The least-cost partition (cover with ``cover``) by node budgets, class by class.

    Returns the chosen columns (sorted), the HiGHS model status of the last MILP (and its
    text) and the number of MILPs run; None when the enumeration does not apply (a job
    with no column or in columns of two classes) or gave up (see the module docstring).
    """
    if n == 0:
        return None
    job_kind: list[int | None] = [None] * n
    for c, subset in enumerate(subsets):
        for i in subset:
            if job_kind[i] is None:
                job_kind[i] = nodes.kind[c]
            elif job_kind[i] != nodes.kind[c]:
                return None
    if any(kind is None for kind in job_kind):
        return None
    chosen: list[int] = []
    status: tuple[Any, str] = (None, "")
    milps = 0
    for kind in sorted(set(nodes.kind)):
        jobs = [i for i in range(n) if job_kind[i] == kind]
        cols = [c for c in range(len(subsets)) if nodes.kind[c] == kind]
        solved = _solve_class(_Class(jobs, cols, subsets, nodes, cover, new_highs), deadline)
        if solved is None:
            return None
        chosen.extend(solved[0])
        status = solved[1]
        milps += solved[2]
    return sorted(chosen), status, milps
