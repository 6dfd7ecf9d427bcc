"""rollmux.experiments.intervals: per-seed metrics, t-intervals and the interval status."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from claims_inputs import write_calibration_residuals

from rollmux.experiments.claims import Tolerance
from rollmux.experiments.intervals import (
    INSIDE,
    OUTSIDE,
    SEED_METRIC_COLUMNS,
    STRADDLES,
    ClaimInterval,
    SeedInterval,
    SeedMetricsError,
    claim_intervals,
    interval_envelope,
    interval_text,
    interval_verdict,
    mean_over_seeds,
    per_seed_metrics,
    read_seed_metrics,
    t_errorbar,
    t_interval,
    whisker_lengths,
)
from rollmux.experiments.metrics import metric_row, metrics_frame

RELATIVE = Tolerance("ratio", "within 10%", relative=0.10, percent_points=5.0)


def _ci(values: list[float]) -> ClaimInterval:
    """A single-valued claim's interval from per-seed values."""
    return ClaimInterval(len(values), value=t_interval(values))


def test_t_interval_is_computed_from_the_per_seed_values() -> None:
    """Mean +- t(0.975, n-1) s / sqrt(n), by hand: 1..5 gives 3 +- 2.776 * 1.581 / 2.236."""
    ci = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert (ci.n, ci.mean) == (5, 3.0)
    assert ci.low == pytest.approx(3.0 - half) and ci.high == pytest.approx(3.0 + half)
    # wider with more spread, narrower with more seeds of the same spread
    assert t_interval([1.0, 5.0, 9.0]).high - t_interval([1.0, 5.0, 9.0]).low > \
        t_interval([4.0, 5.0, 6.0]).high - t_interval([4.0, 5.0, 6.0]).low
    many = t_interval([4.0, 6.0] * 10)
    assert many.high - many.low < t_interval([4.0, 6.0]).high - t_interval([4.0, 6.0]).low
    assert t_interval([2.0, 2.0, 2.0]) == SeedInterval(3, 2.0, 2.0, 2.0)
    one = t_interval([1.5])
    assert (one.n, one.low, one.high) == (1, 1.5, 1.5)
    for bad in ([], [1.0, math.nan]):
        with pytest.raises(ValueError):
            t_interval(bad)


def test_t_interval_quantile_is_scipy_stats_t_bit_for_bit() -> None:
    """The half-width uses scipy.stats.t.ppf's quantile exactly (computed without
    importing scipy.stats): equal floats for 2 to 60 seeds at the usual levels."""
    from scipy import stats

    for n in range(2, 61):
        x = np.arange(1.0, n + 1.0) ** 1.5
        for level in (0.5, 0.9, 0.95, 0.99):
            half = float(stats.t.ppf(0.5 + level / 2.0, n - 1) * x.std(ddof=1) / math.sqrt(n))
            ci = t_interval(list(x), level=level)
            assert (ci.low, ci.high) == (float(x.mean()) - half, float(x.mean()) + half)


def test_a_claim_straddling_its_tolerance_edge_gets_the_straddle_status() -> None:
    """Paper 1.84x, +-10%: band [1.656, 2.024]; per-seed values around the lower edge."""
    paper = (1.84, None, None)
    straddling = [1.60, 1.70, 1.64, 1.72, 1.66]  # mean 1.664: inside, interval not
    assert RELATIVE.slack(1.84, "x") == pytest.approx(0.184)
    assert np.mean(straddling) > 1.656
    verdict = interval_verdict("ratio", "x", paper, _ci(straddling), RELATIVE)
    assert verdict == STRADDLES
    inside = [1.80, 1.82, 1.85, 1.83, 1.86]
    assert interval_verdict("ratio", "x", paper, _ci(inside), RELATIVE) == INSIDE
    outside = [1.20, 1.25, 1.22, 1.31, 1.28]
    assert interval_verdict("ratio", "x", paper, _ci(outside), RELATIVE) == OUTSIDE
    # the same mean with one seed is a point: inside; spread makes the difference
    assert interval_verdict("ratio", "x", paper, _ci([float(np.mean(straddling))]),
                            RELATIVE) == INSIDE


