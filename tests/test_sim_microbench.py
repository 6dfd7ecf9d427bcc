"""Tests of rollmux.sim.microbench_sim: Table 4 and the equal-cost throughput table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rollmux.sim.microbench_sim import (
    TABLE4_COLUMNS,
    THROUGHPUT_COLUMNS,
    run_scenario,
    table4,
    throughput_table,
)

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
    times = t4[["solo_s", "solo_in_group_s", "rollmux_s", "ideal_s", "closed_form_s"]]
    assert (times.to_numpy() > 0).all()
    np.testing.assert_allclose(t4.overhead_vs_solo, t4.rollmux_s / t4.solo_s - 1.0)
    np.testing.assert_allclose(t4.slower_than_ideal, t4.rollmux_s / t4.ideal_s - 1.0)


def test_table4_values_are_plausible(t4: pd.DataFrame) -> None:
    """Woven jobs are never faster than alone on the same GPUs; temporal overhead is small."""
    assert (t4.rollmux_s >= 0.99 * t4.solo_in_group_s).all()
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
