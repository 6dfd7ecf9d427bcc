"""Co-execution groups: jobs pinned to shared rollout and training nodes (notes section 2).

A :class:`CoExecutionGroup` is a value: its jobs, the rollout and training node ids it
declares (and pays for), and each job's pinning. Construction validates the pinning
and the host-memory residency constraint (notes section 3, constraint 1);
:meth:`CoExecutionGroup.metrics` evaluates the round-robin meta-iteration exactly
(max-plus steady state, :func:`rollmux.schedule.meta_iteration_time`) and derives
saturation, slowdowns, SLO checks, utilisation, cost and the fluid bound. Equations:
docs/model.md.

How overheads enter the group model (a modelling choice, documented there too) is
:func:`rollmux.model.cycle.member_phases_s`, stated once for every model:

* A job's *effective training phase* is ``train_s + sync_s`` (the training GPUs push
  the new weights before the job's next rollout may start, so they stay held), plus
  the warm switch when any of its training nodes is shared with another job.
* A job's *effective rollout phase* is ``rollout_s``, plus the warm switch when any
  of its rollout nodes is shared with another job.
* A job alone on its nodes pays no switch, so a one-job group reproduces Solo-D.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from numbers import Real
from typing import TYPE_CHECKING

from rollmux.closedform import (
    SECONDS_PER_HOUR,
    FleetCost,
    JobPhases,
    PoolBubbles,
    PoolSpec,
    check_non_negative,
    check_positive,
    check_positive_int,
    fluid_cost_usd_per_iteration,
)
from rollmux.model.cycle import member_phases_s
from rollmux.model.resolved import ResolvedJob
from rollmux.schedule import meta_iteration_time

if TYPE_CHECKING:
    from rollmux.hardware import Hardware

NodeId = int | str

# Relative tolerance for comparing times that come out of different float sums.
REL_TOL = 1e-9

__all__ = [
    "CoExecutionGroup",
    "GroupJob",
    "GroupMetrics",
    "GroupStatus",
    "NodeCapacity",
    "NodeId",
    "group_job_of",
    "node_capacity_from_hardware",
]


def _check_node_id(name: str, node: object) -> NodeId:
    """Return ``node`` if it is a valid node id (int >= 0 or non-empty str), else raise."""
    if isinstance(node, bool) or not (
        (isinstance(node, int) and node >= 0) or (isinstance(node, str) and node)
    ):
        raise ValueError(f"{name} = {node!r}: a node id must be an int >= 0 or a non-empty str")
    return node  # type: ignore[return-value]


def _node_tuple(name: str, nodes: object) -> tuple[NodeId, ...]:
    """Normalise a node id or a collection of node ids to a non-empty tuple without repeats."""
    # Fast path for what the optimum's plan checks build (thousands per replay): a tuple
    # of distinct ints >= 0 is already valid and normal. The ABC checks below are slow.
    if (
        type(nodes) is tuple
        and nodes
        and set(map(type, nodes)) == {int}
        and min(nodes) >= 0
        and len(set(nodes)) == len(nodes)
    ):
        return nodes
    if isinstance(nodes, int | str):
        return (_check_node_id(name, nodes),)
    if not isinstance(nodes, Sequence):
        raise ValueError(f"{name} = {nodes!r}: expected a node id or a sequence of node ids")
    out = tuple(_check_node_id(f"{name}[{i}]", n) for i, n in enumerate(nodes))
    if not out:
        raise ValueError(f"{name} = {nodes!r}: expected at least one node id")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} = {nodes!r}: repeated node id")
    return out


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    """A worker node: GPUs per node and host memory for warm-resident job state."""

    gpus_per_node: int = 8
    host_mem_gb: float = 2048.0

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "gpus_per_node", check_positive_int("gpus_per_node", self.gpus_per_node)
        )
        object.__setattr__(self, "host_mem_gb", check_positive("host_mem_gb", self.host_mem_gb))


@dataclass(frozen=True, slots=True)
class GroupJob:
    """A job inside a group: its phases, its node pinning, its SLO and its resident state.

    The one member type of the group model, of placement's group metrics and of both
    replay paths (:mod:`rollmux.sim`). ``rollout_nodes``/``train_nodes`` accept one node
    id or a sequence of ids (a job spanning several nodes runs gang-scheduled on all of
    them; a co-located job's rollout runs on its training nodes). ``slo`` is the largest
    acceptable slowdown versus solo (``inf``: none). ``*_mem_gb_per_node`` is the host
    memory its warm-resident state takes on each node it is pinned to.

    How its phases execute (the defaults: RollMux's disaggregated, synchronous member,
    topology-aware sync): ``flat_sync`` pays the flat (veRL-style) sync;
    ``colocated`` runs its rollout on its training GPUs, ``coloc_ratio`` times its rollout
    time, with no sync; ``handover_s`` is what a co-located phase pays on top when a time
    slice hands its nodes over (:func:`rollmux.model.cycle.handover_s`); ``staleness``: how
    many iterations its rollout may run ahead of its training (0: synchronous).
    :class:`CoExecutionGroup` takes them into its effective phases; its utilisation and
    cost count disaggregated members (placement builds no other).
    """

    phases: JobPhases
    rollout_nodes: tuple[NodeId, ...]
    train_nodes: tuple[NodeId, ...]
    slo: float = math.inf
    rollout_mem_gb_per_node: float = 0.0
    train_mem_gb_per_node: float = 0.0
    job_id: str = ""
    flat_sync: bool = False
    colocated: bool = False
    coloc_ratio: float = 1.0
    handover_s: float = 0.0
    staleness: int = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.phases, JobPhases):
            raise ValueError(f"phases = {self.phases!r}: expected a JobPhases")
        set_(self, "rollout_nodes", _node_tuple("rollout_nodes", self.rollout_nodes))
        set_(self, "train_nodes", _node_tuple("train_nodes", self.train_nodes))
        is_number = type(self.slo) is float or (
            isinstance(self.slo, Real) and not isinstance(self.slo, bool)
        )
        slo = float(self.slo) if is_number else math.nan
        if math.isnan(slo) or slo < 1.0:
            raise ValueError(f"slo = {self.slo!r}: must be a slowdown >= 1 (or inf for none)")
        set_(self, "slo", slo)
        for name in ("rollout_mem_gb_per_node", "train_mem_gb_per_node"):
            set_(self, name, check_non_negative(name, getattr(self, name)))
        if not isinstance(self.job_id, str):
            raise ValueError(f"job_id = {self.job_id!r}: must be a string")
        # Placement builds its members with the defaults (one check for all of them).
        if (self.flat_sync is not False or self.colocated is not False
                or self.coloc_ratio != 1.0 or self.handover_s != 0.0
                or self.staleness != 0 or type(self.staleness) is not int):
            self._check_execution()

    def _check_execution(self) -> None:
        """Validate how its phases execute; ValueError names the field."""
        for name in ("flat_sync", "colocated"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} = {getattr(self, name)!r}: expected a bool")
        object.__setattr__(self, "coloc_ratio", check_positive("coloc_ratio", self.coloc_ratio))
        object.__setattr__(self, "handover_s", check_non_negative("handover_s", self.handover_s))
        if isinstance(self.staleness, bool) or not isinstance(self.staleness, int) or (
                self.staleness < 0):
            raise ValueError(f"staleness = {self.staleness!r}: expected an integer >= 0")

    @property
    def sync_s(self) -> float:
        """The weight sync it pays per iteration: flat or topology-aware; 0 co-located."""
        if self.colocated:
            return 0.0
        times = self.phases.times
        return times.sync_flat_s if self.flat_sync else times.sync_s

    def effective_phases_s(self, *, rollout_shared: bool, train_shared: bool
                           ) -> tuple[float, float]:
        """Its effective (rollout, training) durations at the steady state.

        :func:`rollmux.model.cycle.member_phases_s` of its phase times and execution,
        with a switch on a phase when one of that phase's nodes hosts another job.
        """
        return member_phases_s(self.phases.times, self.sync_s, rollout_shared=rollout_shared,
                               train_shared=train_shared, colocated=self.colocated,
                               coloc_ratio=self.coloc_ratio, handover_s=self.handover_s)

    def worst_case(self) -> GroupJob:
        """The same job with worst-case (max-token) phase durations."""
        return replace(self, phases=self.phases.worst_case())


class GroupStatus(StrEnum):
    """Fig. 6 of the paper: the bottleneck node's load against the longest solo chain."""

    UNDER_UTILISED = "under-utilised"  # T_load < T_cycle
    FULL = "full"  # T_load == T_cycle
    SATURATED = "saturated"  # T_load > T_cycle


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True, slots=True)
class GroupMetrics(PoolBubbles):
    """Steady-state metrics of one co-execution group (one meta-iteration)."""

    n_jobs: int
    t_cycle_s: float
    t_load_s: float
    status: GroupStatus
    meta_iteration_s: float
    solo_iteration_s: tuple[float, ...]
    slo: tuple[float, ...]
    rollout_utilisation: float
    train_utilisation: float
    cost_usd_per_h: float
    fluid_cost_usd_per_meta_iteration: float
    node_load_s: tuple[tuple[tuple[str, NodeId], float], ...] = field(default=())

    @property
    def job_iteration_s(self) -> tuple[float, ...]:
        """Each job's co-execution iteration time: one iteration per meta-iteration."""
        return (self.meta_iteration_s,) * self.n_jobs

    @property
    def slowdown(self) -> tuple[float, ...]:
        """Each job's co-execution iteration time over its solo iteration time."""
        return tuple(self.meta_iteration_s / t for t in self.solo_iteration_s)

    @property
    def slo_ok(self) -> tuple[bool, ...]:
        """Whether each job's slowdown is within its SLO."""
        return tuple(
            s <= slo * (1.0 + REL_TOL) for s, slo in zip(self.slowdown, self.slo, strict=True)
        )

    @property
    def all_slo_ok(self) -> bool:
        """Whether every job meets its SLO."""
        return all(self.slo_ok)

    @property
    def cost_usd_per_meta_iteration(self) -> float:
        """GPU cost of one meta-iteration of the whole group."""
        return self.cost_usd_per_h * self.meta_iteration_s / SECONDS_PER_HOUR

    @property
    def cost_usd_per_job_iteration(self) -> float:
        """GPU cost per job-iteration (each job completes one per meta-iteration)."""
        return self.cost_usd_per_meta_iteration / self.n_jobs

    @property
    def iterations_per_h(self) -> float:
        """Job-iterations the group completes per hour."""
        return self.n_jobs * SECONDS_PER_HOUR / self.meta_iteration_s

    @property
    def iterations_per_usd(self) -> float:
        """Job-iterations per dollar (throughput per hourly dollar)."""
        return self.n_jobs / self.cost_usd_per_meta_iteration

    @property
    def normalised_throughput(self) -> float:
        """Sum of each job's speed relative to solo, ``sum_j T_solo_j / T_meta``."""
        return sum(t / self.meta_iteration_s for t in self.solo_iteration_s)

    @property
    def fluid_cost_usd_per_job_iteration(self) -> float:
        """Fluid lower bound on the cost per job-iteration of the same work."""
        return self.fluid_cost_usd_per_meta_iteration / self.n_jobs

    def fleet(self) -> FleetCost:
        """Throughput and hourly cost, comparable with Solo-D and veRL fleets."""
        return FleetCost(self.iterations_per_h, self.cost_usd_per_h, self.normalised_throughput)


