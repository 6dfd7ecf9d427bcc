"""Tests of the `optimal` baseline: exact min-cost partition into co-execution groups."""

from __future__ import annotations

import math
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import direct_job, job_sets, profile_examples

from rollmux.closedform import pools_from_hardware
from rollmux.experiments.jobmix import production_mix
from rollmux.group import CoExecutionGroup, group_job_of, node_capacity_from_hardware
from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.phasetimes import rollout_mem_gb_per_node, train_mem_gb_per_node
from rollmux.placement.optimum import (
    ColumnCache,
    GroupPlan,
    Partition,
    ReferenceGroup,
    ReferencePartition,
    bruteforce_partition,
    compare_solvers,
    min_cost_group,
    optimal_partition,
    reference_group,
    reference_partition,
    search,
    solo_cost_usd_per_h,
)
from rollmux.placement.optimum.layouts import side_layouts
from rollmux.placement.optimum.periods import PeriodCache, orders

HW = load_hardware()
NODE_R = HW.price_usd_per_h("H20", 8)  # one rollout node per hour
NODE_T = HW.price_usd_per_h("H800", 8)  # one training node per hour


def check_partition(partition: Partition | ReferencePartition, jobs: list[RLJob]) -> None:
    """Every job in exactly one group; every group feasible, re-evaluated independently."""
    ids = [job_id for g in partition.groups for job_id in g.job_ids]
    assert sorted(ids) == sorted(j.job_id for j in jobs)
    by_id = {j.job_id: j for j in jobs}
    for plan in partition.groups:
        check_group(plan, [by_id[i] for i in plan.job_ids])
    assert math.isclose(
        partition.cost_usd_per_h, sum(g.cost_usd_per_h for g in partition.groups), rel_tol=1e-12
    )


def check_group(plan: GroupPlan | ReferenceGroup, jobs: list[RLJob]) -> None:
    """Memory residency per node, worst-case SLOs and cost, recomputed from scratch."""
    host = HW.node.host_mem_gb
    for pool, count, pins, mem_gb in (
        ("rollout", plan.rollout_nodes, plan.rollout_pinning, rollout_mem_gb_per_node),
        ("train", plan.train_nodes, plan.train_pinning, train_mem_gb_per_node),
    ):
        used = {node for nodes in pins for node in nodes}
        assert used == set(range(count)), f"{pool}: every paid node holds a job"
        for node in range(count):
            gb = sum(mem_gb(j, HW) for j, nodes in zip(jobs, pins, strict=True) if node in nodes)
            assert gb <= host * (1 + 1e-9)
        for job, nodes in zip(jobs, pins, strict=True):
            gpus = job.rollout_gpus if pool == "rollout" else job.train_gpus
            assert len(nodes) == math.ceil(gpus / 8)
    group = CoExecutionGroup(
        jobs=tuple(
            group_job_of(resolve(j, HW), r, t)
            for j, r, t in zip(jobs, plan.rollout_pinning, plan.train_pinning, strict=True)
        ),
        rollout_node_ids=tuple(range(plan.rollout_nodes)),
        train_node_ids=tuple(range(plan.train_nodes)),
        pools=pools_from_hardware(HW),
        node_capacity=node_capacity_from_hardware(HW),
        order=plan.order,
    )
    metrics = group.metrics(worst_case=True)
    for slowdown, job in zip(metrics.slowdown, jobs, strict=True):
        assert slowdown <= job.slo * (1 + 1e-9)
    assert math.isclose(metrics.meta_iteration_s, plan.meta_iteration_s, rel_tol=1e-12)
    expected_cost = plan.rollout_nodes * NODE_R + plan.train_nodes * NODE_T
    assert math.isclose(plan.cost_usd_per_h, expected_cost, rel_tol=1e-12)


@profile_examples(0.2)
@given(job_sets(1, 5))
def test_milp_equals_bruteforce(jobs: list[RLJob]) -> None:
    """The set-partitioning MILP optimum costs exactly what brute force finds.

    Both use the group search, so this checks the partition layer (cliques, split cap,
    MILP); the search itself is checked against the naive reference (test_reference.py).
    """
    exact = optimal_partition(jobs, HW)
    brute = bruteforce_partition(jobs, HW)
    assert math.isclose(exact.cost_usd_per_h, brute.cost_usd_per_h, rel_tol=1e-9)
    assert "Optimal" in exact.solver
    check_partition(exact, jobs)
    check_partition(brute, jobs)


