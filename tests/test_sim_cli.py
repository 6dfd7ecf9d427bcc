"""The `rollmux simulate` command: validation first, outputs, exit codes, determinism."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from rollmux.jobs import RLJob
from rollmux.sim.cli import (
    DEFAULT_ROOT,
    SloSetting,
    draw_slos,
    group_size_options,
    main,
    parse_slo,
    register,
    spec_from_args,
)
from rollmux.sim.records import EVENT_COLUMNS, JOB_COLUMNS, PHASE_RECORD_COLUMNS
from rollmux.sim.sweeps import window_trace_text
from rollmux.traces.writer import trace_text

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
        ".rollmux-output.json", "config.json", "events.csv", "jobs.csv", "phases.csv",
        "summary.json", "timeseries.csv"]
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) >= SUMMARY_KEYS
    assert summary["jobs_completed"] == 4
    assert set(summary["peak_gpus"]) == {"H20", "H800"}
    config = json.loads((out / "config.json").read_text())
    assert config["policy"] == "rollmux" and config["fidelity"] == "event"
    assert len(config["trace_sha256"]) == 64
    assert list(pd.read_csv(out / "phases.csv").columns) == list(PHASE_RECORD_COLUMNS)
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
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"rollmux: error: {trace}:4: row 2, column slo: ")
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
                 "solo-d", "--out", str(out)]) == 2
    assert "argument --trace: " in capsys.readouterr().err
    assert not out.exists()


def test_default_output_folder_and_analytic_fidelity(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Default folder is key=value; the analytic path writes no per-phase table."""
    trace = _trace(tmp_path / "small.csv")
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--seed", "3",
                 "--fidelity", "analytic", "--quiet"]) == 0
    out = Path("results/simulate/trace=small/slo=trace/maxgroup=default/drift=none/"
               "fidelity=analytic/policy=solo-d/seed=3")
    assert out == DEFAULT_ROOT / spec_from_args(argparse.Namespace(
        trace=trace, policy="solo-d", seed=3, slo="trace", max_group_size=None,
        drift="none", drift_reach="profile", failures=None, hardware=None,
        hardware_overrides=None, fidelity="analytic", deterministic=False, no_migration=False,
        sync="topology",
        regroup_interval_h=None, no_phases=False)).path()
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


def test_register_adds_the_simulate_command(tmp_path: Path) -> None:
    """register() adds `simulate` with its options to any sub-parser set."""
    parser = argparse.ArgumentParser(prog="rollmux")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["simulate", "--trace", str(_trace(tmp_path / "x.csv")),
                              "--policy", "verl", "--no-migration", "--drift", "Mixed"])
    assert args.command == "simulate" and args.no_migration and args.drift == "Mixed"
    assert args.fidelity == "event" and args.seed == 0


# ------------------------------------------------------------- --slo, --max-group-size


def test_parse_slo_values_and_errors() -> None:
    """--slo: 'trace' keeps the trace, a number or LO,HI; anything else is refused."""
    assert parse_slo("trace") is None and parse_slo(" TRACE ") is None
    assert parse_slo("1.2") == SloSetting(1.2, 1.2)
    one_two = parse_slo("1,2")
    assert one_two == SloSetting(1.0, 2.0) and one_two.is_range
    assert one_two.label() == "1,2" and parse_slo("2.0").label() == "2"
    for bad, words in (("0.9", ">= 1"), ("2,1", "LO <= HI"), ("abc", "LO,HI"),
                       ("1,2,3", "LO,HI"), ("1,", "LO,HI"), ("nan", ">= 1"),
                       ("inf", ">= 1")):
        with pytest.raises(ValueError, match=words):
            parse_slo(bad)


def test_slo_draws_are_seeded_per_job_and_in_range() -> None:
    """A range draws U(LO, HI) per job from (seed, job id): order and subset do not matter."""
    ids = [f"j{k}" for k in range(200)]
    setting = SloSetting(1.0, 2.0)
    slos = draw_slos(ids, setting, seed=3)
    assert all(1.0 <= s <= 2.0 for s in slos) and len(set(slos)) == len(slos)
    assert 1.35 < sum(slos) / len(slos) < 1.65
    assert draw_slos(ids, setting, seed=3) == slos
    assert draw_slos(ids[::-1], setting, seed=3) == slos[::-1]
    assert draw_slos(ids[:10], setting, seed=3) == slos[:10]
    assert draw_slos(ids, setting, seed=4) != slos
    assert draw_slos(ids[:3], SloSetting(1.5, 1.5), seed=0) == [1.5, 1.5, 1.5]


