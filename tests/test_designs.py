"""The designs beyond the paper: timeslice, async-solo-d, rollmux-join (docs/designs.md).

Property tests on small generated traces (Hypothesis): no GPU holds two phases at once,
every hand-over of a time slice pays its switch, asynchronous periods are never shorter
than the larger phase; and examples that tell each design from its synchronous or
steady-state-only counterpart.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sim_invariants import _check_busy, _check_cost, _check_no_overlap, small_traces

from rollmux.closedform import JobPhases
from rollmux.group import GroupJob
from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.model.cycle import handover_s
from rollmux.phasetimes import PhaseTimes
from rollmux.placement import apply, empty_snapshot, get_policy
from rollmux.placement.async_solo_d import check_staleness
from rollmux.placement.rollmux_join import join_fits
from rollmux.placement.timeslice import slice_member, slice_period_s
from rollmux.sim import SimConfig, simulate_trace
from rollmux.sim.records import PHASE_CODES

HW = load_hardware()
ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-6
ROLLOUT, TRAIN = PHASE_CODES["rollout"], PHASE_CODES["train"]


def _job(k: int, rollout: float, train: float, **kw: object) -> RLJob:
    """A job with given phase times (worst case = expected), 8 + 8 GPUs."""
    fields: dict[str, object] = dict(
        rollout_s=rollout, train_s=train, rollout_max_s=rollout, train_max_s=train,
        sync_s=5.0, warm_switch_s=2.0, cold_switch_s=30.0, rollout_gpus=8, train_gpus=8,
        iterations=6, arrival_s=float(k), slo=3.0)
    fields.update(kw)
    return RLJob(f"j{k}", 7.0, 4096, **fields)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- timeslice


def _member(rollout: float, train: float, warm: float, snap: float,
            slo: float = 2.0) -> GroupJob:
    """A slice member with these worst-case phases, warm switch and hand-over snapshot."""
    times = PhaseTimes(rollout_s=rollout, train_s=train, sync_s=0.0, sync_flat_s=0.0,
                       warm_switch_s=warm, cold_switch_s=10 * warm, rollout_max_s=rollout,
                       train_max_s=train)
    return GroupJob(JobPhases(times, 8, 8), (0,), (0,), slo=slo, colocated=True,
                    handover_s=snap)


def test_slice_period_is_the_sum_of_every_phase_and_switch() -> None:
    """A slice serves every phase once per cycle: the max-plus period is their sum."""
    a = _member(100.0, 50.0, 2.0, 1.5)
    b = _member(30.0, 200.0, 3.0, 2.5)
    assert slice_period_s([a]) == pytest.approx(100 + 50 + 2 * 2.0)  # alone: veRL, no snapshot
    both = 100 + 50 + 30 + 200 + 2 * (2.0 + 1.5) + 2 * (3.0 + 2.5)
    assert slice_period_s([a, b]) == pytest.approx(both)


def test_timeslice_pays_the_one_switch_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slice's admission period and the replay's both follow the group model's switch.

    Changing how a switch is paid (rollmux.model.cycle.steady_switch_s) changes the
    slice's period as the admission computes it and as the analytic replay runs it, and
    the two agree: no design keeps its own switch rule.
    """
    import rollmux.model.cycle as group_model

    jobs = [_job(0, 200.0, 150.0, iterations=10, arrival_s=0.0),
            _job(1, 100.0, 120.0, iterations=10, arrival_s=0.0)]

    def periods() -> tuple[float, float]:
        """The slice's period as admitted and as replayed (analytic, expected = worst)."""
        r = simulate_trace(jobs, "timeslice", HW, 0, SimConfig(fidelity="analytic"))
        assert r.jobs.group_id.nunique() == 1
        members = [slice_member(j, resolve(j, HW).times, HW) for j in jobs]
        return slice_period_s(members), float(r.jobs.running_s.max()) / 10

    before_admitted, before_replayed = periods()
    original = group_model.steady_switch_s
    monkeypatch.setattr(group_model, "steady_switch_s",
                        lambda times, **kw: 10.0 + original(times, **kw))
    after_admitted, after_replayed = periods()
    # Four phases per cycle, each paying 10 s more.
    assert after_admitted == pytest.approx(before_admitted + 40.0)
    assert after_replayed == pytest.approx(after_admitted, rel=1e-9)
    assert before_replayed == pytest.approx(before_admitted, rel=1e-9)


