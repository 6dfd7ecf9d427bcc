"""The certified SLO-constrained optimum (rollmux.schedule.milp) against exhaustive search."""

from __future__ import annotations

import numpy as np
import pytest

from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.milp import certified_best, min_period
from rollmux.schedule.repeat import _best_orders
from rollmux.schedule.search import _make_group

REL = 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_min_period_equals_exhaustive_orders(seed: int) -> None:
    """Per multiplicity vector, the MILP's period is the exhaustive search's minimum."""
    rng = np.random.default_rng(seed)
    n = 3
    r = rng.integers(1, 10, n).astype(float).tolist()
    t = rng.integers(1, 10, n).astype(float).tolist()
    pins = [int(x) for x in rng.integers(0, 2, n)]
    group = _make_group(r, t, pins, [0] * n)
    for mult in ((1, 1, 1), (2, 1, 1), (1, 2, 2)):
        _, exhaustive, proven, _ = _best_orders(group, mult, 0.0, 10**6, 10, 1,
                                                np.random.default_rng(0))
        assert proven
        found = min_period(group, mult, 10 * sum(r + t))
        assert found.optimal and found.state is not None
        assert found.period_s == pytest.approx(exhaustive, rel=REL)
        schedule = group.schedule(found.state)
        assert measured_period(simulate(schedule, 40), schedule, 10) == pytest.approx(
            found.period_s, rel=1e-9)
    infeasible = min_period(group, (1, 1, 1), 0.5 * max(a + b for a, b in zip(r, t, strict=True)))
    assert infeasible.state is None and infeasible.optimal


def test_certified_best_meets_caps_and_beats_no_exhaustive_schedule() -> None:
    """Two-job 1 + 1 counterexample r = (10, 1), t = (1, 1): m = (1, 3) within loose caps."""
    from rollmux.schedule.repeat import repeat_schedule

    caps = [30.0, 6.0]
    best = certified_best([10, 1], [1, 1], max_iteration_s=caps, max_multiplicity=3)
    assert best is not None and best.certified
    exhaustive = repeat_schedule([10, 1], [1, 1], max_iteration_s=caps, max_multiplicity=3,
                                 objective="cost_weighted", exact_limit=10**6,
                                 max_vectors=None)
    assert exhaustive is not None and exhaustive.exact
    assert best.utilisation == pytest.approx(exhaustive.utilisation, rel=REL)
    assert all(best.period_s / m <= c * (1 + REL)
               for m, c in zip(best.multiplicity, caps, strict=True))
    # a cap no schedule meets: None
    assert certified_best([10, 1], [1, 1], max_iteration_s=[5.0, 5.0]) is None
    with pytest.raises(ValueError, match="max_iteration_s"):
        certified_best([10, 1], [1, 1], max_iteration_s=[5.0])


@pytest.mark.parametrize("seed", range(4))
def test_an_incumbent_changes_the_work_not_the_optimum(seed: int) -> None:
    """Started from the planner's schedule (or round-robin's, or one missing a cap), the
    branch and bound finds the same certified utilisation, with no more MILP solves."""
    from rollmux.schedule.repeat import repeat_schedule
    from rollmux.theorem1.slo_optimum import random_group

    rng = np.random.default_rng([seed, 99])
    for _ in range(200):
        draw = random_group(rng, 3, slo_range=(2.0, 2.5))
        inst, caps = draw.instance, draw.caps_s()
        if certified_best(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node,
                          max_iteration_s=caps) is not None:
            break
    args = (inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node)
    plain = certified_best(*args, max_iteration_s=caps)
    heur = repeat_schedule(*args, max_iteration_s=caps, objective="cost_weighted",
                           max_vectors=4)
    assert plain is not None and heur is not None
    seeded = certified_best(*args, max_iteration_s=caps,
                            incumbent=(heur.multiplicity, tuple(heur.node_orders.values())))
    assert seeded is not None and seeded.certified
    assert seeded.utilisation == pytest.approx(plain.utilisation, rel=REL)
    assert seeded.n_solved <= plain.n_solved
    # an incumbent that misses a cap is ignored
    tight = [c / 100 for c in caps]
    assert certified_best(*args, max_iteration_s=tight,
                          incumbent=(heur.multiplicity,
                                     tuple(heur.node_orders.values()))) is None


def test_the_default_limit_is_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default HiGHS gets a node limit and no wall-clock limit (so the certified count
    cannot depend on the machine's load)."""
    import rollmux.schedule.milp as milp_module

    seen: list[dict[str, object]] = []
    real = milp_module.milp

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(dict(kwargs["options"]))  # type: ignore[call-overload]
        return real(*args, **kwargs)

    monkeypatch.setattr(milp_module, "milp", spy)
    group = _make_group([5.0, 3.0, 7.0], [4.0, 6.0, 2.0], [0, 0, 1], [0, 0, 0])
    found = min_period(group, (2, 1, 1), 100.0)
    assert found.optimal and seen
    assert all("time_limit" not in o and o["node_limit"] == milp_module.NODE_LIMIT
               for o in seen)
    # A wall-clock limit only when asked for.
    seen.clear()
    min_period(group, (2, 1, 1), 100.0, time_limit_s=30.0)
    assert seen[-1]["time_limit"] == 30.0
