"""Co-execution groups: hand-computed literals, micro-benchmark shapes, properties, bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pooled import POOLS, group_of

from rollmux.closedform import (
    JobPhases,
    fluid_cost_usd_per_iteration,
    solo_d,
    solo_d_fleet,
)
from rollmux.group import (
    CoExecutionGroup,
    GroupJob,
    GroupMetrics,
    GroupStatus,
    NodeCapacity,
    group_job_of,
    node_capacity_from_hardware,
)
from rollmux.model import resolve

H20_USD_PER_H, H800_USD_PER_H = 1.85, 5.28
NODE_8_8_USD_PER_H = 8 * H20_USD_PER_H + 8 * H800_USD_PER_H  # 57.04


def job(
    rollout_s: float,
    train_s: float,
    rollout_nodes: object = 0,
    train_nodes: object = 0,
    **kwargs: object,
) -> GroupJob:
    """A GroupJob with JobPhases built from the keyword arguments that belong to it."""
    group_keys = {"slo", "rollout_mem_gb_per_node", "train_mem_gb_per_node", "job_id"}
    group_kwargs = {k: v for k, v in kwargs.items() if k in group_keys}
    phase_kwargs = {k: v for k, v in kwargs.items() if k not in group_keys}
    return GroupJob(
        JobPhases.of(rollout_s, train_s, **phase_kwargs),  # type: ignore[arg-type]
        rollout_nodes,  # type: ignore[arg-type]
        train_nodes,  # type: ignore[arg-type]
        **group_kwargs,  # type: ignore[arg-type]
    )


def pair(**kwargs: object) -> CoExecutionGroup:
    """Two complementary jobs r=(10, 2), t=(2, 10) on one rollout and one training node."""
    return group_of((job(10, 2, **kwargs), job(2, 10, **kwargs)), (0,), (0,))


# --------------------------------------------------------------------------- literals


def test_complementary_pair_weaves_without_bubbles() -> None:
    """T_cycle = 12 = T_load (full), meta-iteration 12, both pools 100% busy, no slowdown."""
    m = pair().metrics()
    assert (m.t_cycle_s, m.t_load_s, m.meta_iteration_s) == (12.0, 12.0, pytest.approx(12.0))
    assert m.status is GroupStatus.FULL
    assert m.rollout_utilisation == pytest.approx(1.0)
    assert m.train_utilisation == pytest.approx(1.0)
    assert m.rollout_bubble_fraction == pytest.approx(0.0, abs=1e-12)
    assert m.train_bubble_fraction == pytest.approx(0.0, abs=1e-12)
    assert m.slowdown == pytest.approx((1.0, 1.0))
    assert m.job_iteration_s == pytest.approx((12.0, 12.0))
    assert m.cost_usd_per_h == pytest.approx(NODE_8_8_USD_PER_H)
    assert m.cost_usd_per_job_iteration == pytest.approx(NODE_8_8_USD_PER_H * 12 / 3600 / 2)
    assert m.iterations_per_h == pytest.approx(600.0)
    assert m.iterations_per_usd == pytest.approx(600.0 / NODE_8_8_USD_PER_H)
    # Zero bubbles: the group pays exactly the fluid bound.
    assert m.cost_usd_per_job_iteration == pytest.approx(m.fluid_cost_usd_per_job_iteration)


def test_complementary_pair_halves_solo_d_cost() -> None:
    """Solo-D runs each job at 12 s on its own 8+8 GPUs: bubbles 10/12 and 2/12, twice the cost."""
    solo = [solo_d(JobPhases.of(10, 2), POOLS), solo_d(JobPhases.of(2, 10), POOLS)]
    assert solo[0].rollout_bubble_fraction == pytest.approx(2 / 12)
    assert solo[0].train_bubble_fraction == pytest.approx(10 / 12)
    assert solo[1].rollout_bubble_fraction == pytest.approx(10 / 12)
    group_cost = pair().metrics().cost_usd_per_job_iteration
    assert solo[0].cost_usd_per_iteration == pytest.approx(2 * group_cost)


def test_warm_switch_on_shared_nodes() -> None:
    """A 1 s warm switch on each shared-node phase: effective r=(11, 3), t=(3, 11), meta 14."""
    group = pair(warm_switch_s=1.0)
    assert group.effective_phases_s() == ((11.0, 3.0), (3.0, 11.0))
    m = group.metrics()
    assert m.meta_iteration_s == pytest.approx(14.0)
    assert m.solo_iteration_s == (12.0, 12.0)
    assert m.slowdown == pytest.approx((14 / 12, 14 / 12))
    # Switch time is occupied but not useful: utilisation 12/14.
    assert m.rollout_utilisation == pytest.approx(12 / 14)


def test_slo_check_against_slowdown() -> None:
    """Slowdown 14/12 = 1.167 breaks a 1.1 SLO and meets a 1.2 SLO."""
    tight = group_of(
        (job(10, 2, warm_switch_s=1.0, slo=1.1), job(2, 10, warm_switch_s=1.0, slo=1.2)),
        (0,),
        (0,),
    ).metrics()
    assert tight.slo_ok == (False, True)
    assert not tight.all_slo_ok


def test_sync_extends_training_and_can_saturate() -> None:
    """Sync of 1 s joins each training: t_eff = (3, 11), T_load = 14 > T_cycle = 13.

    Worked by hand (order 0, 1): training node runs 3 + 11 per meta-iteration with no
    gap once warmed up (R0 0-10, T0 10-13, R1 10-12, T1 13-24, R0 13-23, T0 24-27, ...).
    """
    group = pair(sync_s=1.0)
    m = group.metrics()
    assert group.effective_phases_s() == ((10.0, 2.0), (3.0, 11.0))
    assert (m.t_cycle_s, m.t_load_s) == (13.0, 14.0)
    assert m.status is GroupStatus.SATURATED
    assert m.meta_iteration_s == pytest.approx(14.0)
    assert m.solo_iteration_s == (13.0, 13.0)


def test_single_job_group_is_solo_d() -> None:
    """A job alone on its nodes pays no switch and reproduces the Solo-D closed form."""
    phases = JobPhases.of(30.0, 12.0, sync_s=3.0, warm_switch_s=5.0, rollout_gpus=16)
    m = group_of((GroupJob(phases, (0, 1), 0),), (0, 1), (0,)).metrics()
    solo = solo_d(phases, POOLS)
    assert m.meta_iteration_s == pytest.approx(solo.iteration_s)
    assert m.rollout_utilisation == pytest.approx(solo.rollout_utilisation)
    assert m.train_utilisation == pytest.approx(solo.train_utilisation)
    assert m.cost_usd_per_job_iteration == pytest.approx(solo.cost_usd_per_iteration)
    assert m.status is GroupStatus.UNDER_UTILISED


def test_worst_case_evaluation_uses_max_token_durations() -> None:
    """Admission view: with job 0's rollout at its max (20 s) job 1 slows by 22/14."""
    group = group_of(
        (job(10, 2, rollout_max_s=20.0, slo=1.5), job(2, 10, train_max_s=12.0, slo=1.5)),
        (0,),
        (0,),
    )
    nominal, worst = group.metrics(), group.metrics(worst_case=True)
    assert nominal.meta_iteration_s == pytest.approx(12.0)
    # Worst case: r = (20, 2), t = (2, 12); chains 22 and 14; loads 22 and 14: full.
    assert (worst.t_cycle_s, worst.t_load_s) == (22.0, 22.0)
    assert worst.status is GroupStatus.FULL
    assert worst.meta_iteration_s == pytest.approx(22.0)
    assert worst.solo_iteration_s == (22.0, 14.0)
    assert worst.slowdown == pytest.approx((1.0, 22 / 14))
    assert worst.slo_ok == (True, False)
    assert group.worst_case().metrics() == worst


