"""The proven statements of docs/theorem1.md, checked at scale.

* Theorem A: in a star group (one node of one pool shared by every job, one node per job
  in the other pool) round-robin in any global order runs at ``max(T_load, T_cycle)``,
  saturated or not, so no schedule with one iteration per job beats it.
* Lemma 1 / Theorem B: the period lower bound (node, chain, overlap) and the
  linear-programme utilisation bound hold for every schedule, any pinning.
* Theorem C: with two jobs on one rollout and one training node, round-robin maximises
  aggregate utilisation over every schedule (any multiplicities, any orders), saturated
  or not; the LP bound equals round-robin's utilisation there.

Each property runs the profile's examples (``ci`` 60, ``thorough`` 2000), the costly
ones a quarter of them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_groups, profile_examples, unsaturated_groups

from rollmux.schedule import round_robin_schedule, steady_state_period
from rollmux.schedule.bounds import (
    pair_caps,
    period_lower_bound_s,
    period_lower_bounds_s,
    utilisation_upper_bound,
)
from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.repeat import repeat_schedule
from rollmux.schedule.search import (
    _make_group,
    _multiplicity_vectors,
    _states,
    best_node_orders,
    utilisation,
)
from rollmux.theorem1 import Instance, t_cycle_s, t_load_s

REL = 1e-9


def _args(instance: Instance) -> tuple:
    return instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node


@st.composite
def star_groups(draw: st.DrawFn, min_jobs: int = 2, max_jobs: int = 8) -> Instance:
    """One shared node in one pool, each job on one of up to 4 nodes of the other pool."""
    n = draw(st.integers(min_jobs, max_jobs))
    durations = st.integers(1, 30).map(float)
    rollout = tuple(draw(st.lists(durations, min_size=n, max_size=n)))
    train = tuple(draw(st.lists(durations, min_size=n, max_size=n)))
    spread = tuple((x,) for x in draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    shared = ((0,),) * n
    if draw(st.booleans()):
        return Instance(rollout, train, spread, shared)
    return Instance(rollout, train, shared, spread)


# --------------------------------------------------------------------------- Theorem A


@given(star_groups(), st.randoms(use_true_random=False))
def test_theorem_a_star_round_robin_runs_at_the_bound(instance: Instance, rnd: object) -> None:
    """Star groups, any durations, any global order: round-robin period = max(T_load, T_cycle)."""
    order = list(range(instance.n_jobs))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    period = steady_state_period(round_robin_schedule(*_args(instance), order=order))
    bound = max(t_load_s(*_args(instance)), t_cycle_s(instance.rollout_s, instance.train_s))
    assert period == pytest.approx(bound, rel=REL)


@profile_examples(0.25)
@given(star_groups(max_jobs=5))
def test_theorem_a_no_single_iteration_order_beats_round_robin(instance: Instance) -> None:
    """Star groups: the best per-node order (one iteration per job) equals round-robin."""
    period = steady_state_period(round_robin_schedule(*_args(instance)))
    best = best_node_orders(*_args(instance), exact_limit=2_000)
    assert best.period_s == pytest.approx(period, rel=REL)


def test_theorem_a_needs_single_node_pinnings() -> None:
    """Beyond Theorem A: the smallest gang and crossing groups run above the bound."""
    gang = round_robin_schedule([2, 1, 2], [1, 1, 1], [0, (0, 1), 1], [0, 0, 0], order=[2, 1, 0])
    assert steady_state_period(gang) == pytest.approx(3.5, rel=REL)  # bound 3
    square = round_robin_schedule([1] * 4, [1] * 4, [0, 0, 1, 1], [0, 1, 0, 1], order=[3, 2, 0, 1])
    assert steady_state_period(square) == pytest.approx(8 / 3, rel=REL)  # bound 2
    records = simulate(square, 40)
    assert measured_period(records, square, 10) == pytest.approx(8 / 3, rel=1e-9)


# --------------------------------------------------------------------------- Lemma 1, Theorem B


@profile_examples(0.25)
@given(st.one_of(any_groups("crossing", 2, 3), any_groups("shared_train", 2, 3),
                 any_groups("one_one", 2, 3)))
def test_bounds_hold_for_every_enumerated_schedule(instance: Instance) -> None:
    """Schedules with multiplicities <= 2 (up to 40 orders per vector): LB(m) <= P, U <= LP."""
    ceilings = {
        objective: utilisation_upper_bound(*_args(instance), objective=objective,
                                           max_multiplicity_ratio=2)
        for objective in ("aggregate", "cost_weighted")
    }
    unbounded = utilisation_upper_bound(*_args(instance))
    assert unbounded >= ceilings["aggregate"] * (1 - REL)
    group = _make_group(*_args(instance))
    for mult in _multiplicity_vectors(group, 2, True):
        lower = period_lower_bound_s(*_args(instance), mult)
        for state in itertools.islice(_states(group, mult, True), 40):
            schedule = group.schedule(state)
            period = steady_state_period(schedule)
            if not math.isfinite(period):
                continue  # deadlocked orders run nothing
            assert period >= lower * (1 - REL)
            for objective, ceiling in ceilings.items():
                util = utilisation(schedule, period, objective)  # type: ignore[arg-type]
                assert util <= ceiling * (1 + REL)


@profile_examples(0.25)
@given(st.one_of(any_groups("crossing", 4, 6), any_groups("shared_train", 4, 7),
                 unsaturated_groups("one_one", 4, 6)))
def test_bounds_hold_for_searched_schedules_at_scale(instance: Instance) -> None:
    """4-7 jobs: the repetition search's schedule obeys both bounds and its period is exact."""
    result = repeat_schedule(*_args(instance), max_multiplicity=3, max_vectors=4,
                             local_evaluations=30)
    assert result is not None
    mult = result.multiplicity
    assert result.period_s >= period_lower_bound_s(*_args(instance), mult) * (1 - REL)
    ceiling = utilisation_upper_bound(*_args(instance), max_multiplicity_ratio=3)
    assert result.utilisation <= ceiling * (1 + REL)
    assert result.utilisation <= result.upper_bound * (1 + REL) <= ceiling * (1 + 2 * REL)
    records = simulate(result.schedule, 60)
    assert measured_period(records, result.schedule, 20) == pytest.approx(result.period_s,
                                                                          rel=1e-6)