def test_timeslice_packs_only_within_every_slo() -> None:
    """At SLO 1.5 two equal jobs cannot share a slice (about 2x); at SLO 3 they do."""
    for slo, packed in ((1.5, False), (3.0, True)):
        policy = get_policy("timeslice")
        snap = empty_snapshot(HW)
        decisions = []
        for k in range(2):
            d = policy.place(_job(k, 200.0, 150.0, slo=slo), snap)
            snap = apply(snap, d)
            decisions.append(d)
        assert (decisions[1].group_id == decisions[0].group_id) is packed
        assert (decisions[1].marginal_cost_usd_per_h == 0.0) is packed
        for d in decisions:
            assert d.meta_iteration_s <= slo * (200 + 150 + 5) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(jobs=small_traces(), slo=st.sampled_from((2.0, 3.0, 5.0)), stochastic=st.booleans())
def test_timeslice_invariants(jobs: list[RLJob], slo: float, stochastic: bool) -> None:
    """No node holds two phases at once; every phase on a shared slice pays its hand-over.

    With high SLOs the slices pack. A phase on a node hosting another job holds it for
    restore + work + snapshot; a lone job's for its warm switch + work (veRL), which
    the phase rows show as ``end - start - work``.
    """
    import dataclasses

    jobs = [dataclasses.replace(j, slo=slo) for j in jobs]
    r = simulate_trace(jobs, "timeslice", HW, 0, SimConfig(stochastic=stochastic))
    assert (r.jobs.status == "completed").all()
    _check_no_overlap(r.phases)
    _check_cost(r.timeseries, r.summary["total_cost_usd"])
    _check_busy(r.phases, r.jobs)
    table = r.jobs.set_index("job")
    by_id = {j.job_id: j for j in jobs}
    for rec in r.phases.itertuples(index=False):
        job = by_id[table.job_id[rec.job]]
        times = resolve(job, HW).times
        group = table.group_id[rec.job]
        mates = table[(table.group_id == group) & (table.index != rec.job)]
        # Slice-mates present at the phase's start: strictly, and possibly (equal times).
        surely = ((mates.admitted_s < rec.start_s - TOL) & (mates.finish_s > rec.start_s + TOL))
        maybe = ((mates.admitted_s <= rec.start_s + TOL) & (mates.finish_s >= rec.start_s - TOL))
        overhead = rec.end_s - rec.start_s - rec.work_s
        warm, snap = times.warm_switch_s, handover_s(times, HW.perf.warm_switch_const_s)
        allowed = {times.cold_switch_s}  # the first phase on a node: a cold start
        if surely.any():
            allowed.add(warm + snap)
        elif maybe.any():
            allowed |= {warm, warm + snap}
        else:
            allowed.add(warm)
        assert any(abs(overhead - a) <= TOL for a in allowed), (rec, allowed)


def test_timeslice_hand_overs_are_first_come_first_served() -> None:
    """Two jobs on one slice alternate phases: R_a, R_b, T_a, T_b, ... (FIFO)."""
    jobs = [_job(0, 200.0, 150.0), _job(1, 100.0, 120.0, arrival_s=0.0)]
    r = simulate_trace(jobs, "timeslice", HW, 0, SimConfig(stochastic=False))
    rows = r.phases.sort_values("start_s")
    seq = list(zip(rows.job, rows.phase, strict=True))[:8]
    assert seq == [(0, ROLLOUT), (1, ROLLOUT), (0, TRAIN), (1, TRAIN)] * 2