def test_temporal_mux_two_jobs_share_one_node_per_pool() -> None:
    """Temporal mux: two balanced jobs (r = t = 20) on 1 + 1 nodes: saturated, meta 40."""
    group = group_of((job(20, 20), job(20, 20)), (0,), (0,))
    m = group.metrics()
    assert (m.t_cycle_s, m.t_load_s) == (40.0, 40.0)
    assert m.meta_iteration_s == pytest.approx(40.0)
    # Versus Solo-D at equal hourly cost: twice the iterations per dollar.
    solo = solo_d_fleet([JobPhases.of(20, 20)] * 2, POOLS)
    assert m.iterations_per_usd / solo.iterations_per_usd == pytest.approx(2.0)


def test_train_mux_three_rollout_nodes_one_training_node() -> None:
    """Train mux: D, D (r 25, t 10) and E (r 60, t 10), one rollout node each, one H800 node.

    Loads: rollout 25, 25, 60; training 30. T_cycle = 70 > T_load = 60: meta 70.
    """
    group = group_of(
        (job(25, 10, 0, 0), job(25, 10, 1, 0), job(60, 10, 2, 0)), (0, 1, 2), (0,)
    )
    m = group.metrics()
    assert (m.t_cycle_s, m.t_load_s) == (70.0, 60.0)
    assert m.status is GroupStatus.UNDER_UTILISED
    assert m.meta_iteration_s == pytest.approx(70.0)
    assert m.slowdown == pytest.approx((2.0, 2.0, 1.0))
    assert m.cost_usd_per_h == pytest.approx(24 * H20_USD_PER_H + 8 * H800_USD_PER_H)
    assert m.rollout_utilisation == pytest.approx((25 + 25 + 60) / (3 * 70))
    assert m.train_utilisation == pytest.approx(30 / 70)


