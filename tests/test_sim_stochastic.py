"""Tests of rollmux.sim.stochastic: phase sampler, long-tail migration, woven simulation."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.jobtypes import job_type
from rollmux.model import ResolvedJob, resolve
from rollmux.phasetimes import phase_times
from rollmux.schedule.eventsim import simulate, to_frame
from rollmux.schedule.graph import round_robin_schedule
from rollmux.sim.drift import DriftDirection, DriftReach, DriftTemplate
from rollmux.sim.stochastic import (
    PhaseSampler,
    StochasticConfig,
    WovenTables,
    iteration_end_times,
    migration_speedup,
    simulate_woven,
    steady_iteration_s,
)

HW = load_hardware()


def resolved(jobs: tuple[RLJob, ...] | list[RLJob]) -> list[ResolvedJob]:
    """The jobs resolved on the default hardware."""
    return [resolve(job, HW) for job in jobs]
OFF = StochasticConfig(migration=False)
ON = StochasticConfig(migration=True)
FAST = StochasticConfig(block_size=16, calibration_draws=200)  # cheap samplers for properties
JOB_A = job_type("A")
# A drift so strong that every response is clipped to the maximum length at progress 1
# (under the ``cap`` reach, whose maximum does not drift).
SATURATE = DriftTemplate(DriftDirection.INCREASING, 20000.0)


def _sampler(job: RLJob = JOB_A, **kwargs: object) -> PhaseSampler:
    """A sampler of ``job`` on the default hardware."""
    return PhaseSampler(resolve(job, HW), **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- literals


def test_all_responses_at_max_give_the_worst_case_times() -> None:
    """Every response at max length: rollout = rollout_max_s, training = train_max_s."""
    times = phase_times(JOB_A, HW)
    sampler = _sampler(config=OFF, drift=SATURATE, drift_reach=DriftReach.CAP,
                       total_iterations=10)
    draw = sampler.sample(3, progress=1.0)
    assert draw.length_factor == pytest.approx(20001.0)
    assert draw.longest_tokens == JOB_A.max_response_tokens
    assert draw.tokens == pytest.approx(sampler.responses * JOB_A.max_response_tokens)
    assert draw.rollout_s == pytest.approx(times.rollout_max_s, rel=1e-9)
    assert draw.train_s == pytest.approx(times.train_max_s, rel=1e-9)
    assert sampler.coefficients.exact
    assert sampler.worst_case().rollout_s == pytest.approx(times.rollout_max_s, rel=1e-12)


def test_migration_off_keeps_the_nodes_for_the_whole_rollout() -> None:
    """Without migration rollout_node_s == rollout_s and no tail holds GPUs."""
    for draw in _sampler(config=OFF).table(200):
        assert draw.rollout_node_s == draw.rollout_s
        assert draw.tail_s == 0.0 and draw.tail_gpus == 0 and not draw.migrated


def test_migration_lengthens_own_rollout_by_at_most_the_overhead() -> None:
    """With migration the job's rollout ends at most one overhead later, nodes freed earlier."""
    for job in (JOB_A, job_type("D"), job_type("C")):
        with_mig = _sampler(job, config=ON).table(200)
        without = _sampler(job, config=OFF).table(200)
        assert any(d.migrated for d in with_mig)
        for on, off in zip(with_mig, without, strict=True):
            assert on.rollout_s <= off.rollout_s + on.migration_overhead_s + 1e-9
            assert on.rollout_node_s <= on.rollout_s
            if on.migrated:
                assert on.rollout_node_s < off.rollout_s
                assert on.migration_overhead_s >= ON.migration_const_s
                assert 0 < on.tail_gpus < job.rollout_gpus
            else:
                assert on.rollout_s == off.rollout_s


def test_tail_needing_more_kv_than_one_replica_spreads_over_more() -> None:
    """A 14B job's tail KV cache exceeds one H20 replica, so it keeps two replicas."""
    draws = _sampler(job_type("D"), config=ON).table(50)
    assert {d.tail_gpus for d in draws if d.migrated} == {2}


