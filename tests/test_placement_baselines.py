"""Baseline policies (Solo-D, veRL, Gavel+, Random, Greedy, optimal, regroup) on literals."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from pooled import POOLS
from test_placement_rollmux import H20_NODE, H800_NODE, HW, alone, join, mkjob

from rollmux.closedform import verl
from rollmux.group import GroupStatus
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.placement import (
    ClusterSnapshot,
    GroupKind,
    Regrouping,
    Strategy,
    apply,
    empty_snapshot,
    get_policy,
)
from rollmux.placement.base import group_model
from rollmux.placement.greedy import GreedyPolicy
from rollmux.placement.joinable import JOINABLE_READINGS, Candidate
from rollmux.placement.regroup import migration_pause_s


def test_solo_d_gives_each_job_its_own_nodes() -> None:
    """Solo-D: a dedicated group per job, 1:1 with its GPU counts, never shared."""
    policy = get_policy("solo-d")
    snap = empty_snapshot(HW)
    for i, (r, t) in enumerate([(8, 8), (16, 8), (16, 16)]):
        job = mkjob(f"J{i}", 100, 100, rollout_gpus=r, train_gpus=t)
        decision = policy.place(job, snap)
        assert decision.strategy is Strategy.NEW_GROUP
        assert decision.group_kind is GroupKind.DEDICATED
        assert decision.marginal_cost_usd_per_h == pytest.approx(
            r / 8 * H20_NODE + t / 8 * H800_NODE
        )
        snap = apply(snap, decision)
    assert len(snap.groups) == 3
    # RollMux never joins a dedicated group.
    assert get_policy("rollmux").place(mkjob("X", 10, 10, slo=2.0), snap).new_group


def test_verl_runs_on_training_gpus_only() -> None:
    """veRL: the job's training-GPU count of H800s, no rollout node, closedform.verl time."""
    job = mkjob("V", 300, 100, train_gpus=16)
    decision = get_policy("verl").place(job, empty_snapshot(HW))
    assert decision.strategy is Strategy.COLOCATED
    assert decision.rollout_nodes == ()
    assert len(decision.train_nodes) == 2
    assert decision.marginal_cost_usd_per_h == pytest.approx(2 * H800_NODE)
    expected = verl(resolve(job, HW).phases, POOLS)
    assert decision.meta_iteration_s == pytest.approx(expected.iteration_s)
    apply(empty_snapshot(HW), decision).check_invariants()


def test_gavel_plus_shrinks_allocation_within_the_slo() -> None:
    """Gavel+ picks the cheapest allocation meeting the SLO, never dearer than the request."""
    job = RLJob(
        job_id="g", model_size_b=7.0, max_response_tokens=4096, rollout_gpus=32, train_gpus=32,
        slo=2.0,
    )
    request_cost = 4 * H20_NODE + 4 * H800_NODE
    decision = get_policy("gavel-plus").place(job, empty_snapshot(HW))
    assert decision.strategy is Strategy.NEW_GROUP
    assert decision.marginal_cost_usd_per_h < request_cost
    times = decision.profile.times  # type: ignore[union-attr]
    solo = resolve(job, HW).times.solo_iteration_max_s
    assert times.solo_iteration_max_s <= 2.0 * solo * (1 + 1e-9)


def test_gavel_plus_with_slo_one_keeps_the_request_or_better() -> None:
    """With SLO 1 no allocation may be slower than the request's worst-case iteration."""
    job = RLJob(job_id="g", model_size_b=7.0, max_response_tokens=4096, slo=1.0)
    decision = get_policy("gavel-plus").place(job, empty_snapshot(HW))
    solo = resolve(job, HW).times.solo_iteration_max_s
    assert decision.profile.times.solo_iteration_max_s <= solo * (1 + 1e-9)  # type: ignore[union-attr]
    assert decision.marginal_cost_usd_per_h <= H20_NODE + H800_NODE