def test_spatial_mux_gang_job_with_two_half_jobs() -> None:
    """Spatial mux: C (16 + 16 GPUs, r = t = 30) on both nodes of each pool, D1 and D2
    (8 + 16 GPUs, r 25, t 10) on one rollout node each and both training nodes.

    Worked by hand: C rolls out 0-30, D1/D2 30-55, C trains 30-60, D1 60-70, D2 70-80;
    C's next rollout waits for its training (60), so the period is T_cycle = 60.
    """
    c = job(30, 30, (0, 1), (0, 1), rollout_gpus=16, train_gpus=16)
    d1 = job(25, 10, 0, (0, 1), train_gpus=16)
    d2 = job(25, 10, 1, (0, 1), train_gpus=16)
    m = group_of((c, d1, d2), (0, 1), (0, 1)).metrics()
    assert (m.t_cycle_s, m.t_load_s) == (60.0, 55.0)
    assert m.meta_iteration_s == pytest.approx(60.0)
    assert m.rollout_utilisation == pytest.approx((30 * 16 + 2 * 25 * 8) / (16 * 60))
    assert m.train_utilisation == pytest.approx((30 * 16 + 2 * 10 * 16) / (16 * 60))
    assert m.cost_usd_per_h == pytest.approx(16 * H20_USD_PER_H + 16 * H800_USD_PER_H)


def test_under_utilised_gang_group_can_exceed_t_cycle() -> None:
    """Theorem 1's consequence fails for gang-scheduled jobs: T_load 7 < T_cycle 8, yet
    round-robin settles at 8.5 in every order.

    Worked by hand (A on R0, B on R1, C on R0+R1, all on T0): A's rollout starts at
    0, 8, 17, 25, ...: two meta-iterations take 17 s.
    """
    jobs = (job(4, 4, 0, 0), job(4, 2, 1, 0), job(3, 1, (0, 1), 0))
    group = group_of(jobs, (0, 1), (0,))
    m = group.metrics()
    assert (m.t_cycle_s, m.t_load_s) == (8.0, 7.0)
    assert m.status is GroupStatus.UNDER_UTILISED
    assert m.meta_iteration_s == pytest.approx(8.5)
    for order in ((0, 2, 1), (1, 0, 2), (2, 1, 0)):
        reordered = group_of(jobs, (0, 1), (0,), order=order)
        assert reordered.metrics().meta_iteration_s >= 8.5 - 1e-9


def test_marginal_cost_of_packing_and_rollout_scaling() -> None:
    """Direct packing adds no cost; rollout scaling adds one H20 node's price."""
    base = group_of((job(10, 2),), (0,), (0,))
    packed = base.with_job(job(2, 10))
    scaled = base.with_job(job(12, 2, 1, 0), new_rollout_node_ids=(1,))
    assert packed.cost_usd_per_h() == base.cost_usd_per_h()
    assert scaled.cost_usd_per_h() - base.cost_usd_per_h() == pytest.approx(8 * H20_USD_PER_H)
    assert scaled.jobs_on("rollout", 1) == (1,)
    assert scaled.jobs_on("train", 0) == (0, 1)


