"""Examples for the cluster simulator: literal traces with hand-computed outcomes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rollmux.closedform import JobPhases
from rollmux.group import GroupJob
from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.phasetimes import PhaseTimes
from rollmux.placement import Placement, PlacementPolicy, Strategy
from rollmux.sim import Failure, SimConfig, simulate_trace
from rollmux.sim.analytic import AnalyticModel, group_period_s
from rollmux.sim.engine import EventModel, drift_templates
from rollmux.sim.metrics import (
    admission_shares,
    bubble_reduction,
    cost_time_average_usd_per_h,
    total_cost_usd,
)

HW = load_hardware()
DET = SimConfig(stochastic=False)
ANALYTIC = SimConfig(fidelity="analytic")


def job(job_id: str, rollout_s: float, train_s: float, iterations: int = 5,
        arrival_s: float = 0.0, slo: float = 2.0, sync_s: float = 10.0,
        warm_s: float = 2.0, cold_s: float = 30.0, **extra: object) -> RLJob:
    """A 7B job with directly given phase times (worst case = expected)."""
    return RLJob(job_id, 7.0, 4096, rollout_s=rollout_s, train_s=train_s,
                 rollout_max_s=rollout_s, train_max_s=train_s, sync_s=sync_s,
                 warm_switch_s=warm_s, cold_switch_s=cold_s, iterations=iterations,
                 arrival_s=arrival_s, slo=slo, **extra)  # type: ignore[arg-type]


def times(rollout_s: float, train_s: float, sync_s: float = 0.0, warm_s: float = 0.0,
          cold_s: float = 0.0) -> PhaseTimes:
    """PhaseTimes with expected = worst case."""
    return PhaseTimes(rollout_s, train_s, sync_s, sync_s, warm_s, max(cold_s, warm_s), rollout_s,
                      train_s)


def member(rollout_s: float, train_s: float, rnodes: tuple[int, ...],
           tnodes: tuple[int, ...], warm_s: float = 0.0, sync_s: float = 0.0) -> GroupJob:
    """A group member literal for the progress models (one node = 8 GPUs)."""
    return GroupJob(JobPhases(times(rollout_s, train_s, sync_s=sync_s, warm_s=warm_s),
                              8 * len(rnodes), 8 * len(tnodes)), rnodes, tnodes)


def test_solo_job_runs_its_iterations_back_to_back() -> None:
    """One Solo-D job finishes after iterations x (rollout + train + sync), no switches."""
    r = simulate_trace([job("a", 100.0, 50.0, iterations=4, arrival_s=20.0)], "solo-d", HW,
                       0, DET)
    row = r.jobs.iloc[0]
    assert row.finish_s == pytest.approx(20.0 + 4 * 160.0)
    assert row.slowdown == pytest.approx(1.0)
    assert bool(row.slo_met)
    # 8 H20 + 8 H800 for 640 s.
    assert r.summary["total_cost_usd"] == pytest.approx(8 * (1.85 + 5.28) * 640.0 / 3600.0)
    assert r.summary["peak_gpus"] == {"H20": 8, "H800": 8}
    phases = r.phases
    assert list(phases.phase) == [0, 1] * 4
    assert list(phases.start_s[:3]) == pytest.approx([20.0, 120.0, 180.0])


def test_verl_job_time_shares_its_training_gpus() -> None:
    """A veRL job: rollout rescaled to H800 bandwidth and the fitted co-located speed-up,
    + training + two warm switches."""
    r = simulate_trace([job("a", 100.0, 50.0, iterations=3)], "verl", HW, 0, DET)
    # 8 H20 over 8 H800 HBM bandwidth, over the co-located speed-up (fit production_mix)
    ratio = 4000.0 / 3350.0 / HW.perf.colocated_rollout_speedup
    iteration = 100.0 * ratio + 50.0 + 2 * 2.0
    assert r.jobs.iloc[0].finish_s == pytest.approx(3 * iteration)
    assert r.summary["peak_gpus"] == {"H20": 0, "H800": 8}
    assert set(r.phases.pool) == {1}
    a = simulate_trace([job("a", 100.0, 50.0, iterations=3)], "verl", HW, 0, ANALYTIC)
    assert a.jobs.iloc[0].finish_s == pytest.approx(3 * iteration)


def test_event_model_reaches_the_max_plus_period() -> None:
    """Two jobs on one rollout and one training node settle at the exact meta-iteration."""
    model = EventModel(2)
    a = member(10.0, 2.0, (0,), (1,), warm_s=1.0)
    b = member(2.0, 10.0, (0,), (1,), warm_s=1.0)
    model.add_job(0, "G", a, 0.0, 0, 40, 0.0, True, None)
    model.add_job(1, "G", b, 0.0, 0, 40, 0.0, True, None)
    done = []
    while len(done) < 2:
        done += model.run_until(math.inf)
        for i, t in done[-1:]:
            model.remove_job(i, t)
    table = model.phase_table()
    starts = table[(table.job == 0) & (table.phase == 0)].start_s.to_numpy()
    period = group_period_s([a, b])
    assert period == pytest.approx(12.0 + 2.0)  # both phases pay a warm switch: T_cycle
    assert np.diff(starts)[10:] == pytest.approx(period)


def test_event_model_follows_node_orders() -> None:
    """Per-node orders replace the join order on a node."""
    model = EventModel(3)
    for i in range(3):
        model.add_job(i, "G", member(5.0, 5.0, (0,), (1,)), 0.0, 0, 2, 1.0, True, None)
    model.set_node_orders("G0", {0: [2, 1, 0], 1: [2, 1, 0]})
    while model.run_until(math.inf):
        pass
    first = model.phase_table().sort_values("start_s")
    assert list(first[first.phase == 0].job[:3]) == [2, 1, 0]


def test_event_model_runs_a_repeated_job_once_per_appearance() -> None:
    """A job listed twice in its nodes' orders runs two iterations per round."""
    model = EventModel(2)
    model.add_job(0, "G", member(2.0, 2.0, (0,), (1,)), -1.0, 0, 4, 0.0, True, None)
    model.add_job(1, "G", member(2.0, 2.0, (0,), (1,)), -1.0, 0, 2, 0.0, True, None)
    model.set_node_orders("G", {0: [0, 1, 0], 1: [0, 1, 0]})
    left = 2
    while left:
        left -= len(model.run_until(math.inf))
    table = model.phase_table()
    rollouts = table[(table.phase == 0)].sort_values("start_s")
    assert list(rollouts.job) == [0, 1, 0, 0, 1, 0]


