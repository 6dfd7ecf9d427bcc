"""Invariants of the cluster simulator on small generated traces (Hypothesis).

Traces have 1-5 jobs with directly given phase times; every arrival (at most 60 s)
precedes every possible completion (at least 2 iterations of at least 40 s), so both
fidelity levels see the same snapshots at arrivals and make the same decisions.
"""

from __future__ import annotations

import dataclasses
import filecmp
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.sim import SimConfig, simulate_trace
from rollmux.sim.cli import write_result
from rollmux.sim.engine import default_draw_factory
from rollmux.sim.metrics import REL_TOL, total_cost_usd
from rollmux.sim.records import PHASE_CODES

HW = load_hardware()
POLICIES = ("rollmux", "solo-d", "verl", "greedy", "random", "gavel-plus")
TIME_TOL = 1e-6


@st.composite
def small_traces(draw: st.DrawFn) -> list[RLJob]:
    """1-5 jobs with integer phase times, 2-10 iterations, arrivals in [0, 60] s."""
    n = draw(st.integers(1, 5))
    jobs = []
    for k in range(n):
        rollout = float(draw(st.integers(20, 400)))
        train = float(draw(st.integers(20, 300)))
        warm = float(draw(st.integers(0, 5)))
        jobs.append(RLJob(
            f"j{k}", 7.0, 4096,
            rollout_s=rollout, train_s=train,
            rollout_max_s=rollout + draw(st.integers(0, 100)),
            train_max_s=train + draw(st.integers(0, 50)),
            sync_s=float(draw(st.integers(0, 20))),
            warm_switch_s=warm, cold_switch_s=warm + draw(st.integers(0, 60)),
            rollout_gpus=draw(st.sampled_from((8, 8, 16))),
            train_gpus=draw(st.sampled_from((8, 8, 16))),
            iterations=draw(st.integers(2, 10)),
            arrival_s=float(draw(st.integers(0, 60))),
            slo=draw(st.sampled_from((1.0, 1.2, 1.5, 2.0))),
        ))
    return jobs


def _check_no_overlap(phases: pd.DataFrame) -> None:
    """No node runs two phases at once; migrated tails share a node within its GPUs.

    A tail row starts when its rollout releases the node and holds only its GPUs, so it
    may overlap the next rollout there (rollmux.phases); at any time the tails on a node
    hold at most the node's GPUs.
    """
    tail_code = PHASE_CODES["tail"]
    gpn = HW.node.gpus_per_node
    for _, rows in phases.groupby("node"):
        whole = rows[rows.phase != tail_code]
        order = whole.sort_values(["start_s", "end_s"])
        starts = order.start_s.to_numpy()
        ends = order.end_s.to_numpy()
        assert (ends >= starts).all()
        assert (starts[1:] >= ends[:-1] - TIME_TOL).all()
        tails = rows[rows.phase == tail_code]
        for t in tails.start_s:
            held = tails[(tails.start_s <= t) & (tails.end_s > t)].gpus.sum()
            assert held <= gpn
    # A resubmitted job may run an iteration twice: its tail follows one of the releases.
    released: dict[tuple[int, int, int], set[float]] = {}
    for rec in phases[phases.phase == PHASE_CODES["rollout"]].itertuples(index=False):
        released.setdefault((rec.job, rec.iteration, rec.node), set()).add(rec.end_s)
    for rec in phases[phases.phase == tail_code].itertuples(index=False):
        assert rec.start_s in released[(rec.job, rec.iteration, rec.node)]


def _check_precedence(phases: pd.DataFrame) -> None:
    """Within a job: rollout k (and its tail) before training k, training k before rollout k+1."""
    phases = phases.assign(phase=phases.phase.replace(PHASE_CODES["tail"],
                                                      PHASE_CODES["rollout"]))
    for _, rows in phases.groupby("job"):
        spans = rows.groupby(["iteration", "phase"]).agg(start=("start_s", "min"),
                                                         end=("end_s", "max"))
        seq = spans.sort_index()  # rollout 0, train 0, rollout 1, ...
        phase = seq.index.get_level_values("phase").to_numpy()
        assert (phase[::2] == 0).all() and (phase[1::2] == 1).all()
        starts = seq.start.to_numpy()
        ends = seq.end.to_numpy()
        assert (starts[1:] >= ends[:-1] - TIME_TOL).all()


@given(jobs=small_traces(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 3),
       migration=st.booleans())
