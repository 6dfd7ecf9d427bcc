"""Tests of the certified optimum: column generation with a proven lower bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import job_sets, profile_examples
from test_optimum import HW, check_partition

from rollmux.experiments.jobmix import production_mix
from rollmux.jobs import RLJob
from rollmux.placement.optimal import OptimalPolicy, SolveStats
from rollmux.placement.optimum import ColumnCache, optimal_partition
from rollmux.placement.optimum.certified import CertifyOptions, cheap_lower_bounds
from rollmux.placement.optimum.partition import cliques
from rollmux.placement.optimum.plans import context, resolved_jobs
from rollmux.placement.optimum.search import Effort, EffortError, compatible, min_cost
from rollmux.placement.regroup import RegroupPolicy

TINY = CertifyOptions(set_effort=1, max_effort=1, batch=1, close_limit=1)


@profile_examples(0.2)
@given(job_sets(1, 6), st.sampled_from([None, TINY]))
def test_certified_bound_brackets_the_exact_optimum(
    jobs: list[RLJob], options: CertifyOptions | None
) -> None:
    """bound <= exact optimum <= certified cost, with a feasible partition, at any budget."""
    exact = optimal_partition(jobs, HW)
    cert = optimal_partition(jobs, HW, method="certified", certify=options)
    check_partition(cert, jobs)
    assert cert.method == "certified"
    assert cert.bound_usd_per_h <= exact.cost_usd_per_h * (1 + 1e-9)
    assert exact.cost_usd_per_h <= cert.cost_usd_per_h * (1 + 1e-9)
    assert 0.0 <= cert.gap < 1.0
    if options is None:  # default budgets close the gap on small sets: the exact optimum
        assert cert.proven_optimal
        assert cert.cost_usd_per_h == pytest.approx(exact.cost_usd_per_h, rel=1e-9)
        assert cert.gap == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certified_matches_exact_on_production_mixes(seed: int) -> None:
    """On 14-job production mixes the certified method proves the exact optimum's cost."""
    jobs = production_mix(14, seed, HW)
    exact = optimal_partition(jobs, HW)
    cert = optimal_partition(jobs, HW, method="certified")
    check_partition(cert, jobs)
    assert cert.cost_usd_per_h == pytest.approx(exact.cost_usd_per_h, rel=1e-9)
    assert cert.gap == 0.0 and cert.proven_optimal
    # It never searches more groups than the exact enumeration.
    assert cert.n_searched <= exact.n_searched


def test_starved_budgets_keep_a_valid_bound_and_say_so() -> None:
    """With one work unit per search the bound is weaker but still below the optimum."""
    jobs = production_mix(14, 0, HW)
    exact = optimal_partition(jobs, HW)
    cert = optimal_partition(jobs, HW, method="certified", certify=TINY)
    check_partition(cert, jobs)
    assert cert.bound_usd_per_h <= exact.cost_usd_per_h * (1 + 1e-9)
    assert cert.gap > 0.0 and not cert.proven_optimal
    assert "bound only" in cert.solver


def test_effort_error_bound_is_proven() -> None:
    """A search that runs out of effort names a bound no feasible plan goes below."""
    ctx = context(HW)
    jobs = [j for j in production_mix(30, 0, HW)]
    data = resolved_jobs(jobs, ctx)
    pairs = [(a, b, c) for a in range(len(data)) for b in range(a + 1, len(data))
             for c in range(b + 1, len(data))
             if compatible(data[a], data[b]) and compatible(data[a], data[c])
             and compatible(data[b], data[c])][:12]
    checked = 0
    for triple in pairs:
        group = [data[i] for i in triple]
        exact = min_cost(group, ctx)
        try:
            min_cost(group, ctx, effort=Effort(1))
        except EffortError as exc:
            checked += 1
            if exact is not None:
                assert exc.lower_bound <= exact.cost_usd_per_h * (1 + 1e-9)
    assert checked > 0
    with pytest.raises(ValueError, match="effort"):
        Effort(0)


