"""rollmux.sim.sweeps: sweep plans, trace windows, tidy tables, fluid bound, claim metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pooled import POOLS

from rollmux.closedform import fluid_cost_usd_per_iteration
from rollmux.experiments.metrics import METRIC_COLUMNS
from rollmux.experiments.production import production_metrics
from rollmux.experiments.sensitivity import simulation_metrics
from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.sim.cli import main as simulate_main
from rollmux.sim.sweeps import (
    RunKey,
    Setting,
    collect_runs,
    collect_timeseries,
    fluid_job_rates,
    fluid_table,
    fluid_timeseries,
    run_files,
    run_keys,
    sensitivity_table,
    sweep_plan,
    trace_file,
    window_name,
    window_trace_text,
)
from rollmux.traces.loader import load_trace
from rollmux.traces.writer import trace_text


def _jobs(n: int = 4) -> list[RLJob]:
    """Small jobs with direct phase times, arriving 50 s apart."""
    return [RLJob(f"t{k}", 7.0, 4096, rollout_s=120.0 + 30 * k, train_s=80.0,
                  rollout_max_s=150.0 + 30 * k, train_max_s=90.0, iterations=6 + k,
                  arrival_s=50.0 * k, slo=1.5) for k in range(n)]


def _fake_run(root: Path, key: RunKey, cost: float, slo: float, *, h20: int = 8,
              h800: int = 8, idle: tuple[float, float] = (1.0, 1.0),
              shares: dict[str, float] | None = None) -> Path:
    """A hand-written replay folder: summary.json and a two-step timeseries.csv."""
    folder = key.path(root)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "trace": f"traces/{key.trace}.csv",
        "slo_override": None if key.slo == "trace" else key.slo,
        "max_group_size": key.maxgroup, "drift": key.drift, "policy": key.policy,
        "seed": key.seed}))
    summary = {
        "jobs": 10, "jobs_completed": 10, "jobs_rejected": 0, "cost_usd_per_h": cost,
        "total_cost_usd": 10.0 * cost, "peak_cost_usd_per_h": 2 * cost, "span_h": 10.0,
        "slo_attainment": slo, "mean_slowdown": 1.1, "max_slowdown": 1.3,
        "peak_gpus": {"H20": h20, "H800": h800},
        "bubble_fraction": {"rollout": 0.5, "train": 0.4},
        "idle_gpu_h": {"rollout": idle[0], "train": idle[1]},
        "admission_shares": shares or {"new-group": 1.0},
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    pd.DataFrame({"time_s": [0.0, 3600.0, 7200.0], "cost_usd_per_h": [cost, 2 * cost, 0.0],
                  "gpus_rollout": [h20, h20, 0], "gpus_train": [h800, h800, 0],
                  "gpus_H20": [h20 // 2, h20, 0], "gpus_H800": [h800, h800, 0],
                  "jobs_active": [1, 2, 0], "groups": [1, 1, 0]}).to_csv(
        folder / "timeseries.csv", index=False)
    return folder


# --------------------------------------------------------------------------- keys and plans


def test_run_key_path_and_keys_from_config(tmp_path: Path) -> None:
    """A run key's folder is its spec's path; keys are read back from config.json."""
    key = RunKey("simulation-mixed-first60", "1,2", 3, "rollmux", 7, drift="Mixed")
    path = key.path("results/sim")
    assert str(path) == ("results/sim/trace=simulation-mixed-first60/slo=1,2/maxgroup=3/"
                         "drift=Mixed/policy=rollmux/seed=7")
    assert path == Path("results/sim") / key.spec().path()
    folder = tmp_path / "anywhere"  # the folder's name plays no part
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "trace": "results/sim/traces/simulation-mixed-first60.csv", "slo_override": "1,2",
        "max_group_size": 3, "drift": "Mixed", "policy": "rollmux", "seed": 7}))
    assert run_keys(folder) == {"trace": "simulation-mixed-first60", "slo": "1,2",
                                "maxgroup": 3, "drift": "Mixed", "policy": "rollmux",
                                "seed": 7}
    with pytest.raises(ValueError, match="not a replay folder"):
        run_keys(tmp_path)


def test_sweep_plan_defaults_and_sharing() -> None:
    """The default plan: 4 workloads + 4 SLOs + 4 group sizes, shared default runs."""
    plan = sweep_plan({})
    assert [s.kind for s in plan.settings] == ["workload"] * 4 + ["slo"] * 4 + \
        ["maxgroup"] * 4
    assert [s.value for s in plan.settings if s.kind == "slo"] == ["1.2", "1.5", "2", "trace"]
    assert plan.mixed_setting == Setting("workload", "Mixed", "simulation-mixed", "trace", 5)
    # 4 + 3 + 3 distinct settings (Mixed = SLO trace = group size 5), 4 policies each
    assert len(set(plan.sensitivity)) == 40
    assert {k.policy for k in plan.production} == {"rollmux", "solo-d", "verl"}
    assert set(plan.mixed) <= set(plan.sensitivity)
    windowed = sweep_plan({"sensitivity": {"window": 60, "slos": ["1.2", "1,2.0"]}}, 3)
    assert windowed.seeds == (3,)
    assert {k.trace for k in windowed.sensitivity} == {
        f"simulation-{w}-first60" for w in ("balanced", "rollout-heavy", "train-heavy",
                                            "mixed")}
    assert {k.slo for k in windowed.sensitivity} == {"1.2", "1,2", "trace"}
    assert window_name("x", 0) == "x" and window_name("x", 5) == "x-first5"
    with pytest.raises(ValueError, match="reference"):
        sweep_plan({"sensitivity": {"policies": ["rollmux"], "reference": "optimal"}})
    with pytest.raises(ValueError, match="default_workload"):
        sweep_plan({"sensitivity": {"default_workload": "XX"}})


def test_sweep_plan_replays_the_reference_at_its_fidelity() -> None:
    """The reference (the optimum) progresses at steady-state rates unless told otherwise."""
    plan = sweep_plan({})
    assert {k.fidelity for k in plan.sensitivity if k.policy == "optimal"} == {"analytic"}
    assert {k.fidelity for k in plan.sensitivity if k.policy != "optimal"} == {"event"}
    key = next(k for k in plan.mixed if k.policy == "optimal")
    assert "fidelity=analytic/phases=expected" in str(key.path())
    event = sweep_plan({"sensitivity": {"reference_fidelity": "event"}})
    assert {k.fidelity for k in event.sensitivity} == {"event"}
    with pytest.raises(ValueError, match="reference_fidelity"):
        sweep_plan({"sensitivity": {"reference_fidelity": "fluid"}})


# --------------------------------------------------------------------------- windows


def test_window_keeps_first_arrivals_verbatim(tmp_path: Path) -> None:
    """The window keeps the first N arrivals' rows byte for byte, in file order."""
    text = trace_text(_jobs(6), comments=["generated by: test"])
    out = window_trace_text(text, 3, source="t.csv")
    lines = out.splitlines()
    assert lines[0] == "# schema_version: 1" and "# window: first 3 arrivals of t.csv" in lines
    rows_in = [ln for ln in text.splitlines() if ln.startswith("t")]
    assert [ln for ln in lines if ln.startswith("t")] == rows_in[:3]
    path = tmp_path / "w.csv"
    path.write_text(out)
    assert [j.job_id for j in load_trace(path)] == ["t0", "t1", "t2"]
    assert window_trace_text(text, 3) == window_trace_text(text, 3)
    assert len(load_trace_text(tmp_path, window_trace_text(text, 99))) == 6
    with pytest.raises(ValueError, match=">= 1"):
        window_trace_text(text, 0)
    with pytest.raises(ValueError, match="arrival_s"):
        window_trace_text("a,b\n1,2\n", 1)


