"""What the optimum returns and what it needs of each job: plans, partitions, job values.

:class:`GroupPlan` and :class:`Partition` are the results. The search takes each job as a
:class:`rollmux.model.ResolvedJob` (:func:`resolved_jobs`: phase model evaluated once);
:func:`worst_train_s`, :func:`solo_s` and :func:`budget_s` are the worst-case numbers it
derives from one. :class:`Context` holds the per-call hardware constants, and the
``check_*`` functions validate the public arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from rollmux.closedform import PoolSpec, pools_from_hardware
from rollmux.group import (
    CoExecutionGroup,
    NodeCapacity,
    group_job_of,
    node_capacity_from_hardware,
)
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob, resolve

__all__ = [
    "REL_TOL",
    "Context",
    "GroupPlan",
    "Orders",
    "Partition",
    "Space",
    "budget_s",
    "check_group_size",
    "check_max_cost",
    "check_orders",
    "check_space",
    "check_time_limit",
    "context",
    "resolved_jobs",
    "solo_cost",
    "solo_cost_usd_per_h",
    "solo_plan",
    "solo_s",
    "worst_train_s",
]

Space = Literal["full", "rollmux"]
Orders = Literal["all", "index"]

# Relative tolerance of the SLO and memory checks, the same as rollmux.group's.
REL_TOL = 1e-9


@dataclass(frozen=True)
class GroupPlan:
    """One co-execution group of a partition: its jobs, nodes, pinning, order, cost.

    Pinnings are local node indices: job ``job_ids[k]`` runs its rollout on nodes
    ``rollout_pinning[k]`` of ``range(rollout_nodes)`` and its training on
    ``train_pinning[k]`` of ``range(train_nodes)``; ``order`` is the round-robin order
    (indices into ``job_ids``). ``meta_iteration_s`` is the exact worst-case
    (max-token) meta-iteration time.
    """

    job_ids: tuple[str, ...]
    rollout_nodes: int
    train_nodes: int
    rollout_pinning: tuple[tuple[int, ...], ...]
    train_pinning: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    cost_usd_per_h: float
    meta_iteration_s: float

    def co_execution_group(self, jobs: Sequence[RLJob], hw: Hardware) -> CoExecutionGroup:
        """The :class:`CoExecutionGroup` of this plan (``jobs`` must hold its job ids)."""
        by_id = {job.job_id: job for job in jobs}
        missing = [job_id for job_id in self.job_ids if job_id not in by_id]
        if missing:
            raise ValueError(f"jobs: no job with id {missing[0]!r} (the plan's jobs)")
        first = by_id[self.job_ids[0]]
        members = tuple(
            group_job_of(resolve(by_id[job_id], hw), rollout, train)
            for job_id, rollout, train in zip(
                self.job_ids, self.rollout_pinning, self.train_pinning, strict=True
            )
        )
        return CoExecutionGroup(
            jobs=members,
            rollout_node_ids=tuple(range(self.rollout_nodes)),
            train_node_ids=tuple(range(self.train_nodes)),
            pools=pools_from_hardware(hw, first.rollout_gpu_type, first.train_gpu_type),
            node_capacity=node_capacity_from_hardware(hw),
            order=self.order,
        )


@dataclass(frozen=True)
class Partition:
    """A partition of jobs into groups with its hourly cost, solver status and wall time."""

    groups: tuple[GroupPlan, ...]
    cost_usd_per_h: float
    solver: str
    seconds: float
    n_columns: int = 0  # candidate groups handed to the solver (0: not a column method)
    # True when the partition is proven minimum-cost: every column was enumerated and
    # HiGHS reported optimality (brute force: always).
    proven_optimal: bool = True
    # Candidate groups searched in this call (the rest came from a ColumnCache).
    n_searched: int = 0
    # A proven lower bound on the least cost (None: the cost itself when proven optimal,
    # unknown otherwise); set by the certified method (docs/optimum.md, section 6).
    lower_bound_usd_per_h: float | None = None
    # "exact" (every column enumerated) or "certified" (column generation with a bound).
    method: str = "exact"

    @property
    def bound_usd_per_h(self) -> float:
        """The proven lower bound on the least cost (NaN when none is known)."""
        if self.lower_bound_usd_per_h is not None:
            return self.lower_bound_usd_per_h
        return self.cost_usd_per_h if self.proven_optimal else math.nan

    @property
    def gap(self) -> float:
        """Certified relative gap (cost - bound) / cost: 0 when proven optimal, NaN if unknown."""
        if self.cost_usd_per_h <= 0.0:
            return 0.0
        gap = (self.cost_usd_per_h - self.bound_usd_per_h) / self.cost_usd_per_h
        return gap if math.isnan(gap) or gap > 0.0 else 0.0


@dataclass(frozen=True)
class Context:
    """Per-call constants: node size, prices per node and host memory."""

    gpus_per_node: int
    host_mem_gb: float
    hw: Hardware

    @cached_property
    def node_capacity(self) -> NodeCapacity:
        """The group model's node of this hardware (built once per context)."""
        return node_capacity_from_hardware(self.hw)

    @cached_property
    def _pools(self) -> dict[tuple[str, str], PoolSpec]:
        return {}

    def pools(self, rollout_type: str, train_type: str) -> PoolSpec:
        """The group model's pools for these GPU types (built once per context and pair)."""
        key = (rollout_type, train_type)
        spec = self._pools.get(key)
        if spec is None:
            spec = self._pools[key] = pools_from_hardware(self.hw, rollout_type, train_type)
        return spec

    def node_price(self, gpu_type: str) -> float:
        """Hourly price of one node of ``gpu_type``."""
        return self.hw.price_usd_per_h(gpu_type, self.gpus_per_node)

    @property
    def mem_limit_gb(self) -> float:
        """The most resident state a node holds (host memory, with the checks' tolerance)."""
        return self.host_mem_gb * (1.0 + REL_TOL)

    def fits(self, gb: float) -> bool:
        """Whether ``gb`` of resident state fits one node's host memory."""
        return gb <= self.mem_limit_gb


