"""Tests of the RL job record and the response-length distribution (rollmux.jobs)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import OPTIONAL_FIELDS, ResponseLengthDist, RLJob, _truncnorm_ppf
from rollmux.phasetimes import (
    resolved_mean_response_tokens,
    resolved_prompt_tokens,
    resolved_sigma,
    response_length_dist,
    responses_per_iter,
)

HW = load_hardware()


def test_job_defaults_and_resolution() -> None:
    """A minimal job takes its batch shape and lengths from the workload defaults."""
    job = RLJob("a", 7, 8192)
    assert (job.turns, job.rollout_gpus, job.train_gpus, job.slo) == (1, 8, 8, 1.5)
    assert (job.rollout_gpu_type, job.train_gpu_type) == ("H20", "H800")
    assert resolved_mean_response_tokens(job, HW) == pytest.approx(0.35 * 8192)
    assert resolved_sigma(job, HW) == 0.8
    assert resolved_prompt_tokens(job, HW) == 512
    assert responses_per_iter(job, HW) == 128 * 8


def test_job_values_override_defaults() -> None:
    """Values given on the job win over the workload defaults."""
    job = RLJob("a", 7, 8192, mean_response_tokens=1000, response_len_sigma=0.5,
                prompt_tokens=100, prompts_per_iter=32, responses_per_prompt=4)
    assert resolved_mean_response_tokens(job, HW) == 1000.0
    assert resolved_sigma(job, HW) == 0.5
    assert resolved_prompt_tokens(job, HW) == 100
    assert responses_per_iter(job, HW) == 128


def test_job_coerces_csv_style_values() -> None:
    """NaN in optional fields means None; integral floats and numpy ints become int."""
    job = RLJob("a", np.float64(7), 8192.0, prompt_tokens=float("nan"),  # type: ignore[arg-type]
                rollout_gpus=np.int64(16), sync_s=float("nan"))  # type: ignore[arg-type]
    assert job.prompt_tokens is None and job.sync_s is None
    assert job.max_response_tokens == 8192 and isinstance(job.max_response_tokens, int)
    assert job.rollout_gpus == 16 and isinstance(job.rollout_gpus, int)
    assert set(OPTIONAL_FIELDS) <= set(RLJob.__dataclass_fields__)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("job_id", ""),
        ("model_size_b", 0),
        ("model_size_b", -3.0),
        ("model_size_b", float("inf")),
        ("max_response_tokens", 0),
        ("max_response_tokens", 100.5),
        ("max_response_tokens", True),
        ("mean_response_tokens", 9000),
        ("mean_response_tokens", 0.5),
        ("response_len_sigma", 0),
        ("prompt_tokens", 0),
        ("prompts_per_iter", -1),
        ("responses_per_prompt", 2.5),
        ("turns", 0),
        ("rollout_gpus", 0),
        ("train_gpus", -8),
        ("rollout_gpu_type", ""),
        ("train_gpu_type", 3),
        ("rollout_mem_gb_per_node", 0),
        ("train_mem_gb_per_node", float("inf")),
        ("slo", 0.9),
        ("slo", float("nan")),
        ("arrival_s", -1.0),
        ("iterations", 0),
        ("rollout_s", 0),
        ("train_s", -1),
        ("rollout_max_s", "slow"),
        ("train_max_s", float("inf")),
        ("sync_s", -0.1),
        ("warm_switch_s", -1),
        ("cold_switch_s", float("inf")),
        ("workload", None),
    ],
)
def test_bad_job_fields_are_named(field: str, value: object) -> None:
    """Every invalid field raises ValueError whose message names the field."""
    with pytest.raises(ValueError, match=field):
        RLJob(**{"job_id": "a", "model_size_b": 7, "max_response_tokens": 8192, field: value})


def test_slo_below_one_message() -> None:
    """An SLO below 1 is rejected with the reason: it is a maximum slowdown."""
    with pytest.raises(ValueError, match=r"slo must be >= 1 \(a maximum slowdown"):
        RLJob("a", 7, 8192, slo=0.99)
    assert RLJob("a", 7, 8192, slo=1).slo == 1.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"rollout_s": 100.0, "rollout_max_s": 50.0}, "rollout_max_s"),
        ({"train_s": 100.0, "train_max_s": 50.0}, "train_max_s"),
        ({"warm_switch_s": 10.0, "cold_switch_s": 5.0}, "cold_switch_s"),
    ],
)
def test_inconsistent_direct_times_rejected(kwargs: dict, field: str) -> None:
    """A worst case below its expected value, or cold below warm, names the field."""
    with pytest.raises(ValueError, match=field):
        RLJob("a", 7, 8192, **kwargs)


def test_distribution_mean_matches_target() -> None:
    """Solving for mu reproduces the requested truncated mean to 1e-9."""
    dist = ResponseLengthDist(max_tokens=8192, mean_tokens=2867.2, sigma=0.8)
    assert dist.mean() == pytest.approx(2867.2, rel=1e-9)
    assert dist.quantile(0.0) == pytest.approx(1.0)
    assert dist.quantile(1.0) == pytest.approx(8192.0)
    assert dist.expected_max(1) == pytest.approx(dist.mean())


def test_second_moment_untruncated_limit() -> None:
    """With a far-away cap, E[L^2] = mean^2 exp(sigma^2): 100^2 e^0.25 = 12840.25."""
    dist = ResponseLengthDist(max_tokens=1e9, mean_tokens=100.0, sigma=0.5)
    assert dist.moment(2) == pytest.approx(12840.254, rel=1e-6)


def test_expected_max_narrow_lognormal() -> None:
    """For sigma = 0.01, E[max of 10] ~ mean exp(0.01 x 1.53875) (E[max of 10 normals])."""
    dist = ResponseLengthDist(max_tokens=1e6, mean_tokens=1000.0, sigma=0.01)
    expected = 1000.0 * math.exp(-0.5 * 0.01**2 + 0.01 * 1.538753)
    assert dist.expected_max(10) == pytest.approx(expected, rel=2e-4)


def test_expected_max_matches_monte_carlo() -> None:
    """The integrated E[max of 64] agrees with a seeded Monte Carlo estimate within 0.5%."""
    dist = ResponseLengthDist(max_tokens=16384, mean_tokens=4000, sigma=0.9)
    draws = dist.sample(np.random.default_rng(7), (4000, 64)).max(axis=1)
    assert dist.expected_max(64) == pytest.approx(draws.mean(), rel=5e-3)


def test_long_tail_batch_is_tail_bound() -> None:
    """With 1024 responses the expected longest is near the cap, far above the mean."""
    dist = response_length_dist(RLJob("a", 7, 8192), HW)
    assert dist.expected_max(1024) > 0.95 * 8192 > 2.5 * dist.mean()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_tokens": 100, "mean_tokens": 100, "sigma": 1}, "mean_tokens"),
        ({"max_tokens": 100, "mean_tokens": 1, "sigma": 1}, "mean_tokens"),
        ({"max_tokens": 100, "mean_tokens": 50, "sigma": 0}, "sigma"),
        ({"max_tokens": 0.5, "mean_tokens": 50, "sigma": 1}, "max_tokens"),
    ],
)
def test_bad_distribution_arguments(kwargs: dict, field: str) -> None:
    """Invalid distribution parameters raise ValueError naming the argument."""
    with pytest.raises(ValueError, match=field):
        ResponseLengthDist(**kwargs)


def test_bad_quantile_and_rng() -> None:
    """quantile outside [0, 1] and a non-Generator rng are rejected by name."""
    dist = ResponseLengthDist(1000, 300, 0.8)
    with pytest.raises(ValueError, match="q must"):
        dist.quantile(1.5)
    with pytest.raises(ValueError, match="rng"):
        dist.sample(np.random.RandomState(0), 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must"):
        dist.expected_max(0)


dists = st.builds(
    lambda max_tokens, frac, sigma: ResponseLengthDist(max_tokens, 1 + frac * (max_tokens - 1),
                                                       sigma),
    max_tokens=st.integers(2, 65536),
    frac=st.floats(0.02, 0.98),
    sigma=st.floats(0.05, 2.5),
)


@given(dist=dists, seed=st.integers(0, 2**32 - 1))
def test_samples_within_bounds_and_deterministic(dist: ResponseLengthDist, seed: int) -> None:
    """Sampled lengths lie in [1, max] and a seed reproduces them exactly."""
    a = dist.sample(np.random.default_rng(seed), 200)
    b = dist.sample(np.random.default_rng(seed), 200)
    assert np.array_equal(a, b)
    assert np.all(a >= 1.0) and np.all(a <= dist.max_tokens)


@given(dist=dists)
def test_mean_solved_and_expected_max_ordered(dist: ResponseLengthDist) -> None:
    """mean() hits its target; E[max of n] grows with n and stays within [mean, max]."""
    assert dist.mean() == pytest.approx(dist.mean_tokens, rel=1e-6)
    maxima = [dist.expected_max(n) for n in (1, 2, 16, 1024)]
    assert all(b >= a - 1e-6 * dist.max_tokens for a, b in itertools.pairwise(maxima))
    assert maxima[0] == pytest.approx(dist.mean(), rel=1e-6)
    assert maxima[-1] <= dist.max_tokens


@given(dist=dists, q=st.lists(st.floats(0, 1), min_size=2, max_size=8))
def test_quantile_is_monotone(dist: ResponseLengthDist, q: list[float]) -> None:
    """quantile is non-decreasing in q and stays within [1, max]."""
    qs = np.sort(np.array(q))
    values = np.asarray(dist.quantile(qs))
    assert np.all(np.diff(values) >= -1e-9 * dist.max_tokens)
    assert np.all(values >= 1.0) and np.all(values <= dist.max_tokens)


def test_tiny_max_with_default_mean_names_field() -> None:
    """max_response_tokens = 2 leaves the default mean (0.7) below one token: named error."""
    with pytest.raises(ValueError, match="max_response_tokens=2"):
        response_length_dist(RLJob("a", 7, 2), HW)
    assert response_length_dist(RLJob("a", 7, 2, mean_response_tokens=1.5), HW).mean() == (
        pytest.approx(1.5)
    )


@pytest.mark.parametrize("a, b", [(-3.0, 2.0), (0.5, 4.0), (-10.0, -2.0), (0.0, 1.0),
                                  (-40.0, 1.5), (2.0, 30.0), (-1e-3, 1e-3), (-30.0, -29.5)])
def test_truncnorm_ppf_is_scipy_stats_bit_for_bit(a: float, b: float) -> None:
    """The scipy.stats-free quantile equals scipy.stats.truncnorm's, bit for bit and type
    for type, for bounds in either tail, the centre, and q at 0, 1, the extremes, scalars
    and arrays of any shape (a replay's bytes rest on it)."""
    from scipy import stats

    rng = np.random.default_rng(7)
    qs = [rng.random(500), rng.random((3, 4)), np.array([0.0, 1.0, 0.5, 1e-300, 1 - 1e-16,
                                                         5e-324]), 0.3, 0.0, 1.0,
          np.float64(0.999), np.array([])]
    for loc, scale in ((0.0, 1.0), (5.3, 0.7), (-2.0, 3.1)):
        for q in qs:
            ref = stats.truncnorm(a, b, loc=loc, scale=scale).ppf(q)
            got = _truncnorm_ppf(q, a, b, loc, scale)
            assert type(got) is type(ref) and np.shape(got) == np.shape(ref)
            assert np.array_equal(got, ref), (a, b, loc, scale, q)


def test_replay_quantiles_do_not_import_scipy_stats() -> None:
    """A length distribution's quantiles, samples and expected maximum leave scipy.stats
    unloaded (its import costs about 0.45 s of CPU in every pipeline job)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from rollmux.jobs import length_dist\n"
            "d = length_dist(8192.0, 2867.2, 0.8)\n"
            "d.quantile(0.5); d.sample(np.random.default_rng(0), 4); d.expected_max(64)\n"
            "print('scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
