"""The set-partitioning MILP of the optimum (HiGHS through highspy) against exhaustive search."""

from __future__ import annotations

import functools
import itertools
import math
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rollmux.placement.optimum.partition import HIGHS_OPTIONS, solve_set_partitioning

INF = math.inf


@st.composite
def set_systems(draw: st.DrawFn) -> tuple[int, list[tuple[int, ...]], list[float]]:
    """A job count, every job alone plus random sets of 2-4 jobs, costs in price quanta."""
    n = draw(st.integers(1, 7))
    subsets = [(i,) for i in range(n)]
    if n > 1:
        pool = [s for k in range(2, min(n, 4) + 1) for s in itertools.combinations(range(n), k)]
        subsets += draw(st.lists(st.sampled_from(pool), max_size=12, unique=True))
    # Costs on a coarse grid (14.80 R + 42.24 T, as the cluster's prices): many ties.
    costs = [
        14.80 * draw(st.integers(1, 4)) + 42.24 * draw(st.integers(1, 3)) for _ in subsets
    ]
    return n, subsets, costs


def brute_force(n: int, subsets: list[tuple[int, ...]], costs: list[float], cover: bool) -> float:
    """Least cost of a partition (cover: of a cover) by recursion over the uncovered jobs.

    Some column holds the lowest uncovered job: try each (a partition's must also avoid
    the jobs already covered), then cover the rest.
    """
    masks = [sum(1 << i for i in s) for s in subsets]

    @functools.cache
    def best(left: int) -> float:
        if not left:
            return 0.0
        low = left & -left
        options = [
            cost + best(left & ~mask)
            for mask, cost in zip(masks, costs, strict=True)
            if mask & low and (cover or mask & ~left == 0)
        ]
        return min(options, default=INF)

    return best((1 << n) - 1)


@settings(max_examples=100, deadline=None)
@given(set_systems(), st.booleans())
def test_milp_matches_brute_force(
    system: tuple[int, list[tuple[int, ...]], list[float]], cover: bool
) -> None:
    """The chosen columns are a partition (a cover with ``cover``) of least cost, proven."""
    n, subsets, costs = system
    chosen, status, proven = solve_set_partitioning(n, subsets, costs, INF, cover=cover)
    counts = [sum(i in subsets[c] for c in chosen) for i in range(n)]
    assert all(x >= 1 for x in counts) if cover else all(x == 1 for x in counts)
    assert proven and status.startswith("highs-milp status 0: Optimization terminated")
    assert sum(costs[c] for c in chosen) == pytest.approx(
        brute_force(n, subsets, costs, cover), rel=1e-12
    )


def test_equal_inputs_give_equal_answers() -> None:
    """Deterministic: the same input gives the same chosen columns (ties included)."""
    n = 8
    subsets = [(i,) for i in range(n)] + list(itertools.combinations(range(n), 2))
    costs = [57.04] * n + [57.04 + 14.80] * (len(subsets) - n)  # every pairing ties
    answers = {tuple(solve_set_partitioning(n, subsets, costs, INF)[0]) for _ in range(3)}
    assert len(answers) == 1


def test_gap_answer_carries_a_dual_bound() -> None:
    """With a gap tolerance the answer has HiGHS's dual bound, at most the cost found."""
    n = 6
    subsets = [(i,) for i in range(n)] + list(itertools.combinations(range(n), 3))
    costs = [10.0] * n + [12.0 + (sum(s) % 5) for s in subsets[n:]]
    chosen, _, proven, bound = solve_set_partitioning(n, subsets, costs, INF, mip_gap=0.01)
    assert proven
    assert bound <= sum(costs[c] for c in chosen) * (1 + 1e-9)
    assert bound >= 24.0 * (1 - 0.01) - 1e-9  # the optimum: two triples of cost 12


def test_a_passed_deadline_still_gives_a_partition() -> None:
    """A deadline already passed leaves HiGHS one second: a small MILP is still solved."""
    chosen, _, proven = solve_set_partitioning(
        3, [(0,), (1,), (2,), (0, 1), (1, 2)], [1.0, 1.0, 1.0, 1.5, 1.2], time.perf_counter() - 5
    )
    assert chosen == [0, 4] and proven


def test_one_thread_and_no_restart() -> None:
    """The documented options: proven optimal, one thread, no restart, HiGHS silent."""
    assert HIGHS_OPTIONS == {
        "output_flag": False, "threads": 1, "mip_allow_restart": False, "mip_rel_gap": 0.0
    }


def test_highs_prints_nothing() -> None:
    """A fresh process solving MILPs writes nothing to standard output (no HiGHS banner)."""
    code = (
        "from rollmux.placement.optimum.partition import solve_set_partitioning as s\n"
        "for _ in range(2): s(2, [(0,), (1,), (0, 1)], [1.0, 1.0, 1.5], float('inf'))\n"
        "print('done')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "done\n"
