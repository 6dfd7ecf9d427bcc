"""rollmux.experiments.optimum_gaps: the certified gap behind each optimum-normalised claim."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from claims_inputs import write_calibration_residuals

from rollmux.experiments.intervals import SeedMetricsError, read_seed_metrics
from rollmux.experiments.optimum_gaps import (
    GAP_METRIC_COLUMNS,
    GapMetricsError,
    claim_gap,
    gap_frame,
    gap_row,
    gap_text,
    read_gap_metrics,
)
from rollmux.experiments.robustness import SETTINGS, robustness_gaps, with_reference_ratios
from rollmux.experiments.sensitivity import OPTIMUM_NORMALISED, simulation_gaps


def test_gap_row_takes_the_largest_gap_and_an_unbounded_reading_wins() -> None:
    """The row's gap is the largest reading's; one reading without a bound makes it NaN."""
    row = gap_row("cost_over_opt_rollmux_mixed", "optimal", [0.0, 0.004, 0.001], "src")
    assert row["optimum_gap"] == 0.004 and row["readings"] == 3
    assert row["optimum_gap_mean"] == pytest.approx(0.005 / 3, rel=1e-5)
    assert math.isnan(gap_row("m", "optimal", [0.0, None], "src")["optimum_gap"])
    with pytest.raises(ValueError, match=">= 0"):
        gap_row("m", "optimal", [-0.1], "src")
    with pytest.raises(ValueError, match="no reference reading"):
        gap_row("m", "optimal", [], "src")


def test_claim_gap_and_its_text() -> None:
    """Not normalised: no gap, no text; unbounded: 1 (the trivial bound); else the gap."""
    gaps = {"a": 0.0, "b": 0.0031, "c": math.nan}
    assert math.isnan(claim_gap(gaps, "z")) and gap_text(claim_gap(gaps, "z")) == ""
    assert gap_text(claim_gap(gaps, "a")) == "optimum's gap 0 (proven)"
    assert gap_text(claim_gap(gaps, "b")) == "optimum's gap <= 0.31%"
    assert claim_gap(gaps, "c") == 1.0 and "unbounded" in gap_text(claim_gap(gaps, "c"))


def _sensitivity(gap_by_trace: dict[str, float]) -> pd.DataFrame:
    """A sensitivity table: two workload settings and one SLO setting, two policies, two
    seeds, each setting's reference gap from ``gap_by_trace``."""
    rows = []
    for kind, value, trace, slo in (("workload", "BL", "bl", "trace"),
                                    ("workload", "RH", "rh", "trace"),
                                    ("slo", "2", "mixed", "2")):
        for policy in ("rollmux", "random"):
            for seed in (0, 1):
                rows.append({"kind": kind, "value": value, "trace": trace, "slo": slo,
                             "maxgroup": 5, "policy": policy, "seed": seed,
                             "reference_gap": gap_by_trace[trace]})
    return pd.DataFrame(rows)


def test_simulation_gaps_read_only_the_settings_each_metric_spans() -> None:
    """A gap in an SLO setting shows on the by-SLO metric, not on the by-workload ones."""
    sens = _sensitivity({"bl": 0.0, "rh": 0.0, "mixed": 0.02})
    mixed = pd.DataFrame({"kind": "mixed", "value": "Mixed", "trace": "mixed", "slo": "trace",
                          "maxgroup": 5, "policy": ["rollmux", "greedy"], "seed": 0,
                          "reference_gap": 0.001})
    sens = pd.concat([sens, sens.assign(kind="maxgroup", value="5")], ignore_index=True)
    table = simulation_gaps(sens, mixed, "s.csv").set_index("metric")
    assert tuple(table.reset_index().columns) == GAP_METRIC_COLUMNS
    assert set(table.index) == set(OPTIMUM_NORMALISED)
    assert table.loc["cost_over_opt_rollmux_by_workload", "optimum_gap"] == 0.0
    assert table.loc["cost_over_opt_rollmux_by_workload", "readings"] == 4  # 2 settings x 2
    assert table.loc["cost_over_opt_baselines_by_slo", "optimum_gap"] == 0.02
    assert table.loc["cost_over_opt_rollmux_mixed", "optimum_gap"] == 0.001
    assert (table["reference"] == "optimal").all()
    # a table written before the gaps reads as unbounded
    old = simulation_gaps(sens.drop(columns="reference_gap"), mixed, "s.csv")
    assert old.set_index("metric")["optimum_gap"].isna().sum() == 5


def test_drift_ratios_carry_the_reference_gap_and_the_metrics_take_it() -> None:
    """Every replay's row names its setting's and seed's regroup gap; the C47-C49 metric
    of a setting takes that setting's largest, C51 every setting's."""
    rows = []
    for i, setting in enumerate(SETTINGS):
        for seed in (0, 1):
            for policy, cost in (("regroup", 100.0), ("rollmux", 110.0), ("random", 130.0),
                                 ("greedy", 125.0)):
                rows.append({"setting": setting, "policy": policy, "seed": seed,
                             "total_cost_usd": cost, "cost_usd_per_h": cost / 10,
                             "optimum_gap": (0.001 * (i + 1) * (seed + 1)
                                             if policy == "regroup" else math.nan)})
    drift = with_reference_ratios(pd.DataFrame(rows), "runs", "regroup")
    assert drift["reference_gap"].notna().all()
    first = drift[(drift["setting"] == SETTINGS[0]) & (drift["seed"] == 1)]
    assert (first["reference_gap"] == 0.002).all()
    gaps = robustness_gaps(drift, "drift.csv").set_index("metric")
    assert gaps.loc[f"cost_over_regroup_{SETTINGS[0].lower()}", "optimum_gap"] == 0.002
    assert gaps.loc["cost_over_regroup_baselines", "optimum_gap"] == 0.002 * len(SETTINGS)
    assert gaps.loc["cost_over_regroup_baselines", "readings"] == 2 * len(SETTINGS)


