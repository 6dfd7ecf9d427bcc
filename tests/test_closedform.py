"""Closed-form Solo-D, veRL co-location and fluid-bound models: literals, properties, bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pooled import POOLS

from rollmux.closedform import (
    JobPhases,
    PoolSpec,
    colocated_rollout_s,
    fluid_cost_usd_per_h,
    fluid_cost_usd_per_iteration,
    pools_from_hardware,
    solo_d,
    solo_d_fleet,
    verl,
    verl_fleet,
)
from rollmux.hardware import GPUType, load_hardware

# The defaults' prices and bandwidths with co-located rollout at bandwidth scaling alone
# (speed-up 1), so that the literals below check the formula, not the fitted speed-up.
H20, H800 = POOLS.rollout, POOLS.train
BANDWIDTH = PoolSpec(H20, H800, colocated_rollout_speedup=1.0)


def gpu(name: str, usd_per_h: float, hbm_bw_gbps: float) -> GPUType:
    """A GPU type with the price and bandwidth the cost models read (the rest nominal)."""
    return GPUType(name, hbm_gb=96.0, hbm_bw_gbps=hbm_bw_gbps, bf16_tflops=100.0,
                   price_usd_per_h=usd_per_h)

# 8 H20 at $1.85 + 8 H800 at $5.28 (notes section 6 estimates).
SOLO_8_8_USD_PER_H = 8 * 1.85 + 8 * 5.28  # 57.04
VERL_8_USD_PER_H = 8 * 5.28  # 42.24

# Strategies live here rather than in tests/strategies.py, which another helper owns.
durations = st.floats(min_value=0.1, max_value=1000.0, allow_nan=False)
small_s = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
gpu_counts = st.sampled_from([1, 4, 8, 16, 24, 32])


@st.composite
def jobs(draw: st.DrawFn) -> JobPhases:
    """A random job with positive phases, optional sync and switch, worst case >= nominal."""
    rollout_s, train_s = draw(durations), draw(durations)
    return JobPhases.of(
        rollout_s=rollout_s,
        train_s=train_s,
        sync_s=draw(small_s),
        rollout_gpus=draw(gpu_counts),
        train_gpus=draw(gpu_counts),
        warm_switch_s=draw(small_s),
        rollout_max_s=rollout_s * draw(st.floats(min_value=1.0, max_value=3.0)),
        train_max_s=train_s * draw(st.floats(min_value=1.0, max_value=3.0)),
    )


@st.composite
def pools(draw: st.DrawFn) -> PoolSpec:
    """Random prices and bandwidths for the two pools."""
    price = st.floats(min_value=0.1, max_value=20.0)
    bw = st.floats(min_value=100.0, max_value=10000.0)
    return PoolSpec(
        rollout=gpu("R", draw(price), draw(bw)), train=gpu("T", draw(price), draw(bw))
    )


# --------------------------------------------------------------------------- literals


def test_solo_d_complementary_literals() -> None:
    """Rollout-heavy job r=10, t=2 alone: T = 12, rollout bubble 2/12, training bubble 10/12."""
    m = solo_d(JobPhases.of(10.0, 2.0), POOLS)
    assert m.iteration_s == 12.0
    assert m.rollout_bubble_fraction == pytest.approx(2 / 12)
    assert m.train_bubble_fraction == pytest.approx(10 / 12)
    assert m.cost_usd_per_h == pytest.approx(SOLO_8_8_USD_PER_H)
    assert m.cost_usd_per_iteration == pytest.approx(SOLO_8_8_USD_PER_H * 12 / 3600)
    assert m.iterations_per_usd == pytest.approx(3600 / (SOLO_8_8_USD_PER_H * 12))


def test_solo_d_sync_idles_both_pools() -> None:
    """Sync (3 s) lengthens the iteration and counts as bubble on both pools."""
    m = solo_d(JobPhases.of(10.0, 2.0, sync_s=3.0), POOLS)
    assert m.iteration_s == 15.0
    assert m.rollout_utilisation == pytest.approx(10 / 15)
    assert m.train_utilisation == pytest.approx(2 / 15)


def test_solo_d_gpu_counts_scale_the_price() -> None:
    """16 H20 + 24 H800 cost 16 x 1.85 + 24 x 5.28 per hour."""
    m = solo_d(JobPhases.of(5.0, 5.0, rollout_gpus=16, train_gpus=24), POOLS)
    assert m.cost_usd_per_h == pytest.approx(16 * 1.85 + 24 * 5.28)


def test_colocated_rollout_scales_with_aggregate_bandwidth() -> None:
    """8 H20 (4.0 TB/s each) -> 8 H800 (3.35 TB/s): x 4000/3350; 16 H20 -> 8 H800 doubles it."""
    assert colocated_rollout_s(JobPhases.of(33.5, 1.0), BANDWIDTH) == pytest.approx(40.0)
    assert colocated_rollout_s(JobPhases.of(33.5, 1.0, rollout_gpus=16),
                               BANDWIDTH) == pytest.approx(80.0)


def test_colocated_speedup_divides_the_colocated_rollout() -> None:
    """Speed-up s: the co-located rollout takes 1/s of bandwidth scaling; the defaults' s."""
    twice = PoolSpec(H20, H800, colocated_rollout_speedup=2.0)
    assert colocated_rollout_s(JobPhases.of(33.5, 1.0), twice) == pytest.approx(20.0)
    assert verl(JobPhases.of(33.5, 10.0), twice, switch_s=0.0).iteration_s == pytest.approx(30.0)
    hw = load_hardware()
    assert pools_from_hardware(hw).colocated_rollout_speedup == hw.perf.colocated_rollout_speedup
    with pytest.raises(ValueError, match="colocated_rollout_speedup = 0"):
        PoolSpec(H20, H800, colocated_rollout_speedup=0)


