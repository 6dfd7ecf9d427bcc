"""Exact round-robin periods of a group's (sub)problems, memoised by value.

A problem is some jobs of a group in round-robin order, with the group's effective
phase durations and its pinning restricted to them. :class:`PeriodCache` keys it by its
canonical form (durations in order, each pool's pinning as the sorted tuple of non-empty
node masks: the pinning up to node relabelling), so equal keys are the same event graph
(:func:`rollmux.schedule.round_robin_lists`'s, fed straight to
:mod:`rollmux.schedule.maxplus`). It answers the exact period, the decision "period at
most a budget" (rule P7) and "some order within a budget" for subproblems (rule P6).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import TypeVar

from rollmux.memo import memoised
from rollmux.schedule.maxplus import (
    build_event_graph,
    period_is_at_most,
    period_of_event_graph,
    simple_cycle_bound,
)

__all__ = ["Key", "PeriodCache", "orders", "proper_subsets", "relabel_table"]

Key = tuple[tuple[float, ...], tuple[float, ...], tuple[int, ...], tuple[int, ...]]
Lists = tuple[list[float], list[list[int]], list[float], list[list[int]]]
V = TypeVar("V")
Take = Callable[[Sequence[float]], tuple[float, ...]]


def _put(memo: dict[Key, V], key: Key, value: V, limit: int) -> V:
    """``memo[key] = value``, first dropping the older half of ``memo`` when it is full."""
    if len(memo) >= limit:
        keep = list(memo.items())[len(memo) // 2 :]
        memo.clear()
        memo.update(keep)
    memo[key] = value
    return value


@memoised(1 << 16)
def orders(n: int) -> tuple[tuple[int, ...], ...]:
    """Every round-robin order of ``n`` jobs up to rotation (job 0 first; rule P4)."""
    return tuple((0, *rest) for rest in itertools.permutations(range(1, n)))


@memoised(1 << 16)
def proper_subsets(n: int) -> tuple[tuple[int, ...], ...]:
    """Every subset of 2..n-1 of ``n`` jobs, by size then lexicographically (rule P6).

    Small subsets first: they have few orders, so one without a good order is found
    cheaply (checking only the subsets one job short would decide the same, since a
    failing subset makes every superset fail, but measured 15-20 % slower).
    """
    return tuple(sub for size in range(2, n) for sub in itertools.combinations(range(n), size))


@memoised(1 << 16)
def relabel_table(n: int, jobs: tuple[int, ...]) -> tuple[int, ...]:
    """Node masks over a group's ``n`` jobs mapped to masks over ``jobs`` (bit i: ``jobs[i]``)."""
    out = []
    for mask in range(1 << n):
        relabelled = 0
        for i, j in enumerate(jobs):
            if mask >> j & 1:
                relabelled |= 1 << i
        out.append(relabelled)
    return tuple(out)


@memoised(1 << 16)
def _projection(n: int, jobs: tuple[int, ...]) -> tuple[Take, Callable[[int], int]]:
    """Picks ``jobs``' durations (in that order) and relabels a node mask over them."""
    pick = operator.itemgetter(*jobs)
    take: Take = pick if len(jobs) > 1 else lambda values: (pick(values),)
    return take, relabel_table(n, jobs).__getitem__


def _lists(key: Key) -> Lists:
    """The event graph of a key: durations, job chains, lags and node sequences."""
    r, t, mr, mt = key
    n = len(r)
    sequences = [[j for j in range(n) if mask >> j & 1] for mask in mr]
    sequences += [[n + j for j in range(n) if mask >> j & 1] for mask in mt]
    return [*r, *t], [[j, n + j] for j in range(n)], [0.0] * n, sequences


class PeriodCache:
    """Exact round-robin periods, memoised on the canonical form of the (sub)problem.

    Every answer is a function of the key alone, so one cache may serve every job set of
    every :func:`~rollmux.placement.optimum.optimal_partition` call (a
    :class:`~rollmux.placement.optimum.ColumnCache` keeps one across calls).
    """

    # Entries kept per memo; when full its older half is dropped (about 0.5 kB an entry;
    # answers do not change, only what is recomputed).
    MAX_ENTRIES = 200_000

    def __init__(self) -> None:
        """Empty memos."""
        self._memo: dict[Key, float] = {}
        # Decision results of at_most: key -> (largest budget proven too small,
        # smallest budget proven enough).
        self._bounds: dict[Key, tuple[float, float]] = {}
        # Best-order search of a subproblem: key -> [orders tried, least period so far].
        self._best: dict[Key, list[float]] = {}

    def clear(self) -> None:
        """Forget every memoised answer."""
        self._memo.clear()
        self._bounds.clear()
        self._best.clear()

    @staticmethod
    def key(
        roll: Sequence[float],
        train: Sequence[float],
        lay_r: Sequence[int],
        lay_t: Sequence[int],
        jobs: tuple[int, ...],
    ) -> Key:
        """The canonical key of ``jobs`` (in this order) of a group pinned as ``lay_r/t``."""
        take, relabel = _projection(len(roll), jobs)
        return (
            take(roll),
            take(train),
            tuple(sorted(filter(None, map(relabel, lay_r)))),
            tuple(sorted(filter(None, map(relabel, lay_t)))),
        )

    def period_of(self, key: Key) -> float:
        """Exact steady-state period of a keyed problem."""
        value = self._memo.get(key)
        if value is None:
            value = _put(self._memo, key, period_of_event_graph(*_lists(key)), self.MAX_ENTRIES)
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
        lists = _lists(key)
        if simple_cycle_bound(*lists) > budget:
            ok = False
        else:
            graph = build_event_graph(*lists)
            ok = graph is not None and period_is_at_most(graph, budget)
        _put(self._bounds, key, (lo, budget) if ok else (budget, hi), self.MAX_ENTRIES)
        return ok

    def best_at_most(self, key: Key, budget: float) -> bool:
        """Whether some round-robin order of a keyed problem has period <= ``budget``.

        Orders are tried up to rotation (job 0 first) and the search stops at the first
        good one; asked again with a smaller budget it resumes where it stopped, so each
        order of a problem is evaluated at most once per cache.
        """
        state = self._best.get(key)
        if state is None:
            state = _put(self._best, key, [0, math.inf], self.MAX_ENTRIES)
        if state[1] <= budget:
            return True
        r, t, mr, mt = key
        candidates = orders(len(r))
        while state[0] < len(candidates):
            order = candidates[int(state[0])]
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
        first = killer[0] if killer else None
        if first is not None and not self.best_at_most(
            self.key(roll, train, lay_r, lay_t, first), budget
        ):
            return True
        for sub in proper_subsets(len(roll)):
            if sub == first:
                continue
            if not self.best_at_most(self.key(roll, train, lay_r, lay_t, sub), budget):
                if killer is not None:
                    killer[:] = [sub]
                return True
        return False
