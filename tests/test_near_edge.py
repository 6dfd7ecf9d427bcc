"""What it would take: the model input at which a claim gives the paper's value, found by a
1-D search and fed back through the metric's own code (rollmux.experiments.near_edge)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.microbench_sim import migration_table
from rollmux.experiments.near_edge import (
    ReplayJobs,
    attainment_at,
    migration_ends,
    migration_rows,
    price_rows,
    read_replays,
    reprice,
    rescore_attainment,
    slo_scale_rows,
    smallest_reaching,
)
from rollmux.hardware import load_hardware


def test_attainment_counts_jobs_within_the_scaled_slo() -> None:
    """A job meets a scaled SLO at its own ratio (not above it); a job that did not
    complete never does."""
    ratios = np.sort(np.array([0.5, 1.0, 2.0, np.inf]))
    assert attainment_at(ratios, 1.0) == 0.5
    assert attainment_at(ratios, 1.999) == 0.5
    assert attainment_at(ratios, 2.0) == 0.75
    assert attainment_at(ratios, 1e9) == 0.75


def test_smallest_reaching_finds_the_step_that_reaches_the_target() -> None:
    """The smallest breakpoint at which a step reading reaches the target, with the
    reading there and just below; NaN when no breakpoint does."""
    ratios = np.sort(np.array([0.8, 1.1, 1.3, 1.7, 2.5]))

    def reading(s: float) -> float:
        return 100.0 * attainment_at(ratios, s)

    at, there, below = smallest_reaching(reading, ratios, 62.0)
    assert (at, there, below) == (1.7, 80.0, 60.0)
    assert smallest_reaching(reading, ratios, 60.0)[0] == 1.3
    assert math.isnan(smallest_reaching(reading, ratios[:-1].copy() * 0 + np.inf, 50.0)[0])


def _replays() -> dict[tuple[object, ...], ReplayJobs]:
    """Greedy and the optimum on one mixed setting, seed-independent."""
    key = ("mix", "trace", "5")
    greedy = np.sort(np.array([0.9, 1.0, 1.05, 1.2, 1.4, 3.0, np.inf]))
    return {
        (*key, "greedy", None): ReplayJobs((*key, "greedy"), None, greedy,
                                           {"H20": 110.0, "H800": 50.0}),
        (*key, "optimal", None): ReplayJobs((*key, "optimal"), None, np.array([1.0]),
                                            {"H20": 60.0, "H800": 40.0}),
    }


def _mixed() -> pd.DataFrame:
    """The mixed table's rows of those replays at two seeds (copies)."""
    return pd.DataFrame([{"kind": "workload", "value": "Mixed", "trace": "mix", "slo": "trace",
                          "maxgroup": 5, "policy": p, "seed": s,
                          "slo_attainment_realised": 0.0, "total_cost_usd": 0.0,
                          "total_cost_over_optimal": 0.0}
                         for p in ("greedy", "optimal") for s in (0, 1)])


def _build(sens: pd.DataFrame, mixed: pd.DataFrame) -> pd.DataFrame:
    """A stand-in for the simulation metrics: Greedy's attainment and cost over the
    optimum on the mixed rows."""
    greedy = mixed[mixed["policy"] == "greedy"]
    return pd.DataFrame([
        {"metric": "slo_greedy_mixed",
         "value": 100.0 * float(greedy["slo_attainment_realised"].mean()), "low": "",
         "high": ""},
        {"metric": "cost_over_opt_greedy_mixed",
         "value": float(greedy["total_cost_over_optimal"].mean()), "low": "", "high": ""},
    ])