@profile_examples(1 / 6)
@given(job_sets(1, 6))
def test_optimum_feasible_and_not_above_solo(jobs: list[RLJob]) -> None:
    """Every group meets memory and worst-case SLOs; the optimum never costs more than Solo-D."""
    exact = optimal_partition(jobs, HW)
    check_partition(exact, jobs)
    assert exact.cost_usd_per_h <= solo_cost_usd_per_h(jobs, HW) * (1 + 1e-12)
    restricted = optimal_partition(jobs, HW, space="rollmux", orders="index")
    check_partition(restricted, jobs)
    assert exact.cost_usd_per_h <= restricted.cost_usd_per_h * (1 + 1e-12)


@profile_examples(0.25)
@given(job_sets(2, 3))
def test_pruning_is_exact(jobs: list[RLJob]) -> None:
    """The necessary-condition pruning never changes the cheapest group found."""
    pruned = min_cost_group(jobs, HW)
    full = min_cost_group(jobs, HW, prune=False)
    assert (pruned is None) == (full is None)
    if pruned is not None and full is not None:
        assert math.isclose(pruned.cost_usd_per_h, full.cost_usd_per_h, rel_tol=1e-12)
        check_group(pruned, jobs)


def test_complementary_jobs_share_one_node_pair() -> None:
    """Two 100 s + 100 s jobs interleave on one rollout and one training node: T_meta = 200 s."""
    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    result = optimal_partition(jobs, HW)
    assert len(result.groups) == 1
    (plan,) = result.groups
    assert (plan.rollout_nodes, plan.train_nodes) == (1, 1)
    assert plan.meta_iteration_s == pytest.approx(200.0)
    assert result.cost_usd_per_h == pytest.approx(NODE_R + NODE_T)
    assert solo_cost_usd_per_h(jobs, HW) == pytest.approx(2 * (NODE_R + NODE_T))


def test_rollout_heavy_jobs_with_tight_slo_keep_their_rollout_nodes() -> None:
    """Two 400 s + 50 s jobs at SLO 1.1 cannot share a rollout node (800 s > 495 s).

    They still share the training node (train multiplexing, paper Fig. 10b): 2 + 1 nodes,
    T_meta = T_cycle = 450 s.
    """
    jobs = [direct_job("a", 400.0, 50.0, slo=1.1), direct_job("b", 400.0, 50.0, slo=1.1)]
    (plan,) = optimal_partition(jobs, HW).groups
    assert (plan.rollout_nodes, plan.train_nodes) == (2, 1)
    assert plan.rollout_pinning in (((0,), (1,)), ((1,), (0,)))
    assert plan.meta_iteration_s == pytest.approx(450.0)


def test_slo_one_with_switch_cost_keeps_jobs_apart() -> None:
    """At SLO 1.0 any shared node adds a warm switch, so each job stays alone (Solo-D)."""
    jobs = [
        direct_job("a", 100.0, 100.0, slo=1.0, warm_s=2.0),
        direct_job("b", 100.0, 100.0, slo=1.0, warm_s=2.0),
    ]
    result = optimal_partition(jobs, HW)
    assert [g.job_ids for g in result.groups] == [("a",), ("b",)]
    assert result.cost_usd_per_h == pytest.approx(solo_cost_usd_per_h(jobs, HW))
    assert min_cost_group(jobs, HW) is None


def test_memory_limits_sharing() -> None:
    """Complementary jobs whose state does not fit one node together need their own nodes."""
    jobs = [
        direct_job("a", 100.0, 100.0, slo=1.2, rollout_mem_gb=1500.0),
        direct_job("b", 100.0, 100.0, slo=1.2, rollout_mem_gb=1500.0),
    ]
    (plan,) = optimal_partition(jobs, HW).groups
    assert (plan.rollout_nodes, plan.train_nodes) == (2, 1)