def test_stochastic_replay_invariants(jobs: list[RLJob], policy: str, seed: int,
                                      migration: bool) -> None:
    """Nodes never overlap, phases alternate within a job, costs integrate, SLOs match."""
    config = SimConfig(migration=migration)
    r = simulate_trace(jobs, policy, HW, seed, config)
    assert (r.jobs.status == "completed").all()
    _check_no_overlap(r.phases)
    _check_precedence(r.phases)
    _check_cost(r.timeseries, r.summary["total_cost_usd"])
    _check_slo(r.jobs, jobs, config, seed)
    _check_busy(r.phases, r.jobs)


def _check_cost(ts: pd.DataFrame, total: float) -> None:
    """Total cost = integral of provisioned GPUs x price; each row's cost = GPUs x price."""
    price = {g: HW.gpu(g).price_usd_per_h for g in HW.gpus}
    rate = sum(ts[f"gpus_{g}"].to_numpy(dtype=float) * p for g, p in price.items())
    assert np.allclose(ts.cost_usd_per_h.to_numpy(), rate, rtol=1e-12, atol=1e-9)
    widths = np.diff(ts.time_s.to_numpy())
    integral = float(np.sum(rate[:-1] * widths)) / 3600.0
    assert math.isclose(total, integral, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(total_cost_usd(ts), integral, rel_tol=1e-9, abs_tol=1e-9)
    assert ts.cost_usd_per_h.iloc[-1] == 0.0
    assert (ts.gpus_rollout + ts.gpus_train == sum(ts[f"gpus_{g}"] for g in HW.gpus)).all()


def _check_slo(
    table: pd.DataFrame, jobs: list[RLJob], config: SimConfig | None = None, seed: int = 0
) -> None:
    """Each SLO outcome equals the measured slowdown against the solo reference <= SLO.

    Two references: the paper's (``slowdown``, ``slo_met``): the worst-case solo iteration
    of the job's profile (max-token rollout and training, plus sync); and ours
    (``slowdown_realised``, ``slo_met_realised``): with stochastic draws, the mean over the
    completed iterations of the job's own drawn rollout + training, plus sync (the same
    draws it had in the replay); with expected times, the phase model's expected iteration.
    """
    by_id = {j.job_id: j for j in jobs}
    factory = None
    if config is not None:
        factory, _ = default_draw_factory(HW, config, seed, list(by_id))
    for row in table.itertuples():
        job = by_id[row.job_id]
        times = resolve(job, HW).times
        worst = times.rollout_max_s + times.train_max_s + times.sync_s
        realised = times.solo_iteration_s
        if factory is not None and row.iterations_done > 0:
            draws = factory(job, times)
            n = row.iterations_done
            realised = (math.fsum(draws.rollout_s[:n]) + math.fsum(draws.train_s[:n])) / n \
                + times.sync_s
        assert math.isclose(row.solo_iteration_s, worst, rel_tol=1e-12)
        assert math.isclose(row.solo_iteration_realised_s, realised, rel_tol=1e-12)
        achieved = row.running_s / row.iterations_done
        for solo, slowdown, met in ((worst, row.slowdown, row.slo_met),
                                    (realised, row.slowdown_realised, row.slo_met_realised)):
            assert math.isclose(slowdown, achieved / solo, rel_tol=1e-9)
            assert bool(met) == (achieved / solo <= job.slo * (1 + REL_TOL))


def _check_busy(phases: pd.DataFrame, table: pd.DataFrame) -> None:
    """Per-job busy GPU-seconds equal the phase table's work x GPUs per pool."""
    work = (phases.work_s * phases.gpus).groupby([phases.job, phases.pool]).sum()
    for row in table.itertuples():
        for pool, column in ((0, "busy_rollout_gpu_s"), (1, "busy_train_gpu_s")):
            expected = float(work.get((row.job, pool), 0.0))
            assert math.isclose(getattr(row, column), expected, rel_tol=1e-9, abs_tol=1e-6)


@given(jobs=small_traces(), policy=st.sampled_from(POLICIES))
def test_event_and_analytic_paths_agree(jobs: list[RLJob], policy: str) -> None:
    """Deterministic per-phase events and steady-state rates agree within a tolerance.

    Tolerance on job j's completion: ``(c_j + 2) * B_j`` where ``c_j`` counts the
    membership changes (joins and departures) of j's group while j is in it and ``B_j``
    bounds the group's meta-iteration by the sum over its members of ``rollout (on the
    training GPUs for veRL) + train + sync + 2 cold switches`` (a max-plus period never
    exceeds the total work of the group's phases). Each change costs at most one
    meta-iteration of transient (a joining job waits for its round; the schedule settles
    to the new period), and the start (pipeline fill) and the end (a job ends
    mid-meta-iteration) one each. Observed: at most 1.65 meta-iterations in 600 jobs. Total
    cost: shifting a departure by d changes the cost integral by at most the peak
    hourly cost x d.
    """
    event = simulate_trace(jobs, policy, HW, 0, SimConfig(stochastic=False))
    fluid = simulate_trace(jobs, policy, HW, 0, SimConfig(fidelity="analytic"))
    ev, fl = event.events, fluid.events
    arrivals_e = ev[ev.kind == "arrival"][["job_id", "group_id", "strategy"]]
    arrivals_f = fl[fl.kind == "arrival"][["job_id", "group_id", "strategy"]]
    assert arrivals_e.reset_index(drop=True).equals(arrivals_f.reset_index(drop=True))
    group_of = dict(zip(arrivals_e.job_id, arrivals_e.group_id, strict=True))
    by_id = {j.job_id: j for j in jobs}
    members: dict[str, list[str]] = {}
    for job_id, g in group_of.items():
        members.setdefault(g, []).append(job_id)
    tol_total = 0.0
    e_jobs = event.jobs.set_index("job_id")
    f_jobs = fluid.jobs.set_index("job_id")
    for job_id, g in group_of.items():
        bound = 0.0
        for m in members[g]:
            job = by_id[m]
            t = resolve(job, HW).times
            # veRL runs rollouts on the training GPUs: at most the HBM bandwidth ratio slower.
            ratio = max(1.0, job.rollout_gpus * HW.gpu("H20").hbm_bw_gbps
                        / (job.train_gpus * HW.gpu("H800").hbm_bw_gbps))
            bound += t.rollout_s * ratio + t.train_s + t.sync_s + 2 * t.cold_switch_s
        start = e_jobs.admitted_s[job_id]
        end = max(e_jobs.finish_s[job_id], f_jobs.finish_s[job_id])
        changes = sum(
            1 for m in members[g] if m != job_id and (
                start < e_jobs.admitted_s[m] <= end or start < e_jobs.finish_s[m] <= end
                or start < f_jobs.finish_s[m] <= end)
        )
        tol = (changes + 2) * bound
        tol_total += tol
        assert abs(e_jobs.finish_s[job_id] - f_jobs.finish_s[job_id]) <= tol
    peak = max(event.summary["peak_cost_usd_per_h"], fluid.summary["peak_cost_usd_per_h"])
    diff = abs(event.summary["total_cost_usd"] - fluid.summary["total_cost_usd"])
    assert diff <= peak * tol_total / 3600.0 + 1e-9


@given(jobs=small_traces(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 5))
def test_same_seed_gives_byte_identical_outputs(jobs: list[RLJob], policy: str,
                                                seed: int) -> None:
    """Two replays with the same config and seed write identical files."""
    cfg = SimConfig(drift="Mixed")
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp, "a"), Path(tmp, "b")
        write_result(simulate_trace(jobs, policy, HW, seed, cfg), first)
        write_result(simulate_trace(list(reversed(jobs)), policy, HW, seed, cfg), second)
        names = sorted(p.name for p in first.iterdir())
        assert names == sorted(p.name for p in second.iterdir())
        _match, mismatch, errors = filecmp.cmpfiles(first, second, names, shallow=False)
        assert mismatch == [] and errors == []


