"""Tests of carried plans: a set's least cost proven from its plan before the profiles drifted."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_optimum import HW, check_partition

from rollmux.experiments.jobmix import production_mix
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.placement.optimum import ColumnCache, optimal_partition
from rollmux.placement.optimum.partition import cliques, compatibility_graph
from rollmux.placement.optimum.periods import PeriodCache
from rollmux.placement.optimum.plans import context, resolved_jobs
from rollmux.placement.optimum.search import carried_least_cost, min_cost


def _drifted(jobs: list[RLJob], factors: np.ndarray) -> list[RLJob]:
    """Each job re-profiled with its rollout and training times scaled (as drift does)."""
    out = []
    for job, f in zip(jobs, factors, strict=True):
        t = resolve(job, HW).times
        out.append(dataclasses.replace(
            job, rollout_s=t.rollout_s * f, rollout_max_s=t.rollout_max_s * f,
            train_s=t.train_s * f, train_max_s=t.train_max_s * f))
    return out


def _sets(jobs: list[RLJob]) -> list[tuple[int, ...]]:
    """Every compatible set of 2-4 jobs (cliques of the compatibility graph)."""
    ctx = context(HW)
    data = resolved_jobs(jobs, ctx)
    return [s for level in cliques(compatibility_graph(data), len(data), 4)[1:]
            for s in level]


@pytest.mark.parametrize("seed", [0, 1])
def test_carried_cost_is_the_searched_least_cost(seed: int) -> None:
    """Whenever an earlier plan proves a set's cost after drift, the search finds that cost."""
    jobs = production_mix(10, seed, HW)
    ctx = context(HW)
    rng = np.random.default_rng(seed)
    before = resolved_jobs(jobs, ctx)
    after = resolved_jobs(_drifted(jobs, rng.uniform(0.9, 1.1, len(jobs))), ctx)
    proven = refused = 0
    for subset in _sets(jobs):
        plan = min_cost([before[i] for i in subset], ctx)
        if plan is None:
            continue
        members = [after[i] for i in subset]
        cost = carried_least_cost(members, ctx, plan, float("inf"), True, PeriodCache())
        exact = min_cost(members, ctx)
        if cost is None:
            refused += 1
            continue
        proven += 1
        assert exact is not None and exact.cost_usd_per_h == cost
        # Below the cap only: at a cap of that cost the search returns None, so no proof.
        assert carried_least_cost(members, ctx, plan, cost, True, PeriodCache()) is None
    # Both outcomes occur: the proof is used, and refused when the profiles moved too far.
    assert proven > 0 and refused > 0


def test_a_plan_of_other_jobs_or_an_infeasible_plan_proves_nothing() -> None:
    """A plan of other job ids, or one whose order misses the drifted budget, gives None."""
    jobs = production_mix(10, 0, HW)
    ctx = context(HW)
    data = resolved_jobs(jobs, ctx)
    pairs = [s for s in _sets(jobs) if len(s) == 2]
    subset, plan = next((s, p) for s in pairs
                        if (p := min_cost([data[i] for i in s], ctx)) is not None)
    assert carried_least_cost([data[i] for i in subset], ctx, plan, float("inf"), True,
                              PeriodCache()) == plan.cost_usd_per_h  # unchanged: proven
    other = next(s for s in pairs if s != subset)
    assert carried_least_cost([data[i] for i in other], ctx, plan, float("inf"), True,
                              PeriodCache()) is None
    # One member three times slower: the shared plan's period exceeds the other's budget.
    factors = np.ones(len(jobs))
    factors[subset[0]] = 3.0
    slow = resolved_jobs(_drifted(jobs, factors), ctx)
    assert carried_least_cost([slow[i] for i in subset], ctx, plan, float("inf"), True,
                              PeriodCache()) is None


@pytest.mark.parametrize("seed", [0, 3])
def test_drifting_re_solves_with_a_cache_match_fresh_solves(seed: int) -> None:
    """Hour by hour under drift, a cached solve returns the fresh solve's groups exactly."""
    jobs = production_mix(12, seed, HW)
    rng = np.random.default_rng(seed)
    slopes = rng.choice([0.0, 0.02, 0.05, -0.03], len(jobs))
    cache = ColumnCache()
    searched = fresh_searched = 0
    for hour in range(4):
        now = _drifted(jobs, 1.0 + slopes * hour)
        cached = optimal_partition(now, HW, cache=cache)
        fresh = optimal_partition(now, HW)
        check_partition(cached, now)
        assert cached.groups == fresh.groups
        assert cached.cost_usd_per_h == fresh.cost_usd_per_h
        if hour:
            searched += cached.n_searched
            fresh_searched += fresh.n_searched
    assert searched < fresh_searched  # carried plans spared searches


class _RefusingPeriods(PeriodCache):
    """A period cache whose every order misses its budget (records the budgets asked)."""

    def __init__(self) -> None:
        """Empty memos and no question asked yet."""
        super().__init__()
        self.asked: list[float] = []

    def at_most(self, roll, train, lay_r, lay_t, order, budget):  # type: ignore[no-untyped-def]
        """Always False: the order's period exceeds ``budget``."""
        self.asked.append(budget)
        return False


def test_the_carried_order_must_meet_the_budget_with_a_margin() -> None:
    """The proof asks whether the carried order's period fits $B_S$ less the margin."""
    jobs = production_mix(10, 1, HW)
    ctx = context(HW)
    data = resolved_jobs(jobs, ctx)
    subset, plan = next((s, p) for s in _sets(jobs) if len(s) == 3
                        if (p := min_cost([data[i] for i in s], ctx)) is not None)
    members = [data[i] for i in subset]
    periods = _RefusingPeriods()
    assert carried_least_cost(members, ctx, plan, float("inf"), True, periods) is None
    budget = min(d.job.slo * (d.times.rollout_max_s + d.times.train_max_s + d.times.sync_s)
                 for d in members)
    assert len(periods.asked) == 1 and periods.asked[0] < budget * (1 - 5e-7)