def context(hw: Hardware) -> Context:
    """The :class:`Context` of ``hw``; ValueError if it is not a Hardware."""
    if not isinstance(hw, Hardware):
        raise ValueError(f"hw = {hw!r}: expected a rollmux.hardware.Hardware")
    return Context(hw.node.gpus_per_node, hw.node.host_mem_gb, hw)


def resolved_jobs(
    jobs: Sequence[RLJob], ctx: Context, memo: dict[RLJob, ResolvedJob] | None = None
) -> list[ResolvedJob]:
    """Validate the jobs (non-empty, unique ids, each fits a node) and resolve them.

    ``memo`` (a :class:`~rollmux.placement.optimum.partition.ColumnCache`'s, keyed by
    the job's value) keeps each job's resolution across calls.
    """
    if isinstance(jobs, RLJob) or not isinstance(jobs, Sequence) or not jobs:
        raise ValueError(f"jobs = {jobs!r}: expected a non-empty sequence of RLJob")
    seen: set[str] = set()
    out = []
    for i, job in enumerate(jobs):
        if not isinstance(job, RLJob):
            raise ValueError(f"jobs[{i}] = {job!r}: expected an RLJob")
        if job.job_id in seen:
            raise ValueError(f"jobs[{i}].job_id = {job.job_id!r}: repeated job id")
        seen.add(job.job_id)
        if memo is not None and job in memo:
            out.append(memo[job])
            continue
        out.append(_fitting(job, ctx))
        if memo is not None:
            memo[job] = out[-1]
    return out


def _fitting(job: RLJob, ctx: Context) -> ResolvedJob:
    """``job`` resolved on the context's hardware; ValueError when its state fits no node."""
    resolved = resolve(job, ctx.hw)
    for pool, gb in (("rollout", resolved.rollout_mem_gb), ("training", resolved.train_mem_gb)):
        if not ctx.fits(gb):
            raise ValueError(
                f"job {job.job_id!r} fits no node: its {pool} state needs {gb:g} GB of "
                f"host memory per node, a node has {ctx.host_mem_gb:g} GB"
            )
    return resolved


def worst_train_s(d: ResolvedJob) -> float:
    """Worst-case training plus sync: the effective training phase before switches."""
    return d.times.train_max_s + d.times.sync_s


def solo_s(d: ResolvedJob) -> float:
    """Worst-case solo iteration, the group model's T_solo at admission."""
    return d.times.solo_iteration_max_s


def budget_s(d: ResolvedJob) -> float:
    """The largest meta-iteration the job's SLO allows (with the checks' tolerance)."""
    return d.slo * d.times.solo_iteration_max_s * (1.0 + REL_TOL)


def solo_cost(d: ResolvedJob, ctx: Context) -> float:
    """Hourly cost of a job alone on its own whole nodes."""
    return d.rollout_nodes * ctx.node_price(d.job.rollout_gpu_type) + d.train_nodes * (
        ctx.node_price(d.job.train_gpu_type)
    )


def solo_plan(d: ResolvedJob, ctx: Context) -> GroupPlan:
    """A job alone on its own nodes: slowdown 1, so always feasible when it fits a node."""
    return GroupPlan(
        job_ids=(d.job_id,),
        rollout_nodes=d.rollout_nodes,
        train_nodes=d.train_nodes,
        rollout_pinning=(tuple(range(d.rollout_nodes)),),
        train_pinning=(tuple(range(d.train_nodes)),),
        order=(0,),
        cost_usd_per_h=solo_cost(d, ctx),
        meta_iteration_s=solo_s(d),
    )


def check_max_cost(value: float | None) -> float:
    """``max_cost_usd_per_h`` as a float (None: no bound); ValueError naming it."""
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"max_cost_usd_per_h = {value!r}: expected a number or None")
    return float(value)


def check_time_limit(value: float | None) -> float:
    """``time_limit_s`` as a float (None: no limit); ValueError naming it."""
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"time_limit_s = {value!r}: expected a positive number or None")
    return float(value)


def check_orders(value: Orders) -> bool:
    """True for ``"all"``, False for ``"index"``; ValueError otherwise."""
    if value not in ("all", "index"):
        raise ValueError(f"orders = {value!r}: expected 'all' or 'index'")
    return value == "all"


def check_space(value: Space) -> bool:
    """True for ``"full"``, False for ``"rollmux"``; ValueError otherwise."""
    if value not in ("full", "rollmux"):
        raise ValueError(f"space = {value!r}: expected 'full' or 'rollmux'")
    return value == "full"


def check_group_size(value: int) -> int:
    """``max_group_size`` as an int >= 1; ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_group_size = {value!r}: expected an integer >= 1")
    return value


def solo_cost_usd_per_h(jobs: Sequence[RLJob], hw: Hardware) -> float:
    """Hourly cost of every job alone in its own group (Solo-D provisioning, whole nodes)."""
    ctx = context(hw)
    return sum(solo_cost(d, ctx) for d in resolved_jobs(jobs, ctx))