def test_max_cost_bound() -> None:
    """min_cost_group only returns plans strictly cheaper than max_cost_usd_per_h."""
    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    assert min_cost_group(jobs, HW, max_cost_usd_per_h=NODE_R + NODE_T) is None
    plan = min_cost_group(jobs, HW, max_cost_usd_per_h=NODE_R + NODE_T + 0.01)
    assert plan is not None


def test_group_size_one_is_solo_d() -> None:
    """With groups of one job the optimum is exactly the Solo-D cost."""
    jobs = production_mix(6, 3, HW)
    result = optimal_partition(jobs, HW, max_group_size=1)
    assert result.cost_usd_per_h == pytest.approx(solo_cost_usd_per_h(jobs, HW))


def test_job_that_fits_no_node_is_an_error() -> None:
    """A job whose state exceeds a node's host memory raises ValueError naming it."""
    jobs = [direct_job("ok", 100.0, 100.0), direct_job("huge", 100.0, 100.0, train_mem_gb=5e3)]
    with pytest.raises(ValueError, match="'huge' fits no node"):
        optimal_partition(jobs, HW)
    with pytest.raises(ValueError, match="'huge'"):
        bruteforce_partition(jobs, HW)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_group_size": 0}, "max_group_size"),
        ({"time_limit_s": -1.0}, "time_limit_s"),
        ({"orders": "some"}, "orders"),
        ({"space": "cluster"}, "space"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], name: str) -> None:
    """Bad arguments raise ValueError naming the argument."""
    with pytest.raises(ValueError, match=name):
        optimal_partition([direct_job("a", 100.0, 100.0)], HW, **kwargs)  # type: ignore[arg-type]


def test_bad_job_lists() -> None:
    """Empty lists and repeated job ids are rejected."""
    with pytest.raises(ValueError, match="jobs"):
        optimal_partition([], HW)
    with pytest.raises(ValueError, match="repeated job id"):
        min_cost_group([direct_job("a", 1.0, 1.0), direct_job("a", 2.0, 2.0)], HW)


def test_deterministic_on_a_production_mix() -> None:
    """Same mix, same groups, pinnings, orders and cost; matches brute force at 8 jobs."""
    jobs = production_mix(8, 5, HW)
    first = optimal_partition(jobs, HW)
    second = optimal_partition(jobs, HW)
    assert first.groups == second.groups
    assert first.cost_usd_per_h == second.cost_usd_per_h
    check_partition(first, jobs)
    brute = bruteforce_partition(jobs, HW)
    assert first.cost_usd_per_h == pytest.approx(brute.cost_usd_per_h, rel=1e-9)
    assert first.cost_usd_per_h < solo_cost_usd_per_h(jobs, HW)


def test_plan_builds_its_group() -> None:
    """GroupPlan.co_execution_group rebuilds a group with the plan's cost and meta-iteration."""
    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    (plan,) = optimal_partition(jobs, HW).groups
    metrics = plan.co_execution_group(jobs, HW).metrics(worst_case=True)
    assert metrics.cost_usd_per_h == pytest.approx(plan.cost_usd_per_h)
    assert metrics.meta_iteration_s == pytest.approx(plan.meta_iteration_s)
    with pytest.raises(ValueError, match="'a'"):
        plan.co_execution_group(jobs[1:], HW)


def test_bruteforce_time_limit() -> None:
    """Brute force raises TimeoutError when its time limit runs out."""
    jobs = production_mix(9, 0, HW)
    with pytest.raises(TimeoutError):
        bruteforce_partition(jobs, HW, time_limit_s=1e-9)


def test_compare_solvers_fields() -> None:
    """compare_solvers reports both solvers when asked and they agree; else no brute force."""
    mix = production_mix(5, 0, HW)
    row = compare_solvers(mix, HW, bruteforce=True)
    for key in ("seconds", "optimal_cost_usd_per_h", "bruteforce_seconds", "columns"):
        assert key in row
    assert row["bruteforce_finished"] is True
    assert row["bruteforce_cost_usd_per_h"] == pytest.approx(row["optimal_cost_usd_per_h"])
    assert row["optimal_cost_usd_per_h"] == optimal_partition(mix, HW).cost_usd_per_h
    assert compare_solvers(production_mix(11, 0, HW), HW)["bruteforce_seconds"] is None