def test_cheap_bounds_never_exceed_the_least_cost() -> None:
    """Rule P3 with memory: each candidate's cheap bound is at most its searched least cost."""
    ctx = context(HW)
    jobs = production_mix(12, 1, HW)
    data = resolved_jobs(jobs, ctx)
    n = len(data)
    adj = [0] * n
    for i in range(n):
        for k in range(n):
            if i != k and compatible(data[i], data[k]):
                adj[i] |= 1 << k
    candidates = [c for level in cliques(adj, n, 3)[1:] for c in level][:60]
    assert candidates
    members = np.full((len(candidates), 3), -1)
    for q, c in enumerate(candidates):
        members[q, : len(c)] = c
    bounds = cheap_lower_bounds(data, ctx, members)
    tight = 0
    for bound, c in zip(bounds, candidates, strict=True):
        plan = min_cost([data[i] for i in c], ctx)
        if plan is not None:
            assert bound <= plan.cost_usd_per_h * (1 + 1e-12)
            tight += math.isclose(bound, plan.cost_usd_per_h, rel_tol=1e-6)
    assert tight > 0  # the bound is not vacuous


def test_auto_is_exact_when_cheap_and_certified_otherwise() -> None:
    """``auto``: the exact partition within the effort budget, the certified one beyond."""
    jobs = production_mix(12, 0, HW)
    exact = optimal_partition(jobs, HW)
    auto = optimal_partition(jobs, HW, method="auto")
    assert auto.method == "exact" and auto.groups == exact.groups
    starved = optimal_partition(jobs, HW, method="auto", exact_effort=1)
    assert starved.method == "certified"
    check_partition(starved, jobs)
    assert starved.cost_usd_per_h >= exact.cost_usd_per_h * (1 - 1e-9)
    assert starved.bound_usd_per_h <= exact.cost_usd_per_h * (1 + 1e-9)
    with pytest.raises(ValueError, match="method"):
        optimal_partition(jobs, HW, method="fast")  # type: ignore[arg-type]


def test_certified_with_a_cache_is_deterministic() -> None:
    """Two policies' caches replaying the same solves give the same partitions and bounds."""
    mix = production_mix(16, 2, HW)
    runs = []
    for _ in range(2):
        cache = ColumnCache()
        out = []
        for k in range(10, 17):
            part = optimal_partition(mix[:k], HW, cache=cache, method="certified")
            check_partition(part, mix[:k])
            out.append((part.groups, part.lower_bound_usd_per_h))
        runs.append(out)
    assert runs[0] == runs[1]


def test_solve_stats_summary_reports_the_worst_gap() -> None:
    """summary(): the largest decision gap, its mean, the counters and one row per decision."""
    stats = SolveStats()
    jobs = production_mix(10, 0, HW)
    stats.decision(0.0, optimal_partition(jobs, HW))
    stats.decision(5.0, optimal_partition(jobs, HW, method="certified", certify=TINY))
    out = stats.summary()
    gaps = [row["gap"] for row in out["optimum_decisions"]]  # type: ignore[union-attr]
    assert gaps[0] == 0.0 and gaps[1] > 0.0
    assert out["optimum_gap"] == max(gaps)
    assert out["optimum_gap_mean"] == pytest.approx(sum(gaps) / 2)


def test_policies_take_the_method() -> None:
    """Both optimum policies accept exact, certified and auto, and reject anything else."""
    assert OptimalPolicy(method="certified").method == "certified"
    assert RegroupPolicy(method="exact").method == "exact"
    assert OptimalPolicy().method == "auto"
    with pytest.raises(ValueError, match="method"):
        OptimalPolicy(method="guess")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 3])
def test_mip_gap_keeps_a_proven_bound(seed: int) -> None:
    """With a MILP gap tolerance the bound is HiGHS's dual bound: within it, below the optimum."""
    jobs = production_mix(14, seed, HW)
    exact = optimal_partition(jobs, HW)
    loose = optimal_partition(jobs, HW, mip_gap=0.02)
    check_partition(loose, jobs)
    assert loose.bound_usd_per_h <= exact.cost_usd_per_h * (1 + 1e-9)
    assert loose.cost_usd_per_h >= exact.cost_usd_per_h * (1 - 1e-9)
    assert loose.gap <= 0.02 + 1e-9
    with pytest.raises(ValueError, match="mip_gap"):
        optimal_partition(jobs, HW, mip_gap=1.5)
    with pytest.raises(ValueError, match="mip_gap"):
        RegroupPolicy(mip_gap=0.5)