def test_window_orders_by_arrival_not_by_row() -> None:
    """Out-of-order rows: the earliest arrivals are kept, ties by row order."""
    text = "# c\njob_id,arrival_s\nz,30\ny,10\nx,20\nw,10\n"
    assert window_trace_text(text, 2) == "# c\n# window: first 2 arrivals\njob_id,arrival_s\n" \
        "y,10\nw,10\n"


def load_trace_text(folder: Path, text: str) -> list[RLJob]:
    """Write ``text`` as a trace and load it."""
    path = folder / "tmp_trace.csv"
    path.write_text(text)
    return load_trace(path)


# --------------------------------------------------------------------------- tables


def test_collect_runs_and_timeseries(tmp_path: Path) -> None:
    """Rows carry keys, summary metrics, peak total GPUs and admission shares."""
    a = _fake_run(tmp_path, RunKey("t", "trace", 5, "rollmux", 0), 100.0, 1.0, h20=16,
                  h800=8, shares={"direct-packing": 0.5, "new-group": 0.5})
    b = _fake_run(tmp_path, RunKey("t", "trace", 5, "solo-d", 0), 200.0, 1.0)
    runs = collect_runs([b, a, a])
    assert list(runs["policy"]) == ["rollmux", "solo-d"]
    row = runs.iloc[0]
    assert row["peak_gpus_total"] == 24 and row["peak_gpus_H20"] == 16
    assert row["share_direct_packing"] == 0.5 and row["share_rollout_scaling"] == 0.0
    assert row["idle_gpu_h_rollout"] == 1.0
    ts = collect_timeseries([a, b])
    assert list(ts["time_h"][:3]) == [0.0, 1.0, 2.0]
    assert list(ts["gpus_total"][:3]) == [16, 24, 0]
    assert set(ts["policy"]) == {"rollmux", "solo-d"}