def test_bad_arguments_raise_value_errors_naming_them() -> None:
    """Bad config values, seeds, iterations and progress raise ValueError with the name."""
    with pytest.raises(ValueError, match="migration_threshold"):
        StochasticConfig(migration_threshold=1.0)
    with pytest.raises(ValueError, match="migration_replicas"):
        StochasticConfig(migration_replicas=0)
    with pytest.raises(ValueError, match="root_seed"):
        _sampler(root_seed=-1)
    sampler = _sampler()
    with pytest.raises(ValueError, match="iteration"):
        sampler.sample(-1)
    with pytest.raises(ValueError, match="progress"):
        sampler.sample(0, progress=1.5)


def test_sampling_is_fast_enough_for_the_engine() -> None:
    """Amortised cost per draw stays far below 50 us (recorded figure: docs/stochastic.md)."""
    sampler = _sampler(total_iterations=50_000)
    sampler.sample(0)
    start = time.perf_counter()
    for i in range(20_000):
        sampler.sample(i)
    assert (time.perf_counter() - start) / 20_000 < 50e-6


# --------------------------------------------------------------------------- properties


@given(seed=st.integers(0, 2**32), iterations=st.lists(st.integers(0, 700), min_size=1,
                                                       max_size=8))
def test_draws_depend_only_on_seed_job_and_iteration(seed: int, iterations: list[int]) -> None:
    """Draws are identical whatever the order iterations are asked for, per seed and job id."""
    first = _sampler(root_seed=seed, total_iterations=500, config=FAST)
    second = _sampler(root_seed=seed, total_iterations=500, config=FAST)
    forward = [first.sample(i) for i in iterations]
    backward = [second.sample(i) for i in reversed(iterations)][::-1]
    assert forward == backward
    other = _sampler(replace(JOB_A, job_id="A-other"), root_seed=seed, total_iterations=500,
                     config=FAST)
    assert other.sample(iterations[0]).rollout_s != forward[0].rollout_s


@given(seed=st.integers(0, 2**32), iteration=st.integers(0, 300),
       progress=st.floats(0.0, 1.0), strength=st.sampled_from([0.5, 1.0, 1.5]),
       direction=st.sampled_from([DriftDirection.INCREASING, DriftDirection.DECREASING]),
       reach=st.sampled_from(list(DriftReach)))
def test_lengths_stay_within_one_and_the_maximum(
    seed: int, iteration: int, progress: float, strength: float, direction: DriftDirection,
    reach: DriftReach,
) -> None:
    """Longest response in [1, c(f)] (eq. D3: f max under profile reach, max under cap);
    tokens in [n, n c(f)]; durations positive and ordered."""
    template = DriftTemplate(direction, strength)
    sampler = _sampler(root_seed=seed, drift=template, drift_reach=reach, config=FAST)
    draw = sampler.sample(iteration, progress)
    cap = JOB_A.max_response_tokens * (
        template.factor(progress) if reach is DriftReach.PROFILE else 1.0)
    assert 1.0 <= draw.longest_tokens <= cap * (1 + 1e-12)
    assert sampler.responses <= draw.tokens <= sampler.responses * cap * (1 + 1e-12)
    assert 0 < draw.threshold_s <= draw.rollout_s
    assert 0 < draw.rollout_node_s <= draw.rollout_s
    assert draw.train_s > 0


@pytest.mark.parametrize("job", [job_type("A"), job_type("D"), job_type("E"),
                                 RLJob("m14", 14, 8192)], ids=["A", "D", "E", "model-14B"])
def test_mean_of_many_draws_matches_the_expected_times(job: RLJob) -> None:
    """Over 3000 draws the mean rollout, training and tokens are within 1% of the model."""
    times = phase_times(job, HW)
    sampler = _sampler(job, config=OFF, root_seed=7, total_iterations=3000)
    draws = sampler.table(3000)
    assert np.mean([d.rollout_s for d in draws]) == pytest.approx(times.rollout_s, rel=0.01)
    assert np.mean([d.train_s for d in draws]) == pytest.approx(times.train_s, rel=0.01)
    assert np.mean([d.tokens for d in draws]) == pytest.approx(sampler.expected_tokens,
                                                               rel=0.01)
    assert np.std([d.rollout_s for d in draws]) > 0