# --------------------------------------------------------------------------- async-solo-d


@settings(max_examples=40, deadline=None)
@given(jobs=small_traces(), staleness=st.integers(1, 3), stochastic=st.booleans())
def test_async_invariants(jobs: list[RLJob], staleness: int, stochastic: bool) -> None:
    """Asynchronous jobs: no node overlap, staleness respected, period >= larger phase.

    Rollout k starts only after training k - 1 - staleness ended; training k after
    rollout k and training k - 1; the mean iteration time is never below the larger
    of the job's mean rollout and mean training + sync.
    """
    policy = get_policy("async-solo-d", staleness=staleness)
    r = simulate_trace(jobs, policy, HW, 0, SimConfig(stochastic=stochastic))
    assert (r.jobs.status == "completed").all()
    _check_no_overlap(r.phases)
    _check_cost(r.timeseries, r.summary["total_cost_usd"])
    _check_busy(r.phases, r.jobs)
    for j, rows in r.phases.groupby("job"):
        # One row per node: a phase spans its rows' earliest start to latest end.
        spans = rows.groupby(["phase", "iteration"]).agg(
            start=("start_s", "min"), end=("end_s", "max"), work=("work_s", "first"))
        roll, train = spans.loc[ROLLOUT], spans.loc[TRAIN]
        for k in train.index:
            assert train.start[k] >= roll.end[k] - TOL
            if k - 1 in train.index:
                assert train.start[k] >= train.end[k - 1] - TOL
            if k - 1 - staleness in train.index:
                assert roll.start[k] >= train.end[k - 1 - staleness] - TOL
        job_id = r.jobs.job_id[r.jobs.job == j].iloc[0]
        job = next(x for x in jobs if x.job_id == job_id)
        times = resolve(job, HW).times
        n = len(train)
        row = r.jobs[r.jobs.job_id == job_id].iloc[0]
        roll_mean = float(roll.work.sum()) / n
        train_mean = float(train.work.sum()) / n + times.sync_s
        assert row.running_s / n >= max(roll_mean, train_mean) * (1 - 1e-9) - TOL


def test_async_beats_sync_and_keeps_staleness_zero_out() -> None:
    """Async runs at the larger phase (after a pipeline fill); synchronous Solo-D at the sum."""
    jobs = [_job(0, 300.0, 200.0, iterations=20, arrival_s=0.0)]
    sync = simulate_trace(jobs, "solo-d", HW, 0, SimConfig(stochastic=False))
    asyn = simulate_trace(jobs, "async-solo-d", HW, 0, SimConfig(stochastic=False))
    t_sync = float(sync.jobs.running_s.iloc[0])
    t_async = float(asyn.jobs.running_s.iloc[0])
    # State is resident at arrival: no cold start.
    assert t_sync == pytest.approx(20 * (300 + 200 + 5), abs=1e-6)
    # Rollout-bound: 20 rollouts back to back, then the last training and sync.
    assert t_async == pytest.approx(20 * 300 + 200 + 5, abs=1e-6)
    assert asyn.summary["total_cost_usd"] < sync.summary["total_cost_usd"]
    details = asyn.events[asyn.events.kind == "arrival"].detail
    assert (details == "staleness=1").all()
    assert (sync.events[sync.events.kind == "arrival"].detail.fillna("") == "").all()


def test_async_analytic_period_is_the_larger_phase() -> None:
    """The analytic path runs an asynchronous job at max(rollout, train + sync)."""
    jobs = [_job(0, 100.0, 400.0, iterations=10, arrival_s=0.0)]
    r = simulate_trace(jobs, "async-solo-d", HW, 0, SimConfig(fidelity="analytic"))
    assert float(r.jobs.running_s.iloc[0]) == pytest.approx(10 * 405, abs=1e-6)