def test_sensitivity_table_normalises_by_reference(tmp_path: Path) -> None:
    """cost_over_optimal is per setting and seed; a missing reference is an error."""
    folders = []
    for group, opt in ((2, 100.0), (5, 80.0)):
        folders.append(_fake_run(tmp_path, RunKey("m", "trace", group, "optimal", 0), opt, 0.9))
        folders.append(_fake_run(tmp_path, RunKey("m", "trace", group, "random", 0), 160.0,
                                 0.5))
    runs = collect_runs(folders)
    settings = [Setting("maxgroup", "2", "m", "trace", 2), Setting("maxgroup", "5", "m",
                                                                   "trace", 5)]
    table = sensitivity_table(runs, settings)
    rnd = table[table["policy"] == "random"].set_index("value")
    assert rnd.loc["2", "cost_over_optimal"] == pytest.approx(1.6)
    assert rnd.loc["5", "cost_over_optimal"] == pytest.approx(2.0)
    assert (table[table["policy"] == "optimal"]["cost_over_optimal"] == 1.0).all()
    with pytest.raises(ValueError, match="no 'greedy' replay"):
        sensitivity_table(runs, settings, reference="greedy")


# --------------------------------------------------------------------------- fluid bound


def test_fluid_bound_integral_equals_per_job_sum() -> None:
    """The step function's integral is the sum of iterations x per-iteration fluid cost."""
    hw = load_hardware()
    jobs = _jobs(4)
    rates = fluid_job_rates(jobs, hw)
    expected = sum(j.iterations * fluid_cost_usd_per_iteration(resolve(j, hw).phases, POOLS)
                   for j in jobs)
    steps = fluid_timeseries(rates)
    widths = np.diff(steps["time_s"].to_numpy())
    integral = float(np.dot(steps["fluid_cost_usd_per_h"].to_numpy()[:-1], widths)) / 3600
    assert integral == pytest.approx(expected, rel=1e-9)
    assert steps["fluid_cost_usd_per_h"].iloc[-1] == 0.0
    assert (steps["fluid_cost_usd_per_h"] >= 0).all()
    assert steps["time_s"].iloc[0] == 0.0
    assert steps["time_s"].iloc[-1] == pytest.approx(rates["end_s"].max())