def test_gavel_plus_bad_options() -> None:
    """Node counts must be positive integers; unknown GPU types are errors."""
    with pytest.raises(ValueError, match="node_counts"):
        get_policy("gavel-plus", node_counts=(0, 1))
    policy = get_policy("gavel-plus", rollout_gpu_types=("TPU",))
    with pytest.raises(ValueError, match="TPU"):
        policy.place(mkjob("A", 1, 1), empty_snapshot(HW))


def _packed_snapshot() -> tuple[object, RLJob]:
    """Two groups with room for one more small job each."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100, mem_gb=1500.0))
    snap = alone(snap, mkjob("B", 100, 300, mem_gb=100.0))
    return snap, mkjob("C", 100, 100, mem_gb=1000.0)


def test_random_is_seeded_and_memory_feasible() -> None:
    """Random: the same seed gives the same choice; never a node without the memory."""
    snap, job = _packed_snapshot()
    picks = [get_policy("random", seed=s).place(job, snap) for s in range(20)]
    again = [get_policy("random", rng=np.random.default_rng(s)).place(job, snap)
             for s in range(20)]
    assert [(p.group_id, p.rollout_nodes) for p in picks] == [
        (p.group_id, p.rollout_nodes) for p in again
    ]
    a_group = snap.jobs["A"].group_id  # type: ignore[attr-defined]
    assert all(p.group_id != a_group for p in picks)  # A's nodes lack the memory
    assert {p.strategy for p in picks} == {Strategy.DIRECT_PACKING, Strategy.NEW_GROUP}
    with pytest.raises(ValueError, match="rng"):
        get_policy("random", rng=42)


def test_random_ignores_slos() -> None:
    """Random packs a job into a group even when that breaks every SLO."""
    snap = alone(empty_snapshot(HW), mkjob("A", 1000, 1000, slo=1.0))
    job = mkjob("B", 1000, 1000, slo=1.0)
    strategies = {get_policy("random", seed=s).place(job, snap).strategy for s in range(10)}
    assert Strategy.DIRECT_PACKING in strategies


def test_greedy_picks_the_most_idle_group_and_node() -> None:
    """Greedy: highest idle share group; inside it the least loaded nodes; no SLO check."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 100))
    snap = join(snap, mkjob("B", 100, 100), "G0", ("R1",), ("T2",))  # idle share 0
    snap = alone(snap, mkjob("C", 300, 100))
    g2 = snap.jobs["C"].group_id
    snap = join(snap, mkjob("D", 100, 100), g2, (), snap.jobs["C"].train_nodes, new_rollout=1)
    job = mkjob("E", 500, 500, slo=1.0)
    for joinable in JOINABLE_READINGS:
        decision = get_policy("greedy", joinable=joinable).place(job, snap)
        assert decision.strategy is Strategy.DIRECT_PACKING
        assert decision.group_id == g2  # idle share 0.5 beats 0, though G0 is older
        assert decision.rollout_nodes == snap.jobs["D"].rollout_nodes  # load 100 < 300
        assert decision.new_nodes == ()
        apply(snap, decision).check_invariants()


def test_greedy_idle_share_values() -> None:
    """The two idle measures on literal groups: pools 1 - busy share, bottleneck 1 - load/cycle."""
    snap = alone(empty_snapshot(HW), mkjob("C", 300, 100))
    g = snap.jobs["C"].group_id
    snap = join(snap, mkjob("D", 100, 100), g, (), snap.jobs["C"].train_nodes, new_rollout=1)
    cand = Candidate(snap.groups[g], (), ())
    # T_meta = T_cycle = 400 s (C's chain); R busy 300 + 100 of 2 x 400, T busy 200 of 400.
    assert GreedyPolicy(idle="pools").idle_share(cand, snap) == pytest.approx(1 - 600 / 1200)
    # T_load = 300 (C's rollout node) against T_cycle = 400.
    assert GreedyPolicy(idle="bottleneck").idle_share(cand, snap) == pytest.approx(0.25)