def test_percent_claims_use_points_and_bounds_one_side() -> None:
    """A % claim's band is +-5 pp; bounds only look at one side; a property needs equality."""
    paper = (90.0, None, None)
    assert interval_verdict("value", "%", paper, _ci([88.0, 89.0, 90.0]), RELATIVE) == INSIDE
    assert interval_verdict("value", "%", paper, _ci([82.0, 86.0, 90.0]), RELATIVE) \
        == STRADDLES
    assert interval_verdict("upper_bound", "%", (3.0, None, None), _ci([1.0, 2.0, 1.5]),
                            RELATIVE) == INSIDE
    assert interval_verdict("upper_bound", "%", (3.0, None, None), _ci([1.0, 5.0, 3.0]),
                            RELATIVE) == STRADDLES
    assert interval_verdict("lower_bound", "s", (3.0, None, None), _ci([1.0, 1.2, 1.1]),
                            RELATIVE) == OUTSIDE
    assert interval_verdict("property", "bool", (1.0, None, None), _ci([1.0, 1.0]),
                            RELATIVE) == INSIDE
    assert interval_verdict("property", "bool", (1.0, None, None), _ci([1.0, 0.0, 1.0]),
                            RELATIVE) == STRADDLES


def test_range_claims_take_each_end_from_its_own_interval() -> None:
    """Range 1.0-1.1, +-10%: low end >= 0.9, high end <= 1.21; either end outside: outside."""
    paper = (None, 1.0, 1.1)

    def ci(lows: list[float], highs: list[float]) -> ClaimInterval:
        return ClaimInterval(len(lows), low=t_interval(lows), high=t_interval(highs))

    assert interval_verdict("range", "x", paper, ci([1.0, 1.02, 0.98], [1.1, 1.12, 1.15]),
                            RELATIVE) == INSIDE
    assert interval_verdict("range", "x", paper, ci([0.88, 0.95, 0.91], [1.1, 1.12, 1.15]),
                            RELATIVE) == STRADDLES
    assert interval_verdict("range", "x", paper, ci([0.88, 0.95, 0.91], [1.4, 1.5, 1.45]),
                            RELATIVE) == OUTSIDE
    both = ci([0.9, 1.0, 0.95], [1.2, 1.3, 1.25])
    assert interval_text("range", both).startswith("low [") and ", high [" in \
        interval_text("range", both)
    low, high = interval_envelope("range", both)
    assert low == both.low.low and high == both.high.high  # type: ignore[union-attr]
    assert interval_text("ratio", _ci([1.0])) == ""
    assert all(math.isnan(x) for x in interval_envelope("ratio", _ci([1.0])))


def _build(values: dict[int, float]):  # type: ignore[no-untyped-def]
    """A stage's builder: one production metric whose value depends on the seed."""
    def build(seed: int) -> pd.DataFrame:
        return metrics_frame([
            metric_row("cost_ratio_solod_over_rollmux", "prod.csv", f"at seed {seed}",
                       value=values[seed]),
            metric_row("peak_h20_ratio", "prod.csv", "fixed", value=2.0),
        ], "production")
    return build


def test_per_seed_metrics_and_their_mean(tmp_path: Path) -> None:
    """Per-seed rows of each metric, the metrics file's value their mean, read back whole."""
    build = _build({0: 1.2, 1: 1.4, 2: 1.9})
    per_seed = per_seed_metrics(build, [2, 0, 1])
    assert tuple(per_seed.columns) == SEED_METRIC_COLUMNS
    assert list(per_seed["seed"][:3]) == [0, 1, 2]
    assert list(per_seed["metric"]) == ["cost_ratio_solod_over_rollmux"] * 3 + \
        ["peak_h20_ratio"] * 3
    only = per_seed_metrics(build, [0, 1], metrics=["peak_h20_ratio"])
    assert set(only["metric"]) == {"peak_h20_ratio"}
    pooled = build(0)
    mean = mean_over_seeds(pooled, per_seed)
    assert mean.loc[0, "value"] == pytest.approx(1.5) and mean.loc[1, "value"] == 2.0
    assert "mean of the per-seed values over seeds 0, 1, 2" in mean.loc[0, "note"]
    path = tmp_path / "production.csv"
    per_seed.to_csv(path, index=False)
    units = {"cost_ratio_solod_over_rollmux": "x", "peak_h20_ratio": "x"}
    intervals = claim_intervals(read_seed_metrics([path], units))
    got = intervals["cost_ratio_solod_over_rollmux"]
    assert got.n == 3 and got.value is not None and got.low is None
    assert got.value.mean == pytest.approx(1.5)
    assert got.value.high - got.value.low == pytest.approx(
        2 * 4.302652729911275 * np.std([1.2, 1.4, 1.9], ddof=1) / math.sqrt(3))
    assert intervals["peak_h20_ratio"].value.high == intervals["peak_h20_ratio"].value.low
    with pytest.raises(ValueError, match="not computed at every seed"):
        per_seed_metrics(lambda s: build(s).iloc[: 1 + s], [0, 1])


