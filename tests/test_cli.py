"""The rollmux command line: outputs, help and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rollmux.cli import main


def test_meta_iteration_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Two complementary jobs weave into T_cycle (`--format json`: one JSON object)."""
    assert main(["meta-iteration", "--rollout", "10", "2", "--train", "2", "10",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"meta_iteration_s": 12.0, "t_cycle_s": 12.0}


def test_meta_iteration_gang_pinning(capsys: pytest.CaptureFixture[str]) -> None:
    """``0+1`` pins a job to both nodes; this group exceeds T_cycle though T_load < T_cycle."""
    args = ["meta-iteration", "--rollout", "4", "4", "3", "--train", "4", "2", "1",
            "--rollout-node", "0,1,0+1", "--train-node", "0,0,0", "--format", "json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["meta_iteration_s"] == pytest.approx(8.5)


def test_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """A negative duration gives a one-line error naming the argument, exit status 2."""
    assert main(["meta-iteration", "--rollout", "10", "-2", "--train", "2", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rollmux: error: argument --rollout: -2 is out of range: must be > 0 "
                   "(see: rollmux meta-iteration --help)"]
    assert main(["meta-iteration", "--rollout", "10", "2", "--train", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rollmux: error: ")


def test_microbench_writes_csv(tmp_path: Path) -> None:
    """`rollmux model microbench --out` writes the closed-form table."""
    out = tmp_path / "mb.csv"
    assert main(["model", "microbench", "--scenarios", "temporal", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["system"]) == {"rollmux", "solo-d", "verl", "fluid-bound"}


def test_gantt_writes_phases(tmp_path: Path) -> None:
    """`rollmux gantt` writes both layouts."""
    out = tmp_path / "phases.csv"
    assert main(["gantt", "--job-types", "A", "E", "--iterations", "1", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["layout"]) == {"solo-d", "woven"}


@pytest.mark.parametrize("command", [[], ["model"], ["trace"], ["gantt"], ["meta-iteration"],
                                     ["theorem1"], ["theorem1-worst-case"], ["calibration"],
                                     ["bench"], ["simulate"], ["trace", "generate"]])
def test_help_and_usage(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Every command has --help, through the main CLI (exit status 0, usage on stdout)."""
    assert main([*command, "--help"]) == 0
    assert f"usage: rollmux {' '.join(command)}".strip() in capsys.readouterr().out


@pytest.mark.parametrize(
    ("what", "keys"),
    [
        ("placement", {"jobs", "median_ms", "p95_ms"}),
        ("optimum", {"jobs", "seconds", "optimal_cost_usd_per_h", "bruteforce_seconds"}),
    ],
)
def test_bench_prints_one_json_object(
    what: str, keys: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`rollmux bench placement|optimum --format json` prints one JSON object with the
    documented keys."""
    assert main(["bench", what, "--jobs", "6", "--seed", "1", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert keys <= set(result)
    assert result["jobs"] == 6


def test_bench_rejects_non_positive_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    """A zero job count is a one-line error naming the argument and its range."""
    assert main(["bench", "placement", "--jobs", "0"]) == 2
    assert capsys.readouterr().err == (
        "rollmux: error: argument --jobs: 0 is out of range: expected an integer from 1 to "
        "1000000 (see: rollmux bench --help)\n")
