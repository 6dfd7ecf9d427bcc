"""RollMux with repetition-aware intra-group schedules (``rollmux-repeat``).

Theorem 1 of the paper is false once jobs may repeat (docs/theorem1.md): a short job can
run several iterations inside another job's long phase. This policy keeps Algorithm 1
(:class:`rollmux.placement.rollmux.RollMuxPolicy`, by composition, unchanged) and
re-plans the schedule of the group it admits a job into:

1. *Base decision*: RollMux's placement (least marginal cost, every member's SLO met by
   round-robin under the exact max-plus period).
2. *Rescue*: when that placement costs money (rollout scaling or a new group), try the
   cheaper placements into existing shared groups where round-robin misses an SLO but a
   schedule with repetitions meets them all: direct packing (no cost) and rollout
   scaling onto new rollout nodes. The cheapest feasible cost wins, then the highest
   cost-weighted utilisation (ties: older group, lower node ids). At most
   ``rescue_limit`` exact searches per decision, after a necessary condition (below).
3. *Plan* (:func:`plan_group`): over multiplicities ``m_j`` in ``1..max_multiplicity``
   and per-node orders (:func:`rollmux.schedule.repeat.repeat_schedule`), the schedule of
   highest cost-weighted utilisation (busy node-dollars over paid node-dollars, node
   prices of the group's GPU types, busy = rollout and training work without switches or
   sync) such that every member's average iteration time ``P / m_j`` stays within
   ``SLO_j * T_solo_j`` (worst-case phases, exact period). Round-robin is kept
   (``node_orders = None``) unless a schedule is strictly better.

The plan is expressed as the group's ``node_orders``: per node, a cyclic sequence of job
ids in which job j appears ``m_j`` times (its k-th appearance is its k-th rollout, or
training, of the meta-iteration).

Necessary condition of the rescue: any schedule has ``P >= max(T_load, T_cycle)`` (each
job runs at least once) and job k needs ``P <= m_k SLO_k T_solo_k <= M SLO_k T_solo_k``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rollmux.closedform import JobPhases
from rollmux.group import CoExecutionGroup, GroupJob, NodeCapacity
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.placement.base import (
    NewNode,
    Placement,
    PlacementPolicy,
    Strategy,
    feasible_nodes,
    group_members,
    group_pools,
    node_price_usd_per_h,
)
from rollmux.placement.rollmux import RollMuxPolicy
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind, GroupState, Pool
from rollmux.schedule.repeat import PLANNER_SEARCH, repeat_schedule

__all__ = ["RollMuxRepeatPolicy", "RollMuxRepeatStrictPolicy", "SchedulePlan", "plan_group"]

REL_TOL = 1e-9
NodeOrders = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class SchedulePlan:
    """A group's intra-group schedule: multiplicities, node orders, period, utilisation.

    ``node_orders`` is ``None`` for round-robin (every job once, the group's order);
    ``cost_weighted_utilisation`` and ``round_robin_utilisation`` are busy over paid
    node-dollars per period (round-robin's is 0 when it misses an SLO).
    """

    multiplicity: Mapping[str, int]
    node_orders: NodeOrders | None
    period_s: float
    cost_weighted_utilisation: float
    round_robin_period_s: float
    round_robin_utilisation: float

    def iteration_s(self, job_id: str) -> float:
        """Average iteration time of ``job_id``: the period over its multiplicity."""
        return self.period_s / self.multiplicity[job_id]


def plan_group(
    group: CoExecutionGroup,
    rollout_price_usd_per_h: float,
    train_price_usd_per_h: float,
    *,
    max_multiplicity: int = PLANNER_SEARCH["max_multiplicity"],
    exact_limit: int = PLANNER_SEARCH["exact_limit"],
    local_evaluations: int = PLANNER_SEARCH["local_evaluations"],
    max_vectors: int | None = PLANNER_SEARCH["max_vectors"],
    per_iteration: bool = False,
) -> SchedulePlan | None:
    """The highest cost-weighted-utilisation schedule meeting every member's SLO.

    ``group``'s jobs carry the phases to plan with (worst-case for admission) and their
    SLOs; node ids become the keys of ``node_orders``. ``None`` when no schedule with
    multiplicities ``1..max_multiplicity`` meets every SLO. ``per_iteration``: a schedule
    with repetitions must keep every steady-state iteration within ``SLO_j x T_solo_j``
    (:func:`rollmux.schedule.repeat.steady_iterations_s`), not only the average. Pure:
    same group, same plan.
    """
    rollout, train = group.effective_phases_s()
    jobs = group.jobs
    ids = [j.job_id or str(i) for i, j in enumerate(jobs)]
    if len(set(ids)) != len(ids):
        raise ValueError(f"group jobs need distinct job ids, got {ids}")
    result = repeat_schedule(
        rollout,
        train,
        [j.rollout_nodes for j in jobs],
        [j.train_nodes for j in jobs],
        max_multiplicity=max_multiplicity,
        objective="cost_weighted",
        weights={"R": rollout_price_usd_per_h, "T": train_price_usd_per_h},
        max_iteration_s=[j.slo * j.phases.solo_iteration_s for j in jobs],
        rollout_work_s=[j.phases.rollout_s for j in jobs],
        train_work_s=[j.phases.train_s for j in jobs],
        exact_limit=exact_limit,
        local_evaluations=local_evaluations,
        max_vectors=max_vectors,
        per_iteration=per_iteration,
    )
    if result is None:
        return None
    rr_ok = all(
        result.round_robin_period_s <= j.slo * j.phases.solo_iteration_s * (1.0 + REL_TOL)
        for j in jobs
    )
    round_robin = all(m == 1 for m in result.multiplicity) and all(
        list(seq) == sorted(seq) for seq in result.node_orders.values()
    )
    orders = None
    if not round_robin:
        orders = tuple(
            (str(node_id), tuple(ids[i] for i in seq))
            for (_, node_id), seq in sorted(result.node_orders.items(), key=lambda kv: str(kv[0]))
        )
    return SchedulePlan(
        multiplicity=dict(zip(ids, result.multiplicity, strict=True)),
        node_orders=orders,
        period_s=result.period_s,
        cost_weighted_utilisation=result.utilisation,
        round_robin_period_s=result.round_robin_period_s,
        round_robin_utilisation=result.round_robin_utilisation if rr_ok else 0.0,
    )


class RollMuxRepeatPolicy(PlacementPolicy):
    """Algorithm 1, then the admitted group's schedule re-planned with repetitions."""

    name = "rollmux-repeat"
    options = frozenset({"max_multiplicity", "rescue", "rescue_limit", "exact_limit",
                         "local_evaluations", "max_vectors", "per_iteration"}
                        ) | RollMuxPolicy.options
    #: Default of ``per_iteration`` (:func:`plan_group`).
    per_iteration_default = False

    def __init__(
        self,
        max_multiplicity: int = PLANNER_SEARCH["max_multiplicity"],
        rescue: bool = True,
        rescue_limit: int = 16,
        exact_limit: int = PLANNER_SEARCH["exact_limit"],
        local_evaluations: int = PLANNER_SEARCH["local_evaluations"],
        max_vectors: int | None = PLANNER_SEARCH["max_vectors"],
        per_iteration: bool | None = None,
        **rollmux_options: Any,
    ) -> None:
        """Validate the options; ``rollmux_options`` go to the RollMux base policy.

        ``per_iteration`` (None: the class's default): plans with repetitions keep every
        member's every steady-state iteration within its SLO (:func:`plan_group`).
        """
        for name, value in (("max_multiplicity", max_multiplicity),
                            ("rescue_limit", rescue_limit), ("exact_limit", exact_limit),
                            ("local_evaluations", local_evaluations)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(rescue, bool):
            raise ValueError(f"rescue must be a bool, got {rescue!r}")
        if per_iteration is None:
            per_iteration = self.per_iteration_default
        if not isinstance(per_iteration, bool):
            raise ValueError(f"per_iteration must be a bool, got {per_iteration!r}")
        self.per_iteration = per_iteration
        if max_vectors is not None and (
            isinstance(max_vectors, bool) or not isinstance(max_vectors, int) or max_vectors < 1
        ):
            raise ValueError(f"max_vectors must be None or an integer >= 1, got {max_vectors!r}")
        self.base = RollMuxPolicy(**rollmux_options)
        self.max_multiplicity = max_multiplicity
        self.rescue = rescue
        self.rescue_limit = rescue_limit
        self.exact_limit = exact_limit
        self.local_evaluations = local_evaluations
        self.max_vectors = max_vectors

    # ------------------------------------------------------------------- planning

    def _plan(self, group: CoExecutionGroup, snapshot: ClusterSnapshot,
              rollout_type: str, train_type: str) -> SchedulePlan | None:
        """:func:`plan_group` with this policy's search settings and node prices."""
        hw = snapshot.hw
        return plan_group(
            group,
            node_price_usd_per_h(hw, rollout_type),
            node_price_usd_per_h(hw, train_type),
            max_multiplicity=self.max_multiplicity,
            exact_limit=self.exact_limit,
            local_evaluations=self.local_evaluations,
            max_vectors=self.max_vectors,
            per_iteration=self.per_iteration,
        )

    def _group_model(self, group: GroupState, snapshot: ClusterSnapshot,
                     extra: GroupJob | None = None, new_rollout: Sequence[str] = (),
                     members: Sequence[GroupJob] | None = None) -> CoExecutionGroup:
        """The group's members (admission phases) as a group model, plus ``extra`` last.

        ``members``: the group's members already built (one decision reuses them).
        """
        if members is None:
            members = group_members(group, snapshot, self.base.worst_case)
        hw = snapshot.hw
        return CoExecutionGroup(
            jobs=(*members, extra) if extra is not None else tuple(members),
            rollout_node_ids=(*group.rollout_nodes, *new_rollout),
            train_node_ids=group.train_nodes,
            pools=group_pools(group, snapshot),
            node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
        )

    def replan(self, group_id: str, snapshot: ClusterSnapshot) -> SchedulePlan | None:
        """The best schedule of an existing group as it stands (e.g. after a departure)."""
        group = snapshot.groups[group_id]
        nodes = snapshot.nodes
        return self._plan(self._group_model(group, snapshot), snapshot,
                          nodes[group.rollout_nodes[0]].gpu_type,
                          nodes[group.train_nodes[0]].gpu_type)

    # ------------------------------------------------------------------- decision

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """RollMux's decision (or a rescue by repetition), with the group's plan."""
        decision = self.base.place(job, snapshot)
        if not decision.admitted:
            return decision
        if decision.marginal_cost_usd_per_h > 0.0 and self.rescue:
            rescued = self._rescue(job, decision, snapshot)
            if rescued is not None:
                return rescued
        if decision.new_group:
            return decision  # one job alone: repeating it changes nothing
        group = snapshot.groups[decision.group_id]
        assert decision.profile is not None
        phases = decision.profile.admission_phases(self.base.worst_case)
        new_ids = [n.node_id for n in decision.new_nodes]
        model = self._group_model(group, snapshot, self._member(job, decision.profile, phases,
                                                                decision.rollout_nodes,
                                                                decision.train_nodes), new_ids)
        nodes = snapshot.nodes
        plan = self._plan(model, snapshot, nodes[group.rollout_nodes[0]].gpu_type,
                          nodes[group.train_nodes[0]].gpu_type)
        if plan is None or plan.node_orders is None:
            return decision  # round-robin is best (it meets every SLO: RollMux checked)
        return replace(decision, meta_iteration_s=plan.period_s, node_orders=plan.node_orders)

    @staticmethod
    def _member(job: RLJob, profile: ResolvedJob, phases: JobPhases, rollout: Sequence[str],
                train: Sequence[str]) -> GroupJob:
        """The arriving job as a group member on the given nodes."""
        return GroupJob(
            phases=phases,
            rollout_nodes=tuple(rollout),
            train_nodes=tuple(train),
            slo=job.slo,
            rollout_mem_gb_per_node=profile.rollout_mem_gb,
            train_mem_gb_per_node=profile.train_mem_gb,
            job_id=job.job_id,
        )

    def _rescue(self, job: RLJob, decision: Placement,
                snapshot: ClusterSnapshot) -> Placement | None:
        """A cheaper placement that only repetition makes feasible (module docstring, step 2).

        Candidates, in existing shared groups of the job's GPU types that are not full
        (nor saturated, with saturation pruning): direct packing on every combination of
        memory-feasible nodes (no cost), and rollout scaling onto all-new rollout nodes
        plus existing training nodes; only those cheaper than ``decision``. They are
        planned in the order (cost, group serial, node ids); the cheapest feasible cost
        wins, and within it the highest cost-weighted utilisation.
        """
        profile = decision.profile
        assert profile is not None
        hw = snapshot.hw
        phases = profile.admission_phases(self.base.worst_case)
        bound_job = self.max_multiplicity * job.slo * phases.solo_iteration_s
        n_r, n_t = profile.rollout_nodes, profile.train_nodes
        new_ids = snapshot.new_ids("R", n_r)
        scaling_cost = n_r * node_price_usd_per_h(hw, job.rollout_gpu_type)
        candidates = []
        for group in snapshot.groups.values():
            if group.kind is not GroupKind.SHARED or len(group.jobs) >= self.base.max_group_size:
                continue
            nodes = snapshot.nodes
            if (nodes[group.rollout_nodes[0]].gpu_type != job.rollout_gpu_type
                    or nodes[group.train_nodes[0]].gpu_type != job.train_gpu_type):
                continue
            roll_ok, train_ok = feasible_nodes(group, snapshot, job, profile)
            if len(train_ok) < n_t:
                continue
            members = group_members(group, snapshot, self.base.worst_case)
            current = self._group_model(group, snapshot, members=members)
            if self.base.prune_saturated and current.t_load_s() >= current.t_cycle_s() * (
                1.0 - REL_TOL
            ):
                continue
            limit = min([bound_job] + [self.max_multiplicity * m.slo * m.phases.solo_iteration_s
                                       for m in current.jobs])
            options: list[tuple[float, tuple[str, ...], tuple[str, ...]]] = []
            if len(roll_ok) >= n_r:
                options += [(0.0, r, ()) for r in itertools.combinations(sorted(roll_ok), n_r)]
            if scaling_cost < decision.marginal_cost_usd_per_h:
                options.append((scaling_cost, (), new_ids))
            for cost, r_existing, r_new in options:
                if cost >= decision.marginal_cost_usd_per_h:
                    continue
                for t_combo in itertools.combinations(sorted(train_ok), n_t):
                    member = self._member(job, profile, phases, (*r_existing, *r_new), t_combo)
                    model = self._group_model(group, snapshot, member, r_new, members)
                    if max(model.t_load_s(), model.t_cycle_s()) > limit * (1.0 + REL_TOL):
                        continue  # no schedule can meet every SLO (docstring)
                    candidates.append((cost, group.serial, r_existing, len(r_new), t_combo,
                                       group, model))
        candidates.sort(key=lambda c: c[:5])
        best: tuple[tuple[object, ...], Placement] | None = None
        for cost, serial, r_existing, k_new, t_combo, group, model in candidates[
            : self.rescue_limit
        ]:
            if best is not None and cost > best[1].marginal_cost_usd_per_h:
                break  # the cheapest feasible cost is found
            nodes = snapshot.nodes
            plan = self._plan(model, snapshot, nodes[group.rollout_nodes[0]].gpu_type,
                              nodes[group.train_nodes[0]].gpu_type)
            if plan is None:
                continue
            key = (cost, -plan.cost_weighted_utilisation, serial, r_existing, t_combo)
            if best is None or key < best[0]:
                scaled = new_ids[:k_new]
                best = (key, Placement(
                    job=job,
                    strategy=Strategy.ROLLOUT_SCALING if k_new else Strategy.DIRECT_PACKING,
                    group_id=group.group_id,
                    rollout_nodes=(*r_existing, *scaled),
                    train_nodes=t_combo,
                    new_nodes=tuple(NewNode(n, Pool.ROLLOUT, job.rollout_gpu_type)
                                    for n in scaled),
                    marginal_cost_usd_per_h=cost,
                    profile=profile,
                    meta_iteration_s=plan.period_s,
                    node_orders=plan.node_orders,
                ))
        return best[1] if best is not None else None



class RollMuxRepeatStrictPolicy(RollMuxRepeatPolicy):
    """rollmux-repeat keeping a per-iteration guarantee (issue 21, item 5).

    As :class:`RollMuxRepeatPolicy`, but a plan with repetitions (re-planned group or
    rescue) is accepted only when every member's every iteration in the plan's steady
    state (worst-case phases) stays within ``SLO_j x T_solo_j``, not only the average
    ``P / m_j``: a user whose SLO is per iteration keeps it wherever RollMux would have.
    Where no such plan exists, RollMux's own decision stands.
    """

    name = "rollmux-repeat-strict"
    per_iteration_default = True