def test_slo_scale_reaches_the_papers_attainment_when_fed_back() -> None:
    """C43 (Greedy 62% on the mixed workload): the scale found gives at least 62% through
    the metric's code, and just below it less."""
    ledger = load_ledger()
    replays = _replays()
    mixed = rescore_attainment(_mixed(), replays, 1.0)
    rows = slo_scale_rows(ledger, _build, mixed.iloc[0:0], mixed, replays)
    (row,) = [r for r in rows if r["claim_id"] == "C43"]
    assert row["ours_value"] == pytest.approx(100.0 * 2 / 7)
    assert row["needed"] == 1.4 and row["fed_back"] == pytest.approx(500.0 / 7)
    fed = _build(mixed.iloc[0:0], rescore_attainment(mixed, replays, row["needed"]))
    assert float(fed.set_index("metric").at["slo_greedy_mixed", "value"]) >= 62.0
    below = _build(mixed.iloc[0:0], rescore_attainment(mixed, replays, 1.39))
    assert float(below.set_index("metric").at["slo_greedy_mixed", "value"]) < 62.0


def test_price_ratio_gives_the_papers_cost_ratio_when_fed_back() -> None:
    """C41 (Greedy 1.66x the optimum's cost): the H800/H20 price ratio found by brentq
    gives 1.66 through the metric's code; the re-priced cost at ours is the replay's."""
    ledger = load_ledger()
    replays = _replays()
    mixed = _mixed()
    at_ours = reprice(mixed, replays, 1.85, 2.85)
    assert float(at_ours["total_cost_usd"].iloc[0]) == pytest.approx(1.85 * (110 + 2.85 * 50))
    rows = price_rows(ledger, _build, mixed.iloc[0:0], mixed, replays, 1.85, 2.85)
    (row,) = [r for r in rows if r["claim_id"] == "C41"]
    # (110 + 50 p) / (60 + 40 p) = 1.66  ->  p = (110 - 99.6) / (66.4 - 50)
    assert row["needed"] == pytest.approx(10.4 / 16.4, rel=1e-6)
    fed = _build(mixed.iloc[0:0], reprice(mixed, replays, 1.85, row["needed"]))
    assert float(fed.set_index("metric").at["cost_over_opt_greedy_mixed", "value"]) == \
        pytest.approx(1.66, rel=1e-6)
    # a target no price ratio reaches gives NaN and says so
    high = ledger.copy()
    high.loc[high["claim_id"] == "C41", "paper_value"] = "5"
    (none,) = [r for r in price_rows(high, _build, mixed.iloc[0:0], mixed, replays, 1.85,
                                     2.85) if r["claim_id"] == "C41"]
    assert math.isnan(none["needed"]) and "no H800/H20 price ratio" in none["note"]


def test_searches_reading_one_metric_per_step_give_the_same_rows() -> None:
    """With ``build_some`` each search step computes only the metric it reads; the rows
    are those of the whole-file build."""
    ledger = load_ledger()
    replays = _replays()
    mixed = rescore_attainment(_mixed(), replays, 1.0)
    asked: list[tuple[str, ...]] = []

    def some(sens: pd.DataFrame, mix: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
        asked.append(tuple(metrics))
        frame = _build(sens, mix)
        return frame[frame["metric"].isin(list(metrics))].reset_index(drop=True)

    empty = mixed.iloc[0:0]
    for search, extra in ((slo_scale_rows, ()), (price_rows, (1.85, 2.85, "optimal"))):
        asked.clear()
        whole = pd.DataFrame(search(ledger, _build, empty, mixed, replays, *extra))
        one = pd.DataFrame(search(ledger, _build, empty, mixed, replays, *extra,
                                  build_some=some))
        pd.testing.assert_frame_equal(one, whole)
        assert asked and all(len(m) == 1 for m in asked)


def test_read_replays_keys_a_seedless_replay_for_every_seed(tmp_path: Path) -> None:
    """A replay folder's jobs become sorted slowdown/SLO ratios (inf for a job that did not
    complete) and its GPU-hours; a seedless replay serves every seed's row."""
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "trace": "traces/mix.csv", "slo_override": None, "max_group_size": 5,
        "drift": "none", "policy": "greedy", "seed": 0, "stochastic": False}))
    pd.DataFrame({"status": ["completed", "completed", "rejected"],
                  "slowdown_realised": [2.0, 1.0, float("nan")], "slo": [1.0, 2.0, 1.5]}
                 ).to_csv(folder / "jobs.csv", index=False)
    pd.DataFrame({"time_s": [0.0, 3600.0, 7200.0], "gpus_H20": [8, 16, 0],
                  "gpus_H800": [8, 8, 0]}).to_csv(folder / "timeseries.csv", index=False)
    replays = read_replays([folder])
    (replay,) = replays.values()
    assert replay.seed is None
    assert replay.ratios.tolist() == [0.5, 2.0, math.inf]
    assert replay.gpu_h == {"H20": 24.0, "H800": 16.0}
    row = pd.DataFrame([{"trace": "mix", "slo": "trace", "maxgroup": 5, "policy": "greedy",
                         "seed": 3}])
    assert float(rescore_attainment(row, replays, 2.0)["slo_attainment_realised"].iloc[0]) \
        == pytest.approx(2 / 3)


