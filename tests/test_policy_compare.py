"""Policies side by side on replays (rollmux.sim.policy_compare): rows, re-timed decisions,
metrics of the beyond ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rollmux.experiments.beyond import comparison_metrics
from rollmux.experiments.claims import load_beyond_ledger
from rollmux.experiments.metrics import METRIC_COLUMNS
from rollmux.sim import ReplaySpec, SimConfig, run_replay
from rollmux.sim.policy_compare import (
    COMPARISON_COLUMNS,
    KEY_COLUMNS,
    LATENCY_COLUMNS,
    decision_latencies_ms,
    latency_row,
    outcome_row,
    recorded_latency,
)
from rollmux.sim.sweeps import sweep_plan

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "golden" / "traces" / "tiny-prod.csv"


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """rollmux and rollmux-repeat replays of the tiny production trace (analytic)."""
    root = tmp_path_factory.mktemp("replays")
    out = {}
    for policy in ("rollmux", "rollmux-repeat"):
        spec = ReplaySpec(trace=str(TINY), policy=policy,
                          sim=SimConfig(fidelity="analytic", record_phases=False))
        run_replay(spec, root / policy)
        out[policy] = root / policy
    return out


def _row(folder: Path) -> dict:
    """A full comparison row: the replay's outcome and its decisions timed now."""
    return {**outcome_row(folder, TINY), **latency_row(folder, TINY)}


def test_row_reads_the_replay_and_times_its_own_decisions(replays: dict[str, Path]) -> None:
    """One row per replay: the summary's cost and SLO attainment, the completed jobs'
    slowdown, one timed decision per arrival (re-made decisions match the event log)."""
    for policy, folder in replays.items():
        row = _row(folder)
        assert sorted(row) == sorted(COMPARISON_COLUMNS)
        summary = json.loads((folder / "summary.json").read_text())
        jobs = pd.read_csv(folder / "jobs.csv")
        assert row["policy"] == policy and row["trace"] == "tiny-prod"
        assert row["total_cost_usd"] == summary["total_cost_usd"]
        assert row["slo_attainment"] == summary["slo_attainment"]
        assert row["mean_slowdown"] == pytest.approx(jobs.slowdown.mean())
        assert row["max_slowdown"] == pytest.approx(jobs.slowdown.max())
        assert row["decisions"] == len(jobs) and row["decision_median_ms"] > 0


