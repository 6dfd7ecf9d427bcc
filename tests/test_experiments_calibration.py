"""Fit `production_mix` (rollmux.experiments.calibration) and the production trace it ships."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from rollmux.closedform import TraceCost, isolated_trace_cost, isolated_trace_costs
from rollmux.experiments.calibration import (
    FIT,
    FitError,
    ProductionFit,
    check_packaged,
    check_shipped_trace,
    fit_production_mix,
    production_targets,
    relative_residual,
    run_production_mix,
)
from rollmux.experiments.claims import load_calibration, load_ledger
from rollmux.hardware import load_hardware
from rollmux.model import resolve
from rollmux.traces import load_trace
from rollmux.traces.generate import generate_production, load_workloads
from rollmux.traces.stats import job_summary
from rollmux.traces.writer import trace_text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "traces" / "production-default.csv"
CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
TOLERANCE = CONFIG["calibration"]["production_mix"]["tolerance"]


@pytest.fixture(scope="module")
def targets() -> Any:
    """The declared targets of fit production_mix."""
    ledger = load_ledger()
    return production_targets(load_calibration(ledger), ledger)


@pytest.fixture(scope="module")
def fit(targets: Any) -> ProductionFit:
    """The fit on the packaged inputs (seed 0, as the shipped trace)."""
    return fit_production_mix(0, targets)


def test_targets_are_the_declared_baseline_and_input_numbers(targets: Any) -> None:
    """The fit reads C05, C06, C56 and the span fact, none of them a RollMux benefit claim."""
    ledger = load_ledger()
    roles = dict(zip(ledger["claim_id"], ledger["role"], strict=True))
    assert {t.target for t in targets} == {"C05", "C06", "C56", "production_span_h"}
    assert all(roles.get(t.target, "fact") in ("baseline", "input", "fact") for t in targets)
    by_id = {t.target: t for t in targets}
    assert (by_id["C05"].paper, by_id["C06"].paper, by_id["C56"].paper) == (936, 704, 0.94)
    assert by_id["production_span_h"].paper == 370.2
    assert by_id["C56"].precision == pytest.approx(0.005)


def test_fit_is_deterministic_and_within_tolerance(fit: ProductionFit, targets: Any) -> None:
    """Two fits agree to the byte; every residual is within the tolerance plus rounding."""
    again = fit_production_mix(0, targets)
    assert (again.duration_sigma, again.multi_node_share, again.colocated_rollout_speedup) == (
        fit.duration_sigma, fit.multi_node_share, fit.colocated_rollout_speedup)
    assert again.trace_text == fit.trace_text
    assert again.residuals.equals(fit.residuals)
    for target, rec in zip(targets, fit.residuals.to_dict("records"), strict=True):
        allowed = TOLERANCE + target.precision / target.paper
        assert abs(relative_residual(rec["residual"])) <= allowed, rec
    # the span and veRL's cost are continuous in their parameters: fitted far tighter
    residual = {r["target"]: relative_residual(r["residual"]) for r in
                fit.residuals.to_dict("records")}
    assert abs(residual["production_span_h"]) < 1e-3 and abs(residual["C06"]) < 1e-3


def test_fit_ignores_the_packaged_fitted_values(fit: ProductionFit, targets: Any) -> None:
    """Changing the packaged fitted values does not change the fit (no circularity)."""
    workloads = copy.deepcopy(load_workloads())
    spec = workloads["production"]
    spec["duration_sigma"] = 0.9
    for entry in spec["gpus_by_size"].values():
        if len(entry["options"]) == 2:
            entry["weights"] = [0.5, 0.5]
    hw = load_hardware(overrides={"perf.colocated_rollout_speedup": 1.0})
    other = fit_production_mix(0, targets, workloads, hw)
    assert other.trace_text == fit.trace_text
    assert other.colocated_rollout_speedup == fit.colocated_rollout_speedup
    problems = check_packaged(fit, workloads, hw)
    assert len(problems) == 4
    assert any("production.duration_sigma is 0.9; the fit gives" in p for p in problems)
    assert any("perf.colocated_rollout_speedup.value is 1.0" in p for p in problems)


def test_packaged_inputs_and_shipped_trace_are_the_fitted_ones(fit: ProductionFit) -> None:
    """workloads.yaml and defaults.yaml hold the fitted values; the shipped trace is its trace."""
    assert check_packaged(fit, load_workloads(), load_hardware()) == []
    assert check_shipped_trace(fit, SHIPPED) == []
    generated = generate_production(0)
    assert trace_text(generated.jobs, generated.comments) == SHIPPED.read_text(encoding="utf-8")


def test_stale_shipped_trace_names_the_refresh_command(fit: ProductionFit,
                                                       tmp_path: Path) -> None:
    """A shipped trace that differs fails with its first differing line and the command."""
    stale = tmp_path / "production-default.csv"
    lines = fit.trace_text.splitlines(keepends=True)
    lines[5] = lines[5].replace("prod-0002", "prod-9999")
    stale.write_text("".join(lines), encoding="utf-8")
    (problem,) = check_shipped_trace(fit, stale)
    assert "first difference on line 6" in problem
    assert f"rollmux trace generate production --seed 0 --out {stale}" in problem
    out = tmp_path / "out"
    with pytest.raises(FitError, match="not the trace generated from the fitted inputs"):
        run_production_mix(out / "fitted.yaml", out / "residuals.csv", out / "trace.csv",
                           stale, seed=0, tolerance=TOLERANCE)
    assert not out.exists()  # nothing half-written


def test_run_writes_fitted_values_residuals_and_trace(tmp_path: Path) -> None:
    """The rule's outputs: fitted.yaml (values, files, trace hash), residuals, trace bytes."""
    fit = run_production_mix(tmp_path / "fitted.yaml", tmp_path / "residuals.csv",
                             tmp_path / "trace.csv", SHIPPED, seed=0, tolerance=TOLERANCE)
    document = yaml.safe_load((tmp_path / "fitted.yaml").read_text(encoding="utf-8"))
    assert document["fit"] == FIT
    assert document["parameters"]["duration_sigma"] == fit.duration_sigma
    assert document["hardware"]["perf.colocated_rollout_speedup"] == \
        fit.colocated_rollout_speedup
    assert (tmp_path / "trace.csv").read_text(encoding="utf-8") == SHIPPED.read_text(
        encoding="utf-8")
    header = (tmp_path / "residuals.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "target,unit,paper,fitted,residual,note"


def test_shipped_trace_follows_the_paper_setup() -> None:
    """§6.4: 200 jobs, 1:1 GPUs, 3B-32B, mean 12.1k max response, 27.9 h, span 370.2 h."""
    hw = load_hardware()
    jobs = load_trace(SHIPPED, hw)
    s = job_summary(jobs, hw)
    assert s["jobs"] == 200
    assert all(job.rollout_gpus == job.train_gpus for job in jobs)
    assert {job.rollout_gpus for job in jobs} == {8, 16}
    assert (s["model_size_min_b"], s["model_size_max_b"]) == (3.0, 32.0)
    assert s["mean_max_response_k"] == pytest.approx(12.1, abs=0.05)
    assert s["mean_duration_h"] == pytest.approx(27.9, abs=0.05)
    assert s["span_h"] == pytest.approx(370.2, rel=TOLERANCE)
    assert s["horizon_h"] <= 336.0
    assert s["slo_min"] >= 1.0 and s["slo_max"] <= 2.0
    assert s["mean_rollout_gpus"] == s["mean_train_gpus"]


def test_isolated_trace_cost_from_literals() -> None:
    """Total = sum of rate x run; span = last completion - first arrival."""
    cost = isolated_trace_cost([0.0, 3600.0], [7200.0, 7200.0], [10.0, 20.0])
    assert cost == TraceCost(total_usd=60.0, span_s=10800.0)
    assert cost.span_h == 3.0 and cost.usd_per_h == 20.0
    with pytest.raises(ValueError, match="one entry per job"):
        isolated_trace_cost([0.0], [1.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        isolated_trace_cost([0.0], [0.0], [1.0])


def _replay_cost(jobs: list[Any], policy: str, hw: Any) -> tuple[float, float]:
    """(cost_usd_per_h, span_h) of an analytic replay of ``jobs`` under ``policy``."""
    from rollmux.sim.engine import SimConfig, simulate_trace

    summary = simulate_trace(jobs, policy, hw, 0, SimConfig(fidelity="analytic")).summary
    return summary["cost_usd_per_h"], summary["span_h"]


def _first_jobs(n: int) -> list[Any]:
    """The first ``n`` jobs of the shipped production trace."""
    return load_trace(SHIPPED, load_hardware())[:n]


def test_closed_form_matches_the_solo_d_replay() -> None:
    """Solo-D's closed-form trace cost equals the simulator's replay (expected phases)."""
    hw = load_hardware()
    jobs = _first_jobs(25)
    cost = isolated_trace_costs([resolve(j, hw) for j in jobs])["solo-d"]
    replay_usd_per_h, replay_span_h = _replay_cost(jobs, "solo-d", hw)
    assert replay_usd_per_h == pytest.approx(cost.usd_per_h, rel=1e-9)
    assert replay_span_h == pytest.approx(cost.span_h, rel=1e-9)


def test_closed_form_matches_the_verl_replay_at_bandwidth_scaling() -> None:
    """With speed-up 1 (bandwidth scaling) veRL's closed form equals the replay."""
    hw = load_hardware(overrides={"perf.colocated_rollout_speedup": 1.0})
    jobs = _first_jobs(25)
    cost = isolated_trace_costs([resolve(j, hw) for j in jobs])["verl"]
    assert _replay_cost(jobs, "verl", hw)[0] == pytest.approx(cost.usd_per_h, rel=1e-9)


def test_verl_replay_reads_the_fitted_speedup() -> None:
    """The veRL replay uses the fitted co-located rollout speed-up, as the closed form does."""
    hw = load_hardware()
    assert hw.perf.colocated_rollout_speedup != 1.0
    jobs = _first_jobs(25)
    cost = isolated_trace_costs([resolve(j, hw) for j in jobs])["verl"]
    assert _replay_cost(jobs, "verl", hw)[0] == pytest.approx(cost.usd_per_h, rel=1e-9)


def test_speedup_scales_only_the_colocated_rollout() -> None:
    """veRL's iteration shrinks by the rollout part only; Solo-D does not move."""
    jobs = _first_jobs(10)
    slow = load_hardware(overrides={"perf.colocated_rollout_speedup": 1.0})
    fast = dataclasses.replace(slow, perf=dataclasses.replace(slow.perf,
                                                              colocated_rollout_speedup=2.0))
    a = isolated_trace_costs([resolve(j, slow) for j in jobs])
    b = isolated_trace_costs([resolve(j, fast) for j in jobs])
    assert a["solo-d"] == b["solo-d"]
    assert b["verl"].total_usd < a["verl"].total_usd
    assert np.isfinite(b["verl"].usd_per_h)