def test_production_mix_is_seeded_and_small() -> None:
    """The job mix is reproducible and uses 8 or 16 GPUs per pool."""
    first, second = production_mix(12, 7, HW), production_mix(12, 7, HW)
    assert first == second
    assert {j.rollout_gpus for j in first} <= {8, 16}
    assert {j.train_gpus for j in first} <= {8, 16}
    assert first != production_mix(12, 8, HW)


def test_time_limit_gives_a_feasible_partition() -> None:
    """When the time limit runs out the partition is still feasible and flagged."""
    jobs = production_mix(10, 0, HW)
    result = optimal_partition(jobs, HW, time_limit_s=1e-6)
    assert "not proven optimal" in result.solver
    check_partition(result, jobs)


# --------------------------------------------------------------------------- new pruning


def _reference_side_layouts(
    need: list[int], n_nodes: int, masks: list[int]
) -> list[tuple[int, ...]]:
    """The plain recursive enumeration (no early cuts) the fast one must reproduce."""
    n = len(need)
    remaining = list(need)
    chosen: list[int] = []
    out: list[tuple[int, ...]] = []

    def rec(start: int, nodes_left: int) -> None:
        if nodes_left == 0:
            if not any(remaining):
                out.append(tuple(chosen))
            return
        for idx in range(start, len(masks)):
            mask = masks[idx]
            if any(mask >> k & 1 and remaining[k] == 0 for k in range(n)):
                continue
            for k in range(n):
                if mask >> k & 1:
                    remaining[k] -= 1
            chosen.append(mask)
            rec(idx, nodes_left - 1)
            chosen.pop()
            for k in range(n):
                if mask >> k & 1:
                    remaining[k] += 1

    rec(0, n_nodes)
    return out


@given(
    st.lists(st.sampled_from([1, 1, 2, 2, 3]), min_size=1, max_size=4).flatmap(
        lambda need: st.tuples(
            st.just(need),
            st.integers(max(need), sum(need)),
            st.sets(st.integers(1, (1 << len(need)) - 1), min_size=1),
        )
    )
)
def test_side_layouts_match_plain_enumeration(case: tuple[list[int], int, set[int]]) -> None:
    """The pruned layout enumeration yields exactly the plain one's multisets, in order."""
    need, n_nodes, masks = case
    ordered = sorted(masks)
    assert list(side_layouts(need, n_nodes, ordered)) == _reference_side_layouts(
        need, n_nodes, ordered
    )


def _exhaustive_orders_feasible(jobs: list[RLJob], plan: GroupPlan | None) -> None:
    """Helper check: a returned plan's order meets every SLO (re-evaluated)."""
    if plan is not None:
        check_group(plan, jobs)


@profile_examples(1 / 3)
@given(job_sets(4, 4))
def test_subset_and_decision_pruning_is_exact_on_four_jobs(jobs: list[RLJob]) -> None:
    """P6 (proper subsets' best orders) and P7 (decision version) keep the cheapest group.

    With four jobs P6 checks every pair and triple and P7 decides the five other orders.
    """
    pruned = min_cost_group(jobs, HW)
    full = min_cost_group(jobs, HW, prune=False)
    assert (pruned is None) == (full is None)
    if pruned is not None and full is not None:
        assert math.isclose(pruned.cost_usd_per_h, full.cost_usd_per_h, rel_tol=1e-12)
    _exhaustive_orders_feasible(jobs, pruned)


