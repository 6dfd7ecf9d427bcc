"""rollmux.schedule.repeat: the repetition-aware schedule search against exhaustive search."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_groups, profile_examples, unsaturated_groups

from rollmux.schedule import steady_state_period
from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.graph import build_schedule
from rollmux.schedule.repeat import repeat_schedule
from rollmux.schedule.search import best_schedule, utilisation
from rollmux.theorem1 import Instance

REL = 1e-9


def _args(instance: Instance) -> tuple:
    return instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node


@profile_examples(0.25)
@given(st.one_of(any_groups("shared_train", 2, 3), unsaturated_groups("one_one", 2, 3),
                 any_groups("crossing", 2, 2)),
       st.sampled_from(["aggregate", "cost_weighted"]))
def test_matches_exhaustive_best_schedule(instance: Instance, objective: str) -> None:
    """Exact settings reach the exhaustive optimum; the heuristic never claims above it."""
    exhaustive = best_schedule(*_args(instance), max_multiplicity=2,
                               objective=objective)  # type: ignore[arg-type]
    exact = repeat_schedule(*_args(instance), max_multiplicity=2, objective=objective,  # type: ignore[arg-type]
                            exact_limit=100_000, max_vectors=None)
    heuristic = repeat_schedule(*_args(instance), max_multiplicity=2, objective=objective,  # type: ignore[arg-type]
                                exact_limit=0, max_vectors=2, local_evaluations=20)
    assert exact is not None and heuristic is not None
    assert exact.exact
    assert exact.utilisation == pytest.approx(exhaustive.utilisation, rel=REL)
    assert heuristic.utilisation <= exhaustive.utilisation * (1 + REL)
    assert heuristic.upper_bound >= exhaustive.utilisation * (1 - REL)


@profile_examples(0.25)
@given(st.one_of(any_groups("crossing", 3, 6), any_groups("shared_train", 3, 6)),
       st.data())
def test_caps_are_met_and_round_robin_is_never_beaten_downwards(
    instance: Instance, data: st.DataObject
) -> None:
    """Under per-job caps on P / m_j the result meets them and is never below round-robin."""
    solo = [r + t for r, t in zip(instance.rollout_s, instance.train_s, strict=True)]
    slo = data.draw(st.lists(st.floats(1.0, 4.0), min_size=len(solo), max_size=len(solo)))
    caps = [s * x for s, x in zip(solo, slo, strict=True)]
    result = repeat_schedule(*_args(instance), objective="cost_weighted", max_iteration_s=caps,
                             max_vectors=4, local_evaluations=30)
    rr_period = steady_state_period(build_schedule(
        instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node,
        _round_robin_orders(instance)))
    rr_ok = all(rr_period <= c * (1 + REL) for c in caps)
    if result is None:
        assert not rr_ok
        return
    for m, cap in zip(result.multiplicity, caps, strict=True):
        assert result.period_s / m <= cap * (1 + REL)
    if rr_ok:
        assert result.utilisation >= result.round_robin_utilisation * (1 - REL)
    # the orders are a schedule: each node lists job j exactly m_j times, period exact
    for (pool, node), seq in result.node_orders.items():
        pins = instance.rollout_node if pool == "R" else instance.train_node
        for j in set(seq):
            assert node in pins[j]
            assert seq.count(j) == result.multiplicity[j]
    assert steady_state_period(result.schedule) == pytest.approx(result.period_s, rel=REL)
    assert utilisation(result.schedule, result.period_s, "cost_weighted") == pytest.approx(
        result.utilisation, rel=REL)


def _round_robin_orders(instance: Instance) -> dict[tuple[str, int], list[int]]:
    """Index-order round-robin node orders of ``instance``."""
    orders: dict[tuple[str, int], list[int]] = {}
    for pool, pins in (("R", instance.rollout_node), ("T", instance.train_node)):
        for j, nodes in enumerate(pins):
            for node in nodes:
                orders.setdefault((pool, node), []).append(j)
    return orders


def test_short_jobs_ping_pong_literal() -> None:
    """1 + 1, r = (1, 5, 13), t = (6, 1, 9): the two short jobs twice each, period 30."""
    result = repeat_schedule([1, 5, 13], [6, 1, 9], max_multiplicity=2, exact_limit=100_000,
                             max_vectors=None)
    assert result is not None and result.exact
    assert result.multiplicity == (2, 2, 1)
    assert result.period_s == pytest.approx(30.0, rel=REL)
    assert result.gain == pytest.approx((48 / 30) / (35 / 22), rel=REL)
    records = simulate(result.schedule, 30)
    assert measured_period(records, result.schedule, 10) == pytest.approx(30.0, rel=1e-9)


def test_caps_can_make_repetition_necessary() -> None:
    """A short job beside a long one meets a tight SLO only by repeating (shared training)."""
    # job 0 alone on rollout node 0, job 1 on node 1; solo 2 s and 11 s
    caps = [2.0 * 2, 11.0 * 1.5]
    result = repeat_schedule([1, 10], [1, 1], [0, 1], [0, 0], max_iteration_s=caps)
    assert result is not None
    assert result.round_robin_period_s == pytest.approx(11.0)  # 11 > 4: round-robin fails
    assert result.multiplicity[0] == 3 and result.period_s == pytest.approx(11.0)
    assert repeat_schedule([1, 10], [1, 1], [0, 1], [0, 0], max_iteration_s=[2.0, 11.0],
                           max_multiplicity=3) is None


def test_round_robin_kept_when_best() -> None:
    """Two jobs on 1 + 1 (Theorem C): the result is round-robin, proven."""
    result = repeat_schedule([4, 3], [2, 5], max_multiplicity=3, max_vectors=None)
    assert result is not None
    assert result.multiplicity == (1, 1) and result.exact
    assert result.gain == 1.0


def test_search_is_deterministic() -> None:
    """Same arguments and seed, same schedule; the seed only steers the heuristic."""
    args = ([3, 8, 2, 5, 1], [4, 1, 6, 2, 2], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0])
    first = repeat_schedule(*args, max_vectors=3, local_evaluations=20, exact_limit=0, seed=3)
    second = repeat_schedule(*args, max_vectors=3, local_evaluations=20, exact_limit=0, seed=3)
    assert first is not None and second is not None
    assert first.node_orders == second.node_orders and first.period_s == second.period_s


def test_bad_arguments_raise() -> None:
    """Bad caps, limits or gains raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="max_iteration_s"):
        repeat_schedule([1, 2], [1, 2], max_iteration_s=[1.0])
    with pytest.raises(ValueError, match="max_iteration_s"):
        repeat_schedule([1, 2], [1, 2], max_iteration_s=[1.0, -1.0])
    with pytest.raises(ValueError, match="exact_limit"):
        repeat_schedule([1, 2], [1, 2], exact_limit=-1)
    with pytest.raises(ValueError, match="max_vectors"):
        repeat_schedule([1, 2], [1, 2], max_vectors=0)
    with pytest.raises(ValueError, match="min_gain"):
        repeat_schedule([1, 2], [1, 2], min_gain=math.nan)
    with pytest.raises(ValueError, match="max_multiplicity"):
        repeat_schedule([1, 2], [1, 2], max_multiplicity=0)
