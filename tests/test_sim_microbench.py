"""Tests of rollmux.experiments.microbench_sim: Table 4 and the equal-cost throughput table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rollmux.experiments.microbench_sim import (
    TABLE4_COLUMNS,
    THROUGHPUT_COLUMNS,
    run_scenario,
    table4,
    throughput_table,
)
from rollmux.hardware import load_hardware
from rollmux.jobtypes import job_type
from rollmux.phasetimes import rollout_time_ratio

ITERATIONS = 20


@pytest.fixture(scope="module")
def t4() -> pd.DataFrame:
    """Table 4 at seed 0, short runs."""
    return table4(seed=0, iterations=ITERATIONS)


@pytest.fixture(scope="module")
def throughput() -> pd.DataFrame:
    """The throughput table at seed 0, short runs."""
    return throughput_table(seed=0, iterations=ITERATIONS)


def test_table4_has_one_row_per_job_and_its_columns(t4: pd.DataFrame) -> None:
    """2 + 3 + 3 jobs, the documented columns, positive times, consistent ratios."""
    assert list(t4.columns) == list(TABLE4_COLUMNS)
    assert t4.groupby("scenario", sort=False).size().to_dict() == {
        "temporal": 2, "train": 3, "spatial": 3}
    times = t4[["solo_s", "solo_requested_s", "rollmux_s", "ideal_s", "ideal_rollout_s",
                "closed_form_s"]]
    assert (times.to_numpy() > 0).all()
    np.testing.assert_allclose(t4.overhead_vs_solo, t4.rollmux_s / t4.solo_s - 1.0)
    np.testing.assert_allclose(t4.overhead_vs_requested_solo,
                               t4.rollmux_s / t4.solo_requested_s - 1.0)
    np.testing.assert_allclose(t4.slower_than_ideal, t4.rollmux_s / t4.ideal_s - 1.0)


def test_table4_solo_is_the_in_group_configuration(t4: pd.DataFrame) -> None:
    """Table 4's solo runs each job on its in-group GPUs: Type-D trains on 8 H800 in the
    train mux (longer than on the 16 it requests), elsewhere the two solo runs agree."""
    train = t4[t4.scenario == "train"].set_index("job")
    for job in ("D0", "D1"):
        assert train.loc[job, "solo_s"] > train.loc[job, "solo_requested_s"] + 150.0
    others = t4[(t4.scenario != "train") | (t4.job == "E2")]
    np.testing.assert_allclose(others.solo_s, others.solo_requested_s)


def test_ideal_rolls_out_on_h800_by_the_roofline(t4: pd.DataFrame) -> None:
    """The ideal's rollout is the phase model's H800/H20 ratio on the in-group H800s; its
    training is the in-group one, with no sync and no switch."""
    hw = load_hardware()
    gpus = {"temporal": {"A0": 8, "A1": 8}, "train": {"D0": 8, "D1": 8, "E2": 8},
            "spatial": {"C0": 16, "D1": 16, "D2": 16}}
    for row in t4.itertuples():
        job = job_type(row.job.rstrip("0123456789"))
        assert row.ideal_rollout_ratio == pytest.approx(
            rollout_time_ratio(job, hw, "H800", gpus[row.scenario][row.job]))
    # a memory-bound 7B rollout is slower on 8 H800 (3.35 TB/s) than on 8 H20 (4.0 TB/s)
    assert (t4[t4.scenario == "temporal"].ideal_rollout_ratio > 1.0).all()
    # without sync and switch the ideal's training part is below the solo's
    assert (t4.ideal_s - t4.ideal_rollout_s < t4.solo_s - t4.ideal_rollout_s
            / t4.ideal_rollout_ratio).all()


def test_table4_values_are_plausible(t4: pd.DataFrame) -> None:
    """Woven jobs are never faster than alone on the same GPUs; temporal overhead is small."""
    assert (t4.rollmux_s >= 0.99 * t4.solo_s).all()
    temporal = t4[t4.scenario == "temporal"]
    assert ((temporal.overhead_vs_solo > 0) & (temporal.overhead_vs_solo < 0.1)).all()
    # Without migration the stochastic run stays close to the exact expected steady state.
    np.testing.assert_allclose(t4.rollmux_no_migration_s, t4.closed_form_s, rtol=0.05)


def test_table4_is_deterministic_per_seed() -> None:
    """Same seed, same table; another seed moves the stochastic columns."""
    a = table4(seed=1, iterations=ITERATIONS, names=("temporal",))
    pd.testing.assert_frame_equal(a, table4(seed=1, iterations=ITERATIONS, names=("temporal",)))
    b = table4(seed=2, iterations=ITERATIONS, names=("temporal",))
    assert not np.allclose(a.rollmux_s, b.rollmux_s)


def test_throughput_table_shape_and_gains(throughput: pd.DataFrame) -> None:
    """Six systems per scenario; RollMux beats Solo-D at equal cost; gains are ratios."""
    assert list(throughput.columns) == list(THROUGHPUT_COLUMNS)
    assert throughput.groupby("scenario").size().tolist() == [6, 6, 6]
    available = throughput[throughput.available]
    np.testing.assert_allclose(
        available.throughput_per_kusd_h,
        1000.0 * available.normalised_throughput / available.cost_usd_per_h,
    )
    ours = throughput[throughput.system == "rollmux"]
    assert (ours.rollmux_gain == 1.0).all()
    solo = throughput[throughput.system == "solo-d"]
    assert (solo.rollmux_gain > 1.2).all()
    assert (solo.normalised_throughput == [2.0, 3.0, 3.0]).all()
    assert solo.paper_gain.tolist() == [1.82, 1.90, 1.99]


def test_run_scenario_rejects_bad_input() -> None:
    """Unknown scenarios, negative seeds and too few iterations raise ValueError."""
    with pytest.raises(ValueError, match="scenario"):
        run_scenario("sideways", iterations=ITERATIONS)
    with pytest.raises(ValueError, match="seed"):
        run_scenario("temporal", seed=-1)
    with pytest.raises(ValueError, match="iterations"):
        run_scenario("temporal", iterations=3)