def test_every_policy_costs_at_least_the_fluid_bound(tmp_path: Path) -> None:
    """Real replays of a small trace: each policy's total cost >= the bound of its work."""
    hw = load_hardware()
    trace = tmp_path / "small.csv"
    trace.write_text(trace_text(_jobs(5)))
    folders = []
    for policy in ("rollmux", "solo-d", "verl"):
        key = RunKey("small", "trace", 5, policy, 0)
        assert simulate_main(["simulate", "--trace", str(trace), "--policy", policy,
                              "--quiet", "--no-phases", "--deterministic",
                              "--out", str(key.path(tmp_path))]) == 0
        folders.append(key.path(tmp_path))
    runs = collect_runs(folders)
    rates = {"small": fluid_job_rates(load_trace(trace), hw)}
    done = {}
    for folder in folders:
        keys = run_keys(folder)
        jobs = pd.read_csv(folder / "jobs.csv")
        done[tuple(keys.values())] = dict(zip(jobs["job_id"], jobs["iterations_done"],
                                              strict=True))
    table = fluid_table(runs, rates, done)
    assert (table["cost_over_fluid"] >= 1.0).all()
    assert list(table["fluid_cost_usd"]) == pytest.approx(list(table["fluid_trace_cost_usd"]))
    solo = table.set_index("policy").loc["solo-d"]
    assert solo["cost_over_fluid"] > 1.2  # dependency bubbles: a pool idles each phase


# --------------------------------------------------------------------------- metrics


def _readings(s: float) -> dict[str, float]:
    """The three SLO readings of a hand-written row: reference and realised ``s``."""
    return {"slo_attainment_planned": 1.0, "slo_attainment_reference": s,
            "slo_attainment_realised": s}


def _production_rows() -> list[dict[str, object]]:
    """A production table: RollMux stretched to twice Solo-D's span, veRL on Solo-D's."""
    rows = []
    for policy, total, span, h20, h800, idle, bubble in (
            ("rollmux", 6000.0, 20.0, 200, 150, (75.0, 50.0), (0.3, 0.2)),
            ("solo-d", 9000.0, 10.0, 300, 300, (100.0, 100.0), (0.5, 0.6)),
            ("verl", 7000.0, 10.0, 0, 320, (0.0, 5.0), (math.nan, 0.1))):
        rows.append({"trace": "p", "slo": "trace", "maxgroup": 5, "policy": policy,
                     "seed": 0, "cost_usd_per_h": total / span, "total_cost_usd": total,
                     "span_h": span, "slo_attainment": 1.0, **_readings(1.0),
                     "peak_gpus_H20": h20, "peak_gpus_H800": h800,
                     "idle_gpu_h_rollout": idle[0], "idle_gpu_h_train": idle[1],
                     "bubble_fraction_rollout": bubble[0], "bubble_fraction_train": bubble[1],
                     "share_direct_packing": 0.6, "share_rollout_scaling": 0.15,
                     "share_new_group": 0.25})
    return rows


def test_production_metrics_from_a_table() -> None:
    """C01-C13, C56 computed from the table: ratios, percents, both bubble readings."""
    rows = _production_rows()
    m = production_metrics(pd.DataFrame(rows), "results/sim/production.csv").set_index(
        "metric")
    assert list(m.reset_index().columns) == list(METRIC_COLUMNS)
    assert m.loc["slo_attainment_rollmux", "value"] == 100.0
    assert m.loc["admission_direct_packing", "value"] == pytest.approx(60.0)
    # points reading: Solo-D's bubble fraction minus RollMux's; relative one in the note
    assert m.loc["bubble_reduction_rollout", "value"] == pytest.approx(20.0)
    assert m.loc["bubble_reduction_training", "value"] == pytest.approx(40.0)
    assert "relative drop of idle GPU-h: 25%" in m.loc["bubble_reduction_rollout", "note"]
    assert "relative drop of idle GPU-h: 50%" in m.loc["bubble_reduction_training", "note"]
    assert m.loc["peak_h800_ratio", "value"] == pytest.approx(320 / 150, rel=1e-5)
    assert m.loc["peak_h20_ratio", "value"] == pytest.approx(1.5)
    assert (m["low"] == "").all() and (m["unit"] != "").all()
    with pytest.raises(ValueError, match="verl"):
        production_metrics(pd.DataFrame(rows[:2]), "x")