def test_greedy_respects_memory() -> None:
    """Greedy never places on a node without room; with none it opens a new group."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 100, mem_gb=1500.0))
    decision = get_policy("greedy").place(mkjob("B", 100, 100, mem_gb=1000.0), snap)
    assert decision.strategy is Strategy.NEW_GROUP


def _saturated_and_idle() -> tuple[ClusterSnapshot, str, str]:
    """G0: two rollout-heavy jobs on one rollout and two training nodes (saturated, idle
    share 0.583); G1: two jobs on their own rollout nodes sharing one training node
    (under-utilised, idle share 0.5)."""
    a = mkjob("A", 400, 50, train_gpus=16)
    snap = alone(empty_snapshot(HW), a)
    g0 = snap.jobs["A"].group_id
    snap = join(snap, mkjob("B", 400, 50, train_gpus=16), g0, snap.jobs["A"].rollout_nodes,
                snap.jobs["A"].train_nodes)
    snap = alone(snap, mkjob("C", 300, 100))
    g1 = snap.jobs["C"].group_id
    snap = join(snap, mkjob("D", 100, 100), g1, (), snap.jobs["C"].train_nodes, new_rollout=1)
    return snap, g0, g1


def test_group_status_of_the_literal_groups() -> None:
    """The fixture's statuses, computed by the group model (paper Fig. 6)."""
    snap, g0, g1 = _saturated_and_idle()
    assert group_model(snap.groups[g0], snap, True).status() is GroupStatus.SATURATED
    assert group_model(snap.groups[g1], snap, True).status() is GroupStatus.UNDER_UTILISED


def test_under_utilised_reading_skips_a_saturated_group() -> None:
    """Reading S skips the saturated, idlest group; reading M joins it."""
    snap, g0, g1 = _saturated_and_idle()
    job = mkjob("E", 100, 100)
    assert get_policy("greedy", joinable="memory-only").place(job, snap).group_id == g0
    assert get_policy("greedy").place(job, snap).group_id == g1
    s_groups = {get_policy("random", seed=s).place(job, snap).group_id for s in range(40)}
    m_groups = {get_policy("random", seed=s, joinable="memory-only").place(job, snap).group_id
                for s in range(40)}
    assert g0 not in s_groups and g1 in s_groups
    assert {g0, g1} <= m_groups


def test_status_uses_worst_case_times_unless_told_otherwise() -> None:
    """A group under-utilised at expected times but saturated at worst case is skipped by
    default and joined with ``worst_case=False``."""
    snap = alone(empty_snapshot(HW), mkjob("A", 100, 50, train_max_s=150))
    g = snap.jobs["A"].group_id
    snap = join(snap, mkjob("B", 100, 50, train_max_s=150), g, (), snap.jobs["A"].train_nodes,
                new_rollout=1)
    model = group_model(snap.groups[g], snap, worst_case=True)
    assert model.status() is GroupStatus.SATURATED  # T_load 300 > T_cycle 250
    assert group_model(snap.groups[g], snap, worst_case=False).status() is (
        GroupStatus.UNDER_UTILISED)  # T_load 100 < T_cycle 150
    job = mkjob("E", 100, 100)
    assert get_policy("greedy").place(job, snap).new_group
    assert get_policy("greedy", worst_case=False).place(job, snap).group_id == g
    for seed in range(20):
        assert get_policy("random", seed=seed).place(job, snap).new_group
    joined = {get_policy("random", seed=s, worst_case=False).place(job, snap).group_id
              for s in range(20)}
    assert g in joined


