"""The C38 evidence: jobs that miss their SLO, their per-iteration times and the cause."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rollmux.experiments.slo_evidence import SLO_MISS_COLUMNS, replay_misses, slo_misses
from rollmux.sim import ReplaySpec, SimConfig, run_replay

KEYS = {"trace": "t", "slo": "trace", "maxgroup": 5, "seed": 0}


def _jobs(rows: list[tuple[int, str, float, float, float]]) -> pd.DataFrame:
    """Completed jobs (index, id, slo, solo s, running s), 4 iterations, admitted at 0."""
    out = []
    for k, job_id, slo, solo_s, running_s in rows:
        achieved = running_s / 4
        out.append({"job": k, "job_id": job_id, "status": "completed", "slo": slo,
                    "iterations_done": 4, "admitted_s": 0.0, "running_s": running_s,
                    "solo_iteration_s": solo_s, "achieved_iteration_s": achieved,
                    "slowdown": achieved / solo_s,
                    "slo_met": achieved <= slo * solo_s, "group_id": "G1",
                    "strategy": "direct-packing"})
    return pd.DataFrame(out)


def _phases(k: int, first_start_s: float, train_ends_s: list[float]) -> pd.DataFrame:
    """A rollout starting at ``first_start_s`` and training phases ending at ``train_ends_s``."""
    rows = [{"job": k, "phase": 0, "iteration": 0, "start_s": first_start_s,
             "end_s": first_start_s + 1.0}]
    rows += [{"job": k, "phase": 1, "iteration": i, "start_s": end - 1.0, "end_s": end}
             for i, end in enumerate(train_ends_s)]
    return pd.DataFrame(rows)


def test_slo_misses_splits_the_first_slot_wait_from_the_period() -> None:
    """A joiner whose steady period meets the bound misses by its first-slot wait; a job
    whose period exceeds the bound is named so; a job that meets is not listed."""
    jobs = _jobs([(0, "wait", 1.2, 200.0, 1000.0), (1, "slow", 1.2, 200.0, 1200.0),
                  (2, "fine", 1.2, 200.0, 800.0)])
    phases = pd.concat([_phases(0, 250.0, [400.0, 600.0, 800.0, 1000.0]),
                        _phases(1, 0.0, [300.0, 600.0, 900.0, 1200.0]),
                        _phases(2, 0.0, [200.0, 400.0, 600.0, 800.0])])
    table = slo_misses(jobs, phases, KEYS)
    assert list(table.columns) == list(SLO_MISS_COLUMNS)
    assert list(table.job_id) == ["wait", "slow"]
    wait, slow = table.iloc[0], table.iloc[1]
    assert wait.slo_bound_s == pytest.approx(240.0)
    assert wait.first_slot_wait_s == pytest.approx(250.0)
    assert wait.first_iteration_s == pytest.approx(400.0)
    assert wait.iteration_after_admission_s == pytest.approx(200.0)
    assert wait.excess_s == pytest.approx(1000.0 - 4 * 240.0)
    assert bool(wait.later_iterations_within_bound)
    assert wait.cause.startswith("first-slot wait")
    assert slow.cause == "period above the SLO bound"


def test_replay_misses_reruns_a_replay_with_its_phases(tmp_path: Path) -> None:
    """Every completed job that misses in a replay's jobs.csv gets a row, from a re-run
    that reproduces the replay; a replay without misses gives an empty table."""
    trace = "tests/golden/traces/tiny-sim.csv"
    out = tmp_path / "greedy"
    run_replay(ReplaySpec(trace=trace, policy="greedy", slo="1",
                          sim=SimConfig(stochastic=False)), out)
    jobs = pd.read_csv(out / "jobs.csv")
    missing = jobs[(jobs.status == "completed") & ~jobs.slo_met]
    assert len(missing) > 0
    table = replay_misses(out)
    assert sorted(table.job_id) == sorted(missing.job_id)
    assert (table.excess_s > 0).all()
    ok = tmp_path / "rollmux"
    run_replay(ReplaySpec(trace=trace, policy="rollmux", sim=SimConfig(stochastic=False)), ok)
    assert replay_misses(ok).empty
