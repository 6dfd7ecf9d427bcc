"""The production gap decomposed: arrival re-timing to a Solo-D peak, the step table, and
the production claims with real lengths beside the lognormal ones."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rollmux.experiments.claims import load_ledger, load_tolerances
from rollmux.experiments.production_gap import (
    CLAIMS,
    Step,
    burst_arrivals,
    burst_to_peak,
    gap_table,
    lengths_claims,
    solo_peak,
)
from rollmux.hardware import load_hardware
from rollmux.sim.sweeps import RunKey
from rollmux.traces.loader import load_trace

ROOT = Path(__file__).resolve().parents[1]


def test_burst_arrivals_keep_order_and_pull_toward_the_window_start() -> None:
    """Factor 1 keeps arrivals, 0 moves each to its window's start; order never changes."""
    a = np.array([0.0, 5.0, 9.0, 10.0, 14.0, 25.0])
    assert np.array_equal(burst_arrivals(a, 10.0, 1.0), a)
    assert list(burst_arrivals(a, 10.0, 0.0)) == [0, 0, 0, 10, 10, 20]
    half = burst_arrivals(a, 10.0, 0.5)
    assert list(half) == [0, 2.5, 4.5, 10, 12, 22.5] and np.all(np.diff(half) >= 0)
    with pytest.raises(ValueError):
        burst_arrivals(a, 10.0, 1.5)


def test_solo_peak_counts_overlapping_jobs() -> None:
    """Two overlapping 8-GPU jobs and one after them: a peak of 16."""
    assert solo_peak(np.array([0.0, 1.0, 10.0]), np.array([5.0, 5.0, 1.0]),
                     np.array([8.0, 8.0, 8.0])) == 16.0


def test_burst_to_peak_reaches_the_target_on_the_production_trace() -> None:
    """The shipped trace's Solo-D peak (240) is lifted to 328 by a factor in (0, 1); the
    jobs' work is unchanged, so their closed-form Solo-D total cost is too."""
    from rollmux.closedform import isolated_trace_costs
    from rollmux.model import resolve

    hw = load_hardware()
    jobs = load_trace(ROOT / "traces" / "production-default.csv", hw)
    burst = burst_to_peak(jobs, hw, 328, 168.0)
    assert burst.peak_before == 240 and burst.reached and 0.0 < burst.factor < 1.0
    # The largest such factor: a little more (less bursty) falls short.
    looser = burst_to_peak(jobs, hw, burst.peak_after + 1, 168.0)
    assert looser.factor <= burst.factor
    before = isolated_trace_costs([resolve(j, hw) for j in jobs])["solo-d"].total_usd
    after = isolated_trace_costs([resolve(j, hw) for j in list(burst.jobs)])["solo-d"].total_usd
    assert after == pytest.approx(before)
    # A day's window cannot reach 328 (jobs last 27.9 h on average): factor 0, not reached.
    assert not burst_to_peak(jobs, hw, 328, 24.0).reached


def _table(rollmux_total: float, bubbles: tuple[float, float]) -> pd.DataFrame:
    """A production replay table with RollMux at ``rollmux_total`` USD."""
    rows = []
    for policy, total, h20, h800, bubble in (
            ("rollmux", rollmux_total, 200, 150, bubbles),
            ("solo-d", 9000.0, 300, 300, (0.5, 0.6)),
            ("verl", 7000.0, 0, 320, (math.nan, 0.1))):
        rows.append({"trace": "p", "slo": "trace", "maxgroup": 5, "policy": policy, "seed": 0,
                     "cost_usd_per_h": total / 10.0, "total_cost_usd": total, "span_h": 10.0,
                     "slo_attainment": 1.0, "slo_attainment_reference": 1.0,
                     "slo_attainment_realised": 1.0, "slo_attainment_planned": 1.0,
                     "peak_gpus_H20": h20, "peak_gpus_H800": h800,
                     "idle_gpu_h_rollout": 10.0, "idle_gpu_h_train": 10.0,
                     "bubble_fraction_rollout": bubble[0], "bubble_fraction_train": bubble[1],
                     "share_direct_packing": 0.6, "share_rollout_scaling": 0.15,
                     "share_new_group": 0.25})
    return pd.DataFrame(rows)


def test_gap_table_records_each_claim_and_the_share_of_the_gap_closed() -> None:
    """RollMux cheaper at step 1: C01 rises toward 1.84 and gap_closed says how far."""
    ledger = load_ledger()
    steps = [Step("0", "as shipped", "", "", _table(6000.0, (0.3, 0.2)), 90.0, 100.0),
             Step("1", "+ x", "x", "ours", _table(9000.0 / 1.6, (0.3, 0.2)), 80.0, 100.0)]
    table = gap_table(steps, ledger)
    assert set(table["claim"]) == {*CLAIMS, "C03"}
    c01 = table[table["claim"] == "C01"].set_index("step")
    assert c01.loc["0", "ours"] == pytest.approx(1.5) and c01.loc["1", "ours"] == pytest.approx(1.6)
    assert c01.loc["1", "gap_closed"] == pytest.approx(0.1 / 0.34)
    assert c01.loc["0", "gap_closed"] == 0.0
    assert c01.loc["1", "seeds"] == 1
    assert c01.loc["1", "ci_low"] == c01.loc["1", "ci_high"] == c01.loc["1", "ours"]
    realised = table[table["metric"] == "slo_attainment_realised_rollmux"].set_index("step")
    assert realised.loc["1", "ours"] == 80.0


