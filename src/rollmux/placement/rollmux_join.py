"""``rollmux-join``: Algorithm 1 whose SLO guarantee covers the join (docs/designs.md).

docs/findings.md section 2: every SLO miss of ``rollmux`` in the sweeps is a job admitted
into a running group whose steady period meets its bound, but whose wait for its first
round-robin slot takes it over; Algorithm 1 checks only the steady state. This variant
admits a job into an existing group only when, besides Algorithm 1's checks,

1. *the join is bounded*: the newcomer's whole run, ``N`` iterations at the new period
   ``P`` plus a first-slot wait of at most ``join_wait_periods`` periods, fits its SLO
   budget, ``(N + w) P <= N SLO T_solo`` (a job joining a running group waits at most
   for the current cycle of its nodes and the next one, docs/designs.md), and
2. *the expected reading holds too* (``expected_check``): the same two conditions with
   expected phase times, against every member's expected solo time, so that a group
   the worst case admits is not one whose members run slower than their SLO against
   their realised solo time (docs/metrics.md, the realised reading).

Every other decision is Algorithm 1's (:class:`rollmux.placement.rollmux.RollMuxPolicy`);
a job refused everywhere gets a new group, which meets any SLO.
"""

from __future__ import annotations

import math
from typing import Any

from rollmux.closedform import JobPhases
from rollmux.group import CoExecutionGroup, GroupJob, NodeCapacity
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.placement.base import (
    Placement,
    group_members,
    group_pools,
)
from rollmux.placement.rollmux import REL_TOL, RollMuxPolicy, _Candidate
from rollmux.placement.snapshot import ClusterSnapshot

__all__ = ["JoinAwareRollMux", "join_fits"]


def join_fits(iterations: int, slo: float, solo_s: float, period_s: float,
              wait_periods: float) -> bool:
    """Whether ``iterations`` at ``period_s`` after a wait of ``wait_periods`` periods fit.

    The budget is the job's SLO times its solo time per iteration, over its whole run.
    """
    budget = iterations * slo * solo_s * (1.0 + REL_TOL)
    return (iterations + wait_periods) * period_s <= budget


class JoinAwareRollMux(RollMuxPolicy):
    """Algorithm 1 that also bounds a newcomer's first iteration, wait included."""

    name = "rollmux-join"
    options = RollMuxPolicy.options | {"join_wait_periods", "expected_check"}

    def __init__(self, join_wait_periods: float = 2.0, expected_check: bool = True,
                 **options: Any) -> None:
        """RollMux's options plus the join bound (periods of wait) and the expected check."""
        super().__init__(**options)
        if isinstance(join_wait_periods, bool) or not isinstance(join_wait_periods,
                                                                 int | float) or not (
                math.isfinite(join_wait_periods) and join_wait_periods >= 0):
            raise ValueError(f"join_wait_periods must be a number >= 0, got "
                             f"{join_wait_periods!r}")
        if not isinstance(expected_check, bool):
            raise ValueError(f"expected_check must be a bool, got {expected_check!r}")
        self.join_wait_periods = float(join_wait_periods)
        self.expected_check = expected_check

    def _exact(self, job: RLJob, profile: ResolvedJob, phases: JobPhases,
               snapshot: ClusterSnapshot, cand: _Candidate) -> Placement | None:
        """Algorithm 1's exact check, then the join bound (and the expected reading)."""
        placement = super()._exact(job, profile, phases, snapshot, cand)
        if placement is None:
            return None
        if not join_fits(job.iterations, job.slo, phases.solo_iteration_s,
                         placement.meta_iteration_s, self.join_wait_periods):
            return None
        if not self.expected_check:
            return placement
        hw = snapshot.hw
        group = cand.group
        expected = profile.admission_phases(worst_case=False)
        members = group_members(group, snapshot, worst_case=False)
        new_job = GroupJob(
            phases=expected,
            rollout_nodes=placement.rollout_nodes,
            train_nodes=placement.train_nodes,
            slo=job.slo,
            rollout_mem_gb_per_node=profile.rollout_mem_gb,
            train_mem_gb_per_node=profile.train_mem_gb,
            job_id=job.job_id,
        )
        new_ids = tuple(n.node_id for n in placement.new_nodes)
        model = CoExecutionGroup(
            jobs=(*members, new_job),
            rollout_node_ids=(*group.rollout_nodes, *new_ids),
            train_node_ids=group.train_nodes,
            pools=group_pools(group, snapshot),
            node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
        )
        period = model.meta_iteration_s()
        if any(period > m.slo * m.phases.solo_iteration_s * (1.0 + REL_TOL)
               for m in model.jobs):
            return None
        if not join_fits(job.iterations, job.slo, expected.solo_iteration_s, period,
                         self.join_wait_periods):
            return None
        return placement
