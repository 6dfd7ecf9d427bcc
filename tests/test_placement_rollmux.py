"""RollMux's Algorithm 1 on literal clusters: strategies, pruning, tie-breaking, bad input."""

from __future__ import annotations

import math

import pytest
from pooled import group_of

from rollmux.group import group_job_of
from rollmux.hardware import Hardware, load_hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.placement import Strategy, apply, empty_snapshot, get_policy
from rollmux.placement.base import NewNode, Placement, new_group_placement
from rollmux.placement.snapshot import ClusterSnapshot, Pool

HW = load_hardware()
H20_NODE = 8 * HW.gpu("H20").price_usd_per_h
H800_NODE = 8 * HW.gpu("H800").price_usd_per_h


def mkjob(
    job_id: str,
    rollout_s: float,
    train_s: float,
    *,
    slo: float = 1.5,
    rollout_max_s: float | None = None,
    train_max_s: float | None = None,
    rollout_gpus: int = 8,
    train_gpus: int = 8,
    mem_gb: float = 100.0,
) -> RLJob:
    """A 7B job with literal phase times, no sync and no switch cost."""
    return RLJob(
        job_id=job_id,
        model_size_b=7.0,
        max_response_tokens=8192,
        rollout_gpus=rollout_gpus,
        train_gpus=train_gpus,
        rollout_s=rollout_s,
        train_s=train_s,
        rollout_max_s=rollout_s if rollout_max_s is None else rollout_max_s,
        train_max_s=train_s if train_max_s is None else train_max_s,
        sync_s=0.0,
        warm_switch_s=0.0,
        cold_switch_s=0.0,
        rollout_mem_gb_per_node=mem_gb,
        train_mem_gb_per_node=mem_gb,
        slo=slo,
    )


def alone(snap: ClusterSnapshot, job: RLJob) -> ClusterSnapshot:
    """Admit ``job`` as a new group."""
    return apply(snap, new_group_placement(job, resolve(job, snap.hw), snap))


def join(
    snap: ClusterSnapshot,
    job: RLJob,
    group_id: str,
    rollout: tuple[str, ...],
    train: tuple[str, ...],
    new_rollout: int = 0,
) -> ClusterSnapshot:
    """Admit ``job`` on the given nodes of an existing group (plus new rollout nodes)."""
    new_ids = snap.new_ids("R", new_rollout)
    return apply(
        snap,
        Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING if not new_rollout else Strategy.ROLLOUT_SCALING,
            group_id=group_id,
            rollout_nodes=(*rollout, *new_ids),
            train_nodes=train,
            new_nodes=tuple(NewNode(n, Pool.ROLLOUT, "H20") for n in new_ids),
            profile=resolve(job, snap.hw),
        ),
    )


def running_example(slo_e: float) -> tuple[ClusterSnapshot, RLJob]:
    """Paper sec. 4.2: G1 saturated; G2 = {C on (R, T1), D on (R', T1)}; job E arrives."""
    snap = empty_snapshot(HW)
    snap = alone(snap, mkjob("A", 100, 100))  # G0 R1 T2
    snap = join(snap, mkjob("B", 100, 100), "G0", ("R1",), ("T2",))  # full: pruned
    snap = alone(snap, mkjob("C", 300, 100))
    g2 = snap.jobs["C"].group_id
    snap = join(snap, mkjob("D", 300, 100), g2, (), snap.jobs["C"].train_nodes, new_rollout=1)
    return snap, mkjob("E", 300, 100, slo=slo_e)


def test_direct_packing_is_free_and_preferred() -> None:
    """With slack for E on C's rollout node, E is packed there at zero marginal cost."""
    snap, job_e = running_example(slo_e=1.5)
    decision = get_policy("rollmux").place(job_e, snap)
    assert decision.strategy is Strategy.DIRECT_PACKING
    assert decision.marginal_cost_usd_per_h == 0.0
    g2 = snap.jobs["C"].group_id
    assert decision.group_id == g2
    # Tie between (R of C, T1) and (R of D, T1): the lower node id wins.
    assert decision.rollout_nodes == snap.jobs["C"].rollout_nodes
    assert decision.meta_iteration_s == pytest.approx(600.0)


def test_rollout_scaling_when_packing_breaks_slo() -> None:
    """A tight SLO rules out the shared rollout nodes; one new rollout node suffices."""
    snap, job_e = running_example(slo_e=1.2)
    decision = get_policy("rollmux").place(job_e, snap)
    assert decision.strategy is Strategy.ROLLOUT_SCALING
    assert decision.marginal_cost_usd_per_h == pytest.approx(H20_NODE)
    assert decision.train_nodes == snap.jobs["C"].train_nodes
    assert len(decision.new_nodes) == 1
    after = apply(snap, decision)
    after.check_invariants()
    assert len(after.groups[decision.group_id].rollout_nodes) == 3