def test_subset_bound_rejects_every_order() -> None:
    """A proper subset with no good order (P6) rejects the pinning; brute force agrees.

    Three 2-node gang jobs pinned pairwise across three rollout nodes serialise their
    rollouts in every order (each pair shares a node), so with a budget below the sum of
    the rollouts no order works; P6 proves it from the triple without trying the
    orders of the whole set.
    """
    cache = PeriodCache()
    roll = [100.0, 100.0, 100.0, 10.0]
    train = [10.0, 10.0, 10.0, 10.0]
    # rollout nodes {a,b}, {b,c}, {a,c} (a triangle) and job 3 with job 0; one training node
    lay_r = (0b1001, 0b0011, 0b0110, 0b0101)
    lay_t = (0b1111,)
    triple = cache.key(roll, train, lay_r, lay_t, (0, 1, 2))
    for order in ((0, 1, 2), (0, 2, 1)):
        key = cache.key(roll, train, lay_r, lay_t, order)
        assert cache.period_of(key) >= 300.0
    assert not cache.best_at_most(triple, 299.0)
    assert cache.best_at_most(triple, 1e9)
    killer: list[tuple[int, ...]] = []
    assert cache.some_subset_exceeds(roll, train, lay_r, lay_t, 299.0, killer)
    assert killer == [(0, 1, 2)]
    for order in ((0, 1, 2, 3), (0, 3, 2, 1), (0, 2, 3, 1)):
        assert cache.period(roll, train, lay_r, lay_t, order) > 299.0
        assert not cache.at_most(roll, train, lay_r, lay_t, order, 299.0)


def test_decision_matches_exact_period() -> None:
    """at_most agrees with the exact period on both sides of it, from cold and warm caches."""
    roll = [120.0, 80.0, 60.0, 150.0]
    train = [90.0, 70.0, 40.0, 30.0]
    lay_r = (0b0011, 0b0110, 0b1100, 0b1001)
    lay_t = (0b0101, 0b1010, 0b1111)
    exact = PeriodCache()
    for order in orders(4):
        value = exact.period(roll, train, lay_r, lay_t, order)
        cold = PeriodCache()
        assert cold.at_most(roll, train, lay_r, lay_t, order, value * (1 + 1e-6))
        assert not cold.at_most(roll, train, lay_r, lay_t, order, value * (1 - 1e-6))
        assert exact.at_most(roll, train, lay_r, lay_t, order, value)


def test_p6_is_checked_only_after_the_index_order_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """P6 runs only for pinnings whose index order exceeds B_S, and could not reject the others.

    try_pinning evaluates the index order before P6; by Lemma 1 a pinning whose index
    order fits has every proper subset within B_S, so skipping P6 there drops no plan.
    Checked on every pinning of two production optima (groups of up to 5) where P6 runs
    and rejects pinnings.
    """
    real_p6 = search.p6_some_subset_exceeds
    real_try = search.try_pinning
    index_failed: list[bool] = []
    fitting: list[bool] = []

    def spy_p6(state: search.SearchState, roll: list[float], train: list[float],
               lay_r: tuple[int, ...], lay_t: tuple[int, ...]) -> bool:
        meta = state.periods.period(roll, train, lay_r, lay_t, tuple(range(state.n)))
        index_failed.append(meta > state.budget_s)
        return real_p6(state, roll, train, lay_r, lay_t)

    def spy_try(state: search.SearchState, lay_r: tuple[int, ...], lay_t: tuple[int, ...],
                roll: list[float], load_r: float, cost: float) -> GroupPlan | None:
        plan = real_try(state, lay_r, lay_t, roll, load_r, cost)
        if plan is not None and plan.order == tuple(range(state.n)) and state.n >= 3:
            train, _ = search.p2_side_load(state, lay_t, rollout=False)
            fitting.append(real_p6(state, roll, train, lay_r, lay_t))
        return plan

    monkeypatch.setattr(search, "p6_some_subset_exceeds", spy_p6)
    monkeypatch.setattr(search, "try_pinning", spy_try)
    for jobs, seed in ((13, 2), (16, 0)):
        optimal_partition(production_mix(jobs, seed, HW), HW)
    assert index_failed and all(index_failed)
    assert fitting and not any(fitting)


