"""Trace generators: determinism, shipped-file regeneration, and the paper's statistics."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rollmux.cli import main
from rollmux.traces import generate, load_trace, trace_text
from rollmux.traces.schema import schema_markdown
from rollmux.traces.stats import job_summary

REPO = Path(__file__).resolve().parents[1]
README = REPO / "traces" / "README.md"


def readme_commands() -> list[list[str]]:
    """The `rollmux trace generate` commands listed in traces/README.md, as argv lists."""
    text = README.read_text(encoding="utf-8")
    lines = re.findall(r"^rollmux trace generate .*$", text, flags=re.MULTILINE)
    return [shlex.split(line)[1:] for line in lines]


def run_cli(argv: list[str]) -> int:
    """Run the rollmux command line in-process."""
    return main(argv)


def test_readme_lists_every_shipped_trace() -> None:
    """Each shipped CSV has a regeneration command in traces/README.md, and vice versa."""
    outs = {Path(argv[argv.index("--out") + 1]).name for argv in readme_commands()}
    shipped = {p.name for p in (REPO / "traces").glob("*.csv")}
    assert outs == shipped


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda a: a[a.index("--out") + 1])
def test_shipped_trace_regenerates_byte_identically(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Running a README command into a temp folder reproduces the shipped file exactly."""
    shipped = REPO / argv[argv.index("--out") + 1]
    out = tmp_path / shipped.name
    argv = [*argv]
    argv[argv.index("--out") + 1] = str(out)
    assert run_cli(argv) == 0, capsys.readouterr().err
    assert out.read_bytes() == shipped.read_bytes()


def test_readme_schema_table_matches_schema_file() -> None:
    """The schema table in traces/README.md is the one schema.yaml renders."""
    assert schema_markdown() in README.read_text(encoding="utf-8")


def test_readme_example_errors_are_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's broken example, validated now, prints exactly the quoted problems."""
    text = README.read_text(encoding="utf-8")
    block = re.search(
        r"\$ cat broken-example\.csv\n(.*?)\n\$ rollmux trace validate "
        r"broken-example\.csv\n(.*?)\n\$ echo",
        text,
        flags=re.DOTALL,
    )
    assert block is not None
    (tmp_path / "broken-example.csv").write_text(block.group(1) + "\n")
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = run_cli(["trace", "validate", "broken-example.csv"])
    finally:
        os.chdir(cwd)
    assert code == 1
    assert capsys.readouterr().err.strip() == block.group(2).strip()


def test_same_seed_same_bytes_different_seed_different_bytes() -> None:
    """Generators are deterministic in the seed, and the seed matters."""
    a = trace_text(generate.generate_production(3).jobs)
    b = trace_text(generate.generate_production(3).jobs)
    c = trace_text(generate.generate_production(4).jobs)
    assert a == b
    assert a != c


def test_production_matches_paper_statistics() -> None:
    """§6.4: 200 jobs, 3B-32B, 4k-32k (mean 12.1k), mean 27.9 h, multi-turn 3-4x, SLO U(1,2)."""
    result = generate.generate_production(0)
    s = result.achieved
    assert s["jobs"] == 200
    assert s["horizon_h"] <= 336.0
    assert (s["model_size_min_b"], s["model_size_max_b"]) == (3.0, 32.0)
    assert (s["max_response_min_k"], s["max_response_max_k"]) == (4.0, 32.0)
    assert s["mean_max_response_k"] == pytest.approx(12.1, abs=0.05)
    assert s["mean_duration_h"] == pytest.approx(27.9, rel=0.01)
    assert 3.0 <= s["multi_turn_ratio_min"] <= s["multi_turn_ratio_max"] <= 4.0
    assert 0 < s["multi_turn_share"] < 1
    assert s["rollout_heavy_share"] > 0.5
    assert s["phase_min_s"] >= 50.0 and s["phase_max_s"] > 900.0
    assert s["slo_min"] >= 1.0 and s["slo_max"] <= 2.0


@pytest.mark.parametrize("profile", ["mixed", "balanced", "rollout-heavy", "train-heavy"])
def test_simulation_matches_paper_statistics(profile: str) -> None:
    """§6.5: 300 jobs over 580 h, mean 14.4 h, longest 142.9 h, profiles as asked."""
    result = generate.generate_simulation(1, profile, runtimes_source="fit")
    s = result.achieved
    assert s["jobs"] == 300 and s["horizon_h"] <= 580.0
    assert s["mean_duration_h"] == pytest.approx(14.4, rel=0.01)
    assert s["max_duration_h"] == pytest.approx(142.9, rel=0.01)
    labels = {job.workload for job in result.jobs}
    if profile == "mixed":
        assert len(labels) == 9
    else:
        prefix = generate.PROFILE_TYPES[profile]
        assert labels == {f"{prefix}-{size}" for size in "SML"}