def test_bad_per_seed_files_get_located_errors(tmp_path: Path) -> None:
    """Header, metric, unit, seed and number problems name the file, line and column."""
    units = {"cost_ratio_solod_over_rollmux": "x"}
    bad = tmp_path / "bad.csv"
    bad.write_text("metric,seed,value,low,high,unit\n"
                   "cost_ratio_solod_over_rollmux,0,1.2,,,x\n"
                   "cost_ratio_solod_over_rollmux,0,1.3,,,x\n"
                   "nope,1,1.0,,,x\n"
                   "cost_ratio_solod_over_rollmux,-1,1.0,,,x\n"
                   "cost_ratio_solod_over_rollmux,2,abc,,,%\n")
    with pytest.raises(SeedMetricsError) as err:
        read_seed_metrics([bad], units)
    text = str(err.value)
    for part in (f"{bad}:3: row 2, column seed", f"{bad}:4: row 3, column metric",
                 f"{bad}:5: row 4, column seed", f"{bad}:6: row 5, column unit",
                 f"{bad}:6: row 5, column value"):
        assert part in text, part
    header = tmp_path / "header.csv"
    header.write_text("metric,value\n")
    with pytest.raises(SeedMetricsError, match="header"):
        read_seed_metrics([header], units)
    gap = tmp_path / "gap.csv"
    gap.write_text("metric,seed,value,low,high,unit\n"
                   "cost_ratio_solod_over_rollmux,0,1.2,,,x\n"
                   "cost_ratio_solod_over_rollmux,1,,,,x\n")
    with pytest.raises(SeedMetricsError, match=r"no value at seed\(s\) \[1\]"):
        claim_intervals(read_seed_metrics([gap], units))


def test_claims_report_takes_each_status_from_the_interval(tmp_path: Path) -> None:
    """End to end on the shipped ledger: a claim whose per-seed values straddle its edge
    is `straddles` (though its mean is inside), one whose interval is inside is
    reproduced, one wholly outside differs; the columns carry the mean and interval."""
    from rollmux.experiments.claims import (
        DIFFERS,
        REPRODUCED,
        STATUSES,
        build_claims_report,
        load_ledger,
    )

    ledger = load_ledger()
    write_calibration_residuals(tmp_path, ledger)
    per_seed = {  # paper: C01 1.84x, C02 1.38x, C12 (+-10%)
        "cost_ratio_solod_over_rollmux": [1.60, 1.70, 1.64, 1.72, 1.66],  # straddles 1.656
        "cost_ratio_verl_over_rollmux": [1.36, 1.38, 1.40, 1.37, 1.39],   # inside
    }
    paper_c12 = float(ledger.set_index("metric").loc["peak_h800_ratio", "paper_value"])
    per_seed["peak_h800_ratio"] = [paper_c12 * f for f in (0.5, 0.52, 0.49, 0.51, 0.5)]
    rows, seed_rows = [], []
    for rec in ledger[ledger["reproducible"] == "yes"].to_dict("records"):
        value, low, high = rec["paper_value"], rec["paper_low"], rec["paper_high"]
        if rec["metric"] in per_seed:
            values = per_seed[rec["metric"]]
            value = f"{np.mean(values):.6g}"
            seed_rows += [{"metric": rec["metric"], "seed": s, "value": v, "low": "",
                           "high": "", "unit": rec["unit"]} for s, v in enumerate(values)]
        rows.append({"metric": rec["metric"], "value": value, "low": low, "high": high,
                     "unit": rec["unit"], "source": "test", "note": "test"})
    from rollmux.experiments.metrics import ATTAINMENT_METRICS, BESIDE_READING, with_reading
    rows += [{**r, "metric": with_reading(r["metric"], BESIDE_READING)}  # SLO companions
             for r in rows if r["metric"] in ATTAINMENT_METRICS]
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    pd.DataFrame(seed_rows).to_csv(tmp_path / "s.csv", index=False)
    counts = build_claims_report(
        [tmp_path / "m.csv"], tmp_path / "c.csv", tmp_path / "c.md", tmp_path / "j.json",
        results_root=tmp_path, require_evidence=False, seed_metrics_paths=[tmp_path / "s.csv"])
    table = pd.read_csv(tmp_path / "c.csv", dtype=str, keep_default_na=False).set_index(
        "claim_id")
    assert table.loc["C01", "status"] == STRADDLES
    assert "crosses the edge" in table.loc["C01", "reason"]
    assert table.loc["C02", "status"] == REPRODUCED
    assert table.loc["C12", "status"] == DIFFERS
    assert counts[STRADDLES] == 1 and STRADDLES in STATUSES
    ci = t_interval(per_seed["cost_ratio_solod_over_rollmux"])
    assert float(table.loc["C01", "seeds"]) == 5
    assert float(table.loc["C01", "mean"]) == pytest.approx(ci.mean, rel=1e-3)
    assert float(table.loc["C01", "ci_low"]) == pytest.approx(ci.low, rel=1e-3)
    assert float(table.loc["C01", "ci_high"]) == pytest.approx(ci.high, rel=1e-3)
    assert table.loc["C03", "interval"] == "" and table.loc["C03", "seeds"] == "1"
    markdown = (tmp_path / "c.md").read_text()
    assert "`straddles`" in markdown and "95% interval (seeds)" in markdown
    # without the per-seed values the same means are a point: C01 is reproduced
    build_claims_report([tmp_path / "m.csv"], tmp_path / "c.csv", tmp_path / "c.md",
                        tmp_path / "j.json", results_root=tmp_path, require_evidence=False)
    point = pd.read_csv(tmp_path / "c.csv", dtype=str, keep_default_na=False)
    assert point.set_index("claim_id").loc["C01", "status"] == REPRODUCED
    # a metrics file whose value is not the seeds' mean is stale: refused
    rows[0]["value"] = "1.9"
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(ValueError, match="not the mean of its per-seed values"):
        build_claims_report([tmp_path / "m.csv"], tmp_path / "c.csv", tmp_path / "c.md",
                            tmp_path / "j.json", results_root=tmp_path,
                            require_evidence=False, seed_metrics_paths=[tmp_path / "s.csv"])