def test_new_group_when_nothing_fits() -> None:
    """A job whose SLO no group can meet is isolated at the full price of its nodes."""
    snap, _ = running_example(slo_e=1.5)
    job = mkjob("F", 1000, 1000, slo=1.0)
    decision = get_policy("rollmux").place(job, snap)
    assert decision.strategy is Strategy.NEW_GROUP
    assert decision.marginal_cost_usd_per_h == pytest.approx(H20_NODE + H800_NODE)
    assert decision.group_id not in snap.groups


def test_saturated_group_is_pruned_but_not_without_pruning() -> None:
    """A full group (T_load = T_cycle) is skipped by RollMux, examined by rollmux-noprune."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 100, slo=2.0))
    snap = join(snap, mkjob("B", 100, 100, slo=2.0), "G0", ("R1",), ("T2",))
    job = mkjob("X", 100, 100, slo=2.0)
    assert get_policy("rollmux").place(job, snap).strategy is Strategy.NEW_GROUP
    unpruned = get_policy("rollmux-noprune").place(job, snap)
    assert unpruned.strategy is Strategy.DIRECT_PACKING
    assert unpruned.meta_iteration_s <= 2.0 * 200.0


def test_worst_case_versus_expected_admission() -> None:
    """Max-token phases block a packing that expected phases would allow."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 100, rollout_max_s=300, slo=1.2))
    job = mkjob("B", 100, 100, rollout_max_s=300, slo=1.2)
    assert get_policy("rollmux").place(job, snap).strategy is not Strategy.DIRECT_PACKING
    expected = get_policy("rollmux-expected").place(job, snap)
    assert expected.strategy is Strategy.DIRECT_PACKING


def test_host_memory_residency_blocks_packing() -> None:
    """A node without room for the job's state is never chosen."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100, mem_gb=1500.0, slo=2.0))
    job = mkjob("B", 100, 300, mem_gb=1000.0, slo=2.0)
    decision = get_policy("rollmux").place(job, snap)
    assert decision.strategy is Strategy.NEW_GROUP


def test_max_group_size_option() -> None:
    """With max_group_size=1 nothing is ever shared."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100, slo=2.0))
    job = mkjob("B", 100, 300, slo=2.0)
    assert get_policy("rollmux").place(job, snap).strategy is Strategy.DIRECT_PACKING
    solo = get_policy("rollmux", max_group_size=1).place(job, snap)
    assert solo.strategy is Strategy.NEW_GROUP


def test_tightest_fit_breaks_zero_cost_ties() -> None:
    """Between two zero-cost groups, the one left with the higher bottleneck share wins."""
    # The older group (B) would end with T_load 450 < T_cycle 550 (fill 0.82); the newer
    # one (A) with T_load = T_cycle = 400 (fill 1): the newer, tighter group wins.
    snap = alone(empty_snapshot(HW), mkjob("B", 300, 250, slo=2.0))
    snap = alone(snap, mkjob("A", 300, 100, slo=2.0))
    job = mkjob("C", 100, 200, slo=2.0)
    decision = get_policy("rollmux").place(job, snap)
    assert decision.strategy is Strategy.DIRECT_PACKING
    assert decision.group_id == snap.jobs["A"].group_id
    assert decision.meta_iteration_s == pytest.approx(400.0)


def test_order_search_variant_records_orders() -> None:
    """rollmux-ordersearch decides like rollmux when round robin suffices (orders None)."""
    snap, job_e = running_example(slo_e=1.5)
    plain = get_policy("rollmux").place(job_e, snap)
    searched = get_policy("rollmux-ordersearch").place(job_e, snap)
    assert (searched.group_id, searched.rollout_nodes, searched.train_nodes) == (
        plain.group_id,
        plain.rollout_nodes,
        plain.train_nodes,
    )
    assert searched.node_orders is None


def test_cost_weighted_variant_is_never_dearer_than_a_new_group() -> None:
    """rollmux-costweighted returns a feasible decision whose cost is at most a new group's."""
    snap, job_e = running_example(slo_e=1.5)
    decision = get_policy("rollmux-costweighted").place(job_e, snap)
    assert decision.marginal_cost_usd_per_h <= H20_NODE + H800_NODE
    apply(snap, decision).check_invariants()


def test_job_too_big_for_host_memory_is_rejected_not_raised() -> None:
    """State larger than a node's host memory yields a 'rejected' record with the reason."""
    job = mkjob("huge", 100, 100, mem_gb=5000.0)
    decision = get_policy("rollmux").place(job, empty_snapshot(HW))
    assert decision.strategy is Strategy.REJECTED
    assert "host memory" in decision.reason
    assert apply(empty_snapshot(HW), decision).jobs == {}