def test_simulation_profile_shapes() -> None:
    """Rollout-heavy jobs roll out longer than they train; train-heavy the other way round."""
    heavy = generate.generate_simulation(0, "rollout-heavy", runtimes_source="fit").jobs
    train = generate.generate_simulation(0, "train-heavy", runtimes_source="fit").jobs
    assert all(job.rollout_s > job.train_s for job in heavy)
    assert all(job.rollout_s < job.train_s for job in train)


def test_simulation_from_real_philly(shared_traces: Path) -> None:
    """With the real Philly runtimes the statistics still match, and differ from the fit."""
    path = shared_traces / "philly_runtime.csv"
    real = generate.generate_simulation(0, runtimes_source="csv", philly_path=path)
    fit = generate.generate_simulation(0, runtimes_source="fit")
    assert real.achieved["mean_duration_h"] == pytest.approx(14.4, rel=0.01)
    assert real.achieved["max_duration_h"] == pytest.approx(142.9, rel=0.01)
    assert trace_text(real.jobs) != trace_text(fit.jobs)


def test_unknown_profile_is_rejected() -> None:
    """An unknown --profile names the valid choices."""
    with pytest.raises(ValueError, match="valid: mixed"):
        generate.generate_simulation(0, "heavy", runtimes_source="fit")


def test_microbench_types() -> None:
    """§6.2: D rolls out 2.5x its training on 8+16 GPUs, E 6x, C on 16+16; phases direct."""
    jobs = {job.job_id: job for job in generate.generate_microbench().jobs}
    assert sorted(jobs) == [f"Type-{t}" for t in "ABCDE"]
    assert jobs["Type-D"].rollout_s / jobs["Type-D"].train_s == pytest.approx(2.5)
    assert jobs["Type-E"].rollout_s / jobs["Type-E"].train_s == pytest.approx(6.0)
    assert (jobs["Type-C"].rollout_gpus, jobs["Type-C"].train_gpus) == (16, 16)
    assert (jobs["Type-D"].rollout_gpus, jobs["Type-D"].train_gpus) == (8, 16)
    assert all(job.rollout_s is not None and job.train_s is not None for job in jobs.values())


def test_shipped_traces_validate() -> None:
    """Every shipped trace loads, and its summary agrees with the file's rows."""
    for path in sorted((REPO / "traces").glob("*.csv")):
        jobs = load_trace(path)
        assert job_summary(jobs)["jobs"] == len(jobs) > 0


@given(
    st.lists(st.floats(0.1, 1e6), min_size=4, max_size=60, unique=True),
    st.floats(0.5, 50.0),
    st.floats(1.2, 20.0),
)
def test_match_mean_and_max(samples: list[float], mean: float, spread: float) -> None:
    """The power transform hits the mean and maximum and never reverses two samples."""
    x = np.asarray(samples)
    assume(x.max() / x.min() > 1.5)
    maximum = mean * min(spread, 0.5 * len(x))
    y = generate.match_mean_and_max(x, mean, maximum)
    assert y.mean() == pytest.approx(mean, rel=1e-6)
    assert y.max() == pytest.approx(maximum, rel=1e-6)
    assert np.all(np.diff(y[np.argsort(x)]) >= 0)  # order kept (ties only by underflow)


@given(st.integers(1, 400), st.floats(4.0, 32.0))
def test_counts_for_mean(n: int, target_k: float) -> None:
    """Counts sum to n and their mean is within one step (28k / n) of any reachable target."""
    values = [4.0, 8.0, 16.0, 32.0]
    counts = generate.counts_for_mean(values, [0.3, 0.35, 0.2, 0.15], n, target_k)
    assert counts.sum() == n and (counts >= 0).all()
    assert abs(float(np.dot(counts, values)) / n - target_k) <= 28.0 / n + 1e-9


def test_largest_remainder_counts() -> None:
    """Hamilton's method: exact proportional counts that sum to n, ties to the first."""
    assert generate.largest_remainder_counts([1, 1, 1], 4).tolist() == [2, 1, 1]
    assert generate.largest_remainder_counts([0.15, 0.35, 0.3, 0.2], 200).tolist() == [
        30,
        70,
        60,
        40,
    ]