def test_event_model_refuses_orders_that_drop_or_unbalance_a_job() -> None:
    """Every job of a node appears in its order, equally often on each of its nodes."""
    model = EventModel(3)
    model.add_job(0, "G", member(2.0, 2.0, (0,), (1,)), -1.0, 0, 4, 0.0, True, None)
    model.add_job(1, "G", member(2.0, 2.0, (0,), (1,)), -1.0, 0, 2, 0.0, True, None)
    with pytest.raises(ValueError, match="leaves out job"):
        model.set_node_orders("G", {0: [0], 1: [0, 1]})
    with pytest.raises(ValueError, match="equally often"):
        model.set_node_orders("G", {0: [0, 1, 0], 1: [0, 1]})
    model.set_node_orders("G", {0: [0, 1, 2]})  # job 2 is not admitted yet: not applied


def test_job_joining_a_running_group_waits_for_its_round() -> None:
    """A job added mid-run takes the last place of the round; no phase overlaps."""
    model = EventModel(2)
    model.add_job(0, "G", member(10.0, 10.0, (0,), (1,)), 0.0, 0, 3, 0.0, True, None)
    assert model.run_until(5.0) == []
    model.add_job(1, "G", member(4.0, 4.0, (0,), (1,)), 5.0, 0, 2, 5.0, True, None)
    while (done := model.run_until(math.inf)):
        model.remove_job(done[0][0], done[0][1])
    table = model.phase_table()
    late = table[table.job == 1].start_s.min()
    # The node is in round 1 when job 1 joins: job 0's second rollout (after its training,
    # 20 s) comes first, then job 1's.
    assert late == pytest.approx(30.0)
    for _, rows in table.groupby("node"):
        rows = rows.sort_values("start_s")
        assert (rows.start_s.to_numpy()[1:] >= rows.end_s.to_numpy()[:-1] - 1e-9).all()