def test_a_decision_that_differs_from_the_log_is_refused(replays: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """Re-made decisions are checked against events.csv: a tampered log names the job."""
    folder = tmp_path / "tampered"
    folder.mkdir()
    for name in ("config.json", "summary.json", "jobs.csv"):
        (folder / name).write_text((replays["rollmux"] / name).read_text())
    events = pd.read_csv(replays["rollmux"] / "events.csv", keep_default_na=False)
    first = events.index[events.kind == "arrival"][1]
    events.loc[first, "group_id"] = "G999"
    events.to_csv(folder / "events.csv", index=False)
    job = events.loc[first, "job_id"]
    with pytest.raises(ValueError, match=rf"job {job}: the re-made decision .* differs"):
        decision_latencies_ms(folder, TINY)


def test_metrics_are_ratios_of_the_rows_and_fill_the_beyond_ledger(
        replays: dict[str, Path]) -> None:
    """comparison_metrics: candidate over baseline per trace, named as the ledger names
    them; every shipped beyond metric is produced, with the ledger's unit."""
    table = pd.DataFrame([_row(folder) for folder in replays.values()])
    for label in ("production", "simulation"):
        labelled = table.assign(trace=f"t-{label}")
        metrics = comparison_metrics(labelled, "rollmux", "rollmux-repeat",
                                     {f"t-{label}": label}, "rollmux_repeat", "x.csv")
        assert list(metrics.columns) == list(METRIC_COLUMNS)
        by = metrics.set_index("metric")
        base, cand = table.iloc[0], table.iloc[1]
        assert by.at[f"rollmux_repeat_cost_ratio_{label}", "value"] == pytest.approx(
            cand.total_cost_usd / base.total_cost_usd)
        assert by.at[f"rollmux_repeat_slo_attainment_{label}", "value"] == pytest.approx(
            100 * cand.slo_attainment)
        ledger = load_beyond_ledger()
        part = ledger[ledger.metric.str.endswith(label)
                      & ledger.metric.str.startswith("rollmux_repeat_")
                      & ~ledger.metric.str.startswith("rollmux_repeat_strict_")
                      & (ledger.evidence == "results/beyond/repeat.csv")].set_index("metric")
        assert set(part.index) == set(by.index)
        assert (part.unit == by.loc[part.index, "unit"]).all()
        strict = comparison_metrics(labelled, "rollmux", "rollmux-repeat",
                                    {f"t-{label}": label}, "rollmux_repeat_strict", "x.csv",
                                    with_baseline=False, with_latency=False)
        part = ledger[ledger.metric.str.startswith("rollmux_repeat_strict_")
                      & ledger.metric.str.endswith(label)].set_index("metric")
        assert set(part.index) == set(strict.metric)
        assert (part.unit == strict.set_index("metric").loc[part.index, "unit"]).all()
    with pytest.raises(ValueError, match="no replay of policy 'greedy'"):
        comparison_metrics(table, "greedy", "rollmux-repeat", {"tiny-prod": "p"}, "x", "s")


def test_recorded_latency_is_looked_up_by_the_replay_keys(replays: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """A recorded latency table gives each replay its row; a missing one is named."""
    rows = [latency_row(folder, TINY) for folder in replays.values()]
    path = tmp_path / "latency.csv"
    pd.DataFrame(rows, columns=list(LATENCY_COLUMNS)).to_csv(path, index=False)
    for row in rows:
        keys = {k: row[k] for k in KEY_COLUMNS}
        assert recorded_latency(path, keys) == pytest.approx(row)
    missing = {**{k: rows[0][k] for k in KEY_COLUMNS}, "policy": "greedy"}
    with pytest.raises(ValueError, match=r"0 rows for trace=tiny-prod, policy=greedy"):
        recorded_latency(path, missing)
    pd.DataFrame(rows).drop(columns="decisions").to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"latency\.csv:1: header"):
        recorded_latency(path, {k: rows[0][k] for k in KEY_COLUMNS})


def test_shipped_recorded_latencies_cover_both_profiles() -> None:
    """benchmarks/recorded/ holds a latency row for every comparison replay of both
    profiles (the pipeline reads them by default)."""
    from profiles import PROFILES, load_profile

    recorded = ROOT / "benchmarks" / "recorded" / "beyond_repeat_latency.csv"
    for overlays in PROFILES.values():
        config = load_profile(*overlays)
        plan = sweep_plan(config["sim"], config["seed"], config.get("seeds"))
        for key in plan.repeat:
            if key.seed != plan.seeds[0]:
                continue  # latencies are recorded for the first seed (beyond_repeat.py)
            keys = {"trace": key.trace, "policy": key.policy, "seed": key.seed,
                    "phases": "stochastic" if key.stochastic else "expected"}
            assert recorded_latency(recorded, keys)["decisions"] > 0


def test_sweep_plan_replays_the_repeat_comparison() -> None:
    """The plan's repeat runs: each compared policy on the production trace and on the
    default simulation setting, shared with the runs Fig. 14 and Fig. 20 already need."""
    plan = sweep_plan({"sensitivity": {"window": 60}}, seeds=[0, 1, 2, 3, 4])
    assert {(k.trace, k.policy) for k in plan.repeat if "-gen" not in k.trace} == {
        (trace, policy) for trace in ("production-default", "simulation-mixed-first60")
        for policy in ("rollmux", "rollmux-repeat")}
    assert set(plan.repeat) <= set(plan.runs())
    # every seed on the production trace; on the simulation trace (fixed phase times) the
    # first seed replays the shipped trace, shared with Fig. 20's runs, each further seed s
    # the workload drawn again with seed s
    for policy in ("rollmux", "rollmux-repeat"):
        assert {k.seed for k in plan.repeat
                if (k.trace, k.policy) == ("production-default", policy)} == {0, 1, 2, 3, 4}
        assert {(k.trace, k.seed) for k in plan.repeat if k.policy == policy
                and k.trace.startswith("simulation")} == {
            ("simulation-mixed-first60", 0), *((f"simulation-mixed-gen{s}-first60", s)
                                               for s in (1, 2, 3, 4))}
    assert {k for k in plan.repeat if k.policy == "rollmux" and k.seed == 0} <= set(
        plan.production + plan.mixed)
    shipped = sweep_plan({"sensitivity": {"window": 60},
                          "beyond": {"simulation_traces": "shipped"}}, seeds=[0, 1])
    assert {k.trace for k in shipped.repeat} == {"production-default",
                                                 "simulation-mixed-first60"}
    with pytest.raises(ValueError, match="simulation_traces"):
        sweep_plan({"beyond": {"simulation_traces": "sampled"}})
    custom = sweep_plan({"beyond": {"repeat_policies": ["greedy", "rollmux-repeat"]}})
    assert {k.policy for k in custom.repeat} == {"greedy", "rollmux-repeat"}


def test_iteration_tail_counts_iterations_above_slo_times_solo() -> None:
    """Iteration = rollout start to the next rollout start (last: to its training's end)."""
    from rollmux.sim.policy_compare import iteration_tail

    jobs = pd.DataFrame({"job": [0, 1], "slo": [1.5, 2.0], "solo_iteration_s": [10.0, 10.0]})
    rows = []
    # job 0: iterations of 10, 16 (> 15), 14; job 1: 12, 25 (> 20, the last to its end)
    for job, starts, last_end in ((0, (0, 10, 26), 40), (1, (0, 12), 37)):
        for i, s in enumerate(starts):
            rows.append({"job": job, "phase": 0, "iteration": i, "start_s": s, "end_s": s + 3})
            end = last_end if i == len(starts) - 1 else s + 8
            rows.append({"job": job, "phase": 1, "iteration": i, "start_s": s + 4,
                         "end_s": end})
    assert iteration_tail(pd.DataFrame(rows), jobs) == (2, 2)
    relaxed = jobs.assign(slo=[2.0, 3.0])
    assert iteration_tail(pd.DataFrame(rows), relaxed) == (0, 0)


def test_comparison_metrics_pair_seeds_and_give_intervals() -> None:
    """Two seeds: the cost ratio is the mean of per-seed ratios, with a t interval."""
    rows = []
    for seed, (base, cand) in enumerate(((100.0, 90.0), (100.0, 96.0))):
        for policy, cost in (("rollmux", base), ("rollmux-repeat", cand)):
            rows.append({"trace": "p", "policy": policy, "seed": seed, "total_cost_usd": cost,
                         "slo_attainment": 1.0, "slo_attainment_realised": 0.9,
                         "mean_slowdown": 1.0, "decision_median_ms": 1.0})
    metrics = comparison_metrics(pd.DataFrame(rows), "rollmux", "rollmux-repeat",
                                 {"p": "production"}, "rollmux_repeat", "x.csv")
    by = metrics.set_index("metric")
    row = by.loc["rollmux_repeat_cost_ratio_production"]
    assert row["value"] == pytest.approx(0.93)
    assert float(row["low"]) < 0.93 < float(row["high"])
    assert by.at["rollmux_repeat_baseline_slo_attainment_realised_production",
                 "value"] == pytest.approx(90.0)


@pytest.mark.parametrize("policy", ["rollmux", "rollmux-repeat"])
def test_replay_counts_the_tail_as_phases_csv_does(policy: str, tmp_path: Path) -> None:
    """The summary's iterations_above_slo / jobs_above_slo (counted by the event model as
    it runs) equal iteration_tail of the same replay's phases.csv, and outcome_row reads
    them without phases.csv; every SLO reading is a number."""
    from rollmux.sim.policy_compare import iteration_tail

    spec = ReplaySpec(trace=str(TINY), policy=policy, seed=1, slo="1.2",
                      sim=SimConfig(record_phases=True))
    run_replay(spec, tmp_path / "run")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    tail = iteration_tail(pd.read_csv(tmp_path / "run" / "phases.csv"),
                          pd.read_csv(tmp_path / "run" / "jobs.csv"))
    assert (summary["iterations_above_slo"], summary["jobs_above_slo"]) == tail
    (tmp_path / "run" / "phases.csv").unlink()
    row = outcome_row(tmp_path / "run", TINY)
    assert (row["iterations_above_slo"], row["jobs_above_slo"]) == tail
    for reading in ("slo_attainment", "slo_attainment_realised", "slo_attainment_planned"):
        assert 0.0 <= row[reading] <= 1.0


def test_tail_tells_a_tight_slo_from_a_loose_one(tmp_path: Path) -> None:
    """The tail is a reading that can fail: Greedy (Most-Idle) packs without Algorithm 1's
    check, so at SLO 1 some iterations run above SLO x T_solo; at SLO 100 none does."""
    counts = {}
    for slo in ("1", "100"):
        spec = ReplaySpec(trace=str(TINY), policy="greedy", seed=1, slo=slo,
                          sim=SimConfig(record_phases=False))
        run_replay(spec, tmp_path / slo)
        counts[slo] = json.loads((tmp_path / slo / "summary.json").read_text())[
            "iterations_above_slo"]
    assert counts["1"] > 0 and counts["100"] == 0


def test_a_generated_trace_is_drawn_again_by_its_own_command() -> None:
    """Seed 0 of the shipped simulation trace's generator command gives its bytes back;
    seed 1 a different draw of the same workload; a trace without the header is refused."""
    from rollmux.experiments.beyond import regenerated_trace_text

    shipped = (ROOT / "traces" / "simulation-mixed.csv").read_text(encoding="utf-8")
    assert regenerated_trace_text(shipped, 0) == shipped
    other = regenerated_trace_text(shipped, 1)
    assert other != shipped and len(other.splitlines()) == len(shipped.splitlines())
    assert "--seed 1 --profile mixed --runtimes fit" in other.splitlines()[1]
    with pytest.raises(ValueError, match=r"tiny\.csv: no '# generated by"):
        regenerated_trace_text(TINY.read_text(encoding="utf-8"), 1, "tiny.csv")


def test_metrics_pair_the_draws_of_a_workload_by_seed() -> None:
    """Several traces under one label (a workload drawn again per seed) give one metric
    per quantity over every seed, paired by seed, with an interval."""
    rows = []
    for seed, trace in enumerate(("sim", "sim-gen1", "sim-gen2")):
        for policy, cost, tail in (("rollmux", 100.0, 0), ("rollmux-repeat", 95.0 + seed, 3)):
            rows.append({"trace": trace, "policy": policy, "seed": seed, "total_cost_usd": cost,
                         "slo_attainment": 1.0, "iterations_above_slo": tail + seed,
                         "jobs_above_slo": 1})
    labels = {"sim": "simulation", "sim-gen1": "simulation", "sim-gen2": "simulation"}
    by = comparison_metrics(pd.DataFrame(rows), "rollmux", "rollmux-repeat", labels,
                            "rollmux_repeat", "x.csv").set_index("metric")
    assert by.index.is_unique
    row = by.loc["rollmux_repeat_cost_ratio_simulation"]
    assert row["value"] == pytest.approx(0.96) and "3 seed(s)" in row["note"]
    assert float(row["low"]) < 0.96 < float(row["high"])
    assert by.at["rollmux_repeat_iterations_above_slo_simulation", "value"] == pytest.approx(4)
    assert by.at["rollmux_repeat_baseline_iterations_above_slo_simulation",
                 "value"] == pytest.approx(1)
