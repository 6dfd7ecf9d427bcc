"""Micro-benchmark scenarios: closed-form table and the Fig. 1 timelines."""

from __future__ import annotations

import pytest

from rollmux.experiments.microbench import (
    SCENARIOS,
    TABLE_COLUMNS,
    build_scenario,
    gantt_phases,
    scenario_table,
)
from rollmux.hardware import load_hardware
from rollmux.jobtypes import job_type


@pytest.fixture(scope="module")
def table():
    """The default closed-form scenario table (computed once)."""
    return scenario_table()


def test_table_shape(table) -> None:
    """One row per scenario and system, with the documented columns."""
    assert tuple(table.columns) == TABLE_COLUMNS
    assert len(table) == 4 * len(SCENARIOS)
    assert set(table["system"]) == {"rollmux", "solo-d", "verl", "fluid-bound"}


def test_fluid_bound_is_cheapest_and_rollmux_beats_solo_d(table) -> None:
    """No system beats the fluid bound; the woven groups beat Solo-D at equal cost."""
    for _, part in table.groupby("scenario"):
        by = part.set_index("system")
        assert by.loc["fluid-bound", "rollmux_gain"] <= 1.0 + 1e-9
        assert by.loc["solo-d", "rollmux_gain"] > 1.0
        assert by.loc["rollmux", "rollmux_gain"] == pytest.approx(1.0)


def test_group_cost_is_node_count_times_price(table) -> None:
    """The group's hourly cost is its nodes' GPUs times the default prices."""
    hw = load_hardware()
    row = table[(table.scenario == "train") & (table.system == "rollmux")].iloc[0]
    expected = 24 * hw.gpu("H20").price_usd_per_h + 8 * hw.gpu("H800").price_usd_per_h
    assert row.cost_usd_per_h == pytest.approx(expected)
    assert (row.h20_gpus, row.h800_gpus) == (24, 8)


def test_train_mux_scales_training_to_one_node() -> None:
    """In train mux each Type-D job trains on 8 H800 instead of 16: twice as long."""
    sc = build_scenario("train")
    solo_d, in_group = sc.solo_phases[0], sc.group.jobs[0].phases
    assert in_group.train_gpus == 8
    assert in_group.train_s == pytest.approx(2 * solo_d.train_s)


def test_job_types_keep_the_papers_ratios() -> None:
    """Type-D rollout is 2.5x its training and Type-E 6x (notes section 6)."""
    d, e = job_type("D"), job_type("E")
    assert d.rollout_s / d.train_s == pytest.approx(2.5)
    assert e.rollout_s / e.train_s == pytest.approx(6.0)
    assert (job_type("C").rollout_gpus, job_type("C").train_gpus) == (16, 16)


def test_spatial_mux_packs_the_d_jobs_into_cs_training_nodes() -> None:
    """Sec. 6.2: C on 16 H20 + 16 H800; each D on its own 8 H20 and C's 16 H800."""
    sc = build_scenario("spatial")
    c, d1, d2 = sc.group.jobs
    assert (c.rollout_nodes, c.train_nodes) == ((0, 1), (0, 1))
    assert (d1.rollout_nodes, d2.rollout_nodes) == ((2,), (3,))
    assert d1.train_nodes == d2.train_nodes == c.train_nodes
    assert [(p.rollout_gpus, p.train_gpus) for p in sc.solo_phases] == [(16, 16), (8, 16),
                                                                        (8, 16)]
    assert (len(sc.group.rollout_node_ids), len(sc.group.train_node_ids)) == (4, 2)
    # C's rollout leaves its training nodes idle for both D trainings (fit microbench_types).
    rollout, train = sc.group.effective_phases_s()
    assert rollout[0] >= train[1] + train[2]
    stacked = build_scenario("spatial_stacked").group
    assert [j.rollout_nodes for j in stacked.jobs] == [(0, 1), (0,), (1,)]


def test_unknown_names_list_the_valid_ones() -> None:
    """Unknown scenario and job-type names are errors listing the valid names."""
    with pytest.raises(ValueError, match="valid: spatial, spatial_stacked, temporal, train"):
        build_scenario("nope")
    with pytest.raises(ValueError, match="valid: A, B, C, D, E"):
        job_type("Z")


def test_gantt_layouts() -> None:
    """Solo-D uses one node per job and pool, woven one per pool; both run every iteration."""
    phases = gantt_phases(("A", "E"), iterations=2)
    solo = phases[phases.layout == "solo-d"]
    woven = phases[phases.layout == "woven"]
    assert solo["node"].nunique() == 4
    assert woven["node"].nunique() == 2
    for part in (solo, woven):
        assert len(part) == 2 * 2 * 2  # jobs x phases x iterations
    # Weaving puts both jobs on half the nodes; it cannot finish sooner than Solo-D.
    assert woven["end_s"].max() >= solo["end_s"].max()