def test_kill_and_resubmit_restores_the_last_iteration() -> None:
    """A killed job resumes from its last whole iteration, after a cold restart."""
    failures = (Failure("a", kill_at_s=500.0, resubmit_at_s=1000.0),)
    cfg = dataclasses.replace(DET, failures=failures)
    r = simulate_trace([job("a", 100.0, 50.0, iterations=6)], "solo-d", HW, 0, cfg)
    row = r.jobs.iloc[0]
    # 3 iterations done by 480 s; the 4th is lost; 3 remain from 1000 s, cold switches
    # (30 s) on the first rollout and first training of the new nodes.
    assert row.status == "completed"
    assert row.iterations_done == 6
    assert row.incarnations == 2
    assert row.finish_s == pytest.approx(1000.0 + 2 * 30.0 + 3 * 160.0)
    assert row.running_s == pytest.approx(500.0 + row.finish_s - 1000.0)
    kinds = list(r.events.kind)
    assert kinds == ["arrival", "kill", "resubmit", "complete"]
    assert r.events.detail[1] == "iterations_done=3"
    # Nothing is provisioned between the kill and the resubmission.
    ts = r.timeseries
    gap = ts[(ts.time_s >= 500.0) & (ts.time_s < 1000.0)]
    assert (gap.cost_usd_per_h == 0).all()
    a = simulate_trace([job("a", 100.0, 50.0, iterations=6)], "solo-d", HW, 0,
                       dataclasses.replace(ANALYTIC, failures=failures))
    assert a.jobs.iloc[0].finish_s == pytest.approx(row.finish_s)


def test_kill_without_resubmission_leaves_the_job_killed() -> None:
    """A kill with no resubmission ends the job; its group-mate keeps running."""
    cfg = dataclasses.replace(DET, failures=(Failure("a", 200.0, None),))
    r = simulate_trace([job("a", 100.0, 50.0), job("b", 100.0, 50.0)], "rollmux", HW, 0, cfg)
    status = dict(zip(r.jobs.job_id, r.jobs.status, strict=True))
    assert status == {"a": "killed", "b": "completed"}
    assert not r.jobs.set_index("job_id").slo_met["a"]


class _RejectAll(PlacementPolicy):
    """A policy that rejects every job (for the rejection path)."""

    name = "reject-all"

    def place(self, job: RLJob, snapshot: object) -> Placement:  # type: ignore[override]
        """Reject."""
        return Placement(job=job, strategy=Strategy.REJECTED, reason="no room")


def test_rejected_jobs_are_recorded_with_their_reason() -> None:
    """Rejected jobs appear in the event log and the job table, and miss their SLO."""
    r = simulate_trace([job("a", 10.0, 10.0)], _RejectAll(), HW, 0, DET)
    assert r.jobs.status.tolist() == ["rejected"]
    assert r.jobs.reason.tolist() == ["no room"]
    assert r.summary["admissions"] == {"rejected": 1}
    assert r.summary["slo_attainment"] == 0.0
    too_big = job("big", 10.0, 10.0, rollout_mem_gb_per_node=5000.0)
    r = simulate_trace([too_big], "rollmux", HW, 0, DET)
    assert r.jobs.status.tolist() == ["rejected"]
    assert "host memory" in r.jobs.reason[0]


def test_regroup_policy_moves_jobs_with_pauses() -> None:
    """Hourly regrouping: moved jobs pause, then pay a cold switch on their new nodes."""
    jobs = [job(f"j{k}", 300.0 + 40 * k, 120.0 + 30 * k, iterations=30, arrival_s=600.0 * k,
                slo=1.8) for k in range(5)]
    r = simulate_trace(jobs, "regroup", HW, 0, DET)
    assert (r.jobs.status == "completed").all()
    regroups = r.events[r.events.kind == "regroup"]
    assert len(regroups) >= 1
    assert (regroups.time_s % 3600.0 == 0).all()
    moves = [(t, d.split()) for t, d in zip(regroups.time_s, regroups.detail, strict=True)
             if d]
    for t, moved in moves:
        for job_id in moved:
            k = r.jobs.index[r.jobs.job_id == job_id][0]
            later = r.phases[(r.phases.job == k) & (r.phases.start_s > t)]
            if len(later):
                assert later.start_s.min() >= t + 197.0 - 1e-6  # the 7B migration pause


