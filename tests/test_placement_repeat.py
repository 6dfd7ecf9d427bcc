"""rollmux-repeat: RollMux's placement with repetition-aware group schedules.

Decisions are pure functions of a snapshot: literals for what the policy does, Hypothesis
for its invariants (every member's SLO met under the exact period of the planned
schedule; never below round-robin's cost-weighted utilisation; deterministic; the
snapshot untouched).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pooled import group_of
from strategies import profile_examples
from test_placement_rollmux import HW, alone, join, mkjob

from rollmux.closedform import JobPhases
from rollmux.group import GroupJob, NodeCapacity
from rollmux.placement import Strategy, apply, empty_snapshot, get_policy, policy_names
from rollmux.placement.base import group_members, node_price_usd_per_h
from rollmux.placement.rollmux_repeat import RollMuxRepeatPolicy, SchedulePlan, plan_group
from rollmux.placement.snapshot import ClusterSnapshot
from rollmux.schedule.graph import build_schedule
from rollmux.schedule.maxplus import steady_state_period
from rollmux.schedule.search import cost_weighted_utilisation

REL = 1e-9


def long_and_medium() -> tuple[ClusterSnapshot, str]:
    """G0: L (rollout 1000 s) on R1/T2 and M (100 + 100 s, SLO 6) on its own rollout node."""
    snap = empty_snapshot(HW)
    snap = alone(snap, mkjob("L", 1000, 100, slo=2.0))
    group_id = snap.jobs["L"].group_id
    snap = join(snap, mkjob("M", 100, 100, slo=6.0), group_id, (),
                snap.jobs["L"].train_nodes, new_rollout=1)
    return snap, group_id


def schedule_of(snapshot: ClusterSnapshot, group_id: str) -> tuple[float, dict[str, int],
                                                                    float, float]:
    """Exact period, multiplicities and cost-weighted utilisation (plan, round-robin) of a group.

    Rebuilt from the group's node_orders with the worst-case phases and switch costs of
    the group model, independently of the policy's search.
    """
    group = snapshot.groups[group_id]
    members = group_members(group, snapshot, worst_case=True)
    model = group_of(jobs=members, rollout_node_ids=group.rollout_nodes,
                             train_node_ids=group.train_nodes,
                             node_capacity=NodeCapacity(HW.node.gpus_per_node,
                                                        HW.node.host_mem_gb))
    rollout, train = model.effective_phases_s()
    index = {m.job_id: i for i, m in enumerate(members)}
    r_pins = [m.rollout_nodes for m in members]
    t_pins = [m.train_nodes for m in members]
    rollout_ids = set(group.rollout_nodes)
    if group.node_orders is None:
        orders = {("R" if n in rollout_ids else "T", n): [i for i, m in enumerate(members)
                                                         if n in (*m.rollout_nodes,
                                                                  *m.train_nodes)]
                  for n in (*group.rollout_nodes, *group.train_nodes)}
    else:
        orders = {("R" if n in rollout_ids else "T", n): [index[j] for j in seq]
                  for n, seq in group.node_orders}
    schedule = build_schedule(rollout, train, r_pins, t_pins, orders)
    period = steady_state_period(schedule)
    mult = {m.job_id: schedule.multiplicity()[i] for i, m in enumerate(members)}
    nodes = snapshot.nodes
    weights = {"R": node_price_usd_per_h(HW, nodes[group.rollout_nodes[0]].gpu_type),
               "T": node_price_usd_per_h(HW, nodes[group.train_nodes[0]].gpu_type)}
    rr_orders = {k: sorted(set(v)) for k, v in orders.items()}
    rr = build_schedule(rollout, train, r_pins, t_pins, rr_orders)
    return (period, mult, cost_weighted_utilisation(schedule, period, weights),
            cost_weighted_utilisation(rr, steady_state_period(rr), weights))


# --------------------------------------------------------------------------- literals


def test_registered_with_options() -> None:
    """The policy is registered; bad options raise naming the option; RollMux's pass through."""
    assert "rollmux-repeat" in policy_names()
    policy = get_policy("rollmux-repeat", max_group_size=3)
    assert isinstance(policy, RollMuxRepeatPolicy) and policy.base.max_group_size == 3
    with pytest.raises(ValueError, match="max_multiplicity"):
        get_policy("rollmux-repeat", max_multiplicity=0)
    with pytest.raises(ValueError, match="rescue"):
        get_policy("rollmux-repeat", rescue="yes")
    with pytest.raises(ValueError, match=r"does not take option.*bogus"):
        get_policy("rollmux-repeat", bogus=1)


