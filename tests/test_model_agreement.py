"""Closed forms agree with the event simulation where both apply."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pooled import POOLS, group_of
from strategies import any_groups

from rollmux.closedform import JobPhases, solo_d
from rollmux.group import CoExecutionGroup, GroupJob
from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.graph import round_robin_schedule


def _group(instance, sync: float, switch: float) -> CoExecutionGroup:
    jobs = tuple(
        GroupJob(
            phases=JobPhases.of(
                rollout_s=r, train_s=t, sync_s=sync, warm_switch_s=switch,
                rollout_gpus=8 * len(rn), train_gpus=8 * len(tn),
            ),
            rollout_nodes=rn,
            train_nodes=tn,
        )
        for r, t, rn, tn in zip(
            instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node,
            strict=True,
        )
    )
    r_ids = sorted({n for job in jobs for n in job.rollout_nodes})
    t_ids = sorted({n for job in jobs for n in job.train_nodes})
    return group_of(jobs=jobs, rollout_node_ids=tuple(r_ids), train_node_ids=tuple(t_ids))


@given(
    st.sampled_from(["one_one", "shared_train", "crossing"]).flatmap(any_groups),
    st.sampled_from([0.0, 0.5]),
    st.sampled_from([0.0, 0.25]),
)
def test_group_metrics_match_simulated_execution(instance, sync: float, switch: float) -> None:
    """The group's exact meta-iteration and pool utilisations equal a simulated run's."""
    group = _group(instance, sync, switch)
    metrics = group.metrics()
    rollout, train = group.effective_phases_s()
    schedule = round_robin_schedule(
        rollout, train, [j.rollout_nodes for j in group.jobs], [j.train_nodes for j in group.jobs]
    )
    records = simulate(schedule, 60)
    period = measured_period(records, schedule, 30)
    assert period == pytest.approx(metrics.meta_iteration_s, rel=1e-9)
    # Useful rollout work per meta-iteration, from the simulated records of one late
    # meta-iteration (a row per node; the warm switch is not useful work), against the
    # closed-form utilisation. Each job's GPUs fill its pinned nodes here.
    busy_rollout = sum(
        group.jobs[r.job].phases.rollout_s
        for r in records
        if r.phase == "rollout" and r.iteration == 40
    )
    n_rollout_nodes = len(group.rollout_node_ids)
    assert busy_rollout / (n_rollout_nodes * period) == pytest.approx(
        metrics.rollout_utilisation, rel=1e-9
    )


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 10))
def test_solo_d_iteration_matches_simulated_job_alone(r: int, t: int, sync: int) -> None:
    """Solo-D's closed-form iteration time is the simulated period of the job alone."""
    closed = solo_d(JobPhases.of(rollout_s=r, train_s=t, sync_s=sync), POOLS).iteration_s
    schedule = round_robin_schedule([r], [t + sync])
    assert measured_period(simulate(schedule, 8), schedule, 3) == pytest.approx(closed)
