"""The placement decision-latency benchmark returns the documented fields."""

from __future__ import annotations

import pytest
from test_placement_rollmux import HW, alone, join, mkjob

from rollmux.experiments.placement_bench import bench_placement, compare_policies, slo_attainment
from rollmux.placement import empty_snapshot


def test_bench_placement_small_cluster() -> None:
    """A 20-job cluster: the result names its size, latencies and admission mix."""
    row = bench_placement(20, seed=1, decisions=5)
    assert row["jobs"] == 20 and row["decisions"] == 5 and row["policy"] == "rollmux"
    assert 0 < row["median_ms"] <= row["p95_ms"] <= row["p99_ms"] <= row["max_ms"]
    assert row["p99_cpu_ms"] > 0
    assert 1 <= row["groups"] <= 20
    assert sum(row["admission_mix"].values()) == pytest.approx(1.0)
    assert row["cost_usd_per_h"] > 0


def test_bench_placement_is_seeded() -> None:
    """The cluster built for a seed is the same on every run (latencies aside)."""
    a = bench_placement(15, seed=3, decisions=2)
    b = bench_placement(15, seed=3, decisions=2)
    for key in ("groups", "rollout_nodes", "train_nodes", "cost_usd_per_h", "admission_mix"):
        assert a[key] == b[key]


def test_bench_placement_bad_input() -> None:
    """Bad sizes, seeds and policies raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="jobs"):
        bench_placement(0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        bench_placement(5, seed=-1)
    with pytest.raises(ValueError, match="policy"):
        bench_placement(5, seed=0, policy="optimal")


def test_compare_policies_orders_costs_and_slos() -> None:
    """On one mix: RollMux meets every worst-case SLO and costs no more than Solo-D."""
    rows = {r["policy"]: r for r in compare_policies(12, 0, ("rollmux", "solo-d", "random"))}
    assert rows["rollmux"]["slo_attainment"] == 1.0
    assert rows["solo-d"]["slo_attainment"] == 1.0
    assert rows["rollmux"]["cost_usd_per_h"] <= rows["solo-d"]["cost_usd_per_h"]
    assert 0.0 <= rows["random"]["slo_attainment"] <= 1.0


def test_slo_attainment_counts_violations() -> None:
    """Two rollout-heavy SLO-1 jobs on the same nodes (T_load 2000 s > T_cycle 1500 s) both miss."""
    snap = alone(empty_snapshot(HW), mkjob("A", 1000, 500, slo=1.0))
    snap = join(snap, mkjob("B", 1000, 500, slo=1.0), "G0", ("R1",), ("T2",))
    assert slo_attainment(snap) == 0.0
    assert slo_attainment(empty_snapshot(HW)) == 1.0