def test_verl_literals_with_default_and_explicit_switch() -> None:
    """veRL: T = r x 4000/3350 + t + 2 switches, on the job's 8 H800 only."""
    job = JobPhases.of(33.5, 10.0, sync_s=7.0, warm_switch_s=2.0)
    m = verl(job, BANDWIDTH)
    assert m.iteration_s == pytest.approx(40.0 + 10.0 + 4.0)
    assert m.switch_s == 2.0
    assert m.gpus == 8
    assert m.cost_usd_per_h == pytest.approx(VERL_8_USD_PER_H)
    assert m.utilisation == pytest.approx(50 / 54)
    assert m.bubble_fraction == pytest.approx(4 / 54)
    assert m.cost_usd_per_iteration == pytest.approx(VERL_8_USD_PER_H * 54 / 3600)
    assert verl(job, BANDWIDTH, switch_s=0.0).iteration_s == pytest.approx(50.0)


def test_solo_d_costs_about_1_35x_verl_per_hour() -> None:
    """8 H20 + 8 H800 vs 8 H800 at default prices: 1.35x, near the trace's 936/704 = 1.33."""
    job = JobPhases.of(100.0, 100.0)
    ratio = solo_d(job, POOLS).cost_usd_per_h / verl(job, POOLS).cost_usd_per_h
    assert ratio == pytest.approx(57.04 / 42.24)
    assert ratio == pytest.approx(936 / 704, rel=0.02)


def test_fluid_bound_literal() -> None:
    """One iteration's useful GPU-seconds at list price: (10 x 8 x 1.85 + 2 x 8 x 5.28) / 3600."""
    job = JobPhases.of(10.0, 2.0, sync_s=5.0, warm_switch_s=3.0)
    expected = (10 * 8 * 1.85 + 2 * 8 * 5.28) / 3600
    assert fluid_cost_usd_per_iteration(job, POOLS) == pytest.approx(expected)


def test_fluid_bound_per_hour_sums_jobs_at_solo_rates() -> None:
    """Two jobs at solo rates 3600/12 and 3600/20 iterations per hour."""
    a, b = JobPhases.of(10.0, 2.0), JobPhases.of(4.0, 16.0)
    expected = (
        fluid_cost_usd_per_iteration(a, POOLS) * 3600 / 12
        + fluid_cost_usd_per_iteration(b, POOLS) * 3600 / 20
    )
    assert fluid_cost_usd_per_h([a, b], POOLS) == pytest.approx(expected)
    # Per hour the fluid bound is the provisioned cost times the utilisations, here below it.
    assert fluid_cost_usd_per_h([a, b], POOLS) < solo_d_fleet([a, b], POOLS).cost_usd_per_h


