"""Scaled traces (`trace generate --jobs N --rate-scale X`): the paper's statistics at any size."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rollmux.cli import main
from rollmux.traces import generate, load_trace, trace_text
from rollmux.traces.stats import job_frame

ROOT = Path(__file__).resolve().parents[1]
SCALED_JOBS = 5000


@pytest.fixture(scope="module")
def workloads() -> dict:
    """The packaged workload estimates (the shipped traces' parameters)."""
    return generate.load_workloads()


@pytest.fixture(scope="module")
def production_5k() -> pd.DataFrame:
    """A 5,000-job production trace at five times the paper's arrival rate."""
    result = generate.generate_production(0, jobs=SCALED_JOBS, rate_scale=5.0)
    return job_frame(result.jobs)


@pytest.fixture(scope="module")
def simulation_5k() -> pd.DataFrame:
    """A 5,000-job Mixed simulation trace at five times the paper's arrival rate."""
    result = generate.generate_simulation(0, "mixed", runtimes_source="fit",
                                          jobs=SCALED_JOBS, rate_scale=5.0)
    return job_frame(result.jobs)


def shares(values: pd.Series) -> dict:
    """Each value's share of the series."""
    return {k: v / len(values) for k, v in Counter(values).items()}


def test_production_keeps_type_size_and_gpu_shares(production_5k: pd.DataFrame,
                                                   workloads: dict) -> None:
    """Task, model-size and two-node shares at 5,000 jobs are the workload weights (exactly
    by largest remainders, or within sampling error for the per-job GPU draw)."""
    spec = workloads["production"]
    tasks = spec["tasks"]
    task_total = sum(t["weight"] for t in tasks.values())
    for task, share in shares(production_5k["workload"]).items():
        assert share == pytest.approx(tasks[task]["weight"] / task_total, abs=1 / SCALED_JOBS)
    sizes = dict(zip(spec["model_sizes_b"], spec["model_size_weights"], strict=True))
    for size, share in shares(production_5k["model_size_b"]).items():
        assert share == pytest.approx(sizes[size] / sum(sizes.values()), abs=1 / SCALED_JOBS)
    for size in (14.0, 32.0):
        entry = spec["gpus_by_size"][str(size)]
        two_node = entry["weights"][1] / sum(entry["weights"])
        of_size = production_5k[production_5k["model_size_b"] == size]
        drawn = float((of_size["rollout_gpus"] == 16).mean())
        sd = math.sqrt(two_node * (1 - two_node) / len(of_size))
        assert abs(drawn - two_node) < 4 * sd
    mean_k = float(production_5k["max_response_tokens"].mean()) / 1024
    assert mean_k == pytest.approx(spec["target_mean_max_response_k"], abs=0.01)


def test_production_keeps_duration_distribution(production_5k: pd.DataFrame,
                                                workloads: dict) -> None:
    """Durations at 5,000 jobs: mean 27.9 h, and the median of the fitted lognormal
    (mean x exp(-sigma^2 / 2)), within the whole-iteration rounding."""
    spec = workloads["production"]
    durations_h = production_5k["duration_s"] / 3600.0
    assert float(durations_h.mean()) == pytest.approx(spec["mean_duration_h"], rel=0.01)
    median_h = spec["mean_duration_h"] * math.exp(-spec["duration_sigma"] ** 2 / 2)
    assert float(durations_h.median()) == pytest.approx(median_h, rel=0.02)
    multi = production_5k[production_5k["turns"] > 1]
    ratio = multi["rollout_s"] / multi["train_s"]
    low, high = spec["multi_turn_rollout_over_train"]
    assert ratio.min() >= low - 0.01 and ratio.max() <= high + 0.01


def test_simulation_keeps_profile_shares_and_phase_ranges(simulation_5k: pd.DataFrame,
                                                          workloads: dict) -> None:
    """Mixed at 5,000 jobs: each Table 6 configuration about 1/9 of the jobs, phase times
    inside its ranges."""
    profiles = workloads["profiles"]
    expected = 1 / len(profiles)
    sd = math.sqrt(expected * (1 - expected) / SCALED_JOBS)
    drawn = shares(simulation_5k["workload"])
    assert set(drawn) == set(profiles)
    for share in drawn.values():
        assert abs(share - expected) < 4 * sd
    for name, rows in simulation_5k.groupby("workload"):
        low, high = profiles[name]["rollout_s"]
        assert rows["rollout_s"].between(low, high).all()
        low, high = profiles[name]["train_s"]
        assert rows["train_s"].between(low, high).all()


def test_simulation_keeps_duration_distribution(simulation_5k: pd.DataFrame,
                                                workloads: dict) -> None:
    """Durations at 5,000 jobs: the paper's mean 14.4 h and maximum 142.9 h (up to the
    whole-iteration rounding), median within 5% of the shipped 300-job trace's."""
    spec = workloads["simulation"]
    shipped = job_frame(load_trace(ROOT / "traces" / "simulation-mixed.csv"))
    scaled_h = simulation_5k["duration_s"] / 3600.0
    shipped_h = shipped["duration_s"] / 3600.0
    assert float(scaled_h.mean()) == pytest.approx(spec["mean_duration_h"], rel=0.01)
    assert float(scaled_h.max()) == pytest.approx(spec["max_duration_h"], rel=0.01)
    assert float(scaled_h.median()) == pytest.approx(float(shipped_h.median()), rel=0.05)


@pytest.mark.parametrize("kind", ["production", "simulation"])
def test_rate_scale_divides_mean_interarrival(kind: str) -> None:
    """--rate-scale X divides the mean inter-arrival time by X and changes nothing else."""
    def generated(rate_scale: float) -> pd.DataFrame:
        if kind == "production":
            jobs = generate.generate_production(3, jobs=1000, rate_scale=rate_scale).jobs
        else:
            jobs = generate.generate_simulation(3, runtimes_source="fit", jobs=1000,
                                                rate_scale=rate_scale).jobs
        return pd.DataFrame([j.__dict__ for j in jobs])

    base, fast = generated(1.0), generated(4.0)
    gap_base = float(np.diff(np.sort(base["arrival_s"])).mean())
    gap_fast = float(np.diff(np.sort(fast["arrival_s"])).mean())
    assert gap_base / gap_fast == pytest.approx(4.0, rel=1e-3)
    pd.testing.assert_frame_equal(base.drop(columns="arrival_s"),
                                  fast.drop(columns="arrival_s"))


def test_paper_size_and_rate_are_the_shipped_trace() -> None:
    """--jobs at the paper's count and --rate-scale 1 draw exactly the shipped jobs."""
    shipped = generate.generate_production(0)
    explicit = generate.generate_production(0, jobs=200, rate_scale=1.0)
    assert explicit.jobs == shipped.jobs


def test_scaled_trace_is_deterministic_and_validates(tmp_path: Path) -> None:
    """Same seed, same bytes; the written file passes the loader with its command."""
    paths = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in paths:
        assert main(["trace", "generate", "simulation", "--runtimes", "fit", "--jobs", "700",
                     "--rate-scale", "2.5", "--seed", "4", "--out", str(path),
                     "--quiet"]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert "--jobs 700 --rate-scale 2.5" in paths[0].read_text().splitlines()[1]
    assert len(load_trace(paths[0])) == 700
    other = generate.generate_simulation(5, runtimes_source="fit", jobs=700, rate_scale=2.5)
    assert trace_text(other.jobs, other.comments) != paths[0].read_text()


def test_arrivals_beyond_the_schema_range_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job count and rate whose arrivals pass a year exit 2 naming the smallest rate."""
    out = tmp_path / "t.csv"
    assert main(["trace", "generate", "production", "--jobs", "100000",
                 "--out", str(out)]) == 2
    message = capsys.readouterr().err
    assert "--rate-scale 19.18 or more" in message and not out.exists()
    assert main(["trace", "generate", "microbench", "--jobs", "10", "--out", str(out)]) == 2
    assert main(["trace", "generate", "production", "--rate-scale", "0",
                 "--out", str(out)]) == 2
    with pytest.raises(ValueError, match="--jobs"):
        generate.scaled_spec(generate.load_workloads()["production"], "production", 0)
    assert main(["trace", "generate", "simulation", "--runtimes", "fit", "--jobs", "2",
                 "--out", str(out)]) == 2
    assert "--jobs 2: too few simulation jobs" in capsys.readouterr().err