def test_host_memory_accounting() -> None:
    """Free host memory per node is capacity minus the resident state pinned there."""
    group = group_of(
        (
            job(10, 2, 0, 0, rollout_mem_gb_per_node=700, train_mem_gb_per_node=900),
            job(2, 10, 0, 0, rollout_mem_gb_per_node=600, train_mem_gb_per_node=1000),
        ),
        (0,),
        (0,),
    )
    assert group.free_host_mem_gb("rollout", 0) == pytest.approx(2048 - 1300)
    assert group.free_host_mem_gb("train", 0) == pytest.approx(2048 - 1900)


# --------------------------------------------------------------------------- bad input


def test_pinning_to_an_undeclared_node_is_rejected() -> None:
    """A job pinned to rollout node 5 of a group declaring (0, 1) names the id."""
    with pytest.raises(ValueError, match=r"jobs\[1\]\.rollout_nodes: unknown node id 5"):
        group_of((job(1, 1, 0, 0), job(1, 1, 5, 0)), (0, 1), (0,))
    with pytest.raises(ValueError, match=r"jobs\[0\]\.train_nodes: unknown node id 'b'"):
        group_of((job(1, 1, 0, "b"),), (0,), ("a",))


def test_host_memory_overflow_names_node_and_amounts() -> None:
    """1200 + 900 GB on training node 't0' exceeds 2048 GB."""
    jobs = (
        job(1, 1, 0, "t0", train_mem_gb_per_node=1200),
        job(1, 1, 0, "t0", train_mem_gb_per_node=900),
    )
    with pytest.raises(ValueError, match=r"train node 't0': resident state 2100 GB .* 2048 GB"):
        group_of(jobs, (0,), ("t0",))
    small = NodeCapacity(gpus_per_node=8, host_mem_gb=1000)
    with pytest.raises(ValueError, match=r"rollout node 0: resident state 1100 GB .* 1000 GB"):
        group_of(
            (job(1, 1, rollout_mem_gb_per_node=600), job(1, 1, rollout_mem_gb_per_node=500)),
            (0,),
            (0,),
            node_capacity=small,
        )


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: group_of((), (0,), (0,)), r"jobs = \(\)"),
        (lambda: group_of((job(1, 1), 7), (0,), (0,)), r"jobs\[1\] = 7"),
        (lambda: group_of((job(1, 1),), (0, 0), (0,)), r"rollout_node_ids = \(0, 0\)"),
        (lambda: group_of((job(1, 1),), (0,), ()), r"train_node_ids = \(\)"),
        (lambda: group_of((job(1, 1),), (-1,), (0,)), r"rollout_node_ids\[0\] = -1"),
        (lambda: group_of((job(1, 1),), (0,), (True,)), r"train_node_ids\[0\] = True"),
        (lambda: group_of((job(1, 1),), (0,), (0,), order=(1,)), r"order = \(1,\)"),
        (
            lambda: group_of((job(1, 1), job(1, 1)), (0,), (0,), order=("a", 1)),
            r"order = \('a', 1\)",
        ),
        (
            lambda: group_of((job(1, 1, rollout_gpus=16),), (0,), (0,)),
            r"jobs\[0\]\.phases\.rollout_gpus = 16",
        ),
        (lambda: job(1, 1, slo=0.5), r"slo = 0\.5"),
        (lambda: job(1, 1, slo="fast"), r"slo = 'fast'"),
        (lambda: job(1, 1, slo="1.5"), r"slo = '1\.5'"),
        (lambda: job(1, 1, {0, 1}), r"rollout_nodes = \{0, 1\}"),
        (lambda: job(1, 1, rollout_mem_gb_per_node=-3), r"rollout_mem_gb_per_node = -3"),
        (lambda: job(1, 1, (0, 0)), r"rollout_nodes = \(0, 0\): repeated node id"),
        (lambda: job(1, 1, ()), r"rollout_nodes = \(\)"),
        (lambda: job(1, 1, 0, 2.5), r"train_nodes = 2\.5"),
        (lambda: GroupJob("phases", 0, 0), r"phases = 'phases'"),  # type: ignore[arg-type]
        (lambda: NodeCapacity(gpus_per_node=0), r"gpus_per_node = 0"),
        (lambda: NodeCapacity(host_mem_gb=-1), r"host_mem_gb = -1"),
    ],
)
def test_bad_input_names_argument_and_value(build: object, match: str) -> None:
    """Every bad argument raises ValueError naming it and the offending value."""
    with pytest.raises(ValueError, match=match):
        build()  # type: ignore[operator]