def test_rescue_packs_a_short_job_that_round_robin_cannot_hold() -> None:
    """S (100 + 100 s, SLO 2) beside L: RollMux opens a new group, rollmux-repeat packs it.

    Round-robin runs every job once per 1100 s, 5.5x S's solo time. Sharing M's rollout
    node, M and S alternate three times inside L's rollout: S iterates every 366.7 s.
    """
    snap, group_id = long_and_medium()
    job = mkjob("S", 100, 100, slo=2.0)
    base = get_policy("rollmux").place(job, snap)
    assert base.strategy is Strategy.NEW_GROUP
    decision = get_policy("rollmux-repeat").place(job, snap)
    assert decision.strategy is Strategy.DIRECT_PACKING
    assert decision.group_id == group_id and decision.marginal_cost_usd_per_h == 0.0
    assert decision.rollout_nodes == snap.jobs["M"].rollout_nodes
    assert decision.node_orders is not None
    after = apply(snap, decision)
    after.check_invariants()
    period, mult, util, _ = schedule_of(after, group_id)
    assert period == pytest.approx(1100.0, rel=REL)
    assert mult == {"L": 1, "M": 3, "S": 3}
    assert decision.meta_iteration_s == pytest.approx(period, rel=REL)
    assert period / mult["S"] <= 2.0 * 200.0
    assert util > 0


def test_apply_refuses_orders_that_deadlock_or_unbalance_a_job() -> None:
    """Orders that cannot run are refused when the decision is applied, naming the group.

    M's second rollout (R4: M thrice, then S thrice) waits for M's first training, which
    T2 runs after S's three: S's first training waits for S's first rollout, after M's
    third: a cycle of waits with no phase free to start (a simulator would deadlock).
    """
    snap, group_id = long_and_medium()
    decision = get_policy("rollmux-repeat").place(mkjob("S", 100, 100, slo=2.0), snap)
    assert decision.node_orders is not None
    apply(snap, decision).check_invariants()
    deadlock = (("R1", ("L",)), ("R4", ("M", "M", "M", "S", "S", "S")),
                ("T2", ("S", "S", "S", "M", "M", "M", "L")))
    with pytest.raises(ValueError, match=rf"node_orders of group '{group_id}' deadlock"):
        apply(snap, replace(decision, node_orders=deadlock))
    unbalanced = (("R1", ("L",)), ("R4", ("M", "S", "M", "S", "M", "S")),
                  ("T2", ("M", "S", "L", "M", "S", "M")))
    with pytest.raises(ValueError, match=r"job S appears .* equally often"):
        apply(snap, replace(decision, node_orders=unbalanced))
    with pytest.raises(ValueError, match=r"no order for node\(s\) \['R1'\]"):
        apply(snap, replace(decision, node_orders=unbalanced[1:]))
    with pytest.raises(ValueError, match=r"\['X'\] are not members"):
        apply(snap, replace(decision, node_orders=(*unbalanced[:2], ("T2", ("X",)))))


def test_round_robin_kept_when_it_is_best() -> None:
    """Two equal jobs (Theorem C's setting): the same decision as RollMux, round-robin."""
    snap = empty_snapshot(HW)
    snap = alone(snap, mkjob("A", 100, 100))
    job = mkjob("B", 100, 100)
    ours = get_policy("rollmux-repeat").place(job, snap)
    theirs = get_policy("rollmux").place(job, snap)
    assert ours == theirs
    assert ours.node_orders is None


def test_plan_group_is_pure_and_never_below_round_robin() -> None:
    """plan_group on a literal group: same plan twice; repeat beats round-robin here."""
    phases_long = JobPhases.of(rollout_s=1000.0, train_s=100.0)
    phases_short = JobPhases.of(rollout_s=100.0, train_s=100.0)
    group = group_of(
        jobs=(GroupJob(phases_long, ("r0",), ("t0",), slo=2.0, job_id="L"),
              GroupJob(phases_short, ("r1",), ("t0",), slo=6.0, job_id="M")),
        rollout_node_ids=("r0", "r1"),
        train_node_ids=("t0",),
    )
    price_r, price_t = node_price_usd_per_h(HW, "H20"), node_price_usd_per_h(HW, "H800")
    plan = plan_group(group, price_r, price_t)
    assert plan == plan_group(group, price_r, price_t)
    assert isinstance(plan, SchedulePlan)
    assert plan.cost_weighted_utilisation > plan.round_robin_utilisation > 0
    assert plan.multiplicity == {"L": 1, "M": 3}
    assert plan.iteration_s("M") <= 6.0 * 200.0
    # infeasible SLOs: no plan
    tight = group_of(
        jobs=(GroupJob(phases_long, ("r0",), ("t0",), slo=1.0, job_id="L"),
              GroupJob(phases_short, ("r0",), ("t0",), slo=1.0, job_id="M")),
        rollout_node_ids=("r0",),
        train_node_ids=("t0",),
    )
    assert plan_group(tight, price_r, price_t) is None


