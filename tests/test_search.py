"""Tests of rollmux.schedule.search: utilisation, enumeration, symmetry pruning, order search."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_groups, profile_examples, saturated_groups, unsaturated_groups

from rollmux.schedule import round_robin_schedule, steady_state_period
from rollmux.schedule.graph import build_schedule
from rollmux.schedule.search import (
    _make_group,
    _orbit,
    _states,
    aggregate_utilisation,
    best_node_orders,
    best_schedule,
    cost_weighted_utilisation,
    enumerate_schedules,
    multiset_permutations,
    pool_utilisation,
)
from rollmux.theorem1 import Instance

REL = 1e-9


def _args(instance: Instance) -> tuple:
    return instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node


# --------------------------------------------------------------------------- literals


def test_pool_utilisation_literal() -> None:
    """Two rollout nodes and one training node: busy node-seconds over nodes x period."""
    schedule = round_robin_schedule([1, 10], [1, 1], [0, 1], [0, 0])
    period = steady_state_period(schedule)
    assert period == 11.0
    util = pool_utilisation(schedule, period)
    assert util["R"] == pytest.approx(11 / 22, rel=REL)
    assert util["T"] == pytest.approx(2 / 11, rel=REL)
    assert aggregate_utilisation(schedule, period) == pytest.approx(11 / 22 + 2 / 11, rel=REL)
    weighted = (1.0 * 11 + 2.85 * 2) / ((2 * 1.0 + 1 * 2.85) * 11)
    assert cost_weighted_utilisation(schedule, period) == pytest.approx(weighted, rel=REL)


def test_deadlocked_schedule_has_zero_utilisation() -> None:
    """A deadlocked schedule (period inf) has zero utilisation and is never enumerated."""
    schedule = build_schedule(
        (1.0, 1.0),
        (1.0, 1.0),
        ((0,), (0,)),
        ((0,), (0,)),
        {("R", 0): [0, 0, 1], ("T", 0): [1, 0, 0]},
    )
    assert steady_state_period(schedule) == math.inf
    assert aggregate_utilisation(schedule, math.inf) == 0.0
    assert all(math.isfinite(c.period_s) for c in enumerate_schedules([1, 1], [1, 1]))


def test_single_node_rotation_changes_period() -> None:
    """Rotating one node's order alone is not a symmetry: R: A B with T: B A serialises."""
    orders = {("R", 0): [0, 1], ("T", 0): [1, 0]}
    schedule = build_schedule((2.0, 3.0), (4.0, 5.0), ((0,), (0,)), ((0,), (0,)), orders)
    assert steady_state_period(schedule) == 14.0
    assert steady_state_period(round_robin_schedule([2, 3], [4, 5])) == 9.0


