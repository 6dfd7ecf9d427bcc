"""Fit `microbench_types` and the micro-benchmark evidence tables (rollmux.experiments)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rollmux.closedform import pools_from_hardware, verl_fleet
from rollmux.experiments.claims import load_calibration, load_ledger
from rollmux.experiments.microbench import build_scenario
from rollmux.experiments.microbench_evidence import (
    EVIDENCE_COLUMNS,
    what_it_would_take,
)
from rollmux.experiments.microbench_fit import (
    FIT,
    FitError,
    MicrobenchFit,
    check_packaged,
    fit_microbench_types,
    microbench_targets,
    run_microbench_types,
    with_sizes,
)
from rollmux.experiments.microbench_sim import baseline_jobs, table4, throughput_table
from rollmux.hardware import load_hardware
from rollmux.jobtypes import load_microbench

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
FIT_CONFIG = CONFIG["calibration"]["microbench_types"]


@pytest.fixture(scope="module")
def fit() -> MicrobenchFit:
    """The fit on the packaged job types at the pipeline's seed and iterations."""
    targets = microbench_targets(load_ledger())
    return fit_microbench_types(FIT_CONFIG["seed"], FIT_CONFIG["iterations"], targets)


@pytest.fixture(scope="module")
def evidence() -> pd.DataFrame:
    """The what-it-would-take table at seed 0, 60 iterations (the quick pipeline's)."""
    return what_it_would_take(0, 60)


def test_targets_are_the_texts_facts_only() -> None:
    """The fit's targets are three facts of sec. 6.2; Table 4 (C23) is read, not fitted."""
    ledger = load_ledger()
    targets = microbench_targets(ledger)
    assert (targets.overhead_low_pct, targets.overhead_high_pct) == (1.6, 9.8)
    assert (targets.d_trainings_in_c_rollout, targets.e_rollout_over_train) == (2.0, 6.0)
    assert targets.a_train_over_rollout == 1.0
    roles = dict(zip(ledger["claim_id"], ledger["role"], strict=True))
    declared = load_calibration(ledger).fits[FIT].targets
    assert [roles.get(t, "fact") for t in declared] == ["fact"] * 3
    assert load_calibration(ledger).fit_of("C23") is None


def test_packaged_job_types_are_the_fitted_ones(fit: MicrobenchFit) -> None:
    """microbench.yaml ships the fitted sizes of A, C and E (the pipeline's rule checks it too)."""
    assert check_packaged(fit, load_microbench()) == []


def test_fit_meets_its_targets(fit: MicrobenchFit) -> None:
    """C's rollout holds the two D trainings; E keeps 6x; C's training and E's size are
    the estimates (Table 4's overheads are predictions, whatever they are)."""
    hw = load_hardware()
    spatial = build_scenario("spatial", hw, fit.definitions)
    _, eff_train = spatial.group.effective_phases_s()
    c_rollout = fit.definitions["job_types"]["C"]["rollout_s"]
    assert c_rollout == pytest.approx(eff_train[1] + eff_train[2], abs=0.1)
    assert c_rollout >= eff_train[1] + eff_train[2]
    e = fit.definitions["job_types"]["E"]
    assert e["rollout_s"] / e["train_s"] == pytest.approx(6.0)
    estimates = load_microbench()["job_types"]
    assert fit.sizes["C"][1] == estimates["C"]["train_s"]
    assert fit.sizes["E"][1] == estimates["E"]["train_s"]
    # the two A jobs are fully complementary: a full temporal group
    rollout, trained = build_scenario("temporal", hw, fit.definitions).group.effective_phases_s()
    assert trained[0] == pytest.approx(rollout[0], abs=0.05)
    assert set(fit.residuals["target"]) == {
        "spatial_d_trainings_in_c_rollout", "microbench_e_rollout_over_train",
        "temporal_a_fully_complementary"}


def test_with_sizes_keeps_the_worst_case_rule() -> None:
    """Replacing a type's expected times scales its worst cases by 1.25x and 1.5x."""
    defs = with_sizes(load_microbench(), {"C": (400.0, 200.0)})
    c = defs["job_types"]["C"]
    assert (c["rollout_s"], c["train_s"], c["rollout_max_s"], c["train_max_s"]) == (
        400.0, 200.0, 500.0, 300.0)
    assert load_microbench()["job_types"]["C"]["rollout_s"] != 400.0  # a copy, not in place


def test_check_packaged_names_the_value_that_moved(fit: MicrobenchFit) -> None:
    """A packaged value that is not the fitted one is reported with its key and both values."""
    shipped = with_sizes(load_microbench(), {"E": (600.0, 100.0)})
    problems = check_packaged(fit, shipped, "microbench.yaml")
    assert any("job_types.E.train_s is 100.0; the fit gives" in p for p in problems)
    assert not any(".C." in p for p in problems)


