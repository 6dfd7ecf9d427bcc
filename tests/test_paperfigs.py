"""Model figures and tables (rollmux.experiments: model_figures, tables), figure scripts."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml
from profiles import PROFILES, load_profile

from rollmux.experiments import model_figures, tables
from rollmux.experiments.metrics import METRIC_COLUMNS
from rollmux.hardware import load_hardware
from rollmux.jobtypes import job_type
from rollmux.phasetimes import phase_times

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- library


def test_bad_case_slows_both_rollout_heavy_jobs() -> None:
    """D and E on one rollout node: saturated, slowdown = meta-iteration / solo > 1."""
    phases, slow = model_figures.bad_case(("D", "E"), iterations=2)
    assert list(slow["job_type"]) == ["D", "E"]
    assert (slow["status"] == "saturated").all()
    assert (slow["slowdown"] > 1.0).all()
    hw = load_hardware()
    for rec in slow.itertuples():
        solo = phase_times(job_type(rec.job_type), hw).solo_iteration_s
        assert rec.solo_s == pytest.approx(solo)
        assert rec.slowdown == pytest.approx(rec.shared_s / solo)
    # In the shared layout the single rollout node runs both rollouts back to back.
    shared = phases[(phases["layout"] == "shared") & (phases["phase"] == "rollout")]
    assert set(shared["node"]) == {"R0"}
    assert slow["shared_s"].iloc[0] == pytest.approx(slow["t_load_s"].iloc[0])


def test_bad_case_needs_two_jobs() -> None:
    """One job cannot share anything."""
    with pytest.raises(ValueError, match="job_types"):
        model_figures.bad_case(("D",))


def test_switch_table_matches_switch_model() -> None:
    """Warm < cold for every size and phase; speed-up is their ratio."""
    table = model_figures.switch_table((7.0, 32.0), 8)
    assert len(table) == 4
    assert (table["warm_s"] < table["cold_s"]).all()
    assert np.allclose(table["speedup"], table["cold_s"] / table["warm_s"])
    assert set(table["gpu_type"]) == {"H20", "H800"}


def test_group_status_examples_cover_three_states() -> None:
    """The default Fig. 6 groups are under-utilised, full and saturated, in that order."""
    groups = [[[300, 200], [100, 100]], [[300, 200], [200, 100]], [[300, 200], [300, 100]]]
    phases, status = model_figures.group_status_examples(groups, iterations=2)
    assert list(status["status"]) == ["under-utilised", "full", "saturated"]
    assert list(status["meta_iteration_s"]) == [500.0, 500.0, 600.0]
    assert set(phases["group"]) == {0, 1, 2}
    with pytest.raises(ValueError, match="rollout_s, train_s"):
        model_figures.group_status_examples([[[1.0, 2.0, 3.0]]])


def test_migration_timeline_and_per_gpu_segments() -> None:
    """Tails exist only with migration; per-GPU segments never overlap on one GPU."""
    frame = model_figures.migration_timeline(("A", "E"), iterations=2, seed=0)
    assert set(frame["migration"]) == {False, True}
    assert (frame.loc[~frame["migration"], "phase"] != "tail").all()
    on = frame[frame["migration"]]
    assert (on["phase"] == "tail").any()
    assert (on.loc[on["phase"] == "tail", "gpus"] < 8).all()
    segments = model_figures.per_gpu_segments(on, 8)
    for _, part in segments.groupby(segments["gpu"].astype(str)):
        part = part.sort_values("start_s")
        assert (part["start_s"].to_numpy()[1:] >= part["end_s"].to_numpy()[:-1] - 1e-9).all()
    # The rollout node's GPU-time equals full-node rollout time minus tail-held time.
    rollout = on[on["phase"] == "rollout"]
    gpu_s = (segments["end_s"] - segments["start_s"])[segments["phase"] == "rollout"].sum()
    held = sum(
        max(0.0, min(t.end_s, r.end_s) - max(t.start_s, r.start_s)) * t.gpus
        for t in on[on["phase"] == "tail"].itertuples() for r in rollout.itertuples()
    )
    assert gpu_s == pytest.approx(8 * (rollout["end_s"] - rollout["start_s"]).sum() - held)


def test_scenario_gantt_shows_requested_iterations() -> None:
    """Only the first shown_iterations iterations are returned, per scenario."""
    frame = model_figures.scenario_gantt(("temporal",), seed=0, iterations=10, shown_iterations=2)
    assert set(frame["scenario"]) == {"temporal"}
    assert set(frame["iteration"]) == {0, 1}
    with pytest.raises(ValueError, match="shown_iterations"):
        model_figures.scenario_gantt(("temporal",), iterations=10, shown_iterations=11)


def test_length_distribution_is_a_probability() -> None:
    """Bin probabilities sum to one; median < mean < p99 < expected batch max <= max."""
    hist, stats = model_figures.length_distribution(("A",), bins=40)
    assert hist["probability"].sum() == pytest.approx(1.0, abs=1e-9)
    rec = stats.iloc[0]
    assert rec.median_tokens < rec.mean_tokens < rec.p99_tokens
    assert rec.p99_tokens < rec.expected_longest_tokens <= rec.max_tokens


def test_sync_table_speedup_tracks_rollout_gpus() -> None:
    """Flat sync pulls one copy per rollout GPU (per replica in the other reading), so each
    speed-up is just below that count: 8->8 is ~8x for 32B at TP4 too, ~2x per replica."""
    table = model_figures.sync_table((7.0, 32.0), (8, 16))
    assert len(table) == 4
    assert (table["speedup"] <= table["gpus"]).all()
    assert (table["speedup"] > 0.9 * table["gpus"]).all()
    assert (table["speedup_per_replica"] <= table["replicas"]).all()
    assert (table["speedup_per_replica"] > 0.9 * table["replicas"]).all()
    big = table[(table["model_size_b"] == 32.0) & (table["gpus"] == 8)].iloc[0]
    assert (big["tensor_parallel"], big["replicas"]) == (4, 2)
    assert 7.87 <= big["speedup"] <= 8.33 and big["speedup_per_replica"] < 2.0


# --------------------------------------------------------------------------- tables


def test_tables_1_2_3_6() -> None:
    """Specs and estimate flags come from the data files; markdown has a title and rows."""
    t1 = tables.table1_gpus()
    hw = load_hardware()
    assert t1.set_index("gpu").loc["H800", "price_ratio"] == pytest.approx(
        hw.gpu("H800").price_usd_per_h / hw.gpu("H20").price_usd_per_h)
    assert t1["price_estimate"].all()
    t2 = tables.table2_host_memory([(32.0, 8, 8), (70.0, 32, 32)])
    assert t2["train_gb_per_node"].iloc[1] < t2["train_gb_per_node"].iloc[0]
    t3 = tables.table3_job_types()
    assert list(t3["type"]) == ["A", "B", "C", "D", "E"]
    assert t3.set_index("type").loc["D", "rollout_over_train"] == pytest.approx(2.5)
    assert list(t3["fitted"]) == ["train_s", "", "rollout_s", "", "rollout_s"]
    t6 = tables.table6_profiles()
    assert len(t6) == 9 and t6["estimate"].all()
    text = tables.markdown(t1, "Table 1", ["a note"])
    assert text.startswith("# Table 1\n") and "| H20 |" in text and text.endswith("a note\n")


def test_table4_converts_to_percent() -> None:
    """Overheads are written in percent."""
    raw = pd.DataFrame({"scenario": ["s"], "job": ["A0"], "solo_s": [100.0],
                        "rollmux_s": [105.0], "ideal_s": [90.0], "overhead_vs_solo": [0.05],
                        "slower_than_ideal": [105 / 90 - 1]})
    out = tables.table4_iterations(raw)
    assert out["overhead_vs_solo_pct"].iloc[0] == pytest.approx(5.0)


def test_table5_small() -> None:
    """The placement benchmark and the optimum run at tiny sizes; brute force agrees."""
    lat = tables.table5_latency([20], decisions=3)
    assert lat["jobs"].tolist() == [20] and lat["median_ms"].iloc[0] > 0
    assert lat[["direct_pct", "scaling_pct", "new_group_pct"]].sum(axis=1).iloc[0] == (
        pytest.approx(100.0))
    opt = tables.table5_optimum([4], bruteforce_time_limit_s=30.0)
    assert bool(opt["bruteforce_finished"].iloc[0])
    assert opt["bruteforce_cost_usd_per_h"].iloc[0] == pytest.approx(
        opt["optimal_cost_usd_per_h"].iloc[0])


# --------------------------------------------------------------------------- metrics


def _metric_inputs(tmp_path: Path) -> dict[str, str]:
    """Tiny results files for :func:`model_figures.models_metrics`."""
    rows = []
    for scenario in ("temporal", "train", "spatial"):
        for system, gain in (("rollmux", 1.0), ("solo-d", 1.9), ("gavel-plus", 1.5),
                             ("verl", 1.3)):
            rows.append({"scenario": scenario, "system": system, "rollmux_gain": gain,
                         "available": True})
    files = {
        "throughput": pd.DataFrame(rows),
        "table4": pd.DataFrame({"overhead_vs_solo": [0.02, 0.08],
                                "slower_than_ideal": [0.1, 0.15]}),
        "migration": pd.DataFrame({"pair": ["A+A", "E+E"], "speedup": [1.05, 1.2]}),
        "sync": model_figures.sync_table((7.0,), (8, 16)),
        "switch": model_figures.switch_table((7.0, 32.0)),
        "latency": pd.DataFrame({"jobs": [100, 2000], "decisions": [5, 5],
                                 "median_ms": [0.3, 2.0]}),
        "optimum": pd.DataFrame({"jobs": [6, 8], "seconds": [0.01, 0.02],
                                 "optimal_cost_usd_per_h": [1.0, 2.0],
                                 "bruteforce_seconds": [0.1, 0.5],
                                 "bruteforce_cost_usd_per_h": [1.0, 2.0],
                                 "bruteforce_finished": [True, True]}),
        "theorem1": pd.DataFrame({"family": ["a_one_rollout_one_train", "e_saturated"],
                                  "n_instances": [10, 10], "n_counterexamples": [0, 4]}),
    }
    paths = {}
    for key, frame in files.items():
        paths[key] = str(tmp_path / f"{key}.csv")
        frame.to_csv(paths[key], index=False)
    return paths


def test_models_metrics_follow_the_contract(tmp_path: Path) -> None:
    """Columns of workflow/README.md; metric names and units of claims C14-C27, C45-C55."""
    paths = _metric_inputs(tmp_path)
    metrics = model_figures.models_metrics(paths).set_index("metric")
    assert list(metrics.reset_index().columns) == list(METRIC_COLUMNS)
    assert metrics.loc["throughput_ratio_train_gavel", "value"] == pytest.approx(1.5)
    assert metrics.loc["iteration_overhead_vs_solo", "low"] == pytest.approx(2.0)
    assert metrics.loc["iteration_slowdown_vs_ideal", "high"] == pytest.approx(15.0)
    assert metrics.loc["migration_speedup", "high"] == pytest.approx(1.2)
    assert metrics.loc["decision_latency_2000_jobs", "value"] == pytest.approx(2.0)
    assert metrics.loc["bruteforce_time_13_jobs", "value"] == pytest.approx(0.5)
    assert "not 13 jobs" in metrics.loc["bruteforce_time_13_jobs", "note"]
    # Only in-scope families count: the saturated family's counterexamples do not.
    assert metrics.loc["theorem1_holds", "value"] == 1.0
    scoped = model_figures.models_metrics(paths, ["a_one_rollout_one_train", "e_saturated"])
    assert scoped.set_index("metric").loc["theorem1_holds", "value"] == 0.0
    switch = pd.read_csv(paths["switch"])
    assert metrics.loc["cold_start_seconds", "value"] == pytest.approx(switch["cold_s"].max())
    claims = REPO.parent / "shared" / "paper" / "claims.csv"
    if claims.is_file():
        ledger = pd.read_csv(claims).set_index("metric")
        for name, rec in metrics.iterrows():
            assert name in ledger.index, name
            assert rec["unit"] == ledger.loc[name, "unit"], name


# --------------------------------------------------------------------------- config


def test_schema_defaults_and_configs_agree() -> None:
    """Every schema key is typed, described, has a default, and is in both configs."""
    schema = yaml.safe_load((REPO / "workflow/schemas/paperfigs.schema.yaml").read_text())
    props = schema["properties"]
    for key, spec in props.items():
        assert {"type", "description", "default"} <= set(spec), key
    for name, overlays in PROFILES.items():
        section = load_profile(*overlays)["paperfigs"]
        assert set(section) == set(props), name


# --------------------------------------------------------------------------- scripts


def _run(script: str, args: list[str]) -> str:
    """Run an analysis script; return its stdout (fails the test on a non-zero exit)."""
    done = subprocess.run([sys.executable, str(REPO / "analysis" / script), *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def _figure_jobs(tmp_path: Path) -> dict[str, list[str]]:
    """Arguments (without outputs) of every figure script on tiny inputs."""
    fig03 = model_figures.bad_case(("D", "E"), iterations=1)
    fig06 = model_figures.group_status_examples([[[3, 2], [1, 1]], [[3, 2], [3, 1]]], 1)
    lengths, stats = model_figures.length_distribution(("A",), bins=10)
    throughput = pd.DataFrame({
        "scenario": ["temporal"] * 4, "system": ["rollmux", "solo-d", "gavel-plus", "verl"],
        "throughput_per_kusd_h": [30.0, 17.0, 17.0, 20.0], "rollmux_gain": [1.0, 1.8, 1.8, 1.5],
        "paper_gain": [np.nan, 1.82, 1.73, 1.47], "available": [True] * 4})
    summary = pd.DataFrame({
        "family": ["a_one_rollout_one_train", "e_saturated"], "objective": ["aggregate"] * 2,
        "n_instances": [5, 5], "n_counterexamples": [0, 2], "rr_optimal_fraction": [1.0, 0.6],
        "worst_util_ratio": [1.0, 1.2]})
    t = tmp_path
    return {
        "fig03_bad_case.py": ["--phases", _write(fig03[0], t / "f3p.csv"),
                              "--slowdowns", _write(fig03[1], t / "f3s.csv")],
        "fig04_switch.py": ["--switch", _write(model_figures.switch_table((7.0, 14.0)),
                                               t / "f4.csv")],
        "fig06_group_status.py": ["--phases", _write(fig06[0], t / "f6p.csv"),
                                  "--status", _write(fig06[1], t / "f6s.csv")],
        "fig07_migration.py": ["--phases", _write(
            model_figures.migration_timeline(("A", "E"), 1), t / "f7.csv")],
        "fig10_microbench.py": ["--phases", _write(model_figures.scenario_gantt(
            ("temporal",), 0, 10, 1), t / "f10.csv"),
            "--throughput", _write(throughput, t / "thr.csv")],
        "fig12_migration.py": ["--lengths", _write(lengths, t / "f12l.csv"),
                               "--stats", _write(stats, t / "f12s.csv"),
                               "--migration", _write(pd.DataFrame(
                                   {"pair": ["A+A", "A+E"], "speedup": [1.02, 1.2]}),
                                   t / "mig.csv")],
        "fig13_sync.py": ["--sync", _write(model_figures.sync_table((7.0,), (8, 16)),
                                           t / "f13.csv")],
        "fig_theorem1_boundary.py": ["--summary", _write(summary, t / "th.csv")],
    }


def _load(script: str) -> ModuleType:
    """Import an analysis script as a module (its ``main`` takes argv)."""
    spec = importlib.util.spec_from_file_location(Path(script).stem, REPO / "analysis" / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_figure_script_draws_deterministically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each script's main writes a PNG and a PDF from tiny inputs; a rerun gives the same bytes.

    In-process (fast); ``test_figure_script_runs_as_a_program`` covers the command line.
    """
    for script, args in _figure_jobs(tmp_path).items():
        main = _load(script).main
        outputs = []
        for run in ("a", "b"):
            png, pdf = tmp_path / f"{script}.{run}.png", tmp_path / f"{script}.{run}.pdf"
            assert main([*args, "--png", str(png), "--pdf", str(pdf)]) == 0, script
            assert "wrote" in capsys.readouterr().out, script
            assert png.read_bytes().startswith(b"\x89PNG"), script
            assert pdf.read_bytes().startswith(b"%PDF"), script
            outputs.append((png.read_bytes(), pdf.read_bytes()))
        assert outputs[0] == outputs[1], script