def test_failures_keep_the_invariants() -> None:
    """Kills and resubmissions in a shared group keep nodes exclusive and phases ordered."""
    from rollmux.sim import Failure

    jobs = [RLJob(f"j{k}", 7.0, 4096, rollout_s=100.0 + 20 * k, train_s=60.0,
                  rollout_max_s=120.0 + 20 * k, train_max_s=70.0, sync_s=5.0,
                  warm_switch_s=2.0, cold_switch_s=40.0, iterations=12, slo=2.0,
                  arrival_s=10.0 * k) for k in range(4)]
    cfg = SimConfig(failures=(Failure("j1", 700.0, 1500.0), Failure("j2", 900.0, None)))
    r = simulate_trace(jobs, "rollmux", HW, 1, cfg)
    _check_no_overlap(r.phases)
    _check_cost(r.timeseries, r.summary["total_cost_usd"])
    _check_busy(r.phases, r.jobs)
    status = dict(zip(r.jobs.job_id, r.jobs.status, strict=True))
    assert status == {"j0": "completed", "j1": "completed", "j2": "killed", "j3": "completed"}
    j1 = r.jobs.set_index("job_id").loc["j1"]
    assert j1.iterations_done == 12 and j1.incarnations == 2
    k1 = int(j1.job)
    after = r.phases[(r.phases.job == k1) & (r.phases.start_s >= 1500.0)]
    assert after.iteration.min() >= 1  # restored from its last completed iteration
    assert dataclasses.replace(cfg).failures == cfg.failures
