"""Philly runtimes: the committed fit, its fitting script, and the sampler's source choice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rollmux.traces import philly

REPO = Path(__file__).resolve().parents[1]
FIT = REPO / "src" / "rollmux" / "traces" / "philly_fit.json"


def run_fit(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Run scripts/fit_philly.py on path, writing out."""
    return subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "fit_philly.py"),
            "--path",
            str(path),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.subprocess
def test_committed_fit_is_reproduced_by_the_script(shared_traces: Path, tmp_path: Path) -> None:
    """Re-fitting the public runtimes gives the committed fit file byte for byte."""
    out = tmp_path / "fit.json"
    done = run_fit(shared_traces / "philly_runtime.csv", out)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == FIT.read_bytes()


@pytest.mark.subprocess
def test_fit_script_on_a_small_file(tmp_path: Path) -> None:
    """The script drops runtimes under 60 s and records count, mean and max."""
    src = tmp_path / "runtime.csv"
    src.write_text("runtime\n0\n30\n60\n600\n6000\n")
    out = tmp_path / "fit.json"
    assert run_fit(src, out).returncode == 0
    fit = json.loads(out.read_text())
    assert (fit["count"], fit["max_s"], fit["mean_s"]) == (3, 6000.0, 2220.0)
    assert len(fit["log_quantiles"]) == philly.QUANTILE_POINTS
    assert fit["log_quantiles"][0] == pytest.approx(np.log(60.0), abs=1e-6)


@pytest.mark.subprocess
def test_fit_script_reports_a_missing_file(tmp_path: Path) -> None:
    """A missing input is a one-line error with exit code 2."""
    done = run_fit(tmp_path / "absent.csv", tmp_path / "fit.json")
    assert done.returncode == 2 and done.stderr.startswith("error:")


def test_fit_sampler_follows_the_quantiles() -> None:
    """Samples from the fit stay in the fitted range and match its median."""
    fit = philly.load_fit()
    draws = philly.fit_sampler(fit)(np.random.default_rng(0), 20_000)
    q = np.exp(np.asarray(fit["log_quantiles"]))
    assert draws.min() >= q[0] and draws.max() <= q[-1]
    assert np.median(draws) == pytest.approx(q[len(q) // 2], rel=0.05)


def test_auto_source_uses_the_csv_only_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`auto` picks the real CSV when it exists and the committed fit otherwise."""
    monkeypatch.setenv("ROLLMUX_SHARED_TRACES", str(tmp_path))
    assert philly.runtime_sampler("auto")[1] == "fit"
    (tmp_path / philly.RUNTIME_FILE).write_text("runtime\n100\n200\n300\n")
    assert philly.runtime_sampler("auto")[1] == "csv"
    with pytest.raises(ValueError, match="min_runtime_s"):
        philly.runtime_sampler("fit", min_runtime_s=1.0)
    with pytest.raises(ValueError, match="auto, csv or fit"):
        philly.runtime_sampler("real")