def test_multiset_permutations_literal() -> None:
    """Distinct permutations of a multiset, lexicographic, counted by the multinomial."""
    perms = list(multiset_permutations([1, 0, 0]))
    assert perms == [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    assert len(list(multiset_permutations([0, 0, 1, 1, 2, 2]))) == 90


def test_bad_arguments_raise() -> None:
    """Bad multiplicity or objective raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="max_multiplicity"):
        best_schedule([1, 2], [1, 2], max_multiplicity=0)
    with pytest.raises(ValueError, match="objective"):
        best_schedule([1, 2], [1, 2], objective="bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="train_s"):
        best_node_orders([1, 2], [1])


def test_best_schedule_repeats_isolated_short_job() -> None:
    """A short job alone on its rollout node repeats inside the other's long rollout."""
    best = best_schedule([1, 10], [1, 1], [0, 1], [0, 0], max_multiplicity=5)
    assert best.multiplicity == (5, 1)
    assert best.period_s == pytest.approx(11.0, rel=REL)
    assert best.utilisation == pytest.approx(15 / 22 + 6 / 11, rel=REL)


# --------------------------------------------------------------------------- properties


@given(any_groups("crossing", max_jobs=3), st.sampled_from([(1, 1, 1), (2, 1, 1), (1, 2, 2)]))
def test_orbit_members_share_the_period(instance: Instance, mult: tuple[int, ...]) -> None:
    """Whole-job rotations and identical-job swaps (the pruning) leave the period unchanged."""
    group = _make_group(*_args(instance))
    mult = mult[: group.n_jobs]
    swaps = group.identical_pairs(mult)
    for state in itertools.islice(_states(group, mult, symmetry=False), 0, 700, 7):
        periods = {
            steady_state_period(group.schedule(s))
            for s in _orbit(state, group.job_node_index, swaps)
        }
        assert len(periods) == 1


@pytest.mark.slow
@profile_examples(0.2)
@given(any_groups("shared_train", max_jobs=3))
def test_best_schedule_matches_brute_force(instance: Instance) -> None:
    """Branch and bound with pruning equals the maximum over the unpruned enumeration."""
    for objective in ("aggregate", "cost_weighted"):
        every = [
            (cost_weighted_utilisation if objective == "cost_weighted" else aggregate_utilisation)(
                c.schedule, c.period_s
            )
            for c in enumerate_schedules(*_args(instance), max_multiplicity=2, symmetry=False)
        ]
        best = best_schedule(*_args(instance), max_multiplicity=2, objective=objective)
        assert best.utilisation == pytest.approx(max(every), rel=REL)


@given(st.one_of(any_groups("crossing", gang=False), any_groups("one_one")))
def test_pruned_enumeration_keeps_every_period(instance: Instance) -> None:
    """The pruned enumeration yields the same set of (multiplicity, period) as the full one."""

    def key(c: object) -> tuple:
        return (c.multiplicity, round(c.period_s, 9))  # type: ignore[attr-defined]

    pruned = {key(c) for c in enumerate_schedules(*_args(instance), max_multiplicity=1)}
    full = {
        key(c) for c in enumerate_schedules(*_args(instance), max_multiplicity=1, symmetry=False)
    }
    assert pruned == full


@given(st.one_of(any_groups("crossing", gang=False), any_groups("one_one", max_jobs=2)))
def test_enumerated_periods_respect_lower_bounds(instance: Instance) -> None:
    """Every schedule's period is at least each node's busy time and each job's m_j (r_j + t_j)."""
    for cand in enumerate_schedules(*_args(instance), max_multiplicity=2):
        busy = max(cand.schedule.busy_s().values())
        chains = max(
            m * (r + t)
            for m, r, t in zip(cand.multiplicity, instance.rollout_s, instance.train_s, strict=True)
        )
        assert cand.period_s >= max(busy, chains) * (1 - REL)
        assert 0.0 < aggregate_utilisation(cand.schedule, cand.period_s) <= 2.0 + REL
        assert 0.0 < cost_weighted_utilisation(cand.schedule, cand.period_s) <= 1.0 + REL


@profile_examples(1 / 3)
@given(st.one_of(any_groups("crossing", 2, 4), any_groups("one_one", 2, 4)))
def test_exact_order_search_matches_brute_force(instance: Instance) -> None:
    """Exhaustive per-node order search equals the minimum over all per-node permutations."""
    group = _make_group(*_args(instance))
    brute = min(
        steady_state_period(group.schedule(state))
        for state in itertools.product(*(itertools.permutations(jobs) for jobs in group.node_jobs))
    )
    result = best_node_orders(*_args(instance))
    assert result.exact
    assert result.period_s == pytest.approx(brute, rel=REL)
    assert result.period_s >= result.lower_bound_s * (1 - REL)


@given(st.one_of(saturated_groups("shared_train", 3, 4), any_groups("crossing", 3, 4)))
def test_heuristic_order_search_is_sound(instance: Instance) -> None:
    """The heuristic is never better than exact, never worse than round-robin in index order."""
    exact = best_node_orders(*_args(instance))
    heuristic = best_node_orders(*_args(instance), exact_limit=0)
    round_robin = steady_state_period(round_robin_schedule(*_args(instance)))
    assert exact.period_s * (1 - REL) <= heuristic.period_s <= round_robin * (1 + REL)
    orders = {node: list(seq) for node, seq in heuristic.node_orders.items()}
    schedule = build_schedule(
        instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node, orders
    )
    assert steady_state_period(schedule) == pytest.approx(heuristic.period_s, rel=REL)


@given(unsaturated_groups("shared_train"))
def test_best_schedule_is_at_least_round_robin(instance: Instance) -> None:
    """The exhaustive optimum is never below round-robin and its schedule reproduces its value."""
    rr = round_robin_schedule(*_args(instance))
    rr_util = aggregate_utilisation(rr, steady_state_period(rr))
    best = best_schedule(*_args(instance), max_multiplicity=2)
    assert best.utilisation >= rr_util * (1 - REL)
    assert steady_state_period(best.schedule) == pytest.approx(best.period_s, rel=REL)
    assert aggregate_utilisation(best.schedule, best.period_s) == pytest.approx(
        best.utilisation, rel=REL
    )