def test_gap_files_are_checked_with_located_errors(tmp_path: Path) -> None:
    """Header, unknown metric, repeated metric, readings and gap problems name file and line;
    an empty gap (no bound) is read as NaN."""
    good = tmp_path / "good.csv"
    gap_frame([gap_row("m1", "optimal", [0.0, 0.01], "s"),
               gap_row("m2", "regroup", [None], "s")]).to_csv(good, index=False)
    table = read_gap_metrics([good], ["m1", "m2"]).set_index("metric")
    assert table.loc["m1", "optimum_gap"] == 0.01 and np.isnan(table.loc["m2", "optimum_gap"])
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(GAP_METRIC_COLUMNS) + "\n"
                   "m1,optimal,2,0,0,s\n"
                   "m1,optimal,2,0,0,s\n"
                   "nope,optimal,1,0,0,s\n"
                   "m2,optimal,0,0,0,s\n"
                   "m3,optimal,1,-0.5,0,s\n")
    with pytest.raises(GapMetricsError) as err:
        read_gap_metrics([bad], ["m1", "m2", "m3"])
    text = str(err.value)
    for part in (f"{bad}:3: row 2, column metric", f"{bad}:4: row 3, column metric",
                 f"{bad}:5: row 4, column readings", f"{bad}:6: row 5, column optimum_gap"):
        assert part in text, part
    header = tmp_path / "header.csv"
    header.write_text("metric,gap\n")
    with pytest.raises(GapMetricsError, match="header"):
        read_gap_metrics([header], ["m1"])


def test_seed_files_accept_the_allowed_companions_only(tmp_path: Path) -> None:
    """A per-seed file holds an SLO attainment metric's `@reference` companion (the stages
    write it beside the realised reading); a reading companion_error refuses is refused."""
    path = tmp_path / "s.csv"
    path.write_text("metric,seed,value,low,high,unit\n"
                    "slo_attainment_rollmux,0,80,,,%\n"
                    "slo_attainment_rollmux@reference,0,70,,,%\n")
    units = {"slo_attainment_rollmux": "%", "peak_h20_ratio": "x"}
    rows = read_seed_metrics([path], units)
    assert list(rows["metric"]) == ["slo_attainment_rollmux",
                                    "slo_attainment_rollmux@reference"]
    path.write_text("metric,seed,value,low,high,unit\npeak_h20_ratio@reference,0,1,,,x\n")
    with pytest.raises(SeedMetricsError, match="companion"):
        read_seed_metrics([path], units)


def test_claims_report_names_the_gap_of_optimum_normalised_claims(tmp_path: Path) -> None:
    """End to end on the shipped ledger: a claim normalised by the optimum shows its gap in
    the CSV column and beside ours in the Markdown; a claim that is not shows none."""
    from rollmux.experiments.claims import build_claims_report, load_ledger
    from rollmux.experiments.metrics import ATTAINMENT_METRICS, BESIDE_READING, with_reading

    ledger = load_ledger()
    write_calibration_residuals(tmp_path, ledger)
    rows = [{"metric": rec["metric"], "value": rec["paper_value"], "low": rec["paper_low"],
             "high": rec["paper_high"], "unit": rec["unit"], "source": "t", "note": "t"}
            for rec in ledger[ledger["reproducible"] == "yes"].to_dict("records")]
    rows += [{**r, "metric": with_reading(r["metric"], BESIDE_READING)}
             for r in rows if r["metric"] in ATTAINMENT_METRICS]
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    gap_frame([gap_row("cost_over_opt_rollmux_mixed", "optimal", [0.0, 0.0042], "t"),
               gap_row("cost_over_regroup_increasing", "regroup", [0.0], "t")]).to_csv(
        tmp_path / "g.csv", index=False)
    build_claims_report([tmp_path / "m.csv"], tmp_path / "c.csv", tmp_path / "c.md",
                        tmp_path / "j.json", results_root=tmp_path, require_evidence=False,
                        gap_metrics_paths=[tmp_path / "g.csv"], out_html=tmp_path / "c.html")
    table = pd.read_csv(tmp_path / "c.csv", dtype=str, keep_default_na=False).set_index(
        "metric")
    assert float(table.loc["cost_over_opt_rollmux_mixed", "optimum_gap"]) == 0.0042
    assert float(table.loc["cost_over_regroup_increasing", "optimum_gap"]) == 0.0
    assert table.loc["cost_ratio_solod_over_rollmux", "optimum_gap"] == ""
    markdown = (tmp_path / "c.md").read_text()
    mixed = next(line for line in markdown.splitlines()
                 if line.startswith(f"| {table.loc['cost_over_opt_rollmux_mixed', 'claim_id']} "))
    assert "optimum's gap <= 0.42%" in mixed
    c01 = next(line for line in markdown.splitlines() if line.startswith("| C01 "))
    assert "gap" not in c01
    assert "optimum&#x27;s gap &lt;= 0.42%" in (tmp_path / "c.html").read_text()
