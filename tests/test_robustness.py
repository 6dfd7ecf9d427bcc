"""Robustness stage (Fig. 16-19, claims C47-C52): rollmux.experiments.robustness, figures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml
from scriptmod import load_script

from rollmux.experiments import drift_evidence as de
from rollmux.experiments import robustness as rb
from rollmux.placement.regroup import migration_pause_s
from rollmux.sim.drift import TEMPLATES, length_factor
from rollmux.traces import TraceError, load_trace

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "traces"
MICRO = TRACES / "microbench.csv"
SIM = TRACES / "simulation-mixed.csv"
TINY_PROD = REPO / "tests" / "golden" / "traces" / "tiny-prod.csv"
#: The drift study of the shipped config (robustness.policies, robustness.reference).
STUDY = rb.DriftStudy.from_config(
    yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))["robustness"])
FAILURE_JOBS = [{"job_id": "D1", "from": "Type-D"}, {"job_id": "D2", "from": "Type-D"},
                {"job_id": "E", "from": "Type-E"}]


def _script(name: str) -> ModuleType:
    """Import an analysis script by file name."""
    return load_script(name, "analysis")


# --------------------------------------------------------------------------- inputs


def test_write_validated_trace_leaves_nothing_on_an_invalid_trace(tmp_path: Path) -> None:
    """An invalid trace raises TraceError and writes no file (not even a temporary one)."""
    text = Path(SIM).read_text(encoding="utf-8").replace(",H20,", ",H21,", 1)
    with pytest.raises(TraceError):
        rb.write_validated_trace(text, tmp_path / "bad.csv")
    assert list(tmp_path.iterdir()) == []


def test_failure_trace_copies_jobs_with_new_ids_slo_and_iterations(tmp_path: Path) -> None:
    """Copies keep the source job's columns, with the given id, SLO and iterations."""
    text = rb.failure_trace_text(MICRO, FAILURE_JOBS, slo=1.2, iterations=7)
    jobs = load_trace(rb.write_validated_trace(text, tmp_path / "f.csv"))
    sources = {j.job_id: j for j in load_trace(MICRO)}
    assert [j.job_id for j in jobs] == ["D1", "D2", "E"]
    for job, spec in zip(jobs, FAILURE_JOBS, strict=True):
        src = sources[spec["from"]]
        assert job.slo == 1.2 and job.iterations == 7
        assert job.rollout_s == src.rollout_s and job.train_gpus == src.train_gpus
    assert text.startswith("# schema_version")


@pytest.mark.parametrize(
    ("jobs", "match"),
    [
        ([{"job_id": "X", "from": "Type-Z"}], "not in microbench.csv"),
        ([{"job_id": "X", "from": "Type-A"}, {"job_id": "X", "from": "Type-B"}], "twice"),
        ([{"job_id": "X", "from": "Type-A", "slo": 2}], "unknown key 'slo'"),
        ([{"job_id": "", "from": "Type-A"}], "non-empty"),
        ([], "non-empty list"),
    ],
)
def test_failure_trace_rejects_bad_job_lists(jobs: list[dict[str, str]], match: str) -> None:
    """Unknown sources, duplicate ids, unknown keys and empty lists raise ValueError."""
    with pytest.raises(ValueError, match=match):
        rb.failure_trace_text(MICRO, jobs)


def test_failures_text_is_validated_and_sorted() -> None:
    """The kill list is sorted by kill time; empty resubmission means never."""
    text = rb.failures_text(
        [{"job_id": "E", "kill_at_s": 2180, "resubmit_at_s": 4480},
         {"job_id": "D1", "kill_at_s": 100.5}], ["D1", "E"])
    assert text == "job_id,kill_at_s,resubmit_at_s\nD1,100.5,\nE,2180,4480\n"
    with pytest.raises(ValueError, match="not in the trace"):
        rb.failures_text([{"job_id": "Q", "kill_at_s": 1}], ["D1"])
    with pytest.raises(ValueError, match="resubmit_at_s must be >="):
        rb.failures_text([{"job_id": "D1", "kill_at_s": 10, "resubmit_at_s": 5}], ["D1"])


# --------------------------------------------------------------------------- Fig. 16


def test_template_curves_share_draws_and_follow_the_templates() -> None:
    """Seven templates per job; same draws at progress 0; lengths scaled by f(p)."""
    curves = rb.template_curves(MICRO, [7, 32], iterations=30, seed=0)
    assert tuple(curves.columns) == rb.TEMPLATE_COLUMNS
    assert len(curves) == 2 * len(TEMPLATES) * 30
    for (_job_id, template), part in curves.groupby(["job_id", "template"]):
        tpl = next(t for t in TEMPLATES if t.name == template)
        expected = [length_factor(tpl, p) for p in part["progress"]]
        np.testing.assert_allclose(part["length_factor"], expected)
        np.testing.assert_allclose(part["iteration_s"],
                                   part["rollout_s"] + part["train_s"] + part["sync_s"])
    start = curves[curves["iteration"] == 0].groupby("job_id")["iteration_s"]
    assert ((start.max() - start.min()) / start.mean() < 1e-9).all()
    assert set(curves["job_id"]) == {"Type-A", "Type-C"}  # the first job of each size
    assert (curves["drift_reach"] == "profile").all()
    a = curves[curves["job_id"] == "Type-A"].pivot(index="iteration", columns="template",
                                                    values="iteration_s")
    assert (a["increasing-1.5"] >= a["none"] - 1e-9).all()
    assert (a["decreasing-1.5"] <= a["none"] + 1e-9).all()
    assert a["decreasing-1.5"].iloc[-1] < a["decreasing-0.5"].iloc[-1]