@pytest.mark.parametrize("seed", [0, 1])
def test_pruned_optimum_matches_unpruned_groups_on_a_two_node_mix(seed: int) -> None:
    """On production sets with two-node jobs, the pruned search costs what no pruning does."""
    # 30 jobs: at the fitted two-node share (src/rollmux/traces/workloads.yaml) a 12-job
    # mix has none
    jobs = [j for j in production_mix(30, seed, HW) if j.rollout_gpus == 16][:3]
    if len(jobs) < 2:
        pytest.skip("mix has fewer than two two-node jobs")
    pruned = min_cost_group(jobs, HW)
    full = min_cost_group(jobs, HW, prune=False)
    assert (pruned is None) == (full is None)
    if pruned is not None and full is not None:
        assert pruned.cost_usd_per_h == pytest.approx(full.cost_usd_per_h, rel=1e-12)


# --------------------------------------------------------------------------- column cache


def test_column_cache_gives_the_same_partitions() -> None:
    """Successive solves with a shared ColumnCache equal fresh solves (groups and cost)."""
    mix = production_mix(12, 4, HW)
    cache = ColumnCache()
    # arrivals one by one, a departure, then jobs listed in another order
    steps = [mix[:k] for k in range(2, 12)] + [mix[1:12], list(reversed(mix[2:12]))]
    searched = []
    for jobs in steps:
        cached = optimal_partition(jobs, HW, cache=cache)
        fresh = optimal_partition(jobs, HW)
        assert cached.groups == fresh.groups
        assert cached.cost_usd_per_h == fresh.cost_usd_per_h
        assert cached.proven_optimal and fresh.proven_optimal
        searched.append((cached.n_searched, fresh.n_searched))
    # after the first solves only the sets with the new job are searched
    assert sum(c for c, _ in searched) < sum(f for _, f in searched)
    assert searched[-1][0] == 0  # same jobs as before, another order: nothing to search
    kept = {cache._uid[job] for job in mix[2:12]}
    assert set(cache._uid.values()) == kept
    assert all(uid in kept for key in cache._sets for uid in key)


def test_column_cache_keys_on_the_job_value() -> None:
    """A job resubmitted with the same id but another spec is searched again."""
    from dataclasses import replace

    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    cache = ColumnCache()
    first = optimal_partition(jobs, HW, cache=cache)
    assert len(first.groups) == 1
    slower = [jobs[0], replace(jobs[1], rollout_s=110.0, rollout_max_s=110.0)]
    second = optimal_partition(slower, HW, cache=cache)
    assert second.groups == optimal_partition(slower, HW).groups
    # Another value: never the cached entry; its earlier plan, still feasible at the
    # first node-count pair, proves the set's cost without a search (docs/optimum.md, 3d).
    assert second.n_searched == 0 and len(second.groups) == 1
    # Slower still, that plan no longer proves the cost: the set is searched again.
    slowest = [jobs[0], replace(jobs[1], rollout_s=140.0, rollout_max_s=140.0)]
    third = optimal_partition(slowest, HW, cache=cache)
    assert third.groups == optimal_partition(slowest, HW).groups
    assert third.n_searched >= 1
    with pytest.raises(ValueError, match="cache"):
        optimal_partition(jobs, HW, cache=object())  # type: ignore[arg-type]


def test_time_limit_marks_the_partition_unproven() -> None:
    """proven_optimal is False exactly when the time limit cut the enumeration."""
    jobs = production_mix(10, 0, HW)
    assert optimal_partition(jobs, HW).proven_optimal
    assert not optimal_partition(jobs, HW, time_limit_s=1e-6).proven_optimal


# --------------------------------------------------------------------------- naive reference


def test_reference_shares_no_code_with_the_search() -> None:
    """The naive reference imports nothing of rollmux.placement: only the group model."""
    import ast
    import inspect

    from rollmux.placement.optimum import reference

    imported: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(reference))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            imported.add(str(node.module))
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not [name for name in imported if name.startswith("rollmux.placement")]
    assert "rollmux.group" in imported


def check_against_reference(jobs: list[RLJob]) -> None:
    """The MILP optimum costs what the naive enumeration finds; both partitions feasible."""
    exact = optimal_partition(jobs, HW)
    naive = reference_partition(jobs, HW)
    assert math.isclose(exact.cost_usd_per_h, naive.cost_usd_per_h, rel_tol=1e-9)
    check_partition(exact, jobs)
    check_partition(naive, jobs)