def test_vectorised_lower_bounds_match_one_at_a_time() -> None:
    """period_lower_bounds_s over many vectors equals the single-vector bound."""
    group = _make_group([1, 5, 13], [6, 1, 9], None, None)
    vectors = np.asarray([[1, 1, 1], [2, 2, 1], [3, 1, 2]])
    many = period_lower_bounds_s(group, vectors, pair_caps(group))
    one = [period_lower_bound_s([1, 5, 13], [6, 1, 9], None, None, tuple(v)) for v in vectors]
    assert many.tolist() == one
    # the overlap cut lifts the bound of the paper's counterexample from 25 to 29 (P = 30)
    assert one[1] == 29.0


def test_bound_arguments_raise() -> None:
    """Bad multiplicity or ratio raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="multiplicity"):
        period_lower_bound_s([1, 2], [1, 2], multiplicity=(1, 0))
    with pytest.raises(ValueError, match="multiplicity"):
        period_lower_bound_s([1, 2], [1, 2], multiplicity=(1,))
    with pytest.raises(ValueError, match="max_multiplicity_ratio"):
        utilisation_upper_bound([1, 2], [1, 2], max_multiplicity_ratio=0.5)
    with pytest.raises(ValueError, match="rollout_work_s"):
        utilisation_upper_bound([1, 2], [1, 2], rollout_work_s=[1.0])


# --------------------------------------------------------------------------- Theorem C


@st.composite
def two_job_groups(draw: st.DrawFn, max_s: int = 60) -> Instance:
    """Two jobs on one rollout and one training node, any durations (saturated or not)."""
    values = draw(st.lists(st.integers(1, max_s).map(float), min_size=4, max_size=4))
    return Instance((values[0], values[1]), (values[2], values[3]), ((0,),) * 2, ((0,),) * 2)


@given(two_job_groups())
def test_theorem_c_lp_bound_equals_round_robin(instance: Instance) -> None:
    """Two jobs on 1 + 1: U_RR = (s_0 + s_1) / max(T_load, T_cycle) = the LP bound (all m)."""
    schedule = round_robin_schedule(*_args(instance))
    rr = utilisation(schedule, steady_state_period(schedule))
    r, t = instance.rollout_s, instance.train_s
    closed = (sum(r) + sum(t)) / max(t_load_s(*_args(instance)), t_cycle_s(r, t))
    assert rr == pytest.approx(closed, rel=REL)
    assert utilisation_upper_bound(*_args(instance)) == pytest.approx(rr, rel=1e-7)


@profile_examples(0.25)
@given(two_job_groups(max_s=12))
def test_theorem_c_no_repetition_beats_round_robin(instance: Instance) -> None:
    """Two jobs on 1 + 1: the exact search (multiplicities <= 4) never beats round-robin."""
    result = repeat_schedule(*_args(instance), max_multiplicity=4, max_vectors=None,
                             exact_limit=20_000)
    assert result is not None
    assert result.gain <= 1 + REL
    assert result.exact


def test_theorem_c_stops_at_three_jobs() -> None:
    """The smallest 3-job 1 + 1 counterexample: r = (1, 1, 2), t = (1, 1, 5), gain 1/132."""
    result = repeat_schedule([1, 1, 2], [1, 1, 5], max_multiplicity=3)
    assert result is not None
    assert result.multiplicity == (3, 3, 1)
    assert result.period_s == pytest.approx(12.0, rel=REL)
    assert result.round_robin_utilisation == pytest.approx(11 / 7, rel=REL)
    assert result.utilisation == pytest.approx(19 / 12, rel=REL)
    records = simulate(result.schedule, 40)
    assert measured_period(records, result.schedule, 10) == pytest.approx(12.0, rel=1e-9)
    assert math.isclose(result.gain, (19 / 12) / (11 / 7))