def test_arrays_equal_the_per_iteration_draws() -> None:
    """The vectorised columns equal the fields of sample()'s draws, iteration by iteration."""
    sampler = _sampler(drift=DriftTemplate(DriftDirection.INCREASING, 1.0), config=ON,
                       total_iterations=90)
    cols = sampler.arrays(70, first=30)
    for i, draw in enumerate(sampler.table(70, first=30)):
        assert draw.iteration == 30 + i
        assert tuple(cols[name][i] for name in draw._fields[1:]) == draw[1:]


def test_increasing_drift_lengthens_phases_over_training() -> None:
    """Under increasing-1.0 the last iterations' mean rollout exceeds the first ones'."""
    sampler = _sampler(config=OFF, drift=DriftTemplate(DriftDirection.INCREASING, 1.0),
                       total_iterations=400)
    draws = sampler.table(400)
    early = np.mean([d.rollout_s for d in draws[:50]])
    late = np.mean([d.rollout_s for d in draws[-50:]])
    assert late > 1.05 * early
    nominal = sampler.sample(200)
    assert sampler.sample(200, nominal.progress) == nominal
    assert sampler.sample(200, 0.0).length_factor == 1.0


# --------------------------------------------------------------------------- woven simulation


@given(data=st.data())
def test_without_tails_the_woven_simulation_matches_eventsim(data: st.DataObject) -> None:
    """With no tails simulate_woven reproduces eventsim.simulate with per-iteration tables."""
    n = data.draw(st.integers(1, 3))
    iters = data.draw(st.integers(1, 5))
    durations = st.integers(1, 9).map(float)
    node = [[data.draw(durations) for _ in range(n)] for _ in range(iters)]
    train = [[data.draw(durations) for _ in range(n)] for _ in range(iters)]
    r_pins = [data.draw(st.sampled_from([[0], [1], [0, 1]])) for _ in range(n)]
    t_pins = [data.draw(st.sampled_from([[0], [1]])) for _ in range(n)]
    tables = WovenTables(np.array(node), np.zeros((iters, n)), np.zeros((iters, n), int),
                         np.array(train))
    ours = simulate_woven(tables, r_pins, t_pins)
    schedule = round_robin_schedule(node[0], train[0], rollout_node=r_pins, train_node=t_pins)
    theirs = to_frame(simulate(schedule, iters, rollout_s=node, train_s=train))
    keys = ["job", "phase", "node", "iteration"]
    a = ours.sort_values(keys).reset_index(drop=True)
    b = theirs.sort_values(keys).reset_index(drop=True)
    assert a[keys].equals(b[keys])
    np.testing.assert_allclose(a["start_s"], b["start_s"])
    np.testing.assert_allclose(a["end_s"], b["end_s"])


def test_next_rollout_runs_on_the_gpus_a_tail_leaves_free() -> None:
    """A tail holding 4 of 8 GPUs for 5 s halves the next rollout's rate: 10 s work -> 12.5 s."""
    tables = WovenTables(
        node_s=np.array([[10.0, 10.0]]), tail_s=np.array([[5.0, 0.0]]),
        tail_gpus=np.array([[4, 0]]), train_s=np.array([[1.0, 1.0]]),
    )
    frame = simulate_woven(tables, [[0], [0]], [[0], [0]])
    second = frame[(frame.job == 1) & (frame.phase == "rollout")].iloc[0]
    assert (second.start_s, second.end_s) == (10.0, 22.5)
    first_train = frame[(frame.job == 0) & (frame.phase == "train")].iloc[0]
    assert first_train.start_s == 15.0  # training waits for the tail
    ends = iteration_end_times(frame, 2)
    assert ends.tolist() == [[16.0, 23.5]]


