"""The optimum's proof by node budgets (module budgets) against exhaustive search."""

from __future__ import annotations

import itertools
import math
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rollmux.placement.optimum.budgets as budgets
from rollmux.placement.optimum.budgets import NodeCounts, node_counts, solve_by_node_budgets
from rollmux.placement.optimum.partition import _new_highs, solve_set_partitioning
from tests.test_optimum_milp import brute_force

INF = math.inf
PRICES = st.tuples(
    st.sampled_from([14.80, 1.0, 2.5, 7.3, 33.0]), st.sampled_from([42.24, 1.0, 3.0, 5.1, 9.9])
)


@st.composite
def classed_systems(
    draw: st.DrawFn,
) -> tuple[int, list[tuple[int, ...]], list[float], list[int], list[tuple[float, float]]]:
    """Jobs in one or two GPU-type classes; every job alone plus random same-class sets.

    Costs are ``price_r * r + price_t * t`` with the class's prices, as the optimum's are.
    """
    n = draw(st.integers(1, 8))
    job_class = [draw(st.integers(0, 1)) for _ in range(n)]
    prices = [draw(PRICES), draw(PRICES)]
    subsets = [(i,) for i in range(n)]
    pool = [
        s
        for k in range(2, min(n, 4) + 1)
        for s in itertools.combinations(range(n), k)
        if len({job_class[i] for i in s}) == 1
    ]
    if pool:
        subsets += draw(st.lists(st.sampled_from(pool), max_size=16, unique=True))
    kinds = [job_class[s[0]] for s in subsets]
    costs = [
        prices[k][0] * draw(st.integers(1, 6)) + prices[k][1] * draw(st.integers(1, 4))
        for k in kinds
    ]
    return n, subsets, costs, kinds, prices


@settings(max_examples=150, deadline=None)
@given(classed_systems(), st.booleans())
def test_node_budgets_reach_the_least_cost(system, cover: bool) -> None:  # type: ignore[no-untyped-def]
    """The node-budget proof returns a cover (partition) of the least cost, proven."""
    n, subsets, costs, kinds, prices = system
    nodes = node_counts(costs, kinds, prices)
    assert nodes is not None
    chosen, status, proven = solve_set_partitioning(n, subsets, costs, INF, cover, nodes=nodes)
    best = brute_force(n, subsets, costs, cover)
    assert proven and "Optimal" in status
    assert sum(costs[c] for c in chosen) == pytest.approx(best, rel=1e-9)
    covered = [i for c in chosen for i in subsets[c]]
    assert set(covered) == set(range(n))
    if not cover:
        assert len(covered) == n
    # The same answer as the enumeration itself gives (no fall-back to the plain MILP).
    direct = solve_by_node_budgets(n, subsets, nodes, INF, cover, _new_highs)
    assert direct is not None and direct[0] == chosen


@settings(max_examples=60, deadline=None)
@given(classed_systems(), st.booleans())
def test_giving_up_falls_back_to_the_plain_milp(system, cover: bool) -> None:  # type: ignore[no-untyped-def]
    """With no pair allowed to fail the enumeration may give up; the answer stays optimal."""
    n, subsets, costs, kinds, prices = system
    nodes = node_counts(costs, kinds, prices)
    with patch.object(budgets, "MAX_PAIRS", 0):
        chosen, _, proven = solve_set_partitioning(n, subsets, costs, INF, cover, nodes=nodes)
    assert proven
    assert sum(costs[c] for c in chosen) == pytest.approx(
        brute_force(n, subsets, costs, cover), rel=1e-9
    )


def test_an_unreachable_pair_is_proven_before_the_optimum() -> None:
    """The LP's node totals allow a cheaper pair than any partition reaches.

    Three jobs, each alone on two training nodes, each pair on one: half of every pair
    partitions the jobs on 1.5 training nodes, so the pair (t=2, r=2) is LP-reachable,
    while every partition is a pair and a solo job (t=3) or three solo jobs (t=6). The
    enumeration proves (2, 2) and (2, 3) unreachable, then reaches the optimum (3, 2).
    """
    subsets = [(0,), (1,), (2,), (0, 1), (1, 2), (0, 2)]
    price_r, price_t = 10.0, 12.0
    pairs = [(1, 2), (1, 2), (1, 2), (1, 1), (1, 1), (1, 1)]
    costs = [price_r * r + price_t * t for r, t in pairs]
    nodes = node_counts(costs, [0] * len(costs), [(price_r, price_t)])
    assert nodes is not None
    found = solve_by_node_budgets(3, subsets, nodes, INF, False, _new_highs)
    assert found is not None
    chosen, _, milps = found
    assert sum(costs[c] for c in chosen) == pytest.approx(brute_force(3, subsets, costs, False))
    assert milps == 3  # (2, 2) and (2, 3) proven unreachable first


def test_node_counts_reproduce_the_costs_or_refuse() -> None:
    """Each cost splits into integer node counts at its class's prices, or None."""
    nodes = node_counts([14.80 * 23 + 42.24 * 13, 57.04, 42.24 * 2], [0, 0, 1],
                        [(14.80, 42.24), (1.0, 42.24)])
    assert nodes == NodeCounts((23, 1, 0), (13, 1, 2), (0, 0, 1), ((14.80, 42.24), (1.0, 42.24)))
    assert node_counts([10.0], [0], [(3.0, 4.0)]) == NodeCounts((2,), (1,), (0,), ((3.0, 4.0),))
    assert node_counts([5.0], [0], [(3.0, 4.0)]) is None
    assert node_counts([5.0], [0], [(0.0, 4.0)]) is None  # a free node: no lattice


def test_a_job_in_two_classes_is_not_enumerated() -> None:
    """Columns of two classes sharing a job: the enumeration does not apply."""
    nodes = node_counts([1.0, 1.0, 3.0], [0, 1, 0], [(1.0, 1.0), (1.0, 1.0)])
    assert nodes is not None
    assert solve_by_node_budgets(2, [(0,), (1,), (0, 1)], nodes, INF, True, _new_highs) is None


def test_dives_find_optimal_covers_without_a_milp() -> None:
    """Seeded random systems: dives find covers (no MILP), each of the least cost."""
    import random

    rng = random.Random(0)
    real_dive = budgets._Class.dive
    found = []

    def dive(self, t, r):  # type: ignore[no-untyped-def]
        cover = real_dive(self, t, r)
        found.append(cover is not None)
        return cover

    with patch.object(budgets._Class, "dive", dive):
        for _ in range(300):
            n = rng.randint(4, 9)
            subsets = [(i,) for i in range(n)] + [
                tuple(sorted(rng.sample(range(n), rng.randint(2, 4)))) for _ in range(14)
            ]
            subsets = list(dict.fromkeys(subsets))
            pairs = [(rng.randint(1, 6), rng.randint(1, 4)) for _ in subsets]
            costs = [14.80 * r + 42.24 * t for r, t in pairs]
            nodes = node_counts(costs, [0] * len(costs), [(14.80, 42.24)])
            assert nodes is not None
            answer = solve_by_node_budgets(n, subsets, nodes, INF, True, _new_highs)
            assert answer is not None
            assert sum(costs[c] for c in answer[0]) == pytest.approx(
                brute_force(n, subsets, costs, True), rel=1e-9
            )
    assert sum(found) >= 10  # dives do the work here, and their covers are optimal