@profile_examples(8 / 60)
@given(job_sets(1, 4, gpus=(8,)))
def test_optimum_equals_naive_reference_on_one_node_jobs(jobs: list[RLJob]) -> None:
    """Up to four one-node jobs: same cost as the naive enumeration."""
    check_against_reference(jobs)


@profile_examples(8 / 60)
@given(job_sets(1, 3))
def test_optimum_equals_naive_reference_with_two_node_jobs(jobs: list[RLJob]) -> None:
    """Up to three jobs of one or two nodes per pool: same cost as the naive enumeration."""
    check_against_reference(jobs)


@profile_examples(1 / 6)
@given(job_sets(2, 3))
def test_group_search_equals_naive_reference(jobs: list[RLJob]) -> None:
    """min_cost_group, pruned or not, finds a group exactly when the naive enumeration does,
    at the same cost (connected groups, every pinning and every order)."""
    naive = reference_group(jobs, HW, connected_only=True)
    for prune in (True, False):
        plan = min_cost_group(jobs, HW, prune=prune)
        assert (plan is None) == (naive is None)
        if plan is not None and naive is not None:
            assert math.isclose(plan.cost_usd_per_h, naive.cost_usd_per_h, rel_tol=1e-9)
            check_group(plan, jobs)


def test_reference_pairs_complementary_jobs() -> None:
    """Two 100 s + 100 s jobs at SLO 1.2 share one rollout and one training node."""
    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    naive = reference_partition(jobs, HW)
    (group,) = naive.groups
    assert (group.rollout_nodes, group.train_nodes) == (1, 1)
    assert group.meta_iteration_s == pytest.approx(200.0)
    assert naive.cost_usd_per_h == pytest.approx(NODE_R + NODE_T)
    assert reference_group(jobs[:1], HW) is not None