def test_staleness_option_is_checked() -> None:
    """A staleness below 1 (or not an integer) is refused naming the option."""
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="staleness"):
            check_staleness(bad)
    assert get_policy("async-solo-d", staleness=2).staleness == 2  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- rollmux-join


def test_join_fits_counts_the_wait() -> None:
    """The wait counts against the whole run: short runs have little slack to absorb it."""
    assert join_fits(100, 1.2, 100.0, 110.0, 2.0)  # 102 x 110 = 11220 <= 12000
    assert not join_fits(10, 1.2, 100.0, 110.0, 2.0)  # 12 x 110 = 1320 > 1200
    assert join_fits(10, 1.2, 100.0, 110.0, 0.0)  # steady state alone: Algorithm 1's check


def test_join_aware_refuses_what_rollmux_admits_for_a_short_job() -> None:
    """A short newcomer whose steady period fits but whose wait would not gets a new group."""
    long = _job(0, 300.0, 100.0, iterations=500, slo=1.5)
    short = _job(1, 100.0, 250.0, iterations=3, slo=1.5, arrival_s=10.0)
    for name, joins in (("rollmux", True), ("rollmux-join", False)):
        policy = get_policy(name)
        snap = apply(empty_snapshot(HW), policy.place(long, empty_snapshot(HW)))
        d = policy.place(short, snap)
        assert (d.strategy.value == "direct-packing") is joins, name
    # With a long run the same newcomer joins under both.
    longer = _job(1, 100.0, 250.0, iterations=300, slo=1.5, arrival_s=10.0)
    policy = get_policy("rollmux-join")
    snap = apply(empty_snapshot(HW), policy.place(long, empty_snapshot(HW)))
    assert policy.place(longer, snap).strategy.value == "direct-packing"


def test_join_options_are_checked() -> None:
    """Bad join options are refused naming the option."""
    with pytest.raises(ValueError, match="join_wait_periods"):
        get_policy("rollmux-join", join_wait_periods=-1)
    with pytest.raises(ValueError, match="expected_check"):
        get_policy("rollmux-join", expected_check="yes")


def test_slice_member_reads_the_phase_model() -> None:
    """A slice member's rollout is the co-located one (bandwidth-scaled) on its training
    GPUs, with no sync; alone it pays veRL's phases, shared the hand-over's snapshot too."""
    job = _job(0, 200.0, 150.0)
    m = slice_member(job, resolve(job, HW).times, HW)
    times = m.phases.times
    assert m.colocated and m.sync_s == 0.0 and m.slo == 3.0
    assert (m.phases.rollout_gpus, m.phases.train_gpus) == (8, 8)
    assert times.warm_switch_s == 2.0
    assert m.handover_s == pytest.approx(max(0.0, 2.0 - HW.perf.warm_switch_const_s))
    assert times.train_s == 150.0
    assert math.isfinite(times.rollout_s) and times.rollout_s > 0
    # Alone: veRL's phases (warm switch each); shared: plus the hand-over's snapshot.
    alone = m.effective_phases_s(rollout_shared=False, train_shared=False)
    shared = m.effective_phases_s(rollout_shared=True, train_shared=True)
    assert alone == pytest.approx((times.rollout_s + 2.0, 152.0))
    assert shared == pytest.approx((times.rollout_s + 2.0 + m.handover_s,
                                    152.0 + m.handover_s))


# --------------------------------------------------------------------------- comparison