def test_template_curves_are_deterministic_and_validate_inputs() -> None:
    """Same seed, same table; an unknown model size, reach or too few iterations raise."""
    a = rb.template_curves(MICRO, [14], iterations=5, seed=3)
    b = rb.template_curves(MICRO, [14.0], iterations=5, seed=3)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="no job of that size"):
        rb.template_curves(MICRO, [70], iterations=5)
    with pytest.raises(ValueError, match="must list numbers"):
        rb.template_curves(MICRO, ["type-B"], iterations=5)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="iterations must be"):
        rb.template_curves(MICRO, [14], iterations=1)
    with pytest.raises(ValueError, match="drift_reach"):
        rb.template_curves(MICRO, [14], iterations=5, drift_reach="sideways")


# --------------------------------------------------------------------------- Fig. 17, 18


def _summary(cost: float, slo: float, rollout_bubble: float, train_bubble: float,
             span_h: float = 10.0) -> dict[str, object]:
    """A summary.json with the keys the drift and evidence tables read (busy GPU-hours:
    rollout 70, training 40, as in :func:`_jobs_csv`)."""
    return {"jobs": 4, "jobs_completed": 4, "span_h": span_h, "cost_usd_per_h": cost,
            "total_cost_usd": cost * span_h, "slo_attainment": slo,
            "slo_attainment_reference": slo, "slo_attainment_realised": slo,
            "slo_attainment_planned": 1.0, "mean_slowdown": 0.5,
            "bubble_fraction": {"rollout": rollout_bubble, "train": train_bubble},
            "idle_gpu_h": {"rollout": 70.0 * rollout_bubble / (1.0 - rollout_bubble),
                           "train": 40.0 * train_bubble / (1.0 - train_bubble)}}


def _jobs_csv(job_hours: float) -> str:
    """jobs.csv of two jobs running ``job_hours`` together (70 and 40 busy GPU-hours)."""
    half = job_hours * 3600.0 / 2
    head = ("job,job_id,slo,group_id,running_s,slowdown,slo_met,"
            "busy_rollout_gpu_s,busy_train_gpu_s\n")
    return (head + f"0,sim-0000,1.5,G0,{half},0.5,True,{35 * 3600.0},{20 * 3600.0}\n"
            f"1,sim-0001,1.5,G0,{half},0.5,True,{35 * 3600.0},{20 * 3600.0}\n")


# (policy -> cost, SLO attainment, rollout bubble, train bubble) per setting
FAKE = {
    "Increasing": {"rollmux": (110.0, 0.75, 0.30, 0.20), "random": (350.0, 0.5, 0.5, 0.5),
                   "greedy": (330.0, 0.25, 0.4, 0.4), "regroup": (100.0, 1.0, 0.25, 0.30)},
    "Decreasing": {"rollmux": (120.0, 1.0, 0.30, 0.20), "random": (360.0, 0.5, 0.5, 0.5),
                   "greedy": (321.0, 0.5, 0.4, 0.4), "regroup": (100.0, 1.0, 0.28, 0.30)},
    "Mixed": {"rollmux": (108.0, 0.5, 0.30, 0.20), "random": (355.0, 0.5, 0.5, 0.5),
              "greedy": (325.0, 0.5, 0.4, 0.4), "regroup": (100.0, 1.0, 0.30, 0.30)},
}

# Evidence replays: (setting, policy, drift reach) -> cost, SLO, bubbles
FAKE_EVIDENCE = {
    ("Increasing", "solo-d", "profile"): (150.0, 1.0, 0.5, 0.6),
    ("none", "rollmux", "profile"): (105.0, 1.0, 0.3, 0.2),
    ("none", "regroup", "profile"): (100.0, 1.0, 0.3, 0.3),
    ("Increasing", "rollmux", "cap"): (110.0, 1.0, 0.3, 0.2),
}


