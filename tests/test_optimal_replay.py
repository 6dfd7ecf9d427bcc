"""Replays under `optimal` and `regroup`: the column cache changes speed, not results."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.placement.base import Decision, Regrouping
from rollmux.placement.optimal import OptimalPolicy, solve_regrouping
from rollmux.placement.regroup import RegroupPolicy, migration_pause_s
from rollmux.placement.snapshot import ClusterSnapshot
from rollmux.sim.engine import SimConfig, simulate_trace
from rollmux.traces.loader import load_trace

HW = load_hardware()
TRACE = Path(__file__).resolve().parents[1] / "traces" / "simulation-mixed.csv"
N_JOBS = 40


class UncachedOptimal(OptimalPolicy):
    """`optimal` re-solving every decision from scratch (the code before the cache)."""

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Decision:
        """The minimum-cost partition, no column cache."""
        decision = super().place(job, snapshot)
        if not isinstance(decision, Regrouping):
            return decision
        return solve_regrouping(
            snapshot,
            job,
            decision.time_s,
            lambda _job: 0.0,
            self.max_group_size,
            self.time_limit_s,
        )


class UncachedRegroup(RegroupPolicy):
    """`regroup` re-solving from scratch at every re-partition."""

    def regroup(self, snapshot: ClusterSnapshot) -> Regrouping | None:
        """The hourly re-partition without the column cache."""
        decision = super().regroup(snapshot)
        if decision is None or not decision.placements:
            return decision
        return solve_regrouping(
            snapshot,
            None,
            snapshot.time_s,
            lambda job: migration_pause_s(job.model_size_b),
            self.max_group_size,
            self.time_limit_s,
        )


@pytest.fixture(scope="module")
def jobs() -> list[RLJob]:
    """The first jobs of the shipped mixed simulation trace."""
    return load_trace(TRACE, HW)[:N_JOBS]


def _tables(result: object) -> tuple[pd.DataFrame, ...]:
    return (result.jobs, result.events, result.timeseries)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("cached", "uncached"), [(OptimalPolicy, UncachedOptimal), (RegroupPolicy, UncachedRegroup)]
)
def test_cache_gives_identical_replays(
    jobs: list[RLJob], cached: type, uncached: type
) -> None:
    """Same job, event and time-series tables with and without the column cache."""
    config = SimConfig(record_phases=False)
    policy = cached()
    fast = simulate_trace(jobs, policy, HW, 0, config)
    slow = simulate_trace(jobs, uncached(), HW, 0, config)
    for a, b in zip(_tables(fast), _tables(slow), strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert fast.summary == slow.summary
    stats = policy.stats
    assert stats.solves >= 1
    assert stats.unproven_solves == 0
    assert stats.as_dict()["solves"] == stats.solves


def test_optimal_searches_only_new_sets(jobs: list[RLJob]) -> None:
    """With the cache, later decisions search far fewer sets than there are columns."""
    policy = OptimalPolicy()
    simulate_trace(jobs, policy, HW, 0, SimConfig(record_phases=False))
    assert policy.stats.solves == len(jobs)
    assert 0 < len(policy.stats.cache) < 10**6


def test_time_limit_counts_unproven_solves(jobs: list[RLJob]) -> None:
    """A tiny per-solve time limit makes solves unproven; the policy counts them."""
    policy = OptimalPolicy(time_limit_s=1e-9)
    result = simulate_trace(jobs[:12], policy, HW, 0, SimConfig(record_phases=False))
    assert policy.stats.solves >= 1
    assert 0 < policy.stats.unproven_solves <= policy.stats.solves
    assert len(result.jobs) == 12


def test_regroup_reuses_the_last_solve_only_for_an_equal_input() -> None:
    """A re-solve over the same job values, in any order, reuses the last partition.

    A changed job re-solves.
    """
    from dataclasses import replace

    from test_placement_rollmux import mkjob

    from rollmux.placement.snapshot import apply, empty_snapshot

    policy = RegroupPolicy(regroup_interval_s=3600.0)
    snap = empty_snapshot(HW)
    for job in [mkjob("A", 300, 100, slo=1.4), mkjob("B", 200, 200, slo=1.4),
                mkjob("C", 100, 300, slo=1.4), mkjob("D", 300, 100, slo=1.4)]:
        snap = apply(snap, policy.place(job, snap))
    first = policy.regroup(replace(snap, time_s=3600.0))
    assert first is not None
    after = apply(replace(snap, time_s=3600.0), first)
    assert (policy.stats.solves, policy.stats.reused_solves) == (1, 0)
    again = replace(after, time_s=7200.0)
    reused = policy.regroup(again)
    assert (policy.stats.solves, policy.stats.reused_solves) == (1, 1)
    fresh = RegroupPolicy(regroup_interval_s=3600.0).regroup(again)
    assert reused is not None and fresh is not None
    assert replace(reused, solve_seconds=0.0) == replace(fresh, solve_seconds=0.0)
    assert reused.moved_jobs == ()  # after the first re-solve the groups are the optimum
    # The same jobs listed in another order (a regrouping rebuilds the snapshot's job
    # table in its placements' order) are the same input.
    shuffled = replace(after, time_s=9000.0, jobs=dict(reversed(list(after.jobs.items()))))
    assert list(shuffled.jobs) != list(after.jobs)
    assert policy.regroup(shuffled) is not None
    assert (policy.stats.solves, policy.stats.reused_solves) == (1, 2)
    # A drifted profile is another job value: the next re-solve is a real one.
    placed = after.jobs["A"]
    drifted = replace(placed, job=replace(placed.job, rollout_max_s=310.0))
    policy.regroup(replace(after, time_s=10800.0, jobs={**after.jobs, "A": drifted}))
    assert (policy.stats.solves, policy.stats.reused_solves) == (2, 2)