def test_fleets_sum_throughput_and_cost() -> None:
    """Two Solo-D jobs of 12 s and 20 s: 300 + 180 iterations per hour at 2 x 57.04 $/h."""
    fleet = solo_d_fleet([JobPhases.of(10.0, 2.0), JobPhases.of(4.0, 16.0)], POOLS)
    assert fleet.iterations_per_h == pytest.approx(480.0)
    assert fleet.cost_usd_per_h == pytest.approx(2 * SOLO_8_8_USD_PER_H)
    assert fleet.iterations_per_usd == pytest.approx(480.0 / (2 * SOLO_8_8_USD_PER_H))
    assert fleet.normalised_throughput == 2.0
    vfleet = verl_fleet([JobPhases.of(33.5, 10.0)], BANDWIDTH, switch_s=0.0)
    assert vfleet.iterations_per_h == pytest.approx(3600 / 50)
    assert vfleet.cost_usd_per_h == pytest.approx(VERL_8_USD_PER_H)
    # Solo time 43.5 s against 50 s co-located: 0.87 of a Solo-D job.
    assert vfleet.normalised_throughput == pytest.approx(43.5 / 50)


def test_worst_case_job_swaps_in_max_durations() -> None:
    """worst_case() uses rollout_max_s/train_max_s; defaults are the nominal durations."""
    job = JobPhases.of(10.0, 2.0, sync_s=1.0, rollout_max_s=25.0, train_max_s=4.0)
    worst = job.worst_case()
    assert (worst.rollout_s, worst.train_s, worst.sync_s) == (25.0, 4.0, 1.0)
    assert worst.solo_iteration_s == 30.0
    plain = JobPhases.of(10.0, 2.0)
    assert (plain.rollout_max_s, plain.train_max_s) == (10.0, 2.0)


def test_verl_can_undercut_the_fluid_bound_when_training_gpus_are_cheap_bandwidth() -> None:
    """The documented condition matters: with H800 cheaper per GB/s than the rollout GPU,
    co-locating rollout on it costs less than the disaggregated fluid bound."""
    pricey_rollout = PoolSpec(rollout=gpu("R", 10.0, 1000.0), train=gpu("T", 1.0, 1000.0))
    job = JobPhases.of(100.0, 1.0, warm_switch_s=0.0)
    assert verl(job, pricey_rollout).cost_usd_per_iteration < fluid_cost_usd_per_iteration(
        job, pricey_rollout
    )


# --------------------------------------------------------------------------- properties


@given(job=jobs(), pool=pools())
def test_solo_d_utilisation_bounds_and_cost_identity(job: JobPhases, pool: PoolSpec) -> None:
    """Utilisations lie in [0, 1], bubbles are their complements, cost = GPUs x prices x T."""
    m = solo_d(job, pool)
    for util, bubble in (
        (m.rollout_utilisation, m.rollout_bubble_fraction),
        (m.train_utilisation, m.train_bubble_fraction),
    ):
        assert 0.0 <= util <= 1.0
        assert bubble == pytest.approx(1.0 - util)
    assert m.rollout_utilisation + m.train_utilisation <= 1.0 + 1e-12
    per_h = (job.rollout_gpus * pool.rollout.price_usd_per_h
             + job.train_gpus * pool.train.price_usd_per_h)
    assert m.cost_usd_per_h == pytest.approx(per_h)
    assert m.cost_usd_per_iteration == pytest.approx(per_h * job.solo_iteration_s / 3600)


@given(job=jobs(), pool=pools())
def test_fluid_bound_is_below_solo_d(job: JobPhases, pool: PoolSpec) -> None:
    """No bubble-free cost exceeds Solo-D's, per iteration and per hour."""
    assert fluid_cost_usd_per_iteration(job, pool) <= solo_d(job, pool).cost_usd_per_iteration * (
        1 + 1e-12
    )
    assert fluid_cost_usd_per_h([job], pool) <= solo_d_fleet([job], pool).cost_usd_per_h * (
        1 + 1e-12
    )


