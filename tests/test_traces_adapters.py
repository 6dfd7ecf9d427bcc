"""Adapters from the Alibaba 2023 and Philly public traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollmux.traces import adapters, load_trace, trace_text

POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time\n"
)


def write_pods(path: Path) -> Path:
    """A tiny pod list covering each filter rule."""
    path.write_text(
        POD_HEADER
        + "p0,1,1,8,1000,,LS,Succeeded,1000,5000,1000\n"  # kept: large
        + "p1,1,1,1,1000,,LS,Running,1100,9000,1100\n"  # dropped: one GPU
        + "p2,1,1,2,1000,,LS,Pending,1200,1300,\n"  # dropped: never scheduled
        + "p3,1,1,4,1000,,LS,Failed,1500,1600,1550\n"  # kept: medium, 50 s
        + "p4,1,1,2,1000,,LS,Running,2000,1900,2000\n"  # dropped: deleted before start
        + "p5,1,1,2,1000,,BE,Running,3000,4000,3000\n"  # kept: small
    )
    return path


def test_alibaba_filter_and_rescaling(tmp_path: Path) -> None:
    """Multi-GPU scheduled pods are kept in arrival order; arrivals span the horizon."""
    pods = adapters.read_alibaba_pods(write_pods(tmp_path / "pods.csv"))
    assert pods["name"].tolist() == ["p0", "p3", "p5"]
    assert pods["duration_s"].tolist() == [4000, 50, 1000]
    result = adapters.adapt_alibaba(tmp_path / "pods.csv", seed=0, horizon_h=10.0)
    arrivals = [job.arrival_s for job in result.jobs]
    assert arrivals[0] == 0.0 and arrivals[-1] == 36000.0
    assert [job.workload[-1] for job in result.jobs] == ["L", "M", "S"]


def test_alibaba_mean_duration_option(tmp_path: Path) -> None:
    """--mean-duration-h rescales durations to that mean (up to whole iterations)."""
    result = adapters.adapt_alibaba(
        write_pods(tmp_path / "pods.csv"), seed=0, horizon_h=10.0, mean_duration_h=20.0
    )
    assert result.achieved["mean_duration_h"] == pytest.approx(20.0, rel=0.05)


def test_alibaba_rejects_non_pod_file(tmp_path: Path) -> None:
    """A file without the pod-list columns is a ValueError naming the file."""
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not an Alibaba openb pod list"):
        adapters.read_alibaba_pods(path)


def test_alibaba_real_trace(shared_traces: Path, tmp_path: Path) -> None:
    """On the real 2023 pod list: every kept pod becomes a valid job within the horizon."""
    path = shared_traces / adapters.ALIBABA_POD_FILE
    pods = adapters.read_alibaba_pods(path)
    assert (pods["num_gpu"] >= 2).all() and len(pods) > 50
    result = adapters.adapt_alibaba(path, seed=0, horizon_h=336.0)
    assert len(result.jobs) == len(pods)
    assert max(job.arrival_s for job in result.jobs) == pytest.approx(336.0 * 3600.0)
    out = tmp_path / "ali.csv"
    out.write_text(trace_text(result.jobs, result.comments))
    assert load_trace(out) == result.jobs
    again = adapters.adapt_alibaba(path, seed=0, horizon_h=336.0)
    assert trace_text(again.jobs) == trace_text(result.jobs)


def test_philly_real_trace(shared_traces: Path) -> None:
    """On the real Philly runtimes: matched mean and maximum, Poisson arrivals in horizon."""
    path = shared_traces / "philly_runtime.csv"
    result = adapters.adapt_philly(path, seed=0, jobs=120, horizon_h=100.0, match=(10.0, 80.0))
    assert len(result.jobs) == 120
    assert result.achieved["mean_duration_h"] == pytest.approx(10.0, rel=0.02)
    assert result.achieved["max_duration_h"] == pytest.approx(80.0, rel=0.02)
    assert max(job.arrival_s for job in result.jobs) <= 100.0 * 3600.0


def test_philly_raw_runtimes(tmp_path: Path) -> None:
    """Without matching, durations are the sampled runtimes (runtimes < 60 s dropped)."""
    path = tmp_path / "philly.csv"
    path.write_text("runtime\n" + "\n".join(["10", "7200", "7200", "7200"]) + "\n")
    result = adapters.adapt_philly(path, seed=0, jobs=5, horizon_h=1.0, profile="BL-S")
    assert result.achieved["mean_duration_h"] == pytest.approx(2.0, rel=0.1)
