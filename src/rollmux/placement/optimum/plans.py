"""What the optimum returns and what it needs of each job: plans, partitions, job data.

:class:`GroupPlan` and :class:`Partition` are the results; :class:`JobData` is what the
search needs of one job (phase model evaluated once), :class:`Context` the per-call
hardware constants, and the ``check_*`` functions validate the public arguments.
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
    GroupJob,
    NodeCapacity,
    group_job_of,
    node_capacity_from_hardware,
)
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.phasetimes import PhaseTimes

__all__ = [
    "REL_TOL",
    "Context",
    "GroupPlan",
    "JobData",
    "Orders",
    "Partition",
    "Space",
    "check_group_size",
    "check_max_cost",
    "check_orders",
    "check_space",
    "check_time_limit",
    "context",
    "job_data",
    "solo_cost",
    "solo_cost_usd_per_h",
    "solo_plan",
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
class JobData:
    """What the search needs of one job, computed once (phase_times costs milliseconds)."""

    job: RLJob
    times: PhaseTimes
    rollout_type: str
    train_type: str
    n_rollout_nodes: int
    n_train_nodes: int
    rollout_s: float  # worst case
    train_s: float  # worst case + sync (the effective training phase before switches)
    warm_s: float
    solo_s: float  # worst-case solo iteration, the group model's T_solo
    slo: float
    budget_s: float  # largest meta-iteration the SLO allows
    rollout_mem_gb: float
    train_mem_gb: float
    # The job in the group model at its worst-case durations, pinned to node 0 of each
    # pool (a plan's check re-pins a copy).
    group_job: GroupJob


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


def job_data(
    jobs: Sequence[RLJob], ctx: Context, memo: dict[RLJob, JobData] | None = None
) -> list[JobData]:
    """Validate the jobs (non-empty, unique ids, each fits a node) and precompute their data.

    ``memo`` (a :class:`~rollmux.placement.optimum.partition.ColumnCache`'s, keyed by
    the job's value) keeps each job's data across calls.
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
        out.append(_one_job_data(job, ctx))
        if memo is not None:
            memo[job] = out[-1]
    return out


def _one_job_data(job: RLJob, ctx: Context) -> JobData:
    """The :class:`JobData` of one job; ValueError when its state fits no node."""
    resolved = resolve(job, ctx.hw)
    times = resolved.times
    mem_r, mem_t = resolved.rollout_mem_gb, resolved.train_mem_gb
    for pool, gb in (("rollout", mem_r), ("training", mem_t)):
        if not ctx.fits(gb):
            raise ValueError(
                f"job {job.job_id!r} fits no node: its {pool} state needs {gb:g} GB of "
                f"host memory per node, a node has {ctx.host_mem_gb:g} GB"
            )
    solo = times.rollout_max_s + times.train_max_s + times.sync_s
    return JobData(
        job=job,
        times=times,
        rollout_type=job.rollout_gpu_type,
        train_type=job.train_gpu_type,
        n_rollout_nodes=resolved.rollout_nodes,
        n_train_nodes=resolved.train_nodes,
        rollout_s=times.rollout_max_s,
        train_s=times.train_max_s + times.sync_s,
        warm_s=times.warm_switch_s,
        solo_s=solo,
        slo=job.slo,
        budget_s=job.slo * solo * (1.0 + REL_TOL),
        rollout_mem_gb=mem_r,
        train_mem_gb=mem_t,
        group_job=group_job_of(resolved, 0, 0).worst_case(),
    )


def solo_cost(d: JobData, ctx: Context) -> float:
    """Hourly cost of a job alone on its own whole nodes."""
    return d.n_rollout_nodes * ctx.node_price(d.rollout_type) + d.n_train_nodes * ctx.node_price(
        d.train_type
    )


def solo_plan(d: JobData, ctx: Context) -> GroupPlan:
    """A job alone on its own nodes: slowdown 1, so always feasible when it fits a node."""
    return GroupPlan(
        job_ids=(d.job.job_id,),
        rollout_nodes=d.n_rollout_nodes,
        train_nodes=d.n_train_nodes,
        rollout_pinning=(tuple(range(d.n_rollout_nodes)),),
        train_pinning=(tuple(range(d.n_train_nodes)),),
        order=(0,),
        cost_usd_per_h=solo_cost(d, ctx),
        meta_iteration_s=d.solo_s,
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
    return sum(solo_cost(d, ctx) for d in job_data(jobs, ctx))