def test_jobs_on_rejects_unknown_pool_and_node() -> None:
    """Queries about an unknown pool or node id are refused by name."""
    group = pair()
    with pytest.raises(ValueError, match=r"pool = 'gpu'"):
        group.jobs_on("gpu", 0)
    with pytest.raises(ValueError, match=r"node = 3: unknown node id"):
        group.free_host_mem_gb("train", 3)


# --------------------------------------------------------------------------- properties

# Strategies live here rather than in tests/strategies.py, which another helper owns.
phase_s = st.integers(min_value=1, max_value=40).map(float)
switch_s = st.sampled_from([0.0, 0.0, 0.5, 2.0])


@st.composite
def groups(draw: st.DrawFn, star: bool = False) -> CoExecutionGroup:
    """A random group; ``star``: one shared node in one pool, one node per job in the other."""
    n_jobs = draw(st.integers(min_value=1, max_value=5))
    n_r = draw(st.integers(min_value=1, max_value=3))
    n_t = draw(st.integers(min_value=1, max_value=3))
    shared_train = draw(st.booleans())
    if star:
        n_r, n_t = (n_r, 1) if shared_train else (1, n_t)
    members = []
    for _ in range(n_jobs):
        if star:
            r_nodes: tuple[int, ...] = (draw(st.integers(0, n_r - 1)),)
            t_nodes: tuple[int, ...] = (draw(st.integers(0, n_t - 1)),)
        else:
            r_nodes = tuple(draw(st.sets(st.integers(0, n_r - 1), min_size=1)))
            t_nodes = tuple(draw(st.sets(st.integers(0, n_t - 1), min_size=1)))
        members.append(
            GroupJob(
                JobPhases.of(
                    draw(phase_s),
                    draw(phase_s),
                    sync_s=draw(st.sampled_from([0.0, 1.0])),
                    rollout_gpus=8 * len(r_nodes) - draw(st.sampled_from([0, 4])),
                    train_gpus=8 * len(t_nodes),
                    warm_switch_s=draw(switch_s),
                    rollout_max_s=None,
                ),
                r_nodes,
                t_nodes,
                slo=draw(st.sampled_from([1.0, 1.5, 2.0, math.inf])),
            )
        )
    order = draw(st.permutations(range(n_jobs))) if draw(st.booleans()) else None
    return group_of(tuple(members), tuple(range(n_r)), tuple(range(n_t)), order=order)


def _check_common(group: CoExecutionGroup, m: GroupMetrics) -> None:
    """Invariants every group satisfies, whatever its shape."""
    for util, bubble in (
        (m.rollout_utilisation, m.rollout_bubble_fraction),
        (m.train_utilisation, m.train_bubble_fraction),
    ):
        assert 0.0 < util <= 1.0 + 1e-9
        assert bubble == pytest.approx(1.0 - util)
    # Every node serves its phases one at a time; every job runs its chain in sequence.
    assert m.meta_iteration_s >= max(m.t_load_s, m.t_cycle_s) * (1 - 1e-9)
    assert m.job_iteration_s == (m.meta_iteration_s,) * len(group.jobs)
    assert m.slowdown == pytest.approx(tuple(m.meta_iteration_s / t for t in m.solo_iteration_s))
    within = zip(m.slowdown, m.slo, strict=True)
    assert m.slo_ok == tuple(s <= slo * (1 + 1e-9) for s, slo in within)
    assert m.status is (
        GroupStatus.FULL
        if math.isclose(m.t_load_s, m.t_cycle_s, rel_tol=1e-9)
        else GroupStatus.SATURATED
        if m.t_load_s > m.t_cycle_s
        else GroupStatus.UNDER_UTILISED
    )
    gpn = group.node_capacity.gpus_per_node
    per_h = (
        len(group.rollout_node_ids) * gpn * H20_USD_PER_H
        + len(group.train_node_ids) * gpn * H800_USD_PER_H
    )
    assert m.cost_usd_per_h == pytest.approx(per_h)
    assert m.cost_usd_per_job_iteration == pytest.approx(
        per_h * m.meta_iteration_s / 3600 / len(group.jobs)
    )
    fluid = sum(fluid_cost_usd_per_iteration(j.phases, POOLS) for j in group.jobs) / len(group.jobs)
    assert m.fluid_cost_usd_per_job_iteration == pytest.approx(fluid)
    assert m.cost_usd_per_job_iteration >= fluid * (1 - 1e-9)