def _write_run(folder: Path, setting: str, policy: str, values: tuple[float, ...],
               reach: str = "profile", job_hours: float = 20.0) -> rb.RunRef:
    """One hand-written replay folder (config, summary, events, jobs)."""
    cost, slo, rbub, tbub = values
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "trace": "t.csv", "slo_override": None, "max_group_size": 5,
        "drift": setting, "drift_reach": reach, "policy": policy, "seed": 0}))
    (folder / "summary.json").write_text(json.dumps(_summary(cost, slo, rbub, tbub)))
    events = ("time_s,kind,job_id,group_id,strategy,marginal_cost_usd_per_h,detail\n"
              "0,arrival,sim-0000,G0,new-group,1,\n"
              "3600,regroup,,,regroup,0,\n"
              "7200,regroup,,,regroup,-5,sim-0000 sim-0001\n"
              "10800,regroup,,,regroup,-5,sim-0001\n")
    (folder / "events.csv").write_text(events)
    (folder / "jobs.csv").write_text(_jobs_csv(job_hours))
    return rb.RunRef.from_folder(folder)


def _fake_runs(root: Path) -> list[rb.RunRef]:
    """Hand-written replays of every setting and policy (seed 0), regroup with events."""
    runs = []
    for setting, policies in FAKE.items():
        for policy, values in policies.items():
            folder = root / f"drift={setting}" / f"policy={policy}" / "seed=0"
            runs.append(_write_run(folder, setting, policy, values))
            assert runs[-1] == rb.RunRef(setting, policy, 0, folder)
    return runs


def _evidence_runs(root: Path) -> list[rb.RunRef]:
    """Hand-written evidence replays: Solo-D, no drift, the other drift reach."""
    return [_write_run(root / f"{setting}-{policy}-{reach}", setting, policy, values, reach,
                       job_hours=16.0 if policy == "solo-d" else 20.0)
            for (setting, policy, reach), values in FAKE_EVIDENCE.items()]


def test_drift_table_normalises_to_regroup(tmp_path: Path) -> None:
    """Cost ratios over the same setting's regroup replay; percentages in percent."""
    table = rb.drift_table(reversed(_fake_runs(tmp_path)), STUDY)
    assert tuple(table.columns) == rb.DRIFT_COLUMNS
    assert list(table["setting"].unique()) == list(rb.SETTINGS)
    assert list(table["policy"].iloc[:4]) == list(STUDY.policies)
    row = table[(table["setting"] == "Increasing") & (table["policy"] == "rollmux")].iloc[0]
    assert row["total_cost_over_regroup"] == pytest.approx(1.1)
    assert row["cost_over_regroup"] == pytest.approx(1.1)
    assert row["slo_attainment_pct"] == pytest.approx(75.0)
    assert row["util_rollout_pct"] == pytest.approx(70.0)
    assert row["drift_reach"] == "profile"
    assert (table[table["policy"] == "regroup"]["total_cost_over_regroup"] == 1.0).all()


def test_normalised_cost_is_the_total_cost_of_the_same_work(tmp_path: Path) -> None:
    """A policy that stretches the work over a longer span pays for it in the primary
    (total-cost) ratio, not in the time-average one kept beside it."""
    runs = _fake_runs(tmp_path)
    path = next(r for r in runs if (r.setting, r.policy) == ("Mixed", "random")).summary_path
    path.write_text(json.dumps(_summary(200.0, 0.5, 0.5, 0.5, span_h=25.0)))
    row = rb.drift_table(runs, STUDY).set_index(["setting", "policy"]).loc[("Mixed", "random")]
    assert row["cost_over_regroup"] == pytest.approx(2.0)
    assert row["total_cost_over_regroup"] == pytest.approx(200.0 * 25.0 / (100.0 * 10.0))


def test_drift_table_needs_the_reference(tmp_path: Path) -> None:
    """A setting without its regroup replay, or a duplicate replay, raises ValueError."""
    runs = [r for r in _fake_runs(tmp_path) if not (r.setting == "Mixed" and
                                                    r.policy == "regroup")]
    with pytest.raises(ValueError, match="no 'regroup' replay"):
        rb.drift_table(runs, STUDY)
    with pytest.raises(ValueError, match="twice"):
        rb.drift_table(runs + runs[:1], STUDY)
    with pytest.raises(ValueError, match="setting must be"):
        rb.RunRef("Sideways", "rollmux", 0, tmp_path)
    with pytest.raises(ValueError, match="drift_reach"):
        rb.RunRef("Mixed", "rollmux", 0, tmp_path, "sideways")


def test_drift_study_checks_its_policies_and_reference() -> None:
    """The reference must be a listed policy; no policy twice, none of the evidence ones."""
    assert rb.DriftStudy(("rollmux", "random", "greedy", "regroup"), "regroup") == STUDY
    with pytest.raises(ValueError, match=r"robustness\.reference 'optimal' is not one of"):
        rb.DriftStudy(("rollmux", "regroup"), "optimal")
    with pytest.raises(ValueError, match="twice"):
        rb.DriftStudy(("rollmux", "rollmux", "regroup"), "regroup")
    with pytest.raises(ValueError, match="evidence only"):
        rb.DriftStudy(("rollmux", "solo-d", "regroup"), "regroup")
    with pytest.raises(ValueError, match="non-empty list"):
        rb.DriftStudy((), "regroup")
    with pytest.raises(ValueError, match="not one of the drift study's"):
        STUDY.order_key("Mixed", "verl", 0)


