"""Decision records of placement: pools, group kinds, placements and regroupings.

What a policy returns (:class:`Placement`, :class:`Regrouping`) and the enumerations they
use, apart from the snapshot that applies them (rollmux.placement.snapshot) and the
policy interface (rollmux.placement.base), so that both import these and not each other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from rollmux.jobs import RLJob
from rollmux.model.resolved import ResolvedJob

__all__ = [
    "Decision",
    "GroupKind",
    "NewNode",
    "Placement",
    "Pool",
    "Regrouping",
    "Strategy",
    "rejected",
]


class Pool(StrEnum):
    """The two GPU pools of a disaggregated cluster."""

    ROLLOUT = "rollout"
    TRAIN = "train"


class GroupKind(StrEnum):
    """How a group uses its nodes (policies only multiplex ``shared`` groups)."""

    SHARED = "shared"  # a RollMux co-execution group (phase-level multiplexing)
    DEDICATED = "dedicated"  # one job on its own rollout and training nodes (Solo-D, Gavel+)
    COLOCATED = "colocated"  # one job, every phase on its own training nodes (veRL)
    TIMESLICE = "timeslice"  # jobs co-located on one slice of nodes, time-sliced (timeslice)
    ASYNC = "async"  # one job on its own nodes, rollout overlapping training (async-solo-d)


class Strategy(StrEnum):
    """How a job was admitted (the paper's admission mix uses the first three)."""

    DIRECT_PACKING = "direct-packing"  # existing rollout and training nodes, zero cost
    ROLLOUT_SCALING = "rollout-scaling"  # the group's training nodes plus new rollout nodes
    NEW_GROUP = "new-group"  # an isolated group of new nodes holding only the job
    COLOCATED = "colocated"  # veRL: every phase on the job's own training GPUs
    REGROUP = "regroup"  # the job was placed by re-partitioning every active job
    REJECTED = "rejected"  # the job fits no node (reason recorded)


@dataclass(frozen=True, slots=True)
class NewNode:
    """A node a decision provisions: its id, pool and GPU type."""

    node_id: str
    pool: Pool
    gpu_type: str


@dataclass(frozen=True)
class Placement:
    """One job onto concrete nodes of one group (existing or new), with its marginal cost.

    ``rollout_nodes``/``train_nodes`` are the node ids the job is pinned to (existing
    ones or ids among ``new_nodes``); ``marginal_cost_usd_per_h`` the hourly price of
    ``new_nodes``; ``meta_iteration_s`` the resulting group's meta-iteration under the
    policy's admission estimates (``nan`` when the policy does not evaluate it);
    ``staleness`` how many iterations the job's rollout may run ahead of its training
    (0: synchronous, on-policy; docs/designs.md).
    """

    job: RLJob
    strategy: Strategy
    group_id: str = ""
    rollout_nodes: tuple[str, ...] = ()
    train_nodes: tuple[str, ...] = ()
    new_nodes: tuple[NewNode, ...] = ()
    marginal_cost_usd_per_h: float = 0.0
    new_group: bool = False
    group_kind: GroupKind = GroupKind.SHARED
    profile: ResolvedJob | None = None
    meta_iteration_s: float = math.nan
    node_orders: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    reason: str = ""
    staleness: int = 0

    @property
    def job_id(self) -> str:
        """The placed job's id."""
        return self.job.job_id

    @property
    def admitted(self) -> bool:
        """False for a rejected job."""
        return self.strategy is not Strategy.REJECTED


@dataclass(frozen=True)
class Regrouping:
    """A re-partition of the active jobs plus the arrival (policies ``optimal``, ``regroup``).

    Groups in ``kept_groups`` stay as they are; every other group is dissolved and its
    jobs, with the arrival, are re-admitted by ``placements`` (new groups on new nodes,
    in order). ``moved_jobs`` are the previously admitted jobs whose set of group-mates
    changed; each pays ``pause_s[job_id]`` of migration and restart (0 for the idealised
    optimum). ``marginal_cost_usd_per_h`` is the change of the cluster's hourly cost.
    """

    job: RLJob | None
    time_s: float
    kept_groups: tuple[str, ...]
    placements: tuple[Placement, ...]
    moved_jobs: tuple[str, ...]
    pause_s: Mapping[str, float]
    marginal_cost_usd_per_h: float
    cost_usd_per_h: float
    solver: str = ""
    solve_seconds: float = 0.0
    strategy: Strategy = Strategy.REGROUP
    reason: str = ""

    @property
    def job_id(self) -> str:
        """The arriving job's id (empty for a periodic regroup without an arrival)."""
        return "" if self.job is None else self.job.job_id

    @property
    def admitted(self) -> bool:
        """A regrouping always admits its arrival."""
        return True


Decision = Placement | Regrouping


def rejected(job: RLJob, reason: str) -> Placement:
    """A decision record for a job that cannot be placed (not an exception)."""
    return Placement(job=job, strategy=Strategy.REJECTED, reason=reason)