def test_production_cost_ratios_are_total_costs_on_a_stretched_replay() -> None:
    """RollMux stretched to 20 h: its own-span average (300 $/h) would make it 3x cheaper
    than Solo-D (900 $/h); the total cost of the same work makes it 1.5x, and the hourly
    costs are totals over the trace's span (Solo-D's 10 h): 600, 900 and 700 $/h."""
    m = production_metrics(pd.DataFrame(_production_rows()), "x").set_index("metric")
    assert m.loc["cost_ratio_solod_over_rollmux", "value"] == pytest.approx(1.5)
    assert "own span: 3)" in m.loc["cost_ratio_solod_over_rollmux", "note"]
    assert m.loc["cost_ratio_verl_over_rollmux", "value"] == pytest.approx(7000 / 6000,
                                                                           rel=1e-5)
    assert m.loc["cost_per_hour_rollmux", "value"] == pytest.approx(600.0)
    assert "own span 20 h: 300" in m.loc["cost_per_hour_rollmux", "note"]
    assert m.loc["cost_per_hour_solod", "value"] == pytest.approx(900.0)
    assert m.loc["cost_per_hour_verl", "value"] == pytest.approx(700.0)
    assert m.loc["solod_vs_verl_cost", "value"] == pytest.approx(0.9)