def test_repricing_is_exact_because_decisions_ignore_the_price_ratio(tmp_path) -> None:
    """Every compared policy decides the same at another H800 price: GPU-hours per type
    are equal, so re-pricing a replay (experiments.designs.crossover_table) is exact."""
    from rollmux.experiments.designs import crossover_table, design_row
    from rollmux.sim.replay import write_result

    trace = [_job(k, 150.0 + 40 * k, 260.0 - 30 * k, slo=1.6, iterations=8,
                  arrival_s=20.0 * k) for k in range(5)]
    cheap = load_hardware(overrides={"gpus.H800.price_usd_per_h": 1.85})
    for policy in ("rollmux", "rollmux-join", "timeslice", "async-solo-d", "solo-d", "verl"):
        rows = []
        for k, hw in enumerate((HW, cheap)):
            r = simulate_trace(trace, policy, hw, 0, SimConfig(stochastic=False))
            out = tmp_path / f"{policy}-{k}"
            write_result(r, out)
            rows.append(design_row(out, "t"))
        assert rows[0]["gpu_h_H20"] == pytest.approx(rows[1]["gpu_h_H20"], rel=1e-12), policy
        assert rows[0]["gpu_h_H800"] == pytest.approx(rows[1]["gpu_h_H800"], rel=1e-12), policy
        # Re-priced at the cheap hardware's ratio (1.0), the first replay costs what the
        # second one cost.
        frame = pd.DataFrame([rows[0]])
        repriced = crossover_table(frame, [1.0], HW.gpu("H20").price_usd_per_h)
        assert float(repriced.total_cost_usd.iloc[0]) == pytest.approx(
            rows[1]["total_cost_usd"], rel=1e-9), policy


def test_crossover_ratio_solves_the_cost_equality() -> None:
    """At the crossover ratio the two designs cost the same; below it one pool is cheaper."""
    from rollmux.experiments.designs import COMPARISON_COLUMNS, crossover_ratios

    base = dict.fromkeys(COMPARISON_COLUMNS, 0.0)
    two = {**base, "trace": "t", "lengths": "", "policy": "rollmux", "gpu_h_H20": 300.0,
           "gpu_h_H800": 200.0, "busy_rollout_gpu_h": 1.0, "busy_train_gpu_h": 1.0}
    one = {**base, "trace": "t", "lengths": "", "policy": "verl", "gpu_h_H20": 0.0,
           "gpu_h_H800": 350.0}
    solo = {**base, "trace": "t", "lengths": "", "policy": "solo-d", "gpu_h_H20": 1.0,
            "gpu_h_H800": 1.0, "busy_rollout_gpu_h": 3.0, "busy_train_gpu_h": 1.0}
    ratios = crossover_ratios(pd.DataFrame([two, one, solo]), "rollmux", "verl", 2.85)
    p = float(ratios.crossover_price_ratio.iloc[0])
    assert p == pytest.approx(2.0)
    assert 300 + p * 200 == pytest.approx(p * 350)
    assert bool(ratios.two_pools_cheaper_at_paper_ratio.iloc[0])
    assert float(ratios.rollout_share.iloc[0]) == pytest.approx(0.75)
    # A one-pool design using no more H800-hours is never beaten.
    one["gpu_h_H800"] = 150.0
    ratios = crossover_ratios(pd.DataFrame([two, one]), "rollmux", "verl", 2.85)
    assert math.isinf(float(ratios.crossover_price_ratio.iloc[0]))


def _rows(trace: str = "t-1", lengths: str = "", seeds: tuple[int, ...] = (0,),
          **designs: tuple[float, float, int]) -> pd.DataFrame:
    """Comparison rows: design -> (cost, SLO attainment, staleness) at every seed, the
    cost scaled by 1 + seed / 100 so seeds differ."""
    from rollmux.experiments.designs import COMPARISON_COLUMNS

    base = dict.fromkeys(COMPARISON_COLUMNS, 0.0)
    out = []
    for name, (cost, slo, staleness) in designs.items():
        for seed in seeds:
            h20 = 0.0 if name in ("verl", "timeslice") else 50.0
            out.append({**base, "trace": trace, "lengths": lengths,
                        "policy": name.replace("_", "-"), "seed": seed,
                        "total_cost_usd": cost * (1 + seed / 100), "slo_attainment": slo,
                        "slo_attainment_realised": slo, "staleness": staleness,
                        "gpu_h_H20": h20, "gpu_h_H800": 100.0 if h20 == 0 else 60.0,
                        "fidelity": "event"})
    return pd.DataFrame(out)