# --------------------------------------------------------------------------- the group


@dataclass(frozen=True, slots=True)
class CoExecutionGroup:
    """A co-execution group G = (jobs, rollout nodes, training nodes, pinning).

    ``rollout_node_ids`` and ``train_node_ids`` are the nodes the group provisions
    (and pays for); every job must be pinned to declared nodes only. ``order`` is the
    round-robin job order on every node (default: index order); ``pools`` (keyword) the
    GPU types and prices of the two pools.
    """

    jobs: tuple[GroupJob, ...]
    rollout_node_ids: tuple[NodeId, ...]
    train_node_ids: tuple[NodeId, ...]
    # Keyword-only and required: the pools come from the loaded hardware
    # (closedform.pools_from_hardware), so a hardware override always reaches the costs.
    pools: PoolSpec = field(kw_only=True)
    node_capacity: NodeCapacity = field(default_factory=NodeCapacity)
    order: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        jobs_ok = type(self.jobs) is tuple or (
            not isinstance(self.jobs, GroupJob) and isinstance(self.jobs, Sequence)
        )
        if not jobs_ok or not self.jobs:
            raise ValueError(f"jobs = {self.jobs!r}: expected a non-empty sequence of GroupJob")
        set_(self, "jobs", tuple(self.jobs))
        for i, job in enumerate(self.jobs):
            if not isinstance(job, GroupJob):
                raise ValueError(f"jobs[{i}] = {job!r}: expected a GroupJob")
        set_(self, "rollout_node_ids", _node_tuple("rollout_node_ids", self.rollout_node_ids))
        set_(self, "train_node_ids", _node_tuple("train_node_ids", self.train_node_ids))
        if not isinstance(self.pools, PoolSpec):
            raise ValueError(f"pools = {self.pools!r}: expected a PoolSpec")
        if not isinstance(self.node_capacity, NodeCapacity):
            raise ValueError(f"node_capacity = {self.node_capacity!r}: expected a NodeCapacity")
        if self.order is not None:
            bad_order = ValueError(
                f"order = {self.order!r}: expected a permutation of 0..{len(self.jobs) - 1}"
            )
            if (type(self.order) is not tuple and not isinstance(self.order, Sequence)) or any(
                isinstance(o, bool) or not isinstance(o, int) for o in self.order
            ):
                raise bad_order
            order = tuple(self.order)
            if sorted(order) != list(range(len(self.jobs))):
                raise bad_order
            set_(self, "order", order)
        self._check_pinning()
        self._check_host_memory()

    def _check_pinning(self) -> None:
        gpn = self.node_capacity.gpus_per_node
        for pool, declared, attr, gpus_attr in (
            ("rollout", self.rollout_node_ids, "rollout_nodes", "rollout_gpus"),
            ("train", self.train_node_ids, "train_nodes", "train_gpus"),
        ):
            known = set(declared)
            for j, job in enumerate(self.jobs):
                pins: tuple[NodeId, ...] = getattr(job, attr)
                for node in pins:
                    if node not in known:
                        raise ValueError(
                            f"jobs[{j}].{attr}: unknown node id {node!r} "
                            f"(the group's {pool} nodes are {declared!r})"
                        )
                gpus = getattr(job.phases, gpus_attr)
                if gpus > len(pins) * gpn:
                    raise ValueError(
                        f"jobs[{j}].phases.{gpus_attr} = {gpus}: more than its {len(pins)} "
                        f"pinned {pool} node(s) hold ({len(pins) * gpn} GPUs)"
                    )

    def _check_host_memory(self) -> None:
        limit = self.node_capacity.host_mem_gb
        for pool in ("rollout", "train"):
            for node, gb in self._resident_gb(pool).items():
                if gb > limit * (1.0 + REL_TOL):
                    raise ValueError(
                        f"{pool} node {node!r}: resident state {gb:g} GB of the jobs pinned "
                        f"there exceeds host memory {limit:g} GB"
                    )

    def _resident_gb(self, pool: str) -> dict[NodeId, float]:
        out: dict[NodeId, float] = {}
        for job in self.jobs:
            pins = job.rollout_nodes if pool == "rollout" else job.train_nodes
            gb = job.rollout_mem_gb_per_node if pool == "rollout" else job.train_mem_gb_per_node
            for node in pins:
                out[node] = out.get(node, 0.0) + gb
        return out

    # ------------------------------------------------------------------- structure

    def jobs_on(self, pool: str, node: NodeId) -> tuple[int, ...]:
        """Indices of the jobs pinned to ``node`` of ``pool`` ("rollout" or "train")."""
        if pool not in ("rollout", "train"):
            raise ValueError(f"pool = {pool!r}: expected 'rollout' or 'train'")
        declared = self.rollout_node_ids if pool == "rollout" else self.train_node_ids
        if node not in declared:
            raise ValueError(f"node = {node!r}: unknown node id for the {pool} pool")
        attr = "rollout_nodes" if pool == "rollout" else "train_nodes"
        return tuple(j for j, job in enumerate(self.jobs) if node in getattr(job, attr))

    def free_host_mem_gb(self, pool: str, node: NodeId) -> float:
        """Host memory left on ``node`` of ``pool`` after the resident state of its jobs."""
        jobs = self.jobs_on(pool, node)
        attr = "rollout_mem_gb_per_node" if pool == "rollout" else "train_mem_gb_per_node"
        return self.node_capacity.host_mem_gb - sum(getattr(self.jobs[j], attr) for j in jobs)

    def _jobs_by_node(self, pool: str) -> dict[NodeId, list[int]]:
        """Each declared node of ``pool`` with the indices of its jobs (:meth:`jobs_on`'s)."""
        # One pass over the pinning instead of one scan of the jobs per node: the pinning
        # is validated at construction, so every pinned node is declared.
        if pool == "rollout":
            out: dict[NodeId, list[int]] = {n: [] for n in self.rollout_node_ids}
            for j, job in enumerate(self.jobs):
                for node in job.rollout_nodes:
                    out[node].append(j)
        else:
            out = {n: [] for n in self.train_node_ids}
            for j, job in enumerate(self.jobs):
                for node in job.train_nodes:
                    out[node].append(j)
        return out

    def effective_phases_s(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Per-job (rollout, training) phase durations including sync and warm switches."""
        return self._effective_phases_s(self._jobs_by_node("rollout"), self._jobs_by_node("train"))

    def _effective_phases_s(
        self, on_r: dict[NodeId, list[int]], on_t: dict[NodeId, list[int]]
    ) -> tuple[tuple[float, ...], tuple[float, ...]]:
        r_shared = {n for n, jobs in on_r.items() if len(jobs) > 1}
        t_shared = {n for n, jobs in on_t.items() if len(jobs) > 1}
        rollout, train = [], []
        for job in self.jobs:
            r, t = job.effective_phases_s(
                rollout_shared=not r_shared.isdisjoint(job.rollout_nodes),
                train_shared=not t_shared.isdisjoint(job.train_nodes))
            rollout.append(r)
            train.append(t)
        return tuple(rollout), tuple(train)

    def node_load_s(self) -> dict[tuple[str, NodeId], float]:
        """Summed effective phase time per node, keyed ("rollout" | "train", node id)."""
        on_r, on_t = self._jobs_by_node("rollout"), self._jobs_by_node("train")
        return self._node_load_s(on_r, on_t, *self._effective_phases_s(on_r, on_t))

    @staticmethod
    def _node_load_s(
        on_r: dict[NodeId, list[int]],
        on_t: dict[NodeId, list[int]],
        rollout: Sequence[float],
        train: Sequence[float],
    ) -> dict[tuple[str, NodeId], float]:
        out: dict[tuple[str, NodeId], float] = {}
        for pool, on, durations in (("rollout", on_r, rollout), ("train", on_t, train)):
            for node, jobs in on.items():
                out[(pool, node)] = sum(durations[j] for j in jobs)
        return out

    def t_cycle_s(self) -> float:
        """T_cycle: the longest job chain, max_j (effective rollout + effective training)."""
        return _t_cycle_s(*self.effective_phases_s())

    def t_load_s(self) -> float:
        """T_load: the busiest node's summed effective phase time (notes section 3)."""
        return max(self.node_load_s().values())

    def status(self) -> GroupStatus:
        """Under-utilised, full or saturated (T_load <, =, > T_cycle; paper Fig. 6)."""
        return _status(self.t_load_s(), self.t_cycle_s())

    def meta_iteration_s(self) -> float:
        """Exact steady-state round-robin meta-iteration time (max-plus, not an estimate)."""
        return self._meta_iteration_s(*self.effective_phases_s())

    def _meta_iteration_s(self, rollout: Sequence[float], train: Sequence[float]) -> float:
        return meta_iteration_time(
            rollout,
            train,
            rollout_node=[job.rollout_nodes for job in self.jobs],
            train_node=[job.train_nodes for job in self.jobs],
            order=self.order,
        )

    def cost_usd_per_h(self) -> float:
        """Hourly price of every GPU on the group's declared nodes."""
        gpn = self.node_capacity.gpus_per_node
        return self.pools.cost_usd_per_h(
            len(self.rollout_node_ids) * gpn, len(self.train_node_ids) * gpn
        )

    # ------------------------------------------------------------------- derived groups

    def worst_case(self) -> CoExecutionGroup:
        """The same group with every job at its worst-case (max-token) durations."""
        return replace(self, jobs=tuple(job.worst_case() for job in self.jobs))

    def with_job(
        self,
        job: GroupJob,
        new_rollout_node_ids: Sequence[NodeId] = (),
        new_train_node_ids: Sequence[NodeId] = (),
    ) -> CoExecutionGroup:
        """The group with ``job`` appended (last in the order), adding any new nodes."""
        order = None if self.order is None else (*self.order, len(self.jobs))
        return replace(
            self,
            jobs=(*self.jobs, job),
            rollout_node_ids=(*self.rollout_node_ids, *new_rollout_node_ids),
            train_node_ids=(*self.train_node_ids, *new_train_node_ids),
            order=order,
        )

    # ------------------------------------------------------------------- evaluation

    def metrics(self, worst_case: bool = False) -> GroupMetrics:
        """Steady-state metrics; ``worst_case=True`` uses max-token durations (admission)."""
        group = self.worst_case() if worst_case else self
        return group._metrics()

    def _metrics(self) -> GroupMetrics:
        # The node occupancy and effective phases once, for the period, loads and T_cycle
        # (the optimum checks every column it finds with these metrics).
        on_r, on_t = self._jobs_by_node("rollout"), self._jobs_by_node("train")
        rollout, train = self._effective_phases_s(on_r, on_t)
        meta_s = self._meta_iteration_s(rollout, train)
        gpn = self.node_capacity.gpus_per_node
        rollout_busy = sum(j.phases.busy_gpu_s()[0] for j in self.jobs)
        train_busy = sum(j.phases.busy_gpu_s()[1] for j in self.jobs)
        loads = self._node_load_s(on_r, on_t, rollout, train)
        t_cycle = _t_cycle_s(rollout, train)
        t_load = max(loads.values())
        return GroupMetrics(
            n_jobs=len(self.jobs),
            t_cycle_s=t_cycle,
            t_load_s=t_load,
            status=_status(t_load, t_cycle),
            meta_iteration_s=meta_s,
            solo_iteration_s=tuple(j.phases.solo_iteration_s for j in self.jobs),
            slo=tuple(j.slo for j in self.jobs),
            rollout_utilisation=rollout_busy / (len(self.rollout_node_ids) * gpn * meta_s),
            train_utilisation=train_busy / (len(self.train_node_ids) * gpn * meta_s),
            cost_usd_per_h=self.cost_usd_per_h(),
            fluid_cost_usd_per_meta_iteration=sum(
                fluid_cost_usd_per_iteration(j.phases, self.pools) for j in self.jobs
            ),
            node_load_s=tuple(loads.items()),
        )


def _t_cycle_s(rollout: Sequence[float], train: Sequence[float]) -> float:
    return max(r + t for r, t in zip(rollout, train, strict=True))


def _status(t_load_s: float, t_cycle_s: float) -> GroupStatus:
    if math.isclose(t_load_s, t_cycle_s, rel_tol=REL_TOL):
        return GroupStatus.FULL
    return GroupStatus.UNDER_UTILISED if t_load_s < t_cycle_s else GroupStatus.SATURATED


# --------------------------------------------------------------------------- adapters


def node_capacity_from_hardware(hw: Hardware) -> NodeCapacity:
    """The :class:`NodeCapacity` of a :class:`rollmux.hardware.Hardware`."""
    return NodeCapacity(gpus_per_node=hw.node.gpus_per_node, host_mem_gb=hw.node.host_mem_gb)


def group_job_of(
    resolved: ResolvedJob,
    rollout_nodes: NodeId | Sequence[NodeId],
    train_nodes: NodeId | Sequence[NodeId],
    *,
    worst_case: bool = False,
) -> GroupJob:
    """A resolved job pinned to the given nodes, as a member of a group.

    ``worst_case``: at its worst-case (max-token) phase durations, as admission checks.
    """
    return GroupJob(
        phases=resolved.admission_phases(worst_case),
        rollout_nodes=rollout_nodes,  # type: ignore[arg-type]
        train_nodes=train_nodes,  # type: ignore[arg-type]
        slo=resolved.slo,
        rollout_mem_gb_per_node=resolved.rollout_mem_gb,
        train_mem_gb_per_node=resolved.train_mem_gb,
        job_id=str(resolved.job_id),
    )