def test_drift_table_follows_the_study(tmp_path: Path) -> None:
    """Another reference normalises every cost, and the policies come in the study's order."""
    study = rb.DriftStudy(("greedy", "rollmux", "regroup", "random"), "rollmux")
    table = rb.drift_table(_fake_runs(tmp_path), study)
    assert list(table["policy"].iloc[:4]) == list(study.policies)
    assert (table[table["policy"] == "rollmux"]["total_cost_over_regroup"] == 1.0).all()
    regroup = table[(table["setting"] == "Increasing") & (table["policy"] == "regroup")]
    assert regroup["total_cost_over_regroup"].iloc[0] == pytest.approx(1 / 1.1)
    with pytest.raises(ValueError, match=r"not a replay of Fig\. 17"):
        rb.drift_table(_fake_runs(tmp_path / "x"), rb.DriftStudy(("rollmux", "regroup"),
                                                                 "regroup"))


def test_split_runs_separates_the_figure_from_the_evidence(tmp_path: Path) -> None:
    """Fig. 17's replays: drift settings, compared policies, one reach; the rest is
    evidence, which drift_table refuses."""
    runs = _fake_runs(tmp_path / "fig") + _evidence_runs(tmp_path / "ev")
    figure, evidence = STUDY.split_runs(runs)
    assert len(figure) == 12 and len(evidence) == len(FAKE_EVIDENCE)
    with pytest.raises(ValueError, match="split_runs"):
        rb.drift_table(figure + evidence[:1], STUDY)
    with pytest.raises(ValueError, match="more than one drift reach"):
        rb.drift_table(figure + [r for r in evidence if r.drift_reach == "cap"], STUDY)


def test_cost_by_replay_decomposes_total_cost_into_density_and_stretch(tmp_path: Path) -> None:
    """Ratio = cost per job-hour ratio x job-hours ratio; the paper's value needs the
    stretch paper_low / density; every (setting, seed) needs regroup."""
    runs = _fake_runs(tmp_path / "fig") + _evidence_runs(tmp_path / "ev")
    runs = [r for r in runs if r.drift_reach == "profile"]
    paper = {"cost_over_regroup_baselines": (3.21, 3.60),
             "cost_over_regroup_increasing": (1.11, 1.11)}
    table = de.cost_by_replay(runs, STUDY, paper)
    assert tuple(table.columns) == de.COST_COLUMNS
    np.testing.assert_allclose(
        table["total_cost_over_regroup"],
        table["cost_per_job_hour_over_regroup"] * table["job_hours_over_regroup"])
    row = table.set_index(["setting", "policy"])
    solo = row.loc[("Increasing", "solo-d")]
    assert solo["job_hours"] == pytest.approx(16.0)
    assert solo["job_hours_over_regroup"] == pytest.approx(0.8)
    assert solo["cost_per_job_hour_over_regroup"] == pytest.approx(1.5 / 0.8)
    assert solo["metric"] == ""  # informs no claim
    rand = row.loc[("Mixed", "random")]
    assert rand["metric"] == "cost_over_regroup_baselines"
    assert (rand["paper_low"], rand["paper_high"]) == (3.21, 3.60)
    assert rand["job_hours_over_regroup_for_paper"] == pytest.approx(3.21 / 3.55)
    assert row.loc[("none", "rollmux"), "total_cost_over_regroup"] == pytest.approx(1.05)
    assert row.loc[("Increasing", "rollmux"), "paper_low"] == 1.11
    with pytest.raises(ValueError, match="no 'regroup' replay for setting 'none'"):
        de.cost_by_replay([r for r in runs if (r.setting, r.policy) != ("none", "regroup")],
                          STUDY)
    with pytest.raises(ValueError, match="more than one drift reach"):
        de.cost_by_replay(_fake_runs(tmp_path / "fig2") + _evidence_runs(tmp_path / "ev2"),
                          STUDY)


def test_utilisation_gap_decomposes_the_deficit(tmp_path: Path) -> None:
    """Deficit (pp) = work term + provisioning term; relative reading beside it."""
    runs = _fake_runs(tmp_path)
    mig = rb.migration_table([r for r in runs if r.policy == "regroup"], SIM, STUDY)
    gap = de.utilisation_gap(runs, STUDY, mig)
    assert tuple(gap.columns) == de.GAP_COLUMNS
    assert len(gap) == 6
    np.testing.assert_allclose(gap["deficit_pp"], gap["work_term_pp"]
                               + gap["provisioning_term_pp"])
    roll = gap[(gap["setting"] == "Increasing") & (gap["pool"] == "rollout")].iloc[0]
    assert roll["deficit_pp"] == pytest.approx(5.0)  # bubbles 0.30 vs regroup's 0.25
    assert roll["deficit_rel_pct"] == pytest.approx(100 * 5.0 / 75.0)
    assert roll["work_term_pp"] == pytest.approx(0.0)  # same busy GPU-hours
    assert roll["provisioned_gpu_h"] == pytest.approx(100.0)
    assert roll["regroup_pause_h"] == pytest.approx(mig["pause_h"].iloc[0])