@given(job=jobs(), pool=pools(), switch_s=small_s)
def test_fluid_bound_is_below_verl_when_rollout_gpus_are_cheaper_per_bandwidth(
    job: JobPhases, pool: PoolSpec, switch_s: float
) -> None:
    """With p_r / bw_r <= p_t / bw_t (true of H20 vs H800), veRL costs at least the bound."""
    r, t = pool.rollout, pool.train
    if r.price_usd_per_h / r.hbm_bw_gbps > t.price_usd_per_h / t.hbm_bw_gbps:
        at_parity_usd_per_h = t.price_usd_per_h * r.hbm_bw_gbps / t.hbm_bw_gbps
        pool = PoolSpec(rollout=gpu("R", at_parity_usd_per_h, r.hbm_bw_gbps), train=t)
    m = verl(job, pool, switch_s)
    assert fluid_cost_usd_per_iteration(job, pool) <= m.cost_usd_per_iteration * (1 + 1e-9)
    assert 0.0 < m.utilisation <= 1.0
    assert m.bubble_fraction == pytest.approx(1.0 - m.utilisation)


@given(job=jobs())
def test_verl_iteration_identity(job: JobPhases) -> None:
    """veRL time = rescaled rollout + training + two switches; cost = its H800s only."""
    m = verl(job, BANDWIDTH)
    rescaled = job.rollout_s * job.rollout_gpus * 4000.0 / (job.train_gpus * 3350.0)
    assert m.iteration_s == pytest.approx(rescaled + job.train_s + 2 * job.warm_switch_s)
    assert m.cost_usd_per_h == pytest.approx(job.train_gpus * 5.28)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rollout_s": 0.0, "train_s": 1.0}, r"rollout_s = 0\.0"),
        ({"rollout_s": 1.0, "train_s": -2.0}, r"train_s = -2\.0"),
        ({"rollout_s": 1.0, "train_s": math.inf}, r"train_s = inf"),
        ({"rollout_s": "ten", "train_s": 1.0}, r"rollout_s = 'ten'"),
        ({"rollout_s": 1.0, "train_s": "10"}, r"train_s = '10'"),
        ({"rollout_s": 1.0, "train_s": 1.0, "sync_s": -1.0}, r"sync_s = -1\.0"),
        ({"rollout_s": 1.0, "train_s": 1.0, "warm_switch_s": math.nan}, r"warm_switch_s = nan"),
        ({"rollout_s": 1.0, "train_s": 1.0, "rollout_gpus": 0}, r"rollout_gpus = 0"),
        ({"rollout_s": 1.0, "train_s": 1.0, "train_gpus": True}, r"train_gpus = True"),
        ({"rollout_s": 1.0, "train_s": 1.0, "train_gpus": 2.5}, r"train_gpus = 2\.5"),
        ({"rollout_s": 5.0, "train_s": 1.0, "rollout_max_s": 4.0},
         r"rollout_max_s must be >= rollout_s \(5\.0\), got 4\.0"),
        ({"rollout_s": 5.0, "train_s": 3.0, "train_max_s": 0.0}, r"train_max_s = 0\.0"),
    ],
)
def test_job_phases_rejects_bad_values(kwargs: dict[str, object], match: str) -> None:
    """Each bad field raises ValueError naming the field and its value."""
    with pytest.raises(ValueError, match=match):
        JobPhases.of(**kwargs)  # type: ignore[arg-type]