def test_fig14_legend_with_an_interval_draws(tmp_path: Path) -> None:
    """Two dollar amounts in one legend label (mean and interval) draw as text, not as
    matplotlib mathtext (which fails on them)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fig14", Path(__file__).resolve().parents[1] / "analysis" / "fig14_trace_replay.py")
    assert spec is not None and spec.loader is not None
    fig14 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig14)
    table = pd.DataFrame({"policy": ["rollmux"] * 3, "seed": [0, 1, 2],
                          "cost_usd_per_h": [700.0, 760.0, 820.0]})
    series = pd.DataFrame({"policy": "rollmux", "seed": 0, "time_h": [0.0, 1.0, 2.0],
                           "cost_usd_per_h": [10.0, 20.0, 0.0], "gpus_H20": [8, 16, 0],
                           "gpus_H800": [8, 8, 0]})
    figure = fig14.draw(table, series, ["rollmux"])
    figure.savefig(tmp_path / "f.png")
    label = figure.axes[0].get_legend().get_texts()[0].get_text()
    assert "95%" in label and label.count("$") == 2


def test_whisker_lengths_of_identical_seeds_are_zero_not_negative() -> None:
    """Ten identical per-seed SLO attainments (the paper profile's greedy on the Mixed
    trace): the bar is 100 x their mean, the interval that of 100 x each value, and the two
    differ in the last place, so the plain difference is negative (matplotlib refused it and
    Fig. 20 failed); the whiskers are 0."""
    values = np.full(10, 0.6333333333)
    frame = pd.DataFrame({"policy": ["greedy"] * 10, "v": values})
    bar = 100.0 * float(frame.groupby("policy")["v"].mean().iloc[0])
    low, high = t_errorbar(100.0 * values)
    assert min(bar - low, high - bar) < 0  # what the figure scripts used to pass on
    err = whisker_lengths([bar], [(low, high)])
    assert err.shape == (2, 1)
    assert (err >= 0).all() and np.allclose(err, 0.0)


def test_whisker_lengths_keep_real_spreads_and_refuse_a_mean_outside() -> None:
    """A real interval gives its two lengths; a bar outside its interval is refused."""
    err = whisker_lengths([2.0, 5.0], [(1.5, 3.0), (5.0, 5.0)])
    assert err.tolist() == [[0.5, 0.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match=r"bar 1: mean 7\.0 lies outside"):
        whisker_lengths([2.0, 7.0], [(1.5, 3.0), (5.0, 6.0)])