def test_run_fails_before_writing_when_packaged_values_differ(tmp_path: Path) -> None:
    """The rule's program writes nothing when microbench.yaml is not the fitted one."""
    moved = with_sizes(load_microbench(), {"C": (400.0, 600.0)})
    path = tmp_path / "microbench.yaml"
    path.write_text(yaml.safe_dump(moved), encoding="utf-8")
    with pytest.raises(FitError, match=r"job_types\.C\.rollout_s is 400\.0"):
        run_microbench_types(tmp_path / "fitted.yaml", tmp_path / "residuals.csv",
                             FIT_CONFIG["seed"], FIT_CONFIG["iterations"],
                             microbench_path=path)
    assert not (tmp_path / "residuals.csv").exists()
    assert not (tmp_path / "fitted.yaml").exists()


def test_in_group_baselines_give_each_job_its_group_gpus() -> None:
    """In the train mux the in-group baselines train Type-D on 8 H800 (twice as long)."""
    sc = build_scenario("train")
    jobs, phases = baseline_jobs(sc, "in_group")
    assert [j.train_gpus for j in jobs] == [8, 8, 8]
    assert phases[0].train_s == pytest.approx(2 * sc.solo_phases[0].train_s)
    assert jobs[0].train_s == pytest.approx(phases[0].train_s)
    with pytest.raises(ValueError, match="solo_config"):
        baseline_jobs(sc, "nowhere")


def test_in_group_reading_changes_only_the_train_mux() -> None:
    """Temporal and spatial jobs run on their requested GPUs in the group: same gains."""
    requested = throughput_table(0, 12)
    in_group = throughput_table(0, 12, solo_config="in_group")
    for name in ("temporal", "spatial"):
        a = requested[requested.scenario == name].rollmux_gain.to_numpy()
        b = in_group[in_group.scenario == name].rollmux_gain.to_numpy()
        np.testing.assert_allclose(a, b)
    solo = in_group[(in_group.scenario == "train") & (in_group.system == "solo-d")].iloc[0]
    assert (solo.h20_gpus, solo.h800_gpus) == (24, 24)


def test_evidence_table_shape(evidence: pd.DataFrame) -> None:
    """Every Fig. 10 claim has its default gain and a what-it-would-take row; C24 per job."""
    assert list(evidence.columns) == list(EVIDENCE_COLUMNS)
    gains = evidence[(evidence.quantity == "gain") & (evidence.reading == "default")]
    assert sorted(gains.claim_id) == [f"C{i}" for i in range(14, 23)]
    needed = evidence[evidence.quantity.isin(["rollmux_mean_slowdown",
                                              "colocated_rollout_speedup",
                                              "per_usd_over_solo_d"])]
    assert sorted(needed.claim_id) == [f"C{i}" for i in range(14, 23)]
    ratios = evidence[evidence.quantity == "ideal_rollout_ratio"]
    assert len(ratios) == 2 * 8 and set(ratios.claim_id) == {"C24"}


def test_evidence_gains_are_the_pipelines(evidence: pd.DataFrame) -> None:
    """The default reading's gains are those of the throughput table (no second model)."""
    table = throughput_table(0, 60)
    for row in evidence[(evidence.quantity == "gain")
                        & (evidence.reading == "default")].itertuples():
        hit = table[(table.scenario == row.scenario) & (table.system == row.subject)]
        assert row.ours == pytest.approx(float(hit.rollmux_gain.iloc[0]))


def test_needed_verl_speedup_gives_the_papers_gain(evidence: pd.DataFrame) -> None:
    """Plugging the needed co-located speed-up into veRL reproduces the paper's gain."""
    hw = load_hardware()
    table = throughput_table(0, 60)
    pools = pools_from_hardware(hw)
    for row in evidence[evidence.quantity == "colocated_rollout_speedup"].itertuples():
        ours = table[(table.scenario == row.scenario) & (table.system == "rollmux")].iloc[0]
        _, phases = baseline_jobs(build_scenario(row.scenario, hw), "requested")
        fleet = verl_fleet(phases, dataclasses.replace(pools,
                                                       colocated_rollout_speedup=row.needed))
        gain = (ours.normalised_throughput / ours.cost_usd_per_h
                / fleet.normalised_throughput_per_usd_h)
        paper = evidence[(evidence.claim_id == row.claim_id)
                         & (evidence.quantity == "gain")].paper.iloc[0]
        assert gain == pytest.approx(paper, rel=1e-6)


def test_needed_ideal_ratio_gives_the_papers_bounds(evidence: pd.DataFrame) -> None:
    """With the needed H800/H20 ratio the ideal is 8.0% (18.1%) faster than RollMux."""
    t4 = table4(0, 60).set_index(["scenario", "job"])
    for row in evidence[evidence.quantity == "ideal_rollout_ratio"].itertuples():
        rec = t4.loc[(row.scenario, row.subject)]
        h20_rollout = rec.ideal_rollout_s / rec.ideal_rollout_ratio
        ideal = row.needed * h20_rollout + (rec.ideal_s - rec.ideal_rollout_s)
        bound = {"paper_low": 8.0, "paper_high": 18.1}[row.reading]
        assert 100.0 * (rec.rollmux_s / ideal - 1.0) == pytest.approx(bound)


