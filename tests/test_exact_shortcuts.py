"""The theorem1 jobs' shortcuts give the plain computation's answer, float for float."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rollmux.schedule.maxplus import steady_state_period
from rollmux.schedule.search import (
    REL_TOL,
    BestSchedule,
    _make_group,
    _multiplicity_vectors,
    _StatePeriods,
    _states,
    best_schedule,
)


@st.composite
def groups(draw: st.DrawFn, max_jobs: int = 3, integer: bool = True) -> tuple:
    """Durations (integers or floats) and pinnings on up to 2 nodes per pool."""
    n = draw(st.integers(1, max_jobs))
    value = (st.integers(1, 9).map(float) if integer
             else st.floats(0.5, 9.0, allow_nan=False, allow_infinity=False))
    r = draw(st.lists(value, min_size=n, max_size=n))
    t = draw(st.lists(value, min_size=n, max_size=n))
    pins = st.sampled_from([(0,), (1,), (0, 1)])
    return r, t, draw(st.lists(pins, min_size=n, max_size=n)), draw(
        st.lists(pins, min_size=n, max_size=n))


@settings(max_examples=60, deadline=None)
@given(group=groups(integer=False), data=st.data())
def test_state_periods_equal_the_built_schedules(group: tuple, data: st.DataObject) -> None:
    """_StatePeriods gives steady_state_period(group.schedule(state)) exactly (inf too)."""
    g = _make_group(*group)
    mult = data.draw(st.sampled_from(_multiplicity_vectors(g, 2, False)))
    states = list(_states(g, mult, False))
    periods = _StatePeriods(g, mult)
    for state in data.draw(st.lists(st.sampled_from(states), min_size=1, max_size=6)):
        assert periods(state) == steady_state_period(g.schedule(state))


def _plain_best_schedule(r: list[float], t: list[float], rn: list, tn: list,
                         max_multiplicity: int, objective: str) -> BestSchedule:
    """best_schedule as it was: a Schedule built and its period computed per state."""
    group = _make_group(r, t, rn, tn)
    scored = []
    for mult in _multiplicity_vectors(group, max_multiplicity, True):
        num = group.objective_numerator(mult, objective, None)  # type: ignore[arg-type]
        lb = group.lower_bound_s(mult)
        scored.append((-float(f"{num / lb:.12g}"), sum(mult), mult, num, lb))
    scored.sort()
    best: BestSchedule | None = None
    n_evaluated = 0
    for neg_bound, _, mult, num, lb in scored:
        if best is not None and -neg_bound <= best.utilisation * (1.0 + REL_TOL):
            break
        for state in _states(group, mult, True):
            schedule = group.schedule(state)
            period = steady_state_period(schedule)
            n_evaluated += 1
            if not math.isfinite(period):
                continue
            util = num / period
            if best is None or util > best.utilisation * (1.0 + REL_TOL):
                orders = dict(zip(group.nodes, state, strict=True))
                best = BestSchedule(schedule, period, util, mult, orders, n_evaluated)
            if period <= lb * (1.0 + REL_TOL):
                break
    assert best is not None
    return BestSchedule(best.schedule, best.period_s, best.utilisation, best.multiplicity,
                        best.node_orders, n_evaluated)


@settings(max_examples=40, deadline=None)
@given(group=groups(), objective=st.sampled_from(["aggregate", "cost_weighted"]),
       max_multiplicity=st.integers(1, 2))
def test_best_schedule_equals_the_plain_search(group: tuple, objective: str,
                                               max_multiplicity: int) -> None:
    """The list-based best_schedule returns the plain search's result, field for field."""
    fast = best_schedule(*group, max_multiplicity=max_multiplicity,
                         objective=objective)  # type: ignore[arg-type]
    assert fast == _plain_best_schedule(*group, max_multiplicity, objective)


def _both_none(draw: object) -> bool:
    """Whether the planner and the certified optimum both find no schedule."""
    from rollmux.schedule.milp import certified_best
    from rollmux.theorem1.slo_optimum import _heuristic

    inst = draw.instance  # type: ignore[attr-defined]
    if _heuristic(draw, 3) is not None:  # type: ignore[arg-type]
        return False
    return certified_best(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node,
                          max_iteration_s=draw.caps_s(), max_multiplicity=3) is None  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5),
       low=st.sampled_from([1.0, 1.1, 1.2, 1.5]))
def test_screened_out_draws_have_no_schedule(seed: int, n: int, low: float) -> None:
    """A draw the pre-screen rejects gets None from both searches (the redraw is exact)."""
    from rollmux.theorem1.slo_optimum import random_group, some_schedule_may_meet_caps

    draw = random_group(np.random.default_rng(seed), n, 20, (low, low + 1.0))
    if not some_schedule_may_meet_caps(draw, 3):
        assert _both_none(draw)


def test_the_pre_screen_rejects_some_draws_and_keeps_feasible_ones() -> None:
    """Over seeded draws the screen rejects some, and keeps every draw with a schedule."""
    from rollmux.theorem1.slo_optimum import random_group, some_schedule_may_meet_caps

    rng = np.random.default_rng([7, 4])
    verdicts = []
    for _ in range(60):
        draw = random_group(rng, 4, 20, (1.2, 2.5))
        verdicts.append(some_schedule_may_meet_caps(draw, 3))
        if not verdicts[-1]:
            assert _both_none(draw)
    assert 0 < sum(verdicts) < len(verdicts)