def _simulation_sweep(seeds: tuple[int, ...] = (0,)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sensitivity rows of every kind and the mixed rows among them (at ``seeds``, the
    values shifted per seed)."""
    rows = []
    for seed in seeds:
        for row in _simulation_rows():
            shift = 0.01 * seed
            rows.append({**row, "seed": seed,
                         "total_cost_over_optimal": row["total_cost_over_optimal"] + shift,
                         "slo_attainment_realised": row["slo_attainment_realised"] - shift})
    sens = pd.DataFrame(rows)
    return sens, sens[(sens["kind"] == "workload") & (sens["value"] == "Mixed")]


def test_simulation_metrics_of_some_metrics_are_the_whole_files_rows() -> None:
    """``metrics=[m]`` gives m's rows (and its reading companion) exactly as the whole
    file has them, per seed and over seeds (what the what-it-would-take searches read)."""
    from rollmux.experiments.metrics import split_reading
    from rollmux.experiments.sensitivity import simulation_metrics_over_seeds

    sens, mixed = _simulation_sweep((0, 1, 2))
    whole, per_seed = simulation_metrics_over_seeds(sens, mixed, "a;b", window_note="; w")
    names = sorted({split_reading(m)[0] for m in whole["metric"]})
    assert len(names) == 17
    for name in names:
        some, some_seed = simulation_metrics_over_seeds(sens, mixed, "a;b", window_note="; w",
                                                        metrics=[name])
        rows = whole[[split_reading(m)[0] == name for m in whole["metric"]]]
        pd.testing.assert_frame_equal(some, rows.reset_index(drop=True))
        seed_rows = per_seed[[split_reading(m)[0] == name for m in per_seed["metric"]]]
        pd.testing.assert_frame_equal(some_seed, seed_rows.reset_index(drop=True))


def _simulation_rows() -> list[dict[str, object]]:
    """One seed's sensitivity rows: SLO settings, workloads and group-size limits."""
    rows = []
    slo_random = {"1.2": 0.4, "1.5": 0.1, "2": 0.7, "trace": 0.5}
    for value, att in slo_random.items():
        for policy, cost, s in (("rollmux", 1.05, 1.0), ("random", 1.8, att),
                                ("greedy", 1.6, att + 0.05), ("optimal", 1.0, 1.0)):
            rows.append({"kind": "slo", "value": value, "policy": policy, "seed": 0,
                         "total_cost_over_optimal": cost, "cost_over_optimal": cost / 2,
                         "slo_attainment": s, **_readings(s), "peak_gpus_total": 100})
    for kind, values in (("workload", ("BL", "RH", "TH", "Mixed")),
                         ("maxgroup", ("2", "3", "4", "5"))):
        for k, value in enumerate(values):
            for policy, cost, s in (("rollmux", 1.0 + 0.01 * k, 0.99), ("random", 2.0, 0.5),
                                    ("greedy", 1.5 + 0.1 * k, 0.6), ("optimal", 1.0, 1.0)):
                rows.append({"kind": kind, "value": value, "policy": policy, "seed": 0,
                             "total_cost_over_optimal": cost, "cost_over_optimal": cost / 2,
                             "slo_attainment": s, **_readings(s),
                             "peak_gpus_total": 100 + k})
    return rows


def test_simulation_metrics_ranges_span_the_right_settings() -> None:
    """Ranges are min..max over the settings of their kind; C34/C35 only the endpoints."""
    sens, mixed = _simulation_sweep()
    m = simulation_metrics(sens, mixed, "a;b", slo_endpoints=("1.2", "2.0")).set_index(
        "metric")
    assert len(m) == 17 + 8  # and the paper-reference companion of the 8 SLO metrics
    assert m.loc["slo_random_by_slo@reference", ["low", "high"]].tolist() == \
        pytest.approx([40.0, 70.0])
    assert (m.loc["cost_over_opt_rollmux_by_workload", ["low", "high"]].tolist()
            == pytest.approx([1.0, 1.03]))
    assert m.loc["slo_random_by_slo", ["low", "high"]].tolist() == pytest.approx([40.0, 70.0])
    assert m.loc["cost_over_opt_baselines_by_slo", ["low", "high"]].tolist() == \
        pytest.approx([1.6, 1.8])
    assert m.loc["cost_over_opt_baselines_by_groupsize", "high"] == pytest.approx(2.0)
    assert m.loc["slo_rollmux_simulation", "value"] == pytest.approx(99.0)
    assert m.loc["cost_over_opt_greedy_mixed", "value"] == pytest.approx(1.8)
    assert m.loc["peak_gpus_rollmux_mixed", "value"] == 103
    assert m.loc["slo_random_mixed", "value"] == pytest.approx(50.0)
    # the claims read total-cost ratios; the time averages (here halved) are in the notes
    assert "time-average ratio 0.9)" in m.loc["cost_over_opt_greedy_mixed", "note"]
    assert "time-average ratio 0.8 to 0.9" in m.loc["cost_over_opt_baselines_by_slo", "note"]
    assert math.isnan(float(m.loc["slo_random_mixed", "low"] or "nan"))


def test_trace_file_and_run_files(tmp_path: Path) -> None:
    """Shipped traces win over derived windows; run files follow the key layout."""
    shipped = tmp_path / "traces"
    shipped.mkdir()
    (shipped / "a.csv").write_text("x")
    assert trace_file("a", shipped, tmp_path / "d") == str(shipped / "a.csv")
    assert trace_file("a-first5", shipped, tmp_path / "d") == str(tmp_path / "d" /
                                                                   "a-first5.csv")
    keys = [RunKey("t", "trace", 5, p, 0) for p in ("rollmux", "verl")]
    assert run_files(keys, "jobs.csv", "r") == [
        "r/trace=t/slo=trace/maxgroup=5/drift=none/policy=rollmux/seed=0/jobs.csv",
        "r/trace=t/slo=trace/maxgroup=5/drift=none/policy=verl/seed=0/jobs.csv"]


# --------------------------------------------------------------------------- seeds


def test_sweep_plan_repeats_only_the_replays_the_seed_changes() -> None:
    """Sampled phases, Random and SLO ranges run at every seed; the rest once, at the first."""
    plan = sweep_plan({"sensitivity": {"phases": "expected", "slos": ["1.2", "1,2"]}},
                      seeds=[4, 1, 7])
    assert plan.seeds == (4, 1, 7)
    assert {k.seed for k in plan.production} == {4, 1, 7}  # stochastic phases
    by_policy: dict[tuple[str, str], set[int]] = {}
    for key in plan.sensitivity:
        by_policy.setdefault((key.policy, key.slo), set()).add(key.seed)
    assert by_policy[("random", "trace")] == {4, 1, 7}
    assert by_policy[("rollmux", "trace")] == {4}
    assert by_policy[("optimal", "1.2")] == {4}
    assert by_policy[("rollmux", "1,2")] == {4, 1, 7}  # SLOs drawn per seed
    drift = RunKey("t", "trace", 5, "rollmux", 0, drift="Mixed", stochastic=False)
    assert drift.uses_seed()
    with pytest.raises(ValueError, match="seeds"):
        sweep_plan({}, seeds=[1, 1])
    with pytest.raises(ValueError, match="seeds"):
        sweep_plan({}, seeds=[])


def test_a_replay_the_seed_does_not_change_is_identical_at_every_seed(tmp_path: Path) -> None:
    """What the plan runs once really is seed-free: same tables at seeds 0 and 5 (and a
    seeded replay differs, so the check can tell)."""
    trace = Path(__file__).parent / "golden" / "traces" / "tiny-sim.csv"

    def replay(policy: str, seed: int, *extra: str) -> tuple[dict, str]:
        out = tmp_path / f"{policy}-{seed}-{len(extra)}"
        assert simulate_main(["simulate", "--trace", str(trace), "--policy", policy,
                              "--seed", str(seed),
                              "--out", str(out), *extra]) == 0
        summary = json.loads((out / "summary.json").read_text())
        return summary, (out / "jobs.csv").read_text()

    for policy in ("rollmux", "greedy", "optimal"):
        key = RunKey("tiny-sim", "trace", 5, policy, 0, stochastic=False)
        assert not key.uses_seed()
        a, jobs_a = replay(policy, 0, "--deterministic")
        b, jobs_b = replay(policy, 5, "--deterministic")
        a.pop("seed", None), b.pop("seed", None)
        assert a == b and jobs_a == jobs_b, policy
    assert RunKey("tiny-sim", "trace", 5, "random", 0, stochastic=False).uses_seed()
    a, jobs_a = replay("rollmux", 0)
    b, jobs_b = replay("rollmux", 5)
    assert jobs_a != jobs_b  # sampled phases: the seed matters


def test_collect_runs_copies_seed_free_replays_to_every_seed(tmp_path: Path) -> None:
    """A replay run once (expected phases, seed-free policy) pairs with each seed's Random."""
    folders = [_fake_run(tmp_path, RunKey("m", "trace", 5, "optimal", 0), 100.0, 0.9)]
    for seed, cost in ((0, 150.0), (1, 170.0)):
        folders.append(_fake_run(tmp_path, RunKey("m", "trace", 5, "random", seed), cost, 0.5))
    config = json.loads((folders[0] / "config.json").read_text())
    (folders[0] / "config.json").write_text(json.dumps({**config, "stochastic": False}))
    runs = collect_runs(folders, seeds=[0, 1])
    assert sorted(zip(runs["policy"], runs["seed"], strict=True)) == [
        ("optimal", 0), ("optimal", 1), ("random", 0), ("random", 1)]
    table = sensitivity_table(runs, [Setting("maxgroup", "5", "m", "trace", 5)])
    rnd = table[table["policy"] == "random"].set_index("seed")
    assert rnd.loc[1, "cost_over_optimal"] == pytest.approx(1.7)
    # without seeds the table is as before: no optimum at seed 1, an error names it
    with pytest.raises(ValueError, match="seed 1"):
        sensitivity_table(collect_runs(folders), [Setting("maxgroup", "5", "m", "trace", 5)])