def test_migration_ends_at_ours_are_the_migration_tables() -> None:
    """At multiplier 1 the ends are Fig. 12's table's min and max (the metric's code)."""
    hw = load_hardware()
    pairs = (("A", "A"), ("E", "E"))
    table = migration_table(pairs, hw, seed=0, iterations=12)
    ends = migration_ends(1.0, [0], 12, hw, pairs)
    assert ends == {"low": pytest.approx(float(table["speedup"].min())),
                    "high": pytest.approx(float(table["speedup"].max()))}


def test_migration_multiplier_gives_the_papers_gain_when_fed_back() -> None:
    """Each end's training-time multiplier, fed back, gives the paper's end (C25)."""
    hw = load_hardware()
    pairs = (("A", "A"), ("E", "E"))
    rows = migration_rows(load_ledger(), [0], 12, hw, pairs)
    assert {r["end"] for r in rows} == {"low", "high"}
    for row in rows:
        if math.isnan(row["needed"]):
            assert "no multiplier" in row["note"]
            continue
        again = migration_ends(row["needed"], [0], 12, hw, pairs)[row["end"]]
        assert again == pytest.approx(row["paper"], abs=2e-3)
        assert row["fed_back"] == pytest.approx(again)


def _throughput(rollmux: tuple[int, int, float], gavel: tuple[int, int, float]) -> pd.DataFrame:
    """A throughput table of one scenario: RollMux and Gavel+ (H20, H800, throughput)."""
    rows = [{"scenario": "spatial", "system": s, "h20_gpus": a, "h800_gpus": b,
             "normalised_throughput": t, "available": True}
            for s, (a, b, t) in (("rollmux", rollmux), ("gavel-plus", gavel))]
    return pd.DataFrame(rows)


def test_gain_price_ratio_gives_the_papers_gain_when_fed_back() -> None:
    """C21 (1.78x over Gavel+ at equal cost): at ours the gain is the table's per-USD
    ratio; the price ratio found gives 1.78 when fed back (mean over two seeds); a gain
    that no price moves (the same GPUs) gives NaN."""
    from rollmux.experiments.near_edge import gain_price_rows, gains_at

    tables = [_throughput((8, 8, 2.0), (16, 0, 1.0)), _throughput((8, 8, 2.2), (16, 0, 1.0))]
    ours = gains_at(tables, 2.85)["throughput_ratio_spatial_gavel"]
    assert ours == pytest.approx(np.mean([t / (8 + 2.85 * 8) * 16 for t in (2.0, 2.2)]))
    (row,) = [r for r in gain_price_rows(load_ledger(), tables, 2.85) if r["claim_id"] == "C21"]
    assert gains_at(tables, row["needed"])["throughput_ratio_spatial_gavel"] == \
        pytest.approx(1.78, rel=1e-9)
    assert row["fed_back"] == pytest.approx(1.78) and row["ours_value"] == pytest.approx(ours)
    same = [_throughput((8, 8, 2.0), (8, 8, 1.0))]
    (flat,) = [r for r in gain_price_rows(load_ledger(), same, 2.85) if r["claim_id"] == "C21"]
    assert math.isnan(flat["needed"]) and "no H800/H20 price ratio" in flat["note"]