# --------------------------------------------------------------------------- invariants


@st.composite
def arrivals(draw: st.DrawFn) -> list:
    """3-7 jobs with phase times 50-1000 s, SLOs 1-4 and small host memory."""
    n = draw(st.integers(3, 7))
    jobs = []
    for i in range(n):
        rollout = draw(st.integers(50, 1000))
        train = draw(st.integers(50, 600))
        slo = draw(st.sampled_from([1.0, 1.2, 1.5, 2.0, 3.0, 4.0]))
        jobs.append(mkjob(f"J{i}", rollout, train, slo=slo))
    return jobs


@profile_examples(0.25)
@given(arrivals())
def test_every_decision_meets_every_slo_and_beats_round_robin(jobs: list) -> None:
    """Replaying arrivals: each admitted group's exact schedule meets every member's SLO,
    its cost-weighted utilisation is never below round-robin's when round-robin meets
    them too, and the decision is a pure function of the snapshot."""
    policy = get_policy("rollmux-repeat")
    snap = empty_snapshot(HW)
    for job in jobs:
        before = snap
        decision = policy.place(job, snap)
        assert decision == policy.place(job, snap)  # pure: same snapshot, same decision
        assert snap == before
        snap = apply(snap, decision)
        snap.check_invariants()
        group = snap.groups[decision.group_id]
        period, mult, util, rr_util = schedule_of(snap, group.group_id)
        members = group_members(group, snap, worst_case=True)
        for member in members:
            limit = member.slo * member.phases.solo_iteration_s
            assert period / mult[member.job_id] <= limit * (1 + REL)
        rr_period = steady_state_period_of_round_robin(snap, group.group_id)
        rr_ok = all(rr_period <= m.slo * m.phases.solo_iteration_s * (1 + REL) for m in members)
        if rr_ok:
            assert util >= rr_util * (1 - REL)
        if not math.isnan(decision.meta_iteration_s):
            assert decision.meta_iteration_s == pytest.approx(period, rel=REL)


def steady_state_period_of_round_robin(snapshot: ClusterSnapshot, group_id: str) -> float:
    """The group's exact round-robin period under worst-case phases (its join order)."""
    group = snapshot.groups[group_id]
    members = group_members(group, snapshot, worst_case=True)
    return group_of(jobs=members, rollout_node_ids=group.rollout_nodes,
                            train_node_ids=group.train_nodes,
                            node_capacity=NodeCapacity(HW.node.gpus_per_node,
                                                       HW.node.host_mem_gb)).meta_iteration_s()


def test_strict_plans_keep_every_iteration_within_its_cap() -> None:
    """Per-iteration planning: the plain planner's best schedule runs job 2's iterations
    at 33 s against a 22.05 s cap (its average meets it); the strict one keeps all three
    jobs' every steady-state iteration within cap, at a lower utilisation."""
    from rollmux.schedule.repeat import repeat_schedule, steady_iterations_s

    rollout, train = (14.0, 15.0, 1.0), (3.0, 10.0, 8.0)
    pins, t_pins = [(1,), (1,), (1,)], [(0,), (0,), (0,)]
    slo = (1.95, 2.15, 2.45)
    caps = [s * (r + t) for s, r, t in zip(slo, rollout, train, strict=True)]
    kwargs = {"max_multiplicity": 3, "objective": "cost_weighted", "max_iteration_s": caps}
    plain = repeat_schedule(rollout, train, pins, t_pins, **kwargs)
    strict = repeat_schedule(rollout, train, pins, t_pins, per_iteration=True, **kwargs)
    assert plain is not None and strict is not None
    assert all(p <= m * c * (1 + 1e-9) for p, m, c in
               zip([plain.period_s] * 3, plain.multiplicity, caps, strict=True))
    assert any(x > c * (1 + 1e-9) for x, c in
               zip(steady_iterations_s(plain.schedule), caps, strict=True))
    assert all(x <= c * (1 + 1e-9) for x, c in
               zip(steady_iterations_s(strict.schedule), caps, strict=True))
    assert strict.utilisation < plain.utilisation


def test_strict_policy_is_registered_with_its_option() -> None:
    """rollmux-repeat-strict: registered, per_iteration on by default, validated."""
    strict = get_policy("rollmux-repeat-strict")
    assert strict.per_iteration is True  # type: ignore[attr-defined]
    assert get_policy("rollmux-repeat").per_iteration is False  # type: ignore[attr-defined]
    assert get_policy("rollmux-repeat", per_iteration=True).per_iteration  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="per_iteration"):
        get_policy("rollmux-repeat-strict", per_iteration="yes")