def test_slo_by_job_reports_each_static_job_beside_its_drift(tmp_path: Path) -> None:
    """One row per job of each static RollMux replay; no-drift jobs never exceed their
    admission profile; profile-reach growth = drifted over admission worst case."""
    from rollmux.sim import ReplaySpec, SimConfig, run_replay

    runs = []
    for reach in ("profile", "cap"):
        spec = ReplaySpec(trace=str(TINY_PROD), policy="rollmux", sim=SimConfig(
            drift="Increasing", drift_reach=reach, record_phases=False))
        run_replay(spec, tmp_path / reach)
        runs.append(rb.RunRef.from_folder(tmp_path / reach))
    table = de.slo_by_job(runs, TINY_PROD, STUDY)
    assert tuple(table.columns) == de.SLO_COLUMNS
    jobs = load_trace(TINY_PROD)
    assert len(table) == 2 * len(jobs)
    none = table[table["template"] == "none"]
    assert (none["iterations_over_profile_pct"] == 0).all()
    assert (none["profile_growth"] == 1.0).all()
    assert (table["admission_headroom"] > 1.0).all()
    assert (table[table["drift_reach"] == "cap"]["profile_growth"] == 1.0).all()
    grown = table[(table["drift_reach"] == "profile") & (table["template"] != "none")]
    assert len(grown) and (grown["profile_growth"] > 1.0).all()
    assert set(table["template"]) <= {"none", "increasing-0.5", "increasing-1.0",
                                      "increasing-1.5"}
    assert table["slo_met"].dtype == bool
    assert (none["mean_length_factor"] == 1.0).all()
    assert (grown["mean_length_factor"] > 1.0).all()
    assert (grown["mean_length_factor"] < grown["end_length_factor"]).all()


def test_evidence_runs_follow_the_config() -> None:
    """Solo-D per listed setting, rollmux and the configured reference without drift,
    rollmux per other reach; a drift setting that does not exist raises."""
    rb_config = {"seeds": [0, 1], "max_group_size": 4, "drift_reach": "profile",
                 "policies": ["rollmux", "random", "greedy", "optimal"], "reference": "optimal",
                 "evidence": {"solo_d_settings": ["Mixed"], "no_drift": True,
                              "compare_reach": ["cap", "profile"], "strengths": [3, 4.5]}}
    runs = de.evidence_runs(rb_config, "t-first5")
    got = sorted((r.drift, r.policy, r.seed, r.drift_reach) for r in runs)
    want = sorted(
        [("Mixed", "solo-d", s, "profile") for s in (0, 1)]
        + [("none", p, s, "profile") for p in ("rollmux", "optimal") for s in (0, 1)]
        + [(x, "rollmux", s, "cap") for x in rb.SETTINGS for s in (0, 1)]
        + [(t, "rollmux", s, "profile") for t in ("increasing-3.0", "increasing-4.5")
           for s in (0, 1)])
    assert got == want
    assert {(r.trace, r.maxgroup, r.slo) for r in runs} == {("t-first5", 4, "trace")}
    assert de.evidence_runs({**rb_config, "evidence": {}}, "t") == []
    with pytest.raises(ValueError, match="solo_d_settings"):
        de.evidence_runs({**rb_config, "evidence": {"solo_d_settings": ["Sideways"]}}, "t")
    with pytest.raises(ValueError, match="strengths"):
        de.evidence_runs({**rb_config, "evidence": {"strengths": [-1.0]}}, "t")


def test_attainment_by_strength_reads_single_template_replays(tmp_path: Path) -> None:
    """A replay with every job on one template is a RunRef; its attainment, mean length
    factor 1 + s/2 and largest slowdown form a row, and the claims evidence reports it
    against the paper's C50; other replays are skipped; a bad setting name raises."""
    runs = _fake_runs(tmp_path / "fig")
    folder = tmp_path / "ev" / "increasing-3.0"
    runs.append(_write_run(folder, "increasing-3.0", "rollmux", (100.0, 0.75, 0.3, 0.2)))
    table = de.attainment_by_strength(runs, STUDY)
    assert tuple(table.columns) == de.STRENGTH_COLUMNS
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["template"], row["strength"]) == ("increasing-3.0", 3.0)
    assert row["mean_length_factor"] == pytest.approx(2.5)
    assert row["slo_attainment_pct"] == pytest.approx(75.0)
    assert row["max_slowdown"] == pytest.approx(0.5)  # _jobs_csv's slowdowns
    paper = {"C01": (1.84, 1.84), "C47": (1.11, 1.11), "C48": (1.10, 1.10),
             "C49": (1.08, 1.08), "C50": (95.6, 98.7), "C51": (3.21, 3.60),
             "C52": (5.9, 5.9)}
    figure = [r for r in runs if r.setting in rb.SETTINGS]
    claims = de.drift_claims_evidence(de.cost_by_replay(figure, STUDY),
                                      pd.DataFrame(columns=list(de.SLO_COLUMNS)),
                                      de.utilisation_gap(figure, STUDY), paper, strengths=table)
    got = claims[claims["reading"] == "increasing-3.0 for every job, profile"].iloc[0]
    assert (got["paper"], got["ours"], got["holds"]) == (95.6, 75.0, True)
    with pytest.raises(ValueError, match="template name"):
        rb.RunRef("increasing-3", "rollmux", 0, tmp_path)