def test_slo_override_applies_to_every_job_and_is_policy_independent(tmp_path: Path) -> None:
    """--slo 1.2 sets every job's SLO; --slo 1,2 gives each job the same SLO under every
    policy; the setting is recorded in config.json."""
    trace = _trace(tmp_path / "small.csv", n=5)
    fixed = tmp_path / "fixed"
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--quiet",
                 "--slo", "1.2", "--out", str(fixed)]) == 0
    assert set(pd.read_csv(fixed / "jobs.csv")["slo"]) == {1.2}
    assert json.loads((fixed / "config.json").read_text())["slo_override"] == "1.2"
    drawn = {}
    for policy in ("rollmux", "solo-d", "random"):
        out = tmp_path / policy
        assert main(["simulate", "--trace", str(trace), "--policy", policy, "--quiet",
                     "--seed", "2", "--slo", "1,2", "--out", str(out)]) == 0
        drawn[policy] = pd.read_csv(out / "jobs.csv").set_index("job_id")["slo"]
    assert drawn["rollmux"].equals(drawn["solo-d"]) and drawn["rollmux"].equals(
        drawn["random"])
    assert drawn["rollmux"].between(1.0, 2.0).all() and drawn["rollmux"].nunique() == 5
    default = tmp_path / "default"
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--quiet",
                 "--out", str(default)]) == 0
    assert set(pd.read_csv(default / "jobs.csv")["slo"]) == {1.5}
    assert json.loads((default / "config.json").read_text())["slo_override"] is None


def test_max_group_size_reaches_grouping_policies_only(tmp_path: Path) -> None:
    """--max-group-size 1 keeps every job alone under rollmux; solo-d ignores the limit."""
    trace = _trace(tmp_path / "small.csv", n=5)
    solo = tmp_path / "one"
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--quiet",
                 "--max-group-size", "1", "--out", str(solo)]) == 0
    jobs = pd.read_csv(solo / "jobs.csv")
    assert jobs["group_id"].nunique() == len(jobs)
    config = json.loads((solo / "config.json").read_text())
    assert config["policy_options"] == {"max_group_size": 1}
    assert config["max_group_size"] == 1 and config["max_group_size_applied"] is True
    ignored = tmp_path / "solo"
    assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--quiet",
                 "--max-group-size", "2", "--out", str(ignored)]) == 0
    config = json.loads((ignored / "config.json").read_text())
    assert config["policy_options"] == {} and config["max_group_size_applied"] is False


def test_group_size_options_rule() -> None:
    """Grouping policies take the limit, ungrouped ones ignore it, bad values are refused."""
    for policy in ("rollmux", "random", "greedy", "optimal", "regroup", "rollmux-noprune"):
        assert group_size_options(policy, 3) == ({"max_group_size": 3}, True)
    for policy in ("gavel-plus", "solo-d", "verl"):
        assert group_size_options(policy, 3) == ({}, False)
    assert group_size_options("rollmux", None) == ({}, False)
    with pytest.raises(ValueError, match="max_group_size"):
        group_size_options("rollmux", 0)


def test_bad_slo_and_group_size_exit_2(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Readable one-line errors, exit 2, nothing written."""
    trace = _trace(tmp_path / "small.csv")
    out = tmp_path / "out"
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux", "--slo", "0.5",
                 "--out", str(out)]) == 2
    assert "--slo '0.5'" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux",
                 "--max-group-size", "0", "--out", str(out)]) == 2
    assert "argument --max-group-size: 0 is out of range" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(trace), "--policy", "rollmux",
                 "--hardware-overrides", "[1]", "--out", str(out)]) == 2
    assert "JSON object" in capsys.readouterr().err
    assert not out.exists()


def test_hardware_overrides_change_prices(tmp_path: Path) -> None:
    """--hardware-overrides applies dotted keys (a dearer H20 raises Solo-D's cost)."""
    trace = _trace(tmp_path / "small.csv", n=2)
    costs = []
    for name, extra in (("base", []), ("dear", ["--hardware-overrides",
                                                 '{"gpus.H20.price_usd_per_h": 3.7}'])):
        out = tmp_path / name
        assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--quiet",
                     *extra, "--out", str(out)]) == 0
        costs.append(json.loads((out / "summary.json").read_text())["cost_usd_per_h"])
    assert costs[1] > costs[0]


SHIPPED_TRACES = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "traces").glob(
    "*.csv"))
REPEAT_WINDOW = 12  # arrivals: rollmux-repeat's decisions cost up to ~0.5 s each


@pytest.mark.parametrize("trace", SHIPPED_TRACES)
def test_rollmux_repeat_runs_on_every_shipped_trace(trace: str, tmp_path: Path) -> None:
    """`rollmux simulate --policy rollmux-repeat` completes every job of each shipped trace's
    first arrivals at event fidelity (its repeated orders never deadlock; the analytic
    fidelity runs them in tests/test_golden.py and tests/test_phase_semantics.py)."""
    source = Path(__file__).resolve().parents[1] / "traces" / trace
    window = tmp_path / trace
    window.write_text(window_trace_text(source.read_text(encoding="utf-8"), REPEAT_WINDOW,
                                        trace), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["simulate", "--trace", str(window), "--policy", "rollmux-repeat", "--out",
                 str(out), "--no-phases", "--quiet"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs_completed"] == summary["jobs"] > 0
