"""One run identity (ReplaySpec, run_replay) and output folders that are one unit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rollmux.cli import main as cli_main
from rollmux.io import OUTPUT_MARKER, orphaned_siblings, replace_folder
from rollmux.sim import ReplaySpec, SimConfig, run_replay
from rollmux.sim import replay as replay_module
from rollmux.sim.replay import replay_keys

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "golden" / "traces" / "tiny-sim.csv"


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of a folder by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow
def test_run_replay_writes_what_rollmux_simulate_writes(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The production trace under rollmux, seed 0: byte-identical folders both ways."""
    monkeypatch.chdir(ROOT)
    d, d2 = tmp_path / "D", tmp_path / "D2"
    run_replay(ReplaySpec(trace="traces/production-default.csv", policy="rollmux", seed=0),
               out=d)
    assert cli_main(["simulate", "--trace", "traces/production-default.csv", "--policy",
                     "rollmux", "--seed", "0", "--out", str(d2), "--quiet"]) == 0
    assert _files(d) == _files(d2)
    assert set(_files(d)) == {"phases.csv", "events.csv", "timeseries.csv", "jobs.csv",
                              "config.json", "summary.json", OUTPUT_MARKER}


def test_spec_path_keys_and_config(tmp_path: Path) -> None:
    """spec.path() is the key=value folder; its keys are read back from config.json."""
    spec = ReplaySpec(trace=str(TINY), policy="rollmux", seed=2, slo="2.0",
                      max_group_size=3, sim=SimConfig(drift="Mixed", record_phases=False))
    assert spec.slo == "2"
    assert spec.path() == Path("trace=tiny-sim/slo=2/maxgroup=3/drift=Mixed/policy=rollmux/"
                               "seed=2")
    assert ReplaySpec(trace=str(TINY), policy="regroup", regroup_interval_h=0.5,
                      sim=SimConfig(stochastic=False, migration=False, sync="flat")
                      ).path() == Path(
        "trace=tiny-sim/slo=trace/maxgroup=default/drift=none/phases=expected/"
        "migration=off/sync=flat/regroup=0.5h/policy=regroup/seed=0")
    run_replay(spec, out=tmp_path / "run")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert replay_keys(config) == spec.keys() == {
        "trace": "tiny-sim", "slo": "2", "maxgroup": 3, "drift": "Mixed", "policy": "rollmux",
        "seed": 2}
    assert config["max_group_size_applied"] is True and config["slo_override"] == "2"
    assert not (tmp_path / "run" / "phases.csv").exists()


def test_spec_refuses_bad_fields() -> None:
    """One clear ValueError naming the field."""
    for kwargs, match in ((dict(policy="nope"), "unknown policy"),
                          (dict(seed=-1), "seed"), (dict(slo="0.5"), "SLO"),
                          (dict(max_group_size=0), "max_group_size"),
                          (dict(regroup_interval_h=0), "regroup_interval_h"),
                          (dict(sim=SimConfig(regroup_interval_s=60.0)), "regroup_interval_h"),
                          (dict(sim=SimConfig(policy_options=(("seed", 1),))),
                           "policy_options"),
                          (dict(sim="event"), "SimConfig")):
        with pytest.raises(ValueError, match=match):
            ReplaySpec(**{"trace": str(TINY), "policy": "rollmux", **kwargs})
    for kwargs, match in ((dict(fidelity="fast"), "fidelity"), (dict(sync="x"), "sync"),
                          (dict(drift=""), "drift"), (dict(stochastic=1), "stochastic"),
                          (dict(migration_threshold=1.5), "migration_threshold")):
        with pytest.raises(ValueError, match=match):
            SimConfig(**kwargs)
    with pytest.raises(ValueError, match="does not regroup"):
        ReplaySpec(trace=str(TINY), policy="rollmux", regroup_interval_h=1.0).policy_options()
    solo = ReplaySpec(trace=str(TINY), policy="solo-d", max_group_size=2)
    assert solo.policy_options() == ({}, False)  # never shares a node: the limit is moot


def test_rerun_without_phases_leaves_no_stale_phases(tmp_path: Path) -> None:
    """A --no-phases rerun into a folder replaces it whole: the old phases.csv is gone."""
    out = tmp_path / "run"
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=0), out=out)
    assert (out / "phases.csv").is_file()
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=1,
                          sim=SimConfig(record_phases=False)), out=out)
    assert sorted(_files(out)) == sorted([OUTPUT_MARKER, "config.json", "events.csv",
                                          "jobs.csv", "summary.json", "timeseries.csv"])
    assert json.loads((out / "config.json").read_text())["seed"] == 1
    assert orphaned_siblings(out) == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "run"]


def test_failed_write_keeps_the_previous_folder(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A write failing half-way (after phases.csv) leaves the seed-0 folder untouched."""
    out = tmp_path / "run"
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=0), out=out)
    before = _files(out)
    real = replay_module.write_csv

    def failing(frame: object, path: Path, fmt: str) -> Path:
        if Path(path).name == "events.csv":
            raise OSError("disk full (injected)")
        return real(frame, path, fmt)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_module, "write_csv", failing)
    with pytest.raises(OSError, match="injected"):
        run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=1), out=out)
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from rollmux.sim import ReplaySpec, SimConfig, run_replay
    from rollmux.sim import replay as replay_module

    real = replay_module.write_csv

    def slow(frame, path, fmt):
        written = real(frame, path, fmt)
        if Path(path).name == "events.csv":
            print("written", flush=True)
            time.sleep(60)  # killed here, with part of the folder written
        return written

    replay_module.write_csv = slow
    run_replay(ReplaySpec(trace=sys.argv[1], policy="rollmux", seed=1), out=sys.argv[2])
""")


def test_killed_run_leaves_the_previous_folder_and_an_orphan_that_is_cleaned(
        tmp_path: Path) -> None:
    """SIGKILL mid-write: the old folder stays complete; the next run removes the orphan."""
    out = tmp_path / "run"
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=0), out=out)
    before = _files(out)
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(TINY), str(out)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "written"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _files(out) == before  # seed 0, complete, no file of seed 1
    orphans = orphaned_siblings(out)
    assert len(orphans) == 1 and (orphans[0] / "events.csv").is_file()
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=2), out=out)
    assert json.loads((out / "config.json").read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "writer.py"]


def test_replace_folder_restores_a_folder_caught_between_renames(tmp_path: Path) -> None:
    """Killed after moving the old folder aside: the next writer puts it back first."""
    out = tmp_path / "run"
    dead = _dead_pid()
    old = tmp_path / f".run.old-{dead}-0123abcd"
    old.mkdir()
    (old / "summary.json").write_text("{}")
    tmp = tmp_path / f".run.tmp-{dead}-89abcdef"
    tmp.mkdir()
    assert orphaned_siblings(out) == [old, tmp]
    with pytest.raises(RuntimeError), replace_folder(out) as fresh:
        assert (out / "summary.json").is_file()  # restored before the new run writes
        (fresh / "x").write_text("x")
        raise RuntimeError("abandon this run")
    assert _files(out) == {"summary.json": b"{}"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_replace_folder_leaves_a_live_writers_folder_alone(tmp_path: Path) -> None:
    """A temporary folder of a process still running is not an orphan."""
    busy = tmp_path / f".run.tmp-{os.getppid()}-0123abcd"
    busy.mkdir()
    with replace_folder(tmp_path / "run") as fresh:
        (fresh / "a").write_text("a")
    assert busy.is_dir() and (tmp_path / "run" / "a").is_file()


def _dead_pid() -> int:
    """The id of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    time.sleep(0.01)
    return proc.pid