def test_design_metrics_name_the_cheapest_design_meeting_every_slo() -> None:
    """The metrics: cost over rollmux, both attainments, the cheapest designs, crossover."""
    from rollmux.experiments.designs import design_metrics

    rows = _rows(rollmux=(100.0, 0.9, 0), rollmux_join=(104.0, 1.0, 0), verl=(90.0, 0.95, 0),
                 solo_d=(130.0, 1.0, 0), async_solo_d=(80.0, 1.0, 1),
                 optimal=(70.0, 1.0, 0))
    m = design_metrics(rows, "src", 2.85).set_index("metric")
    # The idealised optimum is reported, never "the cheapest design".
    assert m.value["designs_optimal_cost_ratio_t_1"] == pytest.approx(0.7)
    assert "optimal" not in m.note["designs_cheapest_cost_ratio_t_1"]
    assert m.value["designs_rollmux_join_cost_ratio_t_1"] == pytest.approx(1.04)
    assert m.value["designs_verl_slo_attainment_realised_t_1"] == pytest.approx(95.0)
    assert m.value["designs_rollmux_slo_attainment_t_1"] == pytest.approx(90.0)
    assert "designs_rollmux_cost_ratio_t_1" not in m.index  # the baseline over itself
    assert m.value["designs_cheapest_cost_ratio_t_1"] == pytest.approx(0.8)
    assert m.note["designs_cheapest_cost_ratio_t_1"].startswith("async-solo-d on t-1")
    assert m.value["designs_cheapest_on_policy_cost_ratio_t_1"] == pytest.approx(1.04)
    assert m.note["designs_cheapest_on_policy_cost_ratio_t_1"].startswith("rollmux-join")
    # 50 + p 60 = p 100 at p = 1.25
    assert m.value["designs_crossover_price_ratio_t_1"] == pytest.approx(1.25)
    # One seed: no interval.
    assert (m.low == "").all() and (m.high == "").all()


def test_design_metrics_carry_seed_intervals_and_a_design_missing_a_seed_fails_it() -> None:
    """Over seeds: paired cost ratios with a 95 % interval; a design that missed an SLO at
    one seed is not the cheapest meeting every SLO."""
    from rollmux.experiments.designs import design_metrics

    rows = _rows(seeds=(0, 1, 2), rollmux=(100.0, 1.0, 0), verl=(90.0, 1.0, 0),
                 solo_d=(130.0, 1.0, 0))
    rows.loc[(rows.policy == "solo-d"), "total_cost_usd"] *= [1.0, 1.1, 0.9]
    rows.loc[(rows.policy == "verl") & (rows.seed == 2), "slo_attainment_realised"] = 0.99
    m = design_metrics(rows, "src", 2.85).set_index("metric")
    low, high = m.low["designs_solo_d_cost_ratio_t_1"], m.high["designs_solo_d_cost_ratio_t_1"]
    assert low < m.value["designs_solo_d_cost_ratio_t_1"] < high
    assert m.low["designs_verl_cost_ratio_t_1"] == pytest.approx(0.9)  # paired: no spread
    assert m.note["designs_cheapest_cost_ratio_t_1"].startswith("rollmux on")
    assert "3 seed(s)" in m.note["designs_cheapest_cost_ratio_t_1"]