def test_drift_claims_evidence_bounds_the_baselines_by_solo_d(tmp_path: Path) -> None:
    """C51's rows: our Solo-D over regroup, the paper's (C01 x C47), and the baselines'
    cost over Solo-D's, ours and the paper's implied; C47 rows carry the paper's value."""
    runs = [r for r in _fake_runs(tmp_path / "fig") + _evidence_runs(tmp_path / "ev")
            if r.drift_reach == "profile"]
    paper = {"C01": (1.84, 1.84), "C47": (1.11, 1.11), "C48": (1.10, 1.10),
             "C49": (1.08, 1.08), "C50": (95.6, 98.7), "C51": (3.21, 3.60),
             "C52": (5.9, 5.9)}
    costs = de.cost_by_replay(runs, STUDY)
    gap = de.utilisation_gap(runs, STUDY)
    slo = pd.DataFrame(columns=list(de.SLO_COLUMNS))
    table = de.drift_claims_evidence(costs, slo, gap, paper)
    assert tuple(table.columns) == de.EVIDENCE_COLUMNS
    c51 = table[(table["claim"] == "C51") & (table["reading"] == "Increasing drift")]
    solo = c51[c51["quantity"] == "Solo-D total cost over regroup's"].iloc[0]
    # evidence rows keep 6 significant digits
    assert solo["ours"] == pytest.approx(1.5)  # FAKE_EVIDENCE: 150 vs regroup's 100
    assert solo["paper"] == pytest.approx(1.84 * 1.11, rel=1e-5)
    base = c51[c51["quantity"] == "SLO-blind baselines' cost over Solo-D's"].iloc[0]
    assert base["ours"] == pytest.approx(max(FAKE["Increasing"]["random"][0],
                                             FAKE["Increasing"]["greedy"][0]) / 150.0,
                                         rel=1e-5)
    assert base["implied"] == pytest.approx(3.21 / (1.84 * 1.11), rel=1e-5)
    c47 = table[(table["claim"] == "C47")].iloc[0]
    assert c47["paper"] == 1.11 and c47["ours"] == pytest.approx(1.1)
    c52 = table[(table["claim"] == "C52")
                & (table["quantity"] == "rollout utilisation deficit (pp)")]
    assert list(c52["ours"]) == pytest.approx(list(
        gap[gap["pool"] == "rollout"]["deficit_pp"]), rel=1e-5)


def test_utilisation_and_metrics_from_hand_written_replays(tmp_path: Path) -> None:
    """Deficits in percentage points and the six claim rows, computed by hand."""
    drift = rb.drift_table(_fake_runs(tmp_path), STUDY)
    util = rb.utilisation_table(drift, STUDY.reference)
    assert tuple(util.columns) == rb.UTILISATION_COLUMNS
    roll = util[(util["policy"] == "rollmux") & (util["pool"] == "rollout")]
    np.testing.assert_allclose(roll["deficit_vs_regroup_pp"], [5.0, 2.0, 0.0])
    train = util[(util["policy"] == "rollmux") & (util["pool"] == "train")]
    np.testing.assert_allclose(train["deficit_vs_regroup_pp"], [-10.0, -10.0, -10.0])
    metrics = rb.robustness_metrics(drift, util, "d.csv", "u.csv", context="toy")
    assert tuple(metrics.columns) == rb.METRIC_COLUMNS
    got = metrics.set_index("metric")
    assert got.loc["cost_over_regroup_increasing", "value"] == pytest.approx(1.10)
    assert got.loc["cost_over_regroup_decreasing", "value"] == pytest.approx(1.20)
    assert got.loc["cost_over_regroup_mixed", "value"] == pytest.approx(1.08)
    assert got.loc["slo_rollmux_drift", ["low", "high"]].tolist() == [50.0, 100.0]
    assert math.isnan(got.loc["slo_rollmux_drift", "value"])
    assert got.loc["cost_over_regroup_baselines", "low"] == pytest.approx(3.21)
    assert got.loc["cost_over_regroup_baselines", "high"] == pytest.approx(3.60)
    assert got.loc["rollout_util_deficit_vs_regroup", "value"] == pytest.approx(5.0)
    assert got.loc["rollout_util_deficit_vs_regroup", "source"] == "u.csv"
    assert list(got["unit"]) == ["x", "x", "x", "%", "%", "x", "%"]
    assert all(note.endswith("toy") for note in got["note"])