def test_reference_catches_a_search_bug_the_brute_force_misses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With P1 broken (every set rejected), MILP and brute force agree, the reference does not."""
    from rollmux.placement.optimum import search

    jobs = [direct_job("a", 100.0, 100.0, slo=1.2), direct_job("b", 100.0, 100.0, slo=1.2)]
    monkeypatch.setattr(search, "p1_cycle_bound_exceeds", lambda data, budget_s: True)
    broken = optimal_partition(jobs, HW)
    assert broken.cost_usd_per_h == bruteforce_partition(jobs, HW).cost_usd_per_h
    assert broken.cost_usd_per_h > reference_partition(jobs, HW).cost_usd_per_h * 1.1


def test_reference_rejects_bad_input() -> None:
    """More jobs than the reference takes, repeated ids and bad group sizes raise ValueError."""
    many = [direct_job(f"j{i}", 100.0, 100.0) for i in range(5)]
    with pytest.raises(ValueError, match="at most 4"):
        reference_partition(many, HW)
    with pytest.raises(ValueError, match="repeated job id"):
        reference_group([direct_job("a", 1.0, 1.0), direct_job("a", 2.0, 2.0)], HW)
    with pytest.raises(ValueError, match="max_group_size"):
        reference_partition(many[:2], HW, max_group_size=0)


# Seeds whose 12-job production mix has node-count pairs below the subset floor (the
# production job mix is fitted, so the seeds that exercise P8 move when the fit does).
@pytest.mark.parametrize("seed", [3, 4])
def test_subset_floor_skips_only_infeasible_pairs(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """P8 changes no column, cost or plan: the same partition with the floor switched off."""
    from rollmux.placement.optimum import search

    jobs = production_mix(12, seed, HW)
    verdicts: list[bool] = []
    rule = search.p8_below_subset_floor

    def counted(cost: float, cost_floor: float) -> bool:
        verdicts.append(rule(cost, cost_floor))
        return verdicts[-1]

    monkeypatch.setattr(search, "p8_below_subset_floor", counted)
    with_floor = optimal_partition(jobs, HW)
    assert any(verdicts), "the floor skipped no node-count pair on this mix"
    monkeypatch.setattr(search, "p8_below_subset_floor", lambda cost, cost_floor: False)
    without = optimal_partition(jobs, HW)
    assert with_floor.groups == without.groups
    assert with_floor.n_columns == without.n_columns
    assert with_floor.cost_usd_per_h == without.cost_usd_per_h


def test_caches_keep_answers_by_value_and_clear() -> None:
    """A repeated solve reuses the kept MILP answer; clearing every memo changes no result."""
    from rollmux.placement.optimum import clear_caches

    jobs = production_mix(10, 1, HW)
    cache = ColumnCache()
    first = optimal_partition(jobs, HW, cache=cache)
    again = optimal_partition(list(jobs), HW, cache=cache)
    assert again.groups == first.groups and again.solver == first.solver
    assert again.n_searched == 0
    assert len(cache._milp) == 1  # the second call found the first's answer
    cache.clear()
    clear_caches()
    assert len(cache) == 0 and not cache._milp and not cache.periods._memo
    assert optimal_partition(jobs, HW, cache=cache).groups == first.groups
    # bound by value: an equal hardware does not clear the cache
    cache.configure(load_hardware(), "all", "full")
    assert len(cache) > 0


def _forced_overlap(extra: int):
    """A stand-in MILP answering covers with jobs in two groups.

    The real covering solve rarely returns such a cover on small sets; this one always
    does, so the reduction to a partition runs on every call. ``extra`` > 0: the exact
    partition plus ``extra`` further columns; 0: the first job alone, the largest column
    holding it, and every job outside that column alone.
    """
    import rollmux.placement.optimum.partition as partition_module

    solve = partition_module.solve_set_partitioning

    def answer(n, subsets, costs, deadline, cover=False, nodes=None):  # type: ignore[no-untyped-def]
        chosen, status, solved = solve(n, subsets, costs, deadline, cover=False, nodes=nodes)
        if extra:
            overlapping = [c for c, s in enumerate(subsets) if len(s) > 1 and c not in chosen]
            return sorted(chosen + overlapping[:extra]), status, solved
        # The first job alone, then the largest column holding it: the column's other
        # jobs need a plan of their own.
        holding = [c for c, s in enumerate(subsets) if s[0] == 0 and len(s) > 1]
        if not holding:
            return chosen, status, solved
        first = max(holding, key=lambda c: len(subsets[c]))
        solos = [c for c, s in enumerate(subsets) if len(s) == 1 and s[0] not in subsets[first]]
        return sorted({0, first, *solos}), status, solved

    return answer


@profile_examples(0.2)
@given(job_sets(2, 5), st.integers(0, 3))
def test_overlapping_cover_becomes_a_feasible_partition(jobs: list[RLJob], extra: int) -> None:
    """A cover with jobs in two groups becomes a partition of no greater cost (rule P8).

    Each job stays in its first group; every other group keeps its remaining jobs, planned
    anew within the cost of the column they came from.
    """
    import rollmux.placement.optimum.partition as partition_module

    exact = optimal_partition(jobs, HW)
    with patch.object(partition_module, "solve_set_partitioning", _forced_overlap(extra)):
        reduced = optimal_partition(jobs, HW)
    check_partition(reduced, jobs)
    assert reduced.cost_usd_per_h >= exact.cost_usd_per_h * (1 - 1e-9)
    position = {job.job_id: k for k, job in enumerate(jobs)}
    firsts = [position[g.job_ids[0]] for g in reduced.groups]
    assert firsts == sorted(firsts)  # groups in their first job's order, as documented


@profile_examples(0.2)
@given(job_sets(2, 6))
def test_cover_and_partition_milps_agree(jobs: list[RLJob]) -> None:
    """In the full space the covering MILP costs what the partitioning MILP does."""
    import rollmux.placement.optimum.partition as partition_module

    solve = partition_module.solve_set_partitioning
    as_cover = optimal_partition(jobs, HW)
    with patch.object(
        partition_module,
        "solve_set_partitioning",
        lambda n, subsets, costs, deadline, cover=False, nodes=None: solve(
            n, subsets, costs, deadline, nodes=nodes
        ),
    ):
        as_partition = optimal_partition(jobs, HW)
    check_partition(as_cover, jobs)
    assert as_cover.cost_usd_per_h == pytest.approx(as_partition.cost_usd_per_h, rel=1e-9)