def test_every_designs_ledger_row_is_computed_for_the_shipped_config() -> None:
    """The beyond ledger's D rows are exactly metrics the comparison computes for the
    shipped config's traces and designs (and nothing the ledger lacks reaches the
    report's metrics file)."""
    import yaml

    from rollmux.experiments.claims import load_beyond_ledger
    from rollmux.experiments.designs import design_metrics, ledger_metrics

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["designs"]
    designs = {p.replace("-", "_"): (100.0, 1.0, 0) for p in config["policies"]}
    frames = [_rows(t, **designs) for t in config["traces"]]
    frames += [_rows(t, "polytrace", **designs) for t in config["lengths_traces"]]
    frames += [_rows(t, optimal=(99.0, 1.0, 0)) for t in config["optimal_traces"]]
    frames += [_rows(t, **{p: (100.0, 1.0, 0) for p in ("solo_d", "verl", "rollmux",
                                                       "rollmux_join")})
               for t in config["balance_traces"]]
    metrics = design_metrics(pd.concat(frames, ignore_index=True), "src", 2.85)
    ledger = load_beyond_ledger()
    kept, missing = ledger_metrics(metrics, ledger)
    assert missing == []
    ours = ledger[ledger.result_id.str.startswith("D")]
    assert sorted(kept.metric) == sorted(ours.metric)
    assert set(metrics.metric) >= set(ours.metric)
    # The D rows follow the metrics contract's units.
    units = dict(zip(ours.metric, ours.unit, strict=True))
    assert all(units[r.metric] == r.unit for r in kept.itertuples())


def test_the_beyond_section_reads_several_metrics_files(tmp_path) -> None:
    """The claims report's beyond section joins every stage's metrics file; a D row's
    note (the cheapest design's name) and interval are rendered."""
    from rollmux.experiments.claims import ClaimsError, beyond_report, load_beyond_ledger

    ledger = load_beyond_ledger()
    rows = ledger.assign(value="1", low="", high="", source="t", note="stand-in")[
        ["metric", "value", "low", "high", "unit", "source", "note"]]
    designs = ledger.result_id.str.startswith("D")
    key = "designs_cheapest_cost_ratio_production_default"
    rows.loc[rows.metric == key, ["value", "low", "high", "note"]] = [
        "0.86", "0.84", "0.88", "async-solo-d on production-default"]
    rows[~designs].to_csv(tmp_path / "beyond.csv", index=False)
    rows[designs].to_csv(tmp_path / "designs.csv", index=False)
    table = beyond_report(ledger, [tmp_path / "beyond.csv", tmp_path / "designs.csv"],
                          tmp_path, require_evidence=False)
    assert len(table) == len(ledger)
    rec = table[table.metric == key].iloc[0]
    assert rec.value == 0.86 and rec.file.endswith("designs.csv")
    assert (rec.low, rec.high, rec.note) == (0.84, 0.88, "async-solo-d on production-default")
    with pytest.raises(ClaimsError, match="no value"):  # one file alone leaves rows out
        beyond_report(ledger, [tmp_path / "beyond.csv"], tmp_path, require_evidence=False)


def test_figures_draw_every_design_and_label_the_steady_state_optimum() -> None:
    """The comparison figure draws one point per design and trace; the optimum, replayed at
    steady-state progress, says so in the legend; the crossover figure draws every trace."""
    from scriptmod import load_script

    from rollmux.experiments.designs import crossover_ratios, crossover_table

    rows = pd.concat([_rows("a", rollmux=(100.0, 0.9, 0), verl=(90.0, 1.0, 0),
                            solo_d=(130.0, 1.0, 0), optimal=(95.0, 1.0, 0)),
                      _rows("b", rollmux=(100.0, 1.0, 0), verl=(120.0, 1.0, 0),
                            solo_d=(130.0, 1.0, 0))], ignore_index=True)
    rows.loc[rows.policy == "optimal", "fidelity"] = "analytic"
    rows["cost_per_work_usd"] = rows["total_cost_usd"] / 10.0
    fig = load_script("fig_designs_cost_slo", "analysis").draw(rows)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Optimal (steady state)" in labels and "a" in labels and "b" in labels
    assert sum(len(c.get_offsets()) for c in fig.axes[0].collections) == 7
    crossover = crossover_table(rows, [1.0, 2.85, 6.0], 1.85)
    ratios = crossover_ratios(rows, "rollmux", "verl", 2.85)
    fig = load_script("fig_designs_crossover", "analysis").draw(crossover, ratios)
    assert fig.axes