@given(seed=st.integers(0, 1000))
def test_woven_phases_never_overlap_on_a_node_and_follow_the_tail(seed: int) -> None:
    """Per node, rollout (and training) phases are disjoint; training starts after the tail."""
    rng = np.random.default_rng(seed)
    iters, n = 4, 3
    node = rng.uniform(1, 10, (iters, n))
    tail = rng.uniform(0, 5, (iters, n)) * (rng.random((iters, n)) < 0.7)
    gpus = rng.integers(1, 4, (iters, n)) * (tail > 0)
    tables = WovenTables(node, tail, gpus, rng.uniform(1, 10, (iters, n)))
    frame = simulate_woven(tables, [[0], [0, 1], [1]], [[0], [0], [0]])
    rows = list(frame.itertuples(index=False))
    for label in ("R0", "R1", "T0"):
        spans = sorted((r.start_s, r.end_s) for r in rows if r.node == label and r.phase != "tail")
        assert all(b[0] >= a[1] - 1e-9 for a, b in itertools.pairwise(spans))
    by_key = {(r.job, r.iteration, r.phase): r for r in rows}
    for j in range(n):
        for k in range(iters):
            rollout, train = by_key[(j, k, "rollout")], by_key[(j, k, "train")]
            assert rollout.end_s - rollout.start_s >= node[k, j] - 1e-9
            assert train.start_s >= rollout.end_s + tail[k, j] - 1e-9
    assert len(steady_iteration_s(iteration_end_times(frame, n), skip=0)) == n


def test_migration_speeds_up_a_rollout_heavy_pair_more_than_a_dissimilar_one() -> None:
    """Fig. 12: E+E (rollout-heavy) gains more than A+D, and the gain is deterministic."""
    pair_ee = (job_type("E", job_id="E0"), job_type("E", job_id="E1"))
    pair_ad = (job_type("A", job_id="A0"), job_type("D", job_id="D1"))
    gain_ee = migration_speedup(resolved(pair_ee), seed=0, iterations=30)
    assert gain_ee == migration_speedup(resolved(pair_ee), seed=0, iterations=30)
    assert 1.05 < gain_ee < 1.4
    assert migration_speedup(resolved(pair_ad), seed=0, iterations=30) < gain_ee
    with pytest.raises(ValueError, match="pair"):
        migration_speedup(resolved((pair_ee[0], pair_ee[0])))


def test_the_model_memo_gives_the_computed_model() -> None:
    """A sampler of the same job at another seed, with other training times or the other
    migration setting takes the memo's tables and coefficients: the ones it would compute,
    so the same draws; a change to what calibration reads (rollout times) misses it."""
    from rollmux.sim import stochastic

    r = resolve(JOB_A, HW)
    slower = replace(r.times, train_s=2 * r.times.train_s, train_max_s=2 * r.times.train_max_s)
    stochastic._MODEL_MEMO.clear()
    PhaseSampler(r, root_seed=0, config=FAST)
    assert len(stochastic._MODEL_MEMO) == 1
    for kwargs in ({"root_seed": 3}, {"times": slower},
                   {"config": replace(FAST, migration=False)}):
        args = {"root_seed": 0, "config": FAST, **kwargs}
        hit = PhaseSampler(r, **args)  # type: ignore[arg-type]
        assert len(stochastic._MODEL_MEMO) == 1
        stochastic._MODEL_MEMO.clear()
        fresh = PhaseSampler(r, **args)  # type: ignore[arg-type]
        assert hit.coefficients == fresh.coefficients
        assert hit.table(40) == fresh.table(40)
    longer = replace(r.times, rollout_s=1.5 * r.times.rollout_s,
                     rollout_max_s=1.5 * r.times.rollout_max_s)
    other = PhaseSampler(r, config=FAST, times=longer)
    assert len(stochastic._MODEL_MEMO) == 2
    assert other.coefficients != PhaseSampler(r, config=FAST).coefficients


def test_throughput_from_records_is_the_frames() -> None:
    """The woven throughput reads each training's end from the records as
    iteration_end_times reads them from simulate_woven's frame."""
    from rollmux.sim.stochastic import _train_end_times, _woven_records, pair_tables

    pair = resolved([job_type("A", job_id="a"), job_type("B", job_id="b")])
    tables = pair_tables(pair, seed=1, iterations=12, config=ON)
    pins = [[0], [0]]
    frame = simulate_woven(tables, pins, pins)
    records = _woven_records(tables, pins, pins, None, 8)
    np.testing.assert_array_equal(_train_end_times(records, 2), iteration_end_times(frame, 2))