@given(group=groups())
def test_every_group_respects_bounds_and_the_fluid_cost(group: CoExecutionGroup) -> None:
    """Any pinning: utilisation in (0, 1], meta >= max(T_load, T_cycle), cost >= fluid bound."""
    _check_common(group, group.metrics())


@given(group=groups())
def test_worst_case_is_never_faster(group: CoExecutionGroup) -> None:
    """Longer phases cannot shorten the exact meta-iteration (max-plus monotonicity)."""
    worse = group_of(
        tuple(
            GroupJob(
                JobPhases.of(
                    j.phases.rollout_s,
                    j.phases.train_s,
                    j.phases.sync_s,
                    j.phases.rollout_gpus,
                    j.phases.train_gpus,
                    j.phases.warm_switch_s,
                    rollout_max_s=j.phases.rollout_s * 1.5,
                    train_max_s=j.phases.train_s + 3.0,
                ),
                j.rollout_nodes,
                j.train_nodes,
            )
            for j in group.jobs
        ),
        group.rollout_node_ids,
        group.train_node_ids,
        order=group.order,
    )
    nominal, worst = worse.metrics(), worse.metrics(worst_case=True)
    _check_common(worse.worst_case(), worst)
    assert worst.meta_iteration_s >= nominal.meta_iteration_s * (1 - 1e-9)


@given(group=groups(star=True))
def test_star_groups_reach_max_of_load_and_cycle(group: CoExecutionGroup) -> None:
    """One shared node in one pool, one node per job in the other: meta = max(T_load, T_cycle);
    unsaturated => meta = T_cycle and slowdown_k = T_cycle / T_solo_k."""
    m = group.metrics()
    _check_common(group, m)
    assert m.meta_iteration_s == pytest.approx(max(m.t_load_s, m.t_cycle_s), rel=1e-9)
    if m.status is not GroupStatus.SATURATED:
        assert m.meta_iteration_s == pytest.approx(m.t_cycle_s, rel=1e-9)
        assert m.slowdown == pytest.approx(tuple(m.t_cycle_s / t for t in m.solo_iteration_s))


@given(
    rollout_s=st.lists(phase_s, min_size=2, max_size=4),
    train_s=st.lists(phase_s, min_size=2, max_size=4),
)
def test_unsaturated_shared_pair_of_nodes_beats_solo_d(
    rollout_s: list[float], train_s: list[float]
) -> None:
    """Jobs sharing one 8-GPU node per pool without switches: when unsaturated the group
    pays T_cycle <= sum of solo times per round, so at most Solo-D's cost per iteration."""
    n = min(len(rollout_s), len(train_s))
    phases = [JobPhases.of(r, t) for r, t in zip(rollout_s[:n], train_s[:n], strict=True)]
    group = group_of(tuple(GroupJob(p, 0, 0) for p in phases), (0,), (0,))
    m = group.metrics()
    if m.status is GroupStatus.SATURATED:
        return
    solo_cost = sum(solo_d(p, POOLS).cost_usd_per_iteration for p in phases) / n
    assert m.cost_usd_per_job_iteration <= solo_cost * (1 + 1e-9)
    solo = solo_d_fleet(phases, POOLS)
    assert m.fleet().normalised_throughput_per_usd_h >= solo.normalised_throughput_per_usd_h * (
        1 - 1e-9
    )