def test_job_phases_checks_its_phase_times() -> None:
    """JobPhases needs PhaseTimes with positive expected times, and stores them as floats."""
    from rollmux.phasetimes import PhaseTimes

    with pytest.raises(ValueError, match=r"times = \(10\.0, 2\.0\): expected a rollmux"):
        JobPhases((10.0, 2.0))  # type: ignore[arg-type]
    idle = PhaseTimes(0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match=r"rollout_s = 0\.0"):
        JobPhases(idle)
    given = JobPhases(PhaseTimes(10, 2, 1, 3, 0, 5, 12, 2), 8, 16)
    assert given.times == PhaseTimes(10.0, 2.0, 1.0, 3.0, 0.0, 5.0, 12.0, 2.0)
    assert {type(getattr(given.times, name)) for name in PhaseTimes.__dataclass_fields__} == {
        float
    }
    literal = JobPhases.of(10.0, 2.0, sync_s=1.5, warm_switch_s=0.5)
    assert (literal.times.sync_flat_s, literal.times.cold_switch_s) == (1.5, 0.5)
    assert (literal.rollout_max_s, literal.train_max_s) == (10.0, 2.0)


def test_pool_rejects_bad_values() -> None:
    """Pools must be GPU types (priced by the hardware); GPU counts non-negative integers."""
    with pytest.raises(ValueError, match=r"rollout = 'H20': expected a rollmux.hardware.GPUType"):
        PoolSpec("H20", H800)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"rollout_gpus = -8"):
        POOLS.cost_usd_per_h(-8, 8)
    with pytest.raises(ValueError, match=r"train_gpus = 1\.5"):
        POOLS.cost_usd_per_h(8, 1.5)  # type: ignore[arg-type]


def test_models_reject_bad_arguments() -> None:
    """Negative switch costs and empty or mistyped job lists are refused by name."""
    with pytest.raises(ValueError, match=r"switch_s = -0\.5"):
        verl(JobPhases.of(1.0, 1.0), POOLS, switch_s=-0.5)
    with pytest.raises(ValueError, match=r"jobs = \[\]"):
        fluid_cost_usd_per_h([], POOLS)
    with pytest.raises(ValueError, match=r"jobs\[1\] = 3"):
        solo_d_fleet([JobPhases.of(1.0, 1.0), 3], POOLS)  # type: ignore[list-item]


# --------------------------------------------------------------------------- adapters


def test_pools_from_hardware_matches_defaults() -> None:
    """The packaged hardware defaults give the same H20/H800 prices and bandwidths."""
    from rollmux.hardware import load_hardware

    hw = load_hardware()
    pool = pools_from_hardware(hw)
    for spec, name in ((pool.rollout, "H20"), (pool.train, "H800")):
        assert spec == hw.gpu(name)
    overridden = load_hardware(overrides={"gpus.H20.price_usd_per_h": 2.0})
    assert pools_from_hardware(overridden).rollout.price_usd_per_h == 2.0


def test_resolved_phases_use_the_phase_model() -> None:
    """A resolved job's phases copy GPU counts from the job and durations from phase_times."""
    from rollmux.hardware import load_hardware
    from rollmux.jobs import RLJob
    from rollmux.model import resolve
    from rollmux.phasetimes import phase_times

    hw = load_hardware()
    rl = RLJob(job_id="a", model_size_b=14, max_response_tokens=16384, rollout_gpus=16)
    times = phase_times(rl, hw)
    phases = resolve(rl, hw).phases
    assert (phases.rollout_gpus, phases.train_gpus) == (16, 8)
    assert (phases.rollout_s, phases.train_s, phases.sync_s) == (
        times.rollout_s, times.train_s, times.sync_s
    )
    assert (phases.rollout_max_s, phases.train_max_s, phases.warm_switch_s) == (
        times.rollout_max_s, times.train_max_s, times.warm_switch_s
    )
    assert phases.solo_iteration_s == pytest.approx(times.solo_iteration_s)
    assert phases.worst_case().solo_iteration_s == pytest.approx(times.solo_iteration_max_s)
    # Given times override the model and come through unchanged.
    given_times = RLJob(job_id="b", model_size_b=7, max_response_tokens=8192,
                        rollout_s=30.0, train_s=10.0, sync_s=2.0, warm_switch_s=1.5,
                        rollout_max_s=45.0, train_max_s=12.0)
    given = resolve(given_times, hw).phases
    assert given == JobPhases(phase_times(given_times, hw), 8, 8)
    assert (given.rollout_s, given.train_s, given.sync_s, given.warm_switch_s,
            given.rollout_max_s, given.train_max_s) == (30.0, 10.0, 2.0, 1.5, 45.0, 12.0)