def test_random_choice_set_option_and_fallback() -> None:
    """'option': every joinable group and a new one are drawn; 'fallback': never a new group
    while some group can take the job, always one when none can."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100))
    snap = alone(snap, mkjob("B", 100, 300))
    groups = set(snap.groups)
    job = mkjob("C", 100, 100)
    option = {get_policy("random", seed=s).place(job, snap) for s in range(60)}
    assert {d.group_id for d in option if not d.new_group} == groups
    assert any(d.new_group for d in option)
    fallback = [get_policy("random", seed=s, new_group="fallback").place(job, snap)
                for s in range(60)]
    assert {d.group_id for d in fallback} == groups
    big = mkjob("D", 100, 100, mem_gb=1000.0)
    full = alone(alone(empty_snapshot(HW), mkjob("A", 1, 1, mem_gb=1500.0)),
                 mkjob("B", 1, 1, mem_gb=1500.0))
    assert get_policy("random", new_group="fallback").place(big, full).new_group


def test_baselines_place_only_on_the_groups_own_nodes() -> None:
    """A group with fewer nodes with room than the job needs is not joined: no node is
    provisioned into an existing group (the job goes "within this group" or elsewhere)."""
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100))  # one rollout, one training node
    wide = mkjob("W", 100, 100, rollout_gpus=16)  # needs two rollout nodes
    assert get_policy("greedy").place(wide, snap).new_group
    for seed in range(20):
        decision = get_policy("random", seed=seed, new_group="fallback").place(wide, snap)
        assert decision.new_group
    # Two rollout nodes, one of them without room: still not enough for W.
    snap = alone(empty_snapshot(HW), mkjob("A", 300, 100, rollout_gpus=16))
    g = snap.jobs["A"].group_id
    crowded = snap.jobs["A"].rollout_nodes[0]
    snap = join(snap, mkjob("F", 10, 10, mem_gb=1900.0), g, (crowded,),
                snap.jobs["A"].train_nodes)
    for joinable in JOINABLE_READINGS:
        assert get_policy("greedy", joinable=joinable).place(wide, snap).new_group


def test_baseline_options_are_validated() -> None:
    """A bad reading option is a ValueError naming the option."""
    for name, options, option in (
        ("greedy", {"joinable": "all"}, "joinable"),
        ("greedy", {"idle": "mean"}, "idle"),
        ("greedy", {"worst_case": "yes"}, "worst_case"),
        ("random", {"joinable": 1}, "joinable"),
        ("random", {"new_group": "never"}, "new_group"),
        ("random", {"worst_case": None}, "worst_case"),
    ):
        with pytest.raises(ValueError, match=option):
            get_policy(name, **options)


def test_migration_pause_interpolates_and_clamps() -> None:
    """197 s at 7B, 419 s at 32B, linear between, clamped outside; bad sizes raise."""
    assert migration_pause_s(7) == pytest.approx(197.0)
    assert migration_pause_s(32) == pytest.approx(419.0)
    assert migration_pause_s(19.5) == pytest.approx(308.0)
    assert migration_pause_s(3) == pytest.approx(197.0)
    assert migration_pause_s(70) == pytest.approx(419.0)
    with pytest.raises(ValueError, match="model_size_b"):
        migration_pause_s(0)


def test_optimal_regroups_for_free() -> None:
    """optimal: a Regrouping of all active jobs plus the arrival, no pauses, no dearer."""
    policy = get_policy("optimal")
    snap = empty_snapshot(HW)
    jobs = [mkjob("A", 300, 100, slo=2.0), mkjob("B", 100, 300, slo=2.0),
            mkjob("C", 300, 100, slo=2.0)]
    for job in jobs:
        decision = policy.place(job, snap)
        assert isinstance(decision, Regrouping)
        assert all(v == 0.0 for v in decision.pause_s.values())
        snap = apply(snap, decision)
        snap.check_invariants()
    rollmux = empty_snapshot(HW)
    for job in jobs:
        rollmux = apply(rollmux, get_policy("rollmux").place(job, rollmux))
    assert snap.cost_usd_per_h() <= rollmux.cost_usd_per_h() + 1e-9
    assert set(snap.jobs) == {"A", "B", "C"}


def test_regroup_is_static_until_due_then_pays_pauses() -> None:
    """regroup places like RollMux; when due it re-solves and moved jobs pay pauses."""
    policy = get_policy("regroup", regroup_interval_s=3600.0)
    snap = empty_snapshot(HW)
    # Arrival order makes RollMux pair A with B; the optimum pairs differently.
    for job in [mkjob("A", 300, 100, slo=1.4), mkjob("B", 200, 200, slo=1.4),
                mkjob("C", 100, 300, slo=1.4), mkjob("D", 300, 100, slo=1.4)]:
        decision = policy.place(job, snap)
        assert decision == get_policy("rollmux").place(job, snap)
        snap = apply(snap, decision)
    assert policy.regroup(snap) is None  # not due at t = 0
    due = replace(snap, time_s=3600.0)
    regrouping = policy.regroup(due)
    assert regrouping is not None
    after = apply(due, regrouping)
    after.check_invariants()
    assert after.last_regroup_s == 3600.0
    assert after.cost_usd_per_h() <= snap.cost_usd_per_h() + 1e-9
    for job_id in regrouping.moved_jobs:
        assert regrouping.pause_s[job_id] == pytest.approx(197.0)
    assert regrouping.marginal_cost_usd_per_h == pytest.approx(
        after.cost_usd_per_h() - snap.cost_usd_per_h()
    )
    with pytest.raises(ValueError, match="regroup_interval_s"):
        get_policy("regroup", regroup_interval_s=0)


def test_regroup_moves_nothing_when_no_partition_is_cheaper() -> None:
    """A re-solve that finds no cheaper partition keeps every group and pauses no job."""
    policy = get_policy("regroup", regroup_interval_s=3600.0)
    snap = empty_snapshot(HW)
    # Two complementary jobs: RollMux already packs them optimally into one group.
    for job in [mkjob("A", 300, 100, slo=2.0), mkjob("B", 100, 300, slo=2.0)]:
        snap = apply(snap, policy.place(job, snap))
    due = replace(snap, time_s=7200.0)
    regrouping = policy.regroup(due)
    assert regrouping is not None
    assert regrouping.moved_jobs == ()
    assert regrouping.pause_s == {}
    assert set(regrouping.kept_groups) == set(snap.groups)
    after = apply(due, regrouping)
    assert after.groups == due.groups
    assert after.last_regroup_s == 7200.0
    assert policy.regroup(replace(after, time_s=7300.0)) is None  # next one waits an hour


def test_policies_declare_their_options() -> None:
    """Every registered policy states its options; get_policy refuses others by name."""
    from rollmux.placement import policy_names, policy_options, policy_shares_nodes

    for name in policy_names():
        accepted = policy_options(name)
        policy = get_policy(name, **({"seed": 3} if "seed" in accepted else {}))
        assert policy.name == name
        if policy_shares_nodes(name):
            assert "max_group_size" in accepted, name
    assert "seed" in policy_options("random")
    assert "seed" not in policy_options("rollmux")
    assert not policy_shares_nodes("solo-d") and not policy_shares_nodes("verl")
    assert "prune_saturated" not in policy_options("rollmux-noprune")
    with pytest.raises(ValueError, match=r"does not take option.*seed"):
        get_policy("rollmux", seed=1)
    with pytest.raises(ValueError, match="unknown policy"):
        policy_options("nope")


def test_declared_options_match_every_constructor() -> None:
    """Each registered policy class declares exactly its constructor's keyword options
    (classes whose constructor forwards ``**options``, the variants, declare a subset)."""
    import inspect

    from rollmux.placement import policy_class, policy_names, policy_options

    for name in policy_names():
        factory = policy_class(name)
        if not isinstance(factory, type):
            continue
        params = list(inspect.signature(factory).parameters.values())
        if any(p.kind is p.VAR_KEYWORD for p in params):
            continue
        named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        assert policy_options(name) == frozenset(named), name