@pytest.mark.subprocess
@pytest.mark.parametrize("script", ["fig04_switch.py", "fig07_migration.py"])
def test_figure_script_runs_as_a_program(tmp_path: Path, script: str) -> None:
    """The scripts run from the command line as the Snakemake rules call them."""
    args = _figure_jobs(tmp_path)[script]
    png, pdf = tmp_path / "out.png", tmp_path / "out.pdf"
    out = _run(script, [*args, "--png", str(png), "--pdf", str(pdf)])
    assert f"wrote {png}" in out
    assert png.is_file() and pdf.is_file()


def test_recorded_table5_is_checked_and_shipped(tmp_path: Path) -> None:
    """The pipeline's default Table 5 comes from benchmarks/recorded/, columns checked."""
    recorded = Path(__file__).resolve().parents[1] / "benchmarks" / "recorded"
    latency = tables.recorded_table5(recorded / "table5_latency.csv", "latency")
    assert 2000 in set(latency["jobs"]) and (latency["median_ms"] > 0).all()
    optimum = tables.recorded_table5(recorded / "table5_optimum.csv", "optimum")
    finished = optimum[optimum["bruteforce_finished"]]
    # the exact optimum equals brute force wherever brute force finished
    assert not finished.empty
    assert finished["optimal_cost_usd_per_h"].round(6).equals(
        finished["bruteforce_cost_usd_per_h"].round(6))
    assert "core" in tables.recorded_machine(recorded / "table5_machine.json")
    bad = tmp_path / "bad.csv"
    bad.write_text("jobs,decisions\n100,5\n")
    with pytest.raises(ValueError, match=r"bad\.csv.*median_ms"):
        tables.recorded_table5(bad, "latency")
    with pytest.raises(ValueError, match="part must be"):
        tables.recorded_table5(bad, "other")