def test_gap_table_gives_the_mean_and_95pct_interval_over_seeds() -> None:
    """Two seeds: ours is the mean of the per-seed values, with their Student-t interval."""
    from scipy import stats

    ledger = load_ledger()
    two = pd.concat([_table(6000.0, (0.3, 0.2)),
                     _table(9000.0 / 1.6, (0.3, 0.2)).assign(seed=1)], ignore_index=True)
    steps = [Step("0", "as shipped", "", "", two, 85.0, 100.0,
                  ((80.0, 100.0), (90.0, 100.0)))]
    table = gap_table(steps, ledger).set_index("metric")
    c01 = table.loc["cost_ratio_solod_over_rollmux"]
    half = stats.t.ppf(0.975, 1) * np.std([1.5, 1.6], ddof=1) / math.sqrt(2)
    assert c01["seeds"] == 2 and c01["ours"] == pytest.approx(1.55)
    assert (c01["ci_low"], c01["ci_high"]) == pytest.approx((1.55 - half, 1.55 + half))
    slo = table.loc["slo_attainment_realised_rollmux"]
    half = stats.t.ppf(0.975, 1) * np.std([80.0, 90.0], ddof=1) / math.sqrt(2)
    assert slo["ours"] == pytest.approx(85.0)
    assert (slo["ci_low"], slo["ci_high"]) == pytest.approx((85.0 - half, 85.0 + half))
    reference = table.loc["slo_attainment_reference_rollmux"]
    assert reference["ci_low"] == reference["ci_high"] == 100.0


def test_lengths_claims_compare_both_replays_by_the_claims_rule() -> None:
    """A RollMux at the paper's C01 holds; one far below differs; C03 realised is compared."""
    ledger = load_ledger()
    table = lengths_claims(ledger, load_tolerances(), _table(9000.0 / 1.5, (0.3, 0.2)),
                           _table(9000.0 / 1.84, (0.3, 0.2)),
                           {"lognormal": (91.5, 100.0), "lengths": (70.0, 100.0)})
    row = table.set_index("metric").loc["cost_ratio_solod_over_rollmux"]
    assert not row["holds_lognormal"] and row["holds_lengths"]
    slo = table.set_index("metric").loc["slo_attainment_realised_rollmux"]
    assert slo["ours_lengths"] == 70.0 and not slo["holds_lengths"]


def test_run_key_with_lengths_has_its_own_folder_beside_the_lognormal_one() -> None:
    """The lengths segment sits before policy=, so no replay folder nests in another."""
    plain = RunKey("production-default", "trace", 5, "rollmux", 0)
    real = RunKey("production-default", "trace", 5, "rollmux", 0, lengths="/x/polytrace")
    assert "lengths=polytrace" in real.path().parts
    assert real.path().parts.index("lengths=polytrace") < real.path().parts.index(
        "policy=rollmux")
    assert plain.path() != real.path()
    assert not str(real.path()).startswith(str(plain.path()))
    assert sorted([real, plain]) == [plain, real]


def test_lengths_by_workload_groups_jobs_by_the_run_that_served_them() -> None:
    """Shares met, realised-over-worst ratios and slowdowns per serving workload."""
    from rollmux.experiments.production_gap import lengths_by_workload

    jobs = pd.DataFrame({"job_id": ["a", "b", "c"], "slo_met_realised": [True, False, True],
                         "solo_iteration_realised_s": [10.0, 1.0, 5.0],
                         "solo_iteration_s": [20.0, 10.0, 10.0],
                         "slowdown_realised": [1.0, 3.0, 1.2]})
    by = lengths_by_workload(jobs, {"a": "x", "b": "y", "c": "x"}).set_index("workload")
    assert by.loc["x", "jobs"] == 2 and by.loc["x", "slo_met_realised_pct"] == 100.0
    assert by.loc["y", "realised_over_worst_solo_median"] == pytest.approx(0.1)
    assert by.loc["y", "slo_met_realised_pct"] == 0.0


def test_gap_figure_draws_each_steps_interval_over_seeds() -> None:
    """With two seeds every series carries whiskers (its 95% interval); with one, none."""
    from matplotlib.collections import LineCollection
    from scriptmod import load_script

    figure = load_script("fig_production_gap", "analysis")
    ledger = load_ledger()
    two = pd.concat([_table(6000.0, (0.3, 0.2)),
                     _table(9000.0 / 1.6, (0.3, 0.2)).assign(seed=1)], ignore_index=True)
    steps = [Step("0", "as shipped", "", "", two, 85.0, 100.0,
                  ((80.0, 100.0), (90.0, 100.0))),
             Step("1", "+ x", "x", "ours", two, 85.0, 100.0, ((80.0, 100.0), (90.0, 100.0)))]

    def whiskers(table: pd.DataFrame) -> int:
        fig = figure.draw(table)
        return sum(isinstance(c, LineCollection) for ax in fig.axes for c in ax.collections)

    assert whiskers(gap_table(steps, ledger)) == len(CLAIMS) + 2
    one = [Step(s.name, s.setup, s.factor, s.source, _table(6000.0, (0.3, 0.2)), 85.0, 100.0)
           for s in steps]
    assert whiskers(gap_table(one, ledger)) == 0
