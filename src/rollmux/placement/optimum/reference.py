"""A naive reference optimum for a handful of jobs, sharing no code with the search.

It enumerates, for every set partition of the jobs, every node count of each block,
every pinning of every job to nodes and every round-robin order (all permutations, no
rotation symmetry), and scores each candidate with the group model alone:
:class:`rollmux.group.CoExecutionGroup` (memory residency at construction, worst-case
SLOs and cost from ``metrics(worst_case=True)``). None of the search's lemmas or
pruning rules (docs/optimum.md, P1-P8) is used, so a bug in them cannot hide here; the
tests compare :func:`~rollmux.placement.optimum.optimal_partition` and
:func:`~rollmux.placement.optimum.min_cost_group` with it on random small instances.

The only shortcuts are two facts about the model itself: a node no job uses only adds
cost (so pinnings leave no node empty), and relabelling a pool's nodes changes nothing
(so each pool's pinning is visited once per multiset of per-node job sets). Exponential:
meant for up to :data:`REFERENCE_MAX_JOBS` jobs of one or two nodes per pool.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rollmux.closedform import PoolSpec, pools_from_hardware
from rollmux.group import (
    CoExecutionGroup,
    NodeCapacity,
    group_job_of,
    node_capacity_from_hardware,
)
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve

__all__ = [
    "REFERENCE_MAX_JOBS",
    "ReferenceGroup",
    "ReferencePartition",
    "reference_group",
    "reference_partition",
]

# Largest job count the reference accepts (the enumeration grows super-exponentially).
REFERENCE_MAX_JOBS = 4

Pinning = tuple[tuple[int, ...], ...]  # per job: its node indices in one pool


@dataclass(frozen=True)
class ReferenceGroup:
    """The cheapest plan the reference found for one block of jobs."""

    job_ids: tuple[str, ...]
    rollout_nodes: int
    train_nodes: int
    rollout_pinning: Pinning
    train_pinning: Pinning
    order: tuple[int, ...]
    cost_usd_per_h: float
    meta_iteration_s: float


@dataclass(frozen=True)
class ReferencePartition:
    """The reference's minimum-cost partition of the jobs into groups."""

    groups: tuple[ReferenceGroup, ...]
    cost_usd_per_h: float


def _check_jobs(jobs: Sequence[RLJob]) -> None:
    """Raise ValueError unless ``jobs`` is 1..REFERENCE_MAX_JOBS RLJobs with distinct ids."""
    if isinstance(jobs, RLJob) or not isinstance(jobs, Sequence) or not jobs:
        raise ValueError(f"jobs = {jobs!r}: expected a non-empty sequence of RLJob")
    if len(jobs) > REFERENCE_MAX_JOBS:
        raise ValueError(
            f"jobs: {len(jobs)} jobs; the naive reference takes at most {REFERENCE_MAX_JOBS}"
        )
    for i, job in enumerate(jobs):
        if not isinstance(job, RLJob):
            raise ValueError(f"jobs[{i}] = {job!r}: expected an RLJob")
    ids = [job.job_id for job in jobs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"jobs: repeated job id in {ids!r}")


def _pool_pinnings(node_counts: Sequence[int], n_nodes: int) -> Iterator[Pinning]:
    """Every way to give job k ``node_counts[k]`` distinct nodes of ``n_nodes``, none left empty.

    One pinning per relabelling class: the class is the sorted list of per-node job sets.
    """
    seen: set[tuple[tuple[int, ...], ...]] = set()
    choices = [itertools.combinations(range(n_nodes), count) for count in node_counts]
    for pinning in itertools.product(*(list(c) for c in choices)):
        node_jobs = tuple(
            sorted(
                tuple(k for k, nodes in enumerate(pinning) if node in nodes)
                for node in range(n_nodes)
            )
        )
        if () in node_jobs or node_jobs in seen:
            continue
        seen.add(node_jobs)
        yield pinning


def _is_connected(rollout: Pinning, train: Pinning) -> bool:
    """Whether the jobs form one component when jobs sharing a node are adjacent."""
    n = len(rollout)
    component = {0}
    grew = True
    while grew:
        grew = False
        for k in range(n):
            if k in component:
                continue
            for j in component:
                if set(rollout[k]) & set(rollout[j]) or set(train[k]) & set(train[j]):
                    component.add(k)
                    grew = True
                    break
    return len(component) == n