def test_metrics_need_every_setting(tmp_path: Path) -> None:
    """Missing a setting for a policy the claims use raises ValueError."""
    drift = rb.drift_table(_fake_runs(tmp_path), STUDY)
    part = drift[~((drift["setting"] == "Mixed") & (drift["policy"] == "greedy"))]
    with pytest.raises(ValueError, match="'greedy'"):
        rb.robustness_metrics(part, rb.utilisation_table(part, STUDY.reference), "d", "u")


def test_migration_table_sums_pauses_of_moved_jobs(tmp_path: Path) -> None:
    """Pauses of every moved job by model size; empty re-solves counted apart."""
    runs = [r for r in _fake_runs(tmp_path) if r.policy == "regroup"]
    table = rb.migration_table(runs, SIM, STUDY)
    assert tuple(table.columns) == rb.MIGRATION_COLUMNS
    jobs = {j.job_id: j for j in load_trace(SIM)}
    pause = (migration_pause_s(jobs["sim-0000"].model_size_b)
             + 2 * migration_pause_s(jobs["sim-0001"].model_size_b)) / 3600.0
    row = table.iloc[0]
    assert (row["resolves"], row["regroupings"], row["moves"], row["jobs_moved"]) == (3, 2, 3, 2)
    assert row["pause_h"] == pytest.approx(pause)
    assert row["pause_per_span_pct"] == pytest.approx(100 * pause / 10.0)
    assert row["cold_switch_extra_h"] > 0
    with pytest.raises(ValueError, match="not a 'regroup' replay"):
        rb.migration_table(_fake_runs(tmp_path / "x")[:1], SIM, STUDY)


# --------------------------------------------------------------------------- Fig. 19


def test_failure_timeline_from_hand_written_tables() -> None:
    """Names, incarnations and lost work from a kill with 1 completed iteration."""
    phases = pd.DataFrame(
        [(0, 0, 0, 1, 0, 0.0, 10.0, 10.0, 8), (0, 1, 0, 2, 1, 10.0, 15.0, 5.0, 8),
         (0, 0, 1, 1, 0, 15.0, 20.0, 5.0, 8), (1, 0, 0, 3, 0, 0.0, 12.0, 12.0, 8),
         (0, 0, 1, 4, 0, 40.0, 50.0, 10.0, 8)],
        columns=["job", "phase", "iteration", "node", "pool", "start_s", "end_s", "work_s",
                 "gpus"])
    jobs = pd.DataFrame({"job": [0, 1], "job_id": ["E", "D1"]})
    events = pd.DataFrame({
        "time_s": [0.0, 20.0, 40.0], "kind": ["arrival", "kill", "resubmit"],
        "job_id": ["E", "E", "E"], "detail": [np.nan, "iterations_done=1", np.nan]})
    out = rb.failure_timeline(phases, jobs, events)
    assert tuple(out.columns) == rb.TIMELINE_COLUMNS
    e = out[out["job_id"] == "E"].sort_values("start_s")
    assert e["incarnation"].tolist() == [1, 1, 1, 2]
    assert e["lost"].tolist() == [False, False, True, False]
    assert e["node"].tolist() == ["R1", "T2", "R1", "R4"]
    assert e["phase"].tolist() == ["rollout", "train", "rollout", "rollout"]
    assert not out[out["job_id"] == "D1"]["lost"].any()
    bad = events.assign(detail=["", "", ""])
    with pytest.raises(ValueError, match="iterations_done"):
        rb.failure_timeline(phases, jobs, bad)


def test_failure_replay_resumes_from_the_last_completed_iteration(tmp_path: Path) -> None:
    """End to end: the killed job rejoins its group and redoes only unfinished iterations."""
    from rollmux.sim.cli import main as simulate_main

    trace = rb.write_validated_trace(
        rb.failure_trace_text(MICRO, FAILURE_JOBS, slo=1.2, iterations=6), tmp_path / "t.csv")
    kills = tmp_path / "k.csv"
    kills.write_text(rb.failures_text(
        [{"job_id": "E", "kill_at_s": 2180, "resubmit_at_s": 4480}], ["D1", "D2", "E"]))
    out = tmp_path / "replay"
    code = simulate_main(["simulate", "--trace", str(trace), "--policy", "rollmux",
                          "--failures", str(kills), "--quiet", "--out", str(out)])
    assert code == 0
    events = pd.read_csv(out / "events.csv", dtype={"detail": str}, keep_default_na=False)
    timeline = rb.failure_timeline(pd.read_csv(out / "phases.csv"),
                                   pd.read_csv(out / "jobs.csv"), events)
    kill = events[events["kind"] == "kill"].iloc[0]
    done = int(kill["detail"].split("=")[1])
    groups = set(events[events["job_id"] == "E"]["group_id"]) - {""}
    assert len(groups) == 1  # re-admitted into the same group
    e = timeline[timeline["job_id"] == "E"]
    second = e[e["incarnation"] == 2]
    assert second["start_s"].min() >= 4480.0
    assert second["iteration"].min() == done
    assert sorted(second[second["phase"] == "train"]["iteration"]) == list(range(done, 6))
    others = timeline[(timeline["job_id"] != "E") & (timeline["start_s"] > 2180.0)
                      & (timeline["start_s"] < 4480.0)]
    assert set(others["job_id"]) == {"D1", "D2"}  # the other members keep running