def test_job_with_too_few_gpus_is_rejected() -> None:
    """A 70B model cannot be served on one H20 (tensor parallelism): rejected, with reason."""
    job = RLJob(job_id="big", model_size_b=70.0, max_response_tokens=4096, rollout_gpus=1)
    for name in ("rollmux", "solo-d", "verl", "gavel-plus", "random", "greedy"):
        decision = get_policy(name).place(job, empty_snapshot(HW))
        assert decision.strategy is Strategy.REJECTED, name
        assert "tensor parallelism" in decision.reason


def test_unknown_gpu_type_is_rejected() -> None:
    """A GPU type the hardware does not know is a rejected decision naming the type."""
    job = RLJob(job_id="x", model_size_b=7.0, max_response_tokens=4096, rollout_gpu_type="TPU")
    decision = get_policy("rollmux").place(job, empty_snapshot(HW))
    assert decision.strategy is Strategy.REJECTED
    assert "TPU" in decision.reason


def test_slo_below_one_is_rejected_at_job_creation() -> None:
    """An impossible SLO never reaches a policy: RLJob raises naming slo."""
    with pytest.raises(ValueError, match="slo must be >= 1"):
        get_policy("rollmux").place(mkjob("s", 100, 100, slo=0.9), empty_snapshot(HW))


def test_bad_options_name_the_option() -> None:
    """Invalid options raise ValueError naming the option and the value."""
    with pytest.raises(ValueError, match="max_group_size"):
        get_policy("rollmux", max_group_size=0)
    with pytest.raises(ValueError, match="objective"):
        get_policy("rollmux", objective="speed")
    with pytest.raises(ValueError, match="worst_case"):
        get_policy("rollmux", worst_case="yes")


def test_already_admitted_job_is_rejected() -> None:
    """Placing a job twice yields a rejected record, not a second copy."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 100))
    decision = get_policy("rollmux").place(mkjob("A", 100, 100), snap)
    assert decision.strategy is Strategy.REJECTED


def test_new_group_meta_iteration_is_solo_time() -> None:
    """A new group's recorded meta-iteration is the job's worst-case solo iteration."""
    job = mkjob("A", 100, 50, rollout_max_s=130)
    decision = get_policy("rollmux").place(job, empty_snapshot(HW))
    assert decision.meta_iteration_s == pytest.approx(180.0)
    assert not math.isnan(decision.meta_iteration_s)


def test_hardware_prices_drive_marginal_cost() -> None:
    """Marginal cost follows the hardware's prices (a cheaper H800 lowers a new group)."""
    cheap: Hardware = load_hardware(overrides={"gpus.H800.price_usd_per_h": 1.0})
    decision = get_policy("rollmux").place(mkjob("A", 100, 100), empty_snapshot(cheap))
    assert decision.marginal_cost_usd_per_h == pytest.approx(H20_NODE + 8.0)


def test_exact_check_rejects_what_the_lower_bound_admits() -> None:
    """Crossing pinnings: max(T_load, T_cycle) = 800 s meets every SLO, round robin (975 s) not.

    Group {A on (R1; T2, T3), B on (R5; T2)}; C needs both rollout nodes and T3. The cheap
    bound admits direct packing; the exact meta-iteration rules it out, so RollMux pays for
    rollout scaling instead.
    """
    snap = alone(empty_snapshot(HW), mkjob("A", 450, 350, slo=1.1, train_gpus=16))
    group_id = snap.jobs["A"].group_id
    t_first, t_second = snap.jobs["A"].train_nodes
    snap = join(snap, mkjob("B", 450, 350, slo=1.1), group_id, (), (t_first,), new_rollout=1)
    job_c = mkjob("C", 350, 200, slo=1.5, rollout_gpus=16)
    rollout_nodes = snap.groups[group_id].rollout_nodes
    direct = join(snap, job_c, group_id, rollout_nodes, (t_second,))
    model = group_of(
        jobs=tuple(
            group_job_of(resolve(direct.jobs[j].job, HW), direct.jobs[j].rollout_nodes,
                         direct.jobs[j].train_nodes)
            for j in ("A", "B", "C")
        ),
        rollout_node_ids=rollout_nodes,
        train_node_ids=(t_first, t_second),
    )
    metrics = model.metrics(worst_case=True)
    assert max(metrics.t_load_s, metrics.t_cycle_s) == pytest.approx(800.0)
    assert metrics.meta_iteration_s == pytest.approx(975.0)
    decision = get_policy("rollmux").place(job_c, snap)
    assert decision.strategy is Strategy.ROLLOUT_SCALING
    assert decision.meta_iteration_s <= 1.1 * 800.0