def reference_group(
    jobs: Sequence[RLJob], hw: Hardware, *, connected_only: bool = False
) -> ReferenceGroup | None:
    """The cheapest feasible plan running exactly ``jobs`` as one group, or None.

    Every rollout and training node count, every pinning and every order are scored by
    the group model; ``connected_only`` keeps only plans whose jobs are linked through
    shared nodes (what :func:`~rollmux.placement.optimum.min_cost_group` searches).
    """
    _check_jobs(jobs)
    first = jobs[0]
    if any(
        job.rollout_gpu_type != first.rollout_gpu_type or job.train_gpu_type != first.train_gpu_type
        for job in jobs
    ):
        return None  # one group has one GPU type per pool
    gpus_per_node = hw.node.gpus_per_node
    need_r = [math.ceil(job.rollout_gpus / gpus_per_node) for job in jobs]
    need_t = [math.ceil(job.train_gpus / gpus_per_node) for job in jobs]
    pools = pools_from_hardware(hw, first.rollout_gpu_type, first.train_gpu_type)
    capacity = node_capacity_from_hardware(hw)
    count_pairs = sorted(
        (
            hw.price_usd_per_h(first.rollout_gpu_type, r * gpus_per_node)
            + hw.price_usd_per_h(first.train_gpu_type, t * gpus_per_node),
            r,
            t,
        )
        for r in range(max(need_r), sum(need_r) + 1)
        for t in range(max(need_t), sum(need_t) + 1)
    )
    best: ReferenceGroup | None = None
    for cost, n_r, n_t in count_pairs:
        if best is not None and cost > best.cost_usd_per_h:
            break  # every later pair costs more than a plan already found
        for rollout in _pool_pinnings(need_r, n_r):
            for train in _pool_pinnings(need_t, n_t):
                if connected_only and not _is_connected(rollout, train):
                    continue
                plan = _best_order(jobs, hw, rollout, train, n_r, n_t, pools, capacity)
                if plan is not None and (best is None or plan.cost_usd_per_h < best.cost_usd_per_h):
                    best = plan
    return best


def _best_order(
    jobs: Sequence[RLJob],
    hw: Hardware,
    rollout: Pinning,
    train: Pinning,
    n_r: int,
    n_t: int,
    pools: PoolSpec,
    capacity: NodeCapacity,
) -> ReferenceGroup | None:
    """The feasible order of this pinning with the shortest meta-iteration, or None."""
    members = tuple(
        group_job_of(resolve(job, hw), r, t)
        for job, r, t in zip(jobs, rollout, train, strict=True)
    )
    best: ReferenceGroup | None = None
    for order in itertools.permutations(range(len(jobs))):
        try:
            group = CoExecutionGroup(
                jobs=members,
                rollout_node_ids=tuple(range(n_r)),
                train_node_ids=tuple(range(n_t)),
                pools=pools,
                node_capacity=capacity,
                order=order,
            )
        except ValueError:
            return None  # some node's resident state exceeds its host memory
        metrics = group.metrics(worst_case=True)
        if not metrics.all_slo_ok:
            continue
        if best is None or metrics.meta_iteration_s < best.meta_iteration_s:
            best = ReferenceGroup(
                job_ids=tuple(job.job_id for job in jobs),
                rollout_nodes=n_r,
                train_nodes=n_t,
                rollout_pinning=rollout,
                train_pinning=train,
                order=order,
                cost_usd_per_h=metrics.cost_usd_per_h,
                meta_iteration_s=metrics.meta_iteration_s,
            )
    return best


def _set_partitions(items: list[int]) -> Iterator[list[list[int]]]:
    """Every set partition of ``items``: the first item's block is each subset of the rest."""
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for size in range(len(rest) + 1):
        for others in itertools.combinations(rest, size):
            remaining = [i for i in rest if i not in others]
            for tail in _set_partitions(remaining):
                yield [[head, *others], *tail]


def reference_partition(
    jobs: Sequence[RLJob], hw: Hardware, max_group_size: int = 5
) -> ReferencePartition:
    """The minimum-cost partition of ``jobs`` into feasible groups, by exhaustive enumeration.

    Every set partition with blocks of at most ``max_group_size`` jobs; each block costs
    its :func:`reference_group` (any plan, connected or not). A job alone on its own
    nodes is always a candidate, so a partition always exists when each job fits a node.
    """
    _check_jobs(jobs)
    if not isinstance(max_group_size, int) or isinstance(max_group_size, bool) or (
        max_group_size < 1
    ):
        raise ValueError(f"max_group_size = {max_group_size!r}: expected an integer >= 1")
    block_plans: dict[tuple[int, ...], ReferenceGroup | None] = {}
    best: tuple[float, tuple[ReferenceGroup, ...]] | None = None
    for blocks in _set_partitions(list(range(len(jobs)))):
        if any(len(block) > max_group_size for block in blocks):
            continue
        plans = []
        for block in blocks:
            key = tuple(block)
            if key not in block_plans:
                block_plans[key] = reference_group([jobs[i] for i in block], hw)
            plans.append(block_plans[key])
        if any(plan is None for plan in plans):
            continue
        groups = tuple(plan for plan in plans if plan is not None)
        cost = sum(plan.cost_usd_per_h for plan in groups)
        if best is None or cost < best[0]:
            best = (cost, groups)
    if best is None:
        raise ValueError("jobs: some job fits no node on its own (no feasible partition)")
    return ReferencePartition(groups=best[1], cost_usd_per_h=best[0])
