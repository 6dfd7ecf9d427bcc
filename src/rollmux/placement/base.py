"""The placement interface: decisions, job profiles, the policy base class and helpers.

A policy is a pure decision over a snapshot: ``policy.place(job, snapshot)`` returns a
:class:`Placement` (one job onto concrete nodes) or a :class:`Regrouping` (a new partition
of all active jobs plus the arrival); it reads no clock and does no I/O. The registry of
policies by name is :mod:`rollmux.placement.registry`.

Each policy class declares what it accepts as class attributes, so callers (the replay
driver, the CLI, the workflow) ask the class instead of trying a call: ``options``, the
keyword options of its constructor (``seed`` when it draws random numbers,
``max_group_size`` when it takes a group-size limit, ``regroup_interval_s`` when it
regroups periodically), and ``shares_nodes``, False when every group holds one job (a
group-size limit can never bind). The registry's ``policy_options`` and
``policy_shares_nodes`` read them by policy name.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar

from rollmux.closedform import JobPhases, PoolSpec, pools_from_hardware
from rollmux.group import CoExecutionGroup, GroupJob, NodeCapacity
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model.resolved import ResolvedJob, resolve
from rollmux.placement.decisions import (
    Decision,
    GroupKind,
    NewNode,
    Placement,
    Pool,
    Regrouping,
    Strategy,
    rejected,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupState, PlacedJob

__all__ = [
    "Decision",
    "NewNode",
    "Placement",
    "PlacementPolicy",
    "Regrouping",
    "Strategy",
    "admissible_profile",
    "check_max_group_size",
    "feasible_nodes",
    "group_member",
    "group_members",
    "group_model",
    "group_pools",
    "new_group_placement",
    "node_price_usd_per_h",
    "profile_or_reason",
    "rejected",
]


# --------------------------------------------------------------------------- job profiles


def profile_or_reason(job: RLJob, hw: Hardware) -> ResolvedJob | str:
    """The job resolved on ``hw``, or why it fits no node (phase model error, host memory)."""
    if not isinstance(job, RLJob):
        raise ValueError(f"job must be an RLJob, got {job!r}")
    try:
        profile = resolve(job, hw)
    except ValueError as exc:
        return f"job {job.job_id!r} cannot run on its GPUs: {exc}"
    limit = hw.node.host_mem_gb
    for pool, mem in (("rollout", profile.rollout_mem_gb), ("train", profile.train_mem_gb)):
        if mem > limit:
            return (
                f"job {job.job_id!r} needs {mem:g} GB of host memory per {pool} node, more "
                f"than a node holds ({limit:g} GB)"
            )
    return profile


# --------------------------------------------------------------------------- policies


class PlacementPolicy(ABC):
    """A placement policy: a pure decision ``place(job, snapshot) -> Decision``.

    ``options``: the keyword options the constructor accepts (None: not declared, read
    from the constructor's signature); ``shares_nodes``: False when every group holds
    exactly one job.
    """

    name: str = ""
    options: ClassVar[frozenset[str] | None] = None
    shares_nodes: ClassVar[bool] = True

    @abstractmethod
    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Decision:
        """Decide where ``job`` goes given ``snapshot`` (no clock, no I/O, no mutation)."""

    def regroup(self, snapshot: ClusterSnapshot) -> Regrouping | None:
        """A periodic re-partition due at ``snapshot.time_s`` (None: this policy never does)."""
        return None


# --------------------------------------------------------------------------- helpers


def node_price_usd_per_h(hw: Hardware, gpu_type: str) -> float:
    """Hourly price of one whole node of ``gpu_type``."""
    return hw.price_usd_per_h(gpu_type, hw.node.gpus_per_node)


def new_group_placement(
    job: RLJob,
    profile: ResolvedJob,
    snapshot: ClusterSnapshot,
    *,
    strategy: Strategy = Strategy.NEW_GROUP,
    kind: GroupKind = GroupKind.SHARED,
    rollout_gpu_type: str | None = None,
    train_gpu_type: str | None = None,
    rollout_nodes: int | None = None,
    train_nodes: int | None = None,
    meta_iteration_s: float = math.nan,
    id_offset: int = 0,
) -> Placement:
    """The job alone in a new group on new nodes (defaults: its own GPU types and counts).

    ``id_offset`` skips serials already reserved by earlier placements of one decision.
    """
    hw = snapshot.hw
    r_type = job.rollout_gpu_type if rollout_gpu_type is None else rollout_gpu_type
    t_type = job.train_gpu_type if train_gpu_type is None else train_gpu_type
    n_r = profile.rollout_nodes if rollout_nodes is None else rollout_nodes
    n_t = profile.train_nodes if train_nodes is None else train_nodes
    (group_id,) = snapshot.new_ids("G", 1, id_offset)
    r_ids = snapshot.new_ids("R", n_r, id_offset + 1)
    t_ids = snapshot.new_ids("T", n_t, id_offset + 1 + n_r)
    new_nodes = tuple(NewNode(n, Pool.ROLLOUT, r_type) for n in r_ids) + tuple(
        NewNode(n, Pool.TRAIN, t_type) for n in t_ids
    )
    cost = n_r * node_price_usd_per_h(hw, r_type) + n_t * node_price_usd_per_h(hw, t_type)
    return Placement(
        job=job,
        strategy=strategy,
        group_id=group_id,
        rollout_nodes=r_ids,
        train_nodes=t_ids,
        new_nodes=new_nodes,
        marginal_cost_usd_per_h=cost,
        new_group=True,
        group_kind=kind,
        profile=profile,
        meta_iteration_s=meta_iteration_s,
    )


def feasible_nodes(
    group: GroupState, snapshot: ClusterSnapshot, job: RLJob, profile: ResolvedJob
) -> tuple[list[str], list[str]]:
    """The group's rollout and training nodes of the job's GPU types with room for its state."""
    nodes = snapshot.nodes
    roll_ok = [
        n for n in group.rollout_nodes
        if nodes[n].gpu_type == job.rollout_gpu_type and nodes[n].fits(profile.rollout_mem_gb)
    ]
    train_ok = [
        n for n in group.train_nodes
        if nodes[n].gpu_type == job.train_gpu_type and nodes[n].fits(profile.train_mem_gb)
    ]
    return roll_ok, train_ok


def group_member(placed: PlacedJob, phases: JobPhases) -> GroupJob:
    """An admitted job as a group-model member with ``phases`` (its admission phases)."""
    return GroupJob(
        phases=phases,
        rollout_nodes=placed.rollout_nodes,
        train_nodes=placed.train_nodes,
        slo=placed.job.slo,
        rollout_mem_gb_per_node=placed.rollout_mem_gb,
        train_mem_gb_per_node=placed.train_mem_gb,
        job_id=placed.job.job_id,
    )


def group_members(
    group: GroupState, snapshot: ClusterSnapshot, worst_case: bool
) -> tuple[GroupJob, ...]:
    """The group's jobs as group-model members (worst-case or expected phases), in order."""
    placed = [snapshot.jobs[j] for j in group.jobs]
    return tuple(
        group_member(p, p.resolved.admission_phases(worst_case)) for p in placed
    )


def group_pools(group: GroupState, snapshot: ClusterSnapshot) -> PoolSpec:
    """The pools of ``group``: its nodes' GPU types as the snapshot's hardware prices them."""
    nodes = snapshot.nodes
    return pools_from_hardware(snapshot.hw, nodes[group.rollout_nodes[0]].gpu_type,
                               nodes[group.train_nodes[0]].gpu_type)


def group_model(group: GroupState, snapshot: ClusterSnapshot, worst_case: bool
                ) -> CoExecutionGroup:
    """The group as a group model: its members (worst-case or expected phases) on its nodes."""
    hw = snapshot.hw
    return CoExecutionGroup(
        jobs=group_members(group, snapshot, worst_case),
        rollout_node_ids=group.rollout_nodes,
        train_node_ids=group.train_nodes,
        pools=group_pools(group, snapshot),
        node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
    )


def admissible_profile(job: RLJob, snapshot: ClusterSnapshot) -> ResolvedJob | Placement:
    """The job's profile, or a rejected decision if it fits no node or is already admitted.

    The common first step of every policy's ``place``.
    """
    profile = profile_or_reason(job, snapshot.hw)
    if isinstance(profile, str):
        return rejected(job, profile)
    if job.job_id in snapshot.jobs:
        return rejected(job, f"job {job.job_id!r} is already admitted")
    return profile


def check_max_group_size(value: object) -> int:
    """``value`` as a group-size limit >= 1, else ValueError naming max_group_size."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_group_size must be an integer >= 1, got {value!r}")
    return value