def test_raw_iterations_per_usd_can_favour_solo_d_for_unequal_jobs() -> None:
    """r = (1, 1), t = (1, 6): the group does one round of both jobs for 7/9 of Solo-D's cost,
    yet Solo-D completes more raw iterations per dollar (the 2 s job runs 3.5x as often);
    normalised throughput (T_solo / T per job) ranks them like the cost of equal work."""
    phases = [JobPhases.of(1, 1), JobPhases.of(1, 6)]
    m = group_of(tuple(GroupJob(p, 0, 0) for p in phases), (0,), (0,)).metrics()
    solo = solo_d_fleet(phases, POOLS)
    assert m.meta_iteration_s == pytest.approx(7.0)
    round_solo_usd = sum(solo_d(p, POOLS).cost_usd_per_iteration for p in phases)
    assert m.cost_usd_per_meta_iteration / round_solo_usd == pytest.approx(7 / 9)
    assert m.iterations_per_usd < solo.iterations_per_usd
    assert m.normalised_throughput == pytest.approx(2 / 7 + 7 / 7)
    assert m.fleet().normalised_throughput_per_usd_h == pytest.approx(
        (9 / 7) / NODE_8_8_USD_PER_H
    )
    assert solo.normalised_throughput_per_usd_h == pytest.approx(2 / (2 * NODE_8_8_USD_PER_H))


# --------------------------------------------------------------------------- adapters


def test_adapters_from_hardware_and_rljob() -> None:
    """Node capacity comes from the hardware model; an RLJob's given times map field by field."""
    from rollmux.hardware import load_hardware
    from rollmux.jobs import RLJob
    from rollmux.phasetimes import phase_times

    hw = load_hardware()
    cap = node_capacity_from_hardware(hw)
    assert (cap.gpus_per_node, cap.host_mem_gb) == (hw.node.gpus_per_node, hw.node.host_mem_gb)
    rl = RLJob(
        job_id="j7", model_size_b=7, max_response_tokens=8192, train_gpus=16, slo=1.3,
        rollout_s=30.0, train_s=10.0, sync_s=2.0, warm_switch_s=1.0,
        rollout_max_s=40.0, train_max_s=12.0,
        rollout_mem_gb_per_node=300.0, train_mem_gb_per_node=500.0,
    )
    gj = group_job_of(resolve(rl, hw), 3, (0, 1))
    assert (gj.rollout_nodes, gj.train_nodes, gj.slo, gj.job_id) == ((3,), (0, 1), 1.3, "j7")
    assert (gj.rollout_mem_gb_per_node, gj.train_mem_gb_per_node) == (300.0, 500.0)
    assert gj.phases == JobPhases(phase_times(rl, hw), 8, 16)
    assert (gj.phases.rollout_s, gj.phases.train_s, gj.phases.sync_s, gj.phases.warm_switch_s,
            gj.phases.rollout_max_s, gj.phases.train_max_s) == (30.0, 10.0, 2.0, 1.0, 40.0, 12.0)


def test_modelled_jobs_form_a_valid_group() -> None:
    """Two phase-modelled 7B jobs share one node per pool; memory and bounds hold."""
    from rollmux.hardware import load_hardware
    from rollmux.jobs import RLJob
    from rollmux.phasetimes import phase_times, rollout_mem_gb_per_node

    hw = load_hardware()
    rls = [
        RLJob(job_id="short", model_size_b=7, max_response_tokens=4096),
        RLJob(job_id="long", model_size_b=7, max_response_tokens=16384, turns=3),
    ]
    group = group_of(
        tuple(group_job_of(resolve(r, hw), 0, 0) for r in rls),
        (0,),
        (0,),
        node_capacity=node_capacity_from_hardware(hw),
    )
    assert group.jobs[0].rollout_mem_gb_per_node == rollout_mem_gb_per_node(rls[0], hw)
    assert group.jobs[1].phases.rollout_s == phase_times(rls[1], hw).rollout_s
    for worst in (False, True):
        m = group.metrics(worst_case=worst)
        _check_common(group.worst_case() if worst else group, m)
