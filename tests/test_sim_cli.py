"""The `rollmux simulate` command: validation first, outputs, exit codes, determinism."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from rollmux.jobs import RLJob
from rollmux.sim.cli import default_out_dir, main, register
from rollmux.sim.records import EVENT_COLUMNS, JOB_COLUMNS, PHASE_COLUMNS
from rollmux.traces.loader import trace_text

SUMMARY_KEYS = {"cost_usd_per_h", "total_cost_usd", "slo_attainment", "peak_gpus",
                "bubble_fraction", "admissions", "jobs_completed"}


def _trace(path: Path, n: int = 4) -> Path:
    """Write a small valid trace of ``n`` jobs with direct phase times."""
    jobs = [RLJob(f"t{k}", 7.0, 4096, rollout_s=120.0 + 30 * k, train_s=80.0,
                  rollout_max_s=150.0 + 30 * k, train_max_s=90.0, iterations=6 + k,
                  arrival_s=50.0 * k, slo=1.5) for k in range(n)]
    path.write_text(trace_text(jobs), encoding="utf-8")
    return path


def test_simulate_writes_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    """A valid trace: exit 0, the five tables/JSONs with their columns, a summary line."""
    trace = _trace(tmp_path / "small.csv")
    out = tmp_path / "out"
    code = main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--out", str(out)])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json", "events.csv", "jobs.csv", "phases.csv", "summary.json",
        "timeseries.csv"]
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) >= SUMMARY_KEYS
    assert summary["jobs_completed"] == 4
    assert set(summary["peak_gpus"]) == {"H20", "H800"}
    config = json.loads((out / "config.json").read_text())
    assert config["policy"] == "rollmux" and config["fidelity"] == "event"
    assert len(config["trace_sha256"]) == 64
    assert list(pd.read_csv(out / "phases.csv").columns) == list(PHASE_COLUMNS)
    assert list(pd.read_csv(out / "events.csv").columns) == list(EVENT_COLUMNS)
    assert list(pd.read_csv(out / "jobs.csv").columns) == list(JOB_COLUMNS)
    assert "4/4 jobs completed" in capsys.readouterr().out


def test_invalid_trace_is_refused_before_any_work(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid trace prints located problems, exits 1 and writes nothing."""
    trace = _trace(tmp_path / "bad.csv")
    lines = trace.read_text().splitlines()
    lines[3] = lines[3].replace("1.5,50.0", "0.5,50.0")  # row 2: slo below 1
    trace.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    code = main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--out", str(out)])
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.csv" in err and "row 2" in err and "slo" in err
    assert "nothing simulated" in err
    assert not out.exists()


def test_bad_options_exit_2_without_output(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown policies, unknown drift settings and missing files exit 2 with one line."""
    trace = _trace(tmp_path / "small.csv")
    out = tmp_path / "out"
    assert main(["simulate", "--trace", str(trace), "--policy", "nope", "--out", str(out)]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--drift",
                 "sideways", "--out", str(out)]) == 2
    assert "drift 'sideways'" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(tmp_path / "missing.csv"), "--policy",
                 "solo-d", "--out", str(out)]) == 1
    assert not out.exists()


def test_default_output_folder_and_analytic_fidelity(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Default folder is key=value; the analytic path writes no per-phase table."""
    trace = _trace(tmp_path / "small.csv")
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--seed", "3",
                 "--fidelity", "analytic", "--quiet"]) == 0
    out = default_out_dir(trace, "solo-d", 3)
    assert out == Path("results/simulate/trace=small/policy=solo-d/seed=3")
    assert (tmp_path / out / "summary.json").is_file()
    assert not (tmp_path / out / "phases.csv").exists()


def test_same_seed_same_bytes_and_options_recorded(tmp_path: Path) -> None:
    """Two runs with one seed are byte-identical; options land in config.json."""
    trace = _trace(tmp_path / "small.csv")
    failures = tmp_path / "fail.csv"
    failures.write_text("job_id,kill_at_s,resubmit_at_s\nt1,300,900\n")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--quiet",
                     "--no-migration", "--drift", "Increasing", "--sync", "flat",
                     "--failures", str(failures), "--out", str(out)]) == 0
        outs.append(out)
    for path in sorted(outs[0].iterdir()):
        assert path.read_bytes() == (outs[1] / path.name).read_bytes(), path.name
    config = json.loads((outs[0] / "config.json").read_text())
    assert config["migration"] is False and config["drift"] == "Increasing"
    assert config["sync"] == "flat"
    assert config["failures"] == [{"job_id": "t1", "kill_at_s": 300.0, "resubmit_at_s": 900.0}]
    events = pd.read_csv(outs[0] / "events.csv")
    assert {"kill", "resubmit"} <= set(events.kind)


def test_register_adds_the_simulate_command() -> None:
    """register() adds `simulate` with its options to any sub-parser set."""
    parser = argparse.ArgumentParser(prog="rollmux")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["simulate", "--trace", "x.csv", "--policy", "verl",
                              "--no-migration", "--drift", "Mixed"])
    assert args.command == "simulate" and args.no_migration and args.drift == "Mixed"
    assert args.fidelity == "event" and args.seed == 0