def test_optimal_policy_replays_on_both_paths() -> None:
    """The optimum re-partitions at every arrival; both fidelities complete every job."""
    jobs = [job(f"j{k}", 200.0, 100.0 + 50 * k, iterations=8, arrival_s=100.0 * k)
            for k in range(4)]
    for cfg in (DET, ANALYTIC):
        r = simulate_trace(jobs, "optimal", HW, 0, cfg)
        assert (r.jobs.status == "completed").all()
        assert r.summary["admissions"] == {"regroup": 4}


@pytest.mark.parametrize("model_class", [EventModel, AnalyticModel])
@pytest.mark.parametrize("move_s", [0.0, 40.0, 100.0, 125.0, 160.0, 205.0])
def test_free_move_carries_the_iteration_in_flight(model_class: type, move_s: float) -> None:
    """A solo job moved to other nodes at any instant, carrying its unfinished iteration,
    finishes when it would have unmoved (rollout 100 s, train 50 s, sync 10 s)."""
    def solo(nodes: tuple[int, int]) -> GroupJob:
        return member(100.0, 50.0, (nodes[0],), (nodes[1],), sync_s=10.0)

    model = model_class(1) if model_class is EventModel else model_class()
    model.add_job(0, "G", solo((0, 1)), 0.0, 0, 3, 0.0, True, None)
    assert model.run_until(move_s) == []
    carried = model.in_flight(0, move_s)
    done = model.remove_job(0, move_s)
    assert done == int(move_s // 160.0)
    model.add_job(0, "G", solo((2, 3)), move_s, done, 3, move_s, True, None, carried)
    assert model.run_until(math.inf) == [(0, pytest.approx(3 * 160.0))]
    if model_class is EventModel:
        busy = model.busy_gpu_s(0)
        assert busy == (pytest.approx(3 * 100.0 * 8), pytest.approx(3 * 50.0 * 8))


def test_free_move_in_flight_share() -> None:
    """The share carried: of the rollout while it runs, of train + sync after it."""
    model = EventModel(1)
    model.add_job(0, "G", member(100.0, 50.0, (0,), (1,), sync_s=10.0), 0.0, 0, 2, 0.0, True,
                  None)
    assert model.in_flight(0, 0.0) == ("rollout", 0.0)
    model.run_until(25.0)
    assert model.in_flight(0, 25.0) == ("rollout", pytest.approx(0.25))
    model.run_until(130.0)
    assert model.in_flight(0, 130.0) == ("train", pytest.approx(0.5))
    model.run_until(170.0)
    assert model.in_flight(0, 170.0) == ("rollout", pytest.approx(0.1))


def test_optimal_regroups_lose_no_work_but_regroup_pauses_do() -> None:
    """The optimum's free re-partitions carry each moved job's iteration in flight, so its
    jobs' busy time is exactly their work; regrouping's paused moves redo theirs."""
    jobs = [job(f"j{k}", 300.0 + 40 * k, 120.0 + 30 * k, iterations=30, arrival_s=500.0 * k,
                slo=1.8) for k in range(5)]
    work = {j.job_id: (j.rollout_s * 8 * j.iterations, j.train_s * 8 * j.iterations)
            for j in jobs}
    opt = simulate_trace(jobs, "optimal", HW, 0, DET)
    assert (opt.events.kind == "regroup").sum() == 5 and opt.events.detail.str.len().max() > 0
    for row in opt.jobs.itertuples():
        assert (row.busy_rollout_gpu_s, row.busy_train_gpu_s) == pytest.approx(work[row.job_id])
    paused = simulate_trace(jobs, "regroup", HW, 0, DET)
    moved = {j for d in paused.events[paused.events.kind == "regroup"].detail for j in d.split()}
    assert moved
    assert any(row.busy_rollout_gpu_s + row.busy_train_gpu_s >
               sum(work[row.job_id]) * (1 + 1e-9) for row in paused.jobs.itertuples())


def test_stochastic_draws_with_migration_release_nodes_early() -> None:
    """Sampled phases vary; with migration a rollout frees its node before training starts."""
    j = RLJob("m", 14.0, 8192, iterations=30)
    r = simulate_trace([j], "solo-d", HW, 3, SimConfig())
    p = r.phases
    roll = p[p.phase == 0].set_index("iteration")
    train = p[p.phase == 1].set_index("iteration")
    assert roll.work_s.std() > 0
    assert (train.start_s >= roll.end_s - 1e-9).all()
    assert (train.start_s > roll.end_s + 1e-6).any()
    off = simulate_trace([j], "solo-d", HW, 3, SimConfig(migration=False))
    q = off.phases
    r_off = q[q.phase == 0].set_index("iteration")
    t_off = q[q.phase == 1].set_index("iteration")
    assert (t_off.start_s - r_off.end_s).abs().max() == pytest.approx(0.0, abs=1e-6)


def test_increasing_drift_lengthens_late_iterations() -> None:
    """Under 1.5x increasing drift late rollouts are longer than early ones."""
    j = RLJob("d", 7.0, 8192, iterations=200)
    r = simulate_trace([j], "solo-d", HW, 0, SimConfig(drift="increasing-1.5",
                                                        migration=False))
    roll = r.phases[r.phases.phase == 0]
    early = roll[roll.iteration < 40].work_s.mean()
    late = roll[roll.iteration >= 160].work_s.mean()
    assert late > 1.3 * early
    assert set(drift_templates("Mixed", ["a", "b"], 0)) == {"a", "b"}
    with pytest.raises(ValueError, match="drift 'sideways'"):
        drift_templates("sideways", ["a"], 0)


def test_flat_sync_is_slower_than_topology_aware() -> None:
    """Flat sync lengthens every iteration by sync_flat - sync."""
    j = RLJob("s", 14.0, 4096, rollout_gpus=16, train_gpus=16, iterations=3)
    topo = simulate_trace([j], "solo-d", HW, 0, DET).jobs.iloc[0]
    flat = simulate_trace([j], "solo-d", HW, 0, dataclasses.replace(DET, sync="flat")
                          ).jobs.iloc[0]
    assert flat.finish_s > topo.finish_s


def test_metrics_on_literal_tables() -> None:
    """Cost integral, time average, shares and bubble reduction on hand-made tables."""
    import pandas as pd

    ts = pd.DataFrame({"time_s": [0.0, 3600.0, 7200.0], "cost_usd_per_h": [10.0, 30.0, 0.0]})
    assert total_cost_usd(ts) == pytest.approx(40.0)
    assert cost_time_average_usd_per_h(ts) == pytest.approx(20.0)
    assert admission_shares({"new-group": 1, "direct-packing": 3, "rejected": 5}) == {
        "direct-packing": 0.75, "new-group": 0.25}
    assert bubble_reduction({"rollout": 75.0, "train": 50.0},
                            {"rollout": 100.0, "train": 100.0}) == {"rollout": -0.25,
                                                                      "train": -0.5}


def test_analytic_model_fractional_progress() -> None:
    """The analytic model advances fractional iterations at 1 / meta-iteration."""
    model = AnalyticModel()
    model.add_job(0, "G", member(3.0, 1.0, (0,), (1,)), 0.0, 0, 10, 0.0, True)
    assert model.run_until(6.0) == []
    assert model.done[0] == pytest.approx(1.5)
    assert model.run_until(math.inf) == [(0, pytest.approx(40.0))]


def test_bad_inputs_raise_clear_errors() -> None:
    """Invalid options and inconsistent inputs raise ValueError naming the problem."""
    with pytest.raises(ValueError, match="fidelity"):
        SimConfig(fidelity="fast")
    with pytest.raises(ValueError, match="sync"):
        SimConfig(sync="ring")
    with pytest.raises(ValueError, match="unknown job_id 'zz'"):
        simulate_trace([job("a", 1.0, 1.0)], "solo-d", HW, 0,
                       SimConfig(failures=(Failure("zz", 1.0),)))
    with pytest.raises(ValueError, match="appears twice"):
        simulate_trace([job("a", 1.0, 1.0), job("a", 2.0, 1.0)], "solo-d", HW, 0, DET)
    with pytest.raises(ValueError, match="unknown policy"):
        simulate_trace([job("a", 1.0, 1.0)], "nope", HW, 0, DET)
    with pytest.raises(ValueError, match="seed"):
        simulate_trace([job("a", 1.0, 1.0)], "solo-d", HW, -1, DET)