# --------------------------------------------------------------------------- figures


def test_fig16_draws_deterministically(tmp_path: Path) -> None:
    """Fig. 16 from a tiny template table: PNG and PDF, same bytes twice."""
    curves = tmp_path / "templates.csv"
    rb.template_curves(MICRO, [7, 14], iterations=8).to_csv(curves, index=False)
    fig16 = _script("fig16_drift_templates")
    blobs = []
    for run in ("a", "b"):
        png, pdf = tmp_path / f"{run}.png", tmp_path / f"{run}.pdf"
        assert fig16.main(["--curves", str(curves), "--window", "3", "--png", str(png),
                           "--pdf", str(pdf)]) == 0
        blobs.append((png.read_bytes(), pdf.read_bytes()))
    assert blobs[0] == blobs[1] and blobs[0][0][:4] == b"\x89PNG"
    assert blobs[0][1][:4] == b"%PDF"


def test_fig16_smoothing_window() -> None:
    """The rolling mean keeps the row count and, with window 1, the raw values."""
    fig16 = _script("fig16_drift_templates")
    curves = rb.template_curves(MICRO, [7], iterations=6)
    raw = fig16.smoothed(curves, 1)
    np.testing.assert_allclose(raw["smoothed_s"], raw["iteration_s"])
    assert len(fig16.smoothed(curves, 4)) == len(curves)
    with pytest.raises(ValueError):
        fig16.smoothed(curves, 0)


def test_fig17_and_fig18_draw_from_hand_written_tables(tmp_path: Path) -> None:
    """Fig. 17 and 18 from the hand-written drift, utilisation and migration tables."""
    runs = _fake_runs(tmp_path / "runs")
    drift = rb.drift_table(runs, STUDY)
    util = rb.utilisation_table(drift, STUDY.reference)
    mig = rb.migration_table([r for r in runs if r.policy == "regroup"], SIM, STUDY)
    paths = {}
    for name, frame in (("drift", drift), ("util", util), ("mig", mig)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    fig17 = _script("fig17_drift_cost")
    assert fig17.main(["--drift", str(paths["drift"]), "--policies", *STUDY.policies,
                       "--reference", STUDY.reference, "--png", str(tmp_path / "17.png"),
                       "--pdf", str(tmp_path / "17.pdf")]) == 0
    stats = fig17.seed_stats(drift, "total_cost_over_regroup")
    assert len(stats) == 12
    fig18 = _script("fig18_drift_utilisation")
    assert fig18.main(["--utilisation", str(paths["util"]), "--migration", str(paths["mig"]),
                       "--reference", STUDY.reference, "--png", str(tmp_path / "18.png"),
                       "--pdf", str(tmp_path / "18.pdf")]) == 0
    means = fig18.pool_means(util, STUDY.reference)
    assert set(means["policy"]) == {"rollmux", "regroup"} and len(means) == 12
    for name in ("17.png", "17.pdf", "18.png", "18.pdf"):
        assert (tmp_path / name).stat().st_size > 1000


def test_fig19_draws_from_a_hand_written_timeline(tmp_path: Path) -> None:
    """Fig. 19 from a tiny timeline and event log."""
    timeline = pd.DataFrame(
        [("D1", 1, "rollout", 0, "R1", "rollout", 0.0, 10.0, 10.0, False),
         ("E", 1, "rollout", 0, "R2", "rollout", 0.0, 8.0, 8.0, True),
         ("D1", 1, "train", 0, "T3", "train", 10.0, 14.0, 4.0, False),
         ("E", 2, "rollout", 0, "R4", "rollout", 20.0, 28.0, 8.0, False),
         ("E", 2, "train", 0, "T3", "train", 28.0, 30.0, 2.0, False)],
        columns=list(rb.TIMELINE_COLUMNS))
    events = pd.DataFrame({"time_s": [0, 9, 20], "kind": ["arrival", "kill", "resubmit"],
                           "job_id": ["E", "E", "E"], "group_id": ["G0", "G0", "G0"],
                           "strategy": ["new-group", "", "new-group"],
                           "marginal_cost_usd_per_h": [1, 0, 1],
                           "detail": ["", "iterations_done=0", ""]})
    timeline.to_csv(tmp_path / "t.csv", index=False)
    events.to_csv(tmp_path / "e.csv", index=False)
    fig19 = _script("fig19_failure_timeline")
    assert fig19.main(["--timeline", str(tmp_path / "t.csv"), "--events", str(tmp_path / "e.csv"),
                       "--png", str(tmp_path / "19.png"), "--pdf", str(tmp_path / "19.pdf")]) == 0
    assert (tmp_path / "19.png").stat().st_size > 1000
