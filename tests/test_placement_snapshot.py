"""Cluster snapshots: immutability, apply/release, departures returning idle nodes, registry."""

from __future__ import annotations

import pytest
from test_placement_rollmux import HW, alone, join, mkjob

from rollmux.model import resolve
from rollmux.placement import (
    ClusterSnapshot,
    Strategy,
    apply,
    empty_snapshot,
    get_policy,
    policy_names,
    release,
)
from rollmux.placement.base import Placement

EXPECTED_POLICIES = {
    "rollmux",
    "solo-d",
    "verl",
    "gavel-plus",
    "random",
    "greedy",
    "optimal",
    "regroup",
    "rollmux-noprune",
    "rollmux-expected",
    "rollmux-ordersearch",
    "rollmux-costweighted",
}


def three_job_snapshot() -> ClusterSnapshot:
    """A on R1/T2 with B on a second rollout node sharing T2, and C alone."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100, mem_gb=200.0))
    snap = join(snap, mkjob("B", 300, 100, mem_gb=300.0), "G0", (), ("T2",), new_rollout=1)
    return alone(snap, mkjob("C", 100, 100))


def test_apply_returns_a_new_snapshot_and_leaves_the_input() -> None:
    """apply never mutates its input; memory and pinning are tracked per node."""
    empty = empty_snapshot(HW)
    snap = three_job_snapshot()
    assert empty.jobs == {} and empty.nodes == {}
    snap.check_invariants()
    assert snap.nodes["T2"].jobs == ("A", "B")
    assert snap.nodes["T2"].used_mem_gb == pytest.approx(500.0)
    assert snap.nodes["T2"].free_mem_gb == pytest.approx(HW.node.host_mem_gb - 500.0)
    assert snap.groups["G0"].jobs == ("A", "B")
    assert len(snap.groups) == 2


def test_snapshot_mappings_are_read_only() -> None:
    """The snapshot's mappings cannot be modified in place."""
    snap = three_job_snapshot()
    with pytest.raises(TypeError):
        snap.jobs["Z"] = snap.jobs["A"]  # type: ignore[index]


def test_release_shrinks_the_group_and_returns_idle_nodes() -> None:
    """A departure unpins the job, returns the nodes it alone used, keeps shared ones."""
    snap = three_job_snapshot()
    before = snap.cost_usd_per_h()
    after = release(snap, "B")
    after.check_invariants()
    b_rollout = snap.jobs["B"].rollout_nodes[0]
    assert b_rollout not in after.nodes
    assert after.nodes["T2"].jobs == ("A",)
    assert after.nodes["T2"].used_mem_gb == pytest.approx(200.0)
    assert after.groups["G0"].rollout_nodes == ("R1",)
    assert after.cost_usd_per_h() == pytest.approx(before - 8 * HW.gpu("H20").price_usd_per_h)
    assert after.groups["G0"].version != snap.groups["G0"].version
    assert "B" in snap.jobs  # the input is unchanged


def test_release_of_the_last_job_removes_the_group() -> None:
    """A group with no job left disappears with all its nodes."""
    snap = release(release(three_job_snapshot(), "A"), "B")
    assert "G0" not in snap.groups
    assert set(snap.nodes) == set(snap.jobs["C"].rollout_nodes + snap.jobs["C"].train_nodes)


def test_release_unknown_job_is_an_error() -> None:
    """Releasing a job that is not admitted raises ValueError naming it."""
    with pytest.raises(ValueError, match="'nope'"):
        release(empty_snapshot(HW), "nope")


def test_apply_rejects_inconsistent_decisions() -> None:
    """Unknown nodes, nodes of other groups and overfull memory are ValueErrors."""
    snap = three_job_snapshot()
    job = mkjob("D", 100, 100, mem_gb=1900.0)
    profile = resolve(job, HW)
    c_group = snap.jobs["C"].group_id
    bad_node = Placement(job, Strategy.DIRECT_PACKING, "G0", ("R99",), ("T2",), profile=profile)
    with pytest.raises(ValueError, match="R99"):
        apply(snap, bad_node)
    other_group = Placement(
        job, Strategy.DIRECT_PACKING, c_group, ("R1",), snap.jobs["C"].train_nodes,
        profile=profile,
    )
    with pytest.raises(ValueError, match="not a rollout node of group"):
        apply(snap, other_group)
    too_full = Placement(job, Strategy.DIRECT_PACKING, "G0", ("R1",), ("T2",), profile=profile)
    with pytest.raises(ValueError, match="GB free"):
        apply(snap, too_full)
    with pytest.raises(ValueError, match="decision"):
        apply(snap, "not a decision")  # type: ignore[arg-type]


def test_rejected_decision_changes_nothing() -> None:
    """Applying a rejected record returns the same snapshot."""
    snap = three_job_snapshot()
    decision = get_policy("rollmux").place(mkjob("Z", 1, 1, mem_gb=9999.0), snap)
    assert decision.strategy is Strategy.REJECTED
    assert apply(snap, decision) is snap


def test_snapshot_validates_its_fields() -> None:
    """Bad clock values and hardware raise ValueError naming the field."""
    with pytest.raises(ValueError, match="time_s"):
        ClusterSnapshot(hw=HW, time_s=-1.0)
    with pytest.raises(ValueError, match="hw"):
        ClusterSnapshot(hw="H20")  # type: ignore[arg-type]


def test_registry_lists_every_policy() -> None:
    """Every policy of the issue is registered under its name."""
    assert set(policy_names()) >= EXPECTED_POLICIES
    for name in EXPECTED_POLICIES:
        assert get_policy(name) is not None


def test_unknown_policy_lists_the_valid_names() -> None:
    """An unknown name is a ValueError naming it and listing the valid ones."""
    with pytest.raises(ValueError, match=r"unknown policy .fifo.*rollmux-noprune"):
        get_policy("fifo")


def test_unknown_option_is_a_value_error() -> None:
    """An option a policy does not take is a ValueError naming the policy."""
    with pytest.raises(ValueError, match="solo-d"):
        get_policy("solo-d", max_group_size=3)
