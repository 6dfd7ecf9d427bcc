"""Immutable cluster state for placement: groups, their nodes, the jobs pinned to each node.

A :class:`ClusterSnapshot` is a value. :func:`apply` (admit a decision) and :func:`release`
(a job departs) return new snapshots and never modify their input. Groups, nodes and jobs
are held in :class:`~rollmux.placement.frozenmap.FrozenMap` mappings, so an update copies
only the few blocks it touches (about n/64 + 64 pointers, not the whole cluster) and a
simulator can keep every snapshot it makes. Departures shrink the group: nodes left with
no job are returned (dropped from the snapshot, no longer paid for), and an empty group
disappears.

Node ids are strings ``R<k>`` (rollout pool) and ``T<k>`` (training pool), group ids
``G<k>``; ``k`` comes from one serial counter, so ids are never reused and a policy can
name the nodes it wants provisioned (:meth:`ClusterSnapshot.new_ids`) before they exist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model.resolved import ResolvedJob
from rollmux.phases import order_multiplicities
from rollmux.phasetimes import PhaseTimes
from rollmux.placement.decisions import (
    Decision,
    GroupKind,
    Placement,
    Pool,
    Regrouping,
    Strategy,
)
from rollmux.placement.frozenmap import FrozenMap, MapEdit
from rollmux.schedule.graph import order_events, repeated_layout
from rollmux.schedule.maxplus import build_event_graph

__all__ = [
    "ClusterSnapshot",
    "GroupKind",
    "GroupState",
    "NodeState",
    "PlacedJob",
    "Pool",
    "apply",
    "check_node_orders",
    "empty_snapshot",
    "release",
]

K = TypeVar("K")
V = TypeVar("V")

# Relative tolerance on host-memory sums (they come from different float additions).
MEM_REL_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class NodeState:
    """One provisioned node: its pool, GPU type, host memory and the jobs pinned to it."""

    node_id: str
    pool: Pool
    gpu_type: str
    gpus: int
    host_mem_gb: float
    group_id: str
    jobs: tuple[str, ...] = ()
    used_mem_gb: float = 0.0

    @property
    def free_mem_gb(self) -> float:
        """Host memory not taken by the resident state of the jobs pinned here."""
        return self.host_mem_gb - self.used_mem_gb

    def fits(self, mem_gb: float) -> bool:
        """Whether another job's ``mem_gb`` of resident state fits in host memory."""
        return self.used_mem_gb + mem_gb <= self.host_mem_gb * (1.0 + MEM_REL_TOL)

    def with_jobs(self, jobs: tuple[str, ...], used_mem_gb: float) -> NodeState:
        """The node with other pinned jobs (direct: dataclasses.replace costs 5x more)."""
        return NodeState(self.node_id, self.pool, self.gpu_type, self.gpus, self.host_mem_gb,
                         self.group_id, jobs, used_mem_gb)


@dataclass(frozen=True, slots=True)
class PlacedJob:
    """An admitted job: its record, group, pinned nodes and the job resolved on the hardware.

    ``resolved`` holds its phase times and resident state per node (for a Gavel+ job, as
    allocated); after a drifted re-profiling it is the drifted job's.
    """

    job: RLJob
    group_id: str
    rollout_nodes: tuple[str, ...]
    train_nodes: tuple[str, ...]
    resolved: ResolvedJob
    strategy: str = ""
    staleness: int = 0

    @property
    def times(self) -> PhaseTimes:
        """Its phase times."""
        return self.resolved.times

    @property
    def rollout_mem_gb(self) -> float:
        """Host memory its resident state takes on each of its rollout nodes."""
        return self.resolved.rollout_mem_gb

    @property
    def train_mem_gb(self) -> float:
        """Host memory its resident state takes on each of its training nodes."""
        return self.resolved.train_mem_gb


@dataclass(frozen=True, slots=True)
class GroupState:
    """A group: its nodes, its jobs in round-robin order, and a version bumped on change.

    ``serial`` orders groups by creation (tie-breaking); ``version`` is unique per state
    of the snapshot lineage, so policies can cache per-group metrics keyed on it.
    ``node_orders`` optionally records per-node job orders found by an order search
    (``None``: the round-robin order of ``jobs`` on every node).
    """

    group_id: str
    serial: int
    kind: GroupKind
    rollout_nodes: tuple[str, ...]
    train_nodes: tuple[str, ...]
    jobs: tuple[str, ...]
    version: int
    node_orders: tuple[tuple[str, tuple[str, ...]], ...] | None = None

    def changed(
        self,
        rollout_nodes: tuple[str, ...],
        train_nodes: tuple[str, ...],
        jobs: tuple[str, ...],
        version: int,
        node_orders: tuple[tuple[str, tuple[str, ...]], ...] | None,
    ) -> GroupState:
        """The group with other nodes, jobs and orders at a new version (id, kind kept)."""
        return GroupState(self.group_id, self.serial, self.kind, rollout_nodes, train_nodes,
                          jobs, version, node_orders)


@dataclass(frozen=True)
class ClusterSnapshot:
    """The whole cluster at one instant (immutable; see :func:`apply` and :func:`release`).

    ``time_s`` is the simulator's clock at the snapshot (policies never read a clock);
    ``last_regroup_s`` when the active jobs were last re-partitioned.
    """

    hw: Hardware
    groups: Mapping[str, GroupState] = field(default_factory=dict)
    nodes: Mapping[str, NodeState] = field(default_factory=dict)
    jobs: Mapping[str, PlacedJob] = field(default_factory=dict)
    time_s: float = 0.0
    last_regroup_s: float = 0.0
    next_serial: int = 0

    def __post_init__(self) -> None:
        """Freeze the mappings and validate the clock fields."""
        if not isinstance(self.hw, Hardware):
            raise ValueError(f"hw must be a Hardware, got {self.hw!r}")
        for name in ("groups", "nodes", "jobs"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise ValueError(f"{name} must be a mapping, got {value!r}")
            if not isinstance(value, FrozenMap):
                object.__setattr__(self, name, FrozenMap(value))
        for name in ("time_s", "last_regroup_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 0
            ):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if isinstance(self.next_serial, bool) or not isinstance(self.next_serial, int) or (
            self.next_serial < 0
        ):
            raise ValueError(f"next_serial must be an integer >= 0, got {self.next_serial!r}")

    # ------------------------------------------------------------------- queries

    def new_ids(self, prefix: str, count: int, start: int = 0) -> tuple[str, ...]:
        """``count`` fresh ids ``<prefix><k>`` after ``start`` ids already reserved."""
        base = self.next_serial + start
        return tuple(f"{prefix}{base + i}" for i in range(count))

    def node_price_usd_per_h(self, gpu_type: str) -> float:
        """Hourly price of one whole node of ``gpu_type``."""
        return self.hw.price_usd_per_h(gpu_type, self.hw.node.gpus_per_node)

    def cost_usd_per_h(self) -> float:
        """Hourly price of every provisioned node."""
        return sum(n.gpus * self.hw.gpu(n.gpu_type).price_usd_per_h for n in self.nodes.values())

    def group_cost_usd_per_h(self, group_id: str) -> float:
        """Hourly price of one group's nodes."""
        group = self.groups[group_id]
        return sum(
            self.nodes[n].gpus * self.hw.gpu(self.nodes[n].gpu_type).price_usd_per_h
            for n in (*group.rollout_nodes, *group.train_nodes)
        )

    def group_of(self, job_id: str) -> GroupState:
        """The group job ``job_id`` belongs to; ValueError when it is not admitted."""
        try:
            return self.groups[self.jobs[job_id].group_id]
        except KeyError:
            raise ValueError(f"job_id {job_id!r} is not in the snapshot") from None

    def gpu_counts(self) -> dict[str, int]:
        """Provisioned GPUs per GPU type."""
        out: dict[str, int] = {}
        for node in self.nodes.values():
            out[node.gpu_type] = out.get(node.gpu_type, 0) + node.gpus
        return out

    def check_invariants(self) -> None:
        """Raise ValueError if pinning, node membership or host memory is inconsistent."""
        for node in self.nodes.values():
            if not node.fits(0.0):
                raise ValueError(f"node {node.node_id!r}: resident state exceeds host memory")
            expected = 0.0
            for job_id in node.jobs:
                placed = self.jobs[job_id]
                if node.pool is Pool.ROLLOUT:
                    expected += placed.rollout_mem_gb
                else:
                    expected += placed.train_mem_gb
            if not math.isclose(expected, node.used_mem_gb, rel_tol=1e-9, abs_tol=1e-9):
                raise ValueError(f"node {node.node_id!r}: used memory {node.used_mem_gb} != "
                                 f"{expected}")
        for group in self.groups.values():
            for job_id in group.jobs:
                if self.jobs[job_id].group_id != group.group_id:
                    raise ValueError(f"job {job_id!r} listed in {group.group_id!r} elsewhere")
            for n in (*group.rollout_nodes, *group.train_nodes):
                if self.nodes[n].group_id != group.group_id:
                    raise ValueError(f"node {n!r} not owned by {group.group_id!r}")


def empty_snapshot(hw: Hardware, time_s: float = 0.0) -> ClusterSnapshot:
    """A cluster with no job and no provisioned node."""
    return ClusterSnapshot(hw=hw, time_s=time_s, last_regroup_s=time_s)


# --------------------------------------------------------------------------- updates


def _draft(mapping: Mapping[K, V]) -> MapEdit[K, V]:
    """An editable draft of one of a snapshot's maps (its source stays unchanged)."""
    source = mapping if isinstance(mapping, FrozenMap) else FrozenMap(mapping)
    return source.edit()


def _serial_of(node_or_group_id: str) -> int:
    """The serial number in an id ``R12`` / ``T12`` / ``G12``."""
    return int(node_or_group_id[1:])


def apply(snapshot: ClusterSnapshot, decision: Decision) -> ClusterSnapshot:
    """The snapshot after admitting ``decision`` (a rejected placement changes nothing).

    Raises ValueError if the decision is inconsistent with the snapshot (unknown node,
    node of another group, job already admitted, host memory exceeded).
    """
    if isinstance(decision, Regrouping):
        out = _apply_regrouping(snapshot, decision)
        for group_id in dict.fromkeys(p.group_id for p in decision.placements):
            check_node_orders(out, group_id)
        return out
    if not isinstance(decision, Placement):
        raise ValueError(f"decision must be a Placement or a Regrouping, got {decision!r}")
    if decision.strategy is Strategy.REJECTED:
        return snapshot
    out = _apply_placement(snapshot, decision)
    check_node_orders(out, decision.group_id)
    return out


def check_node_orders(snapshot: ClusterSnapshot, group_id: str) -> None:
    """ValueError, naming the group, when its ``node_orders`` cannot run.

    They must follow :func:`rollmux.phases.order_multiplicities` (an order for every node
    of the group, every job of a node on it, each job equally often on all its nodes) and
    not deadlock: the timed event graph of the orders and the jobs' iteration chains
    (:func:`rollmux.schedule.maxplus.build_event_graph`) has no cycle without a token, so
    some phase can always start. A simulator given such orders never waits forever.
    """
    group = snapshot.groups[group_id]
    if group.node_orders is None:
        return
    where = f"decision.node_orders of group {group_id!r}"
    orders = dict(group.node_orders)
    if len(orders) != len(group.node_orders):
        raise ValueError(f"{where}: a node is listed twice")
    members = {job_id: snapshot.jobs[job_id] for job_id in group.jobs}
    strangers = sorted({j for seq in orders.values() for j in seq} - set(members))
    if strangers:
        raise ValueError(f"{where}: job(s) {strangers} are not members of the group")
    try:
        mult = order_multiplicities(orders, {j: (*p.rollout_nodes, *p.train_nodes)
                                             for j, p in members.items()})
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    ids = list(members)
    index = {j: k for k, j in enumerate(ids)}
    ones = [1.0] * len(ids)
    offsets, durations, chains = repeated_layout(ones, ones, [mult[j] for j in ids])
    sequences = [order_events(offsets, [index[j] for j in seq],
                              snapshot.nodes[n].pool is Pool.TRAIN)
                 for n, seq in orders.items()]
    if build_event_graph(durations, chains, [0.0] * len(ids), sequences) is None:
        raise ValueError(f"{where} deadlock: a job's phase waits, through the orders, for "
                         f"its own later phase (no phase can start); orders {orders}")


def _apply_placement(snapshot: ClusterSnapshot, p: Placement) -> ClusterSnapshot:
    """Admit one placement (new nodes, pinning, memory, group membership)."""
    if p.job.job_id in snapshot.jobs:
        raise ValueError(f"decision.job.job_id {p.job.job_id!r} is already admitted")
    if p.profile is None:
        raise ValueError(f"decision for {p.job.job_id!r} has no profile (rejected?)")
    hw = snapshot.hw
    nodes = _draft(snapshot.nodes)
    groups = _draft(snapshot.groups)
    serial = snapshot.next_serial
    version = serial
    existing = groups.get(p.group_id)
    if existing is not None and p.new_group:
        raise ValueError(f"decision.group_id {p.group_id!r} already exists (new_group=True)")
    new_rollout = [n.node_id for n in p.new_nodes if n.pool is Pool.ROLLOUT]
    new_train = [n.node_id for n in p.new_nodes if n.pool is Pool.TRAIN]
    for new in p.new_nodes:
        if new.node_id in nodes:
            raise ValueError(f"decision.new_nodes: node id {new.node_id!r} already exists")
        nodes[new.node_id] = NodeState(
            node_id=new.node_id,
            pool=new.pool,
            gpu_type=new.gpu_type,
            gpus=hw.node.gpus_per_node,
            host_mem_gb=hw.node.host_mem_gb,
            group_id=p.group_id,
        )
        serial = max(serial, _serial_of(new.node_id) + 1)
    for pool, pins, mem in (
        (Pool.ROLLOUT, p.rollout_nodes, p.profile.rollout_mem_gb),
        (Pool.TRAIN, p.train_nodes, p.profile.train_mem_gb),
    ):
        for node_id in pins:
            node = nodes.get(node_id)
            if node is None or node.pool is not pool or node.group_id != p.group_id:
                raise ValueError(
                    f"decision.{pool.value}_nodes: {node_id!r} is not a {pool.value} node of "
                    f"group {p.group_id!r}"
                )
            if not node.fits(mem):
                raise ValueError(
                    f"decision.{pool.value}_nodes: {node_id!r} has {node.free_mem_gb:g} GB free, "
                    f"job {p.job.job_id!r} needs {mem:g} GB"
                )
            nodes[node_id] = node.with_jobs((*node.jobs, p.job.job_id), node.used_mem_gb + mem)
    if existing is None:
        if not p.new_group:
            raise ValueError(f"decision.group_id {p.group_id!r} is not an existing group")
        serial = max(serial, _serial_of(p.group_id) + 1)
        groups[p.group_id] = GroupState(
            group_id=p.group_id,
            serial=_serial_of(p.group_id),
            kind=p.group_kind,
            rollout_nodes=tuple(new_rollout),
            train_nodes=tuple(new_train),
            jobs=(p.job.job_id,),
            version=version,
            node_orders=p.node_orders,
        )
    else:
        groups[p.group_id] = existing.changed(
            rollout_nodes=(*existing.rollout_nodes, *new_rollout),
            train_nodes=(*existing.train_nodes, *new_train),
            jobs=(*existing.jobs, p.job.job_id),
            version=version,
            node_orders=p.node_orders,
        )
    jobs = _draft(snapshot.jobs)
    jobs[p.job.job_id] = PlacedJob(
        job=p.job,
        group_id=p.group_id,
        rollout_nodes=p.rollout_nodes,
        train_nodes=p.train_nodes,
        resolved=p.profile,
        strategy=p.strategy.value,
        staleness=p.staleness,
    )
    return replace(
        snapshot,
        groups=groups.freeze(),
        nodes=nodes.freeze(),
        jobs=jobs.freeze(),
        next_serial=serial + 1,
    )


def _apply_regrouping(snapshot: ClusterSnapshot, r: Regrouping) -> ClusterSnapshot:
    """Dissolve the groups not kept, then admit every placement of the new partition."""
    out = snapshot
    kept = set(r.kept_groups)
    for group_id in r.kept_groups:
        if group_id not in snapshot.groups:
            raise ValueError(f"decision.kept_groups: {group_id!r} is not an existing group")
    for group in snapshot.groups.values():
        if group.group_id not in kept:
            for job_id in group.jobs:
                out = release(out, job_id)
    for placement in r.placements:
        out = _apply_placement(out, placement)
    return replace(out, last_regroup_s=max(out.last_regroup_s, r.time_s))


def release(snapshot: ClusterSnapshot, job_id: str) -> ClusterSnapshot:
    """The snapshot after ``job_id`` departs: unpinned, idle nodes returned, group shrunk."""
    placed = snapshot.jobs.get(job_id)
    if placed is None:
        raise ValueError(f"job_id {job_id!r} is not in the snapshot")
    nodes = _draft(snapshot.nodes)
    freed: set[str] = set()
    for pins, mem in ((placed.rollout_nodes, placed.rollout_mem_gb),
                      (placed.train_nodes, placed.train_mem_gb)):
        for node_id in pins:
            node = nodes[node_id]
            remaining = tuple(j for j in node.jobs if j != job_id)
            if remaining:
                used = max(0.0, node.used_mem_gb - mem)
                nodes[node_id] = node.with_jobs(remaining, used)
            else:
                del nodes[node_id]
                freed.add(node_id)
    groups = _draft(snapshot.groups)
    group = groups[placed.group_id]
    members = tuple(j for j in group.jobs if j != job_id)
    if members:
        orders = None
        if group.node_orders is not None:
            orders = tuple(
                (n, tuple(j for j in seq if j != job_id))
                for n, seq in group.node_orders
                if n not in freed
            )
        # A node of the group with no pinned job at all is idle: return it too.
        idle = {
            n for n in (*group.rollout_nodes, *group.train_nodes)
            if n in nodes and not nodes[n].jobs
        }
        for n in idle:
            del nodes[n]
        freed |= idle
        groups[group.group_id] = group.changed(
            rollout_nodes=tuple(n for n in group.rollout_nodes if n not in freed),
            train_nodes=tuple(n for n in group.train_nodes if n not in freed),
            jobs=members,
            version=snapshot.next_serial,
            node_orders=orders,
        )
    else:
        for n in (*group.rollout_nodes, *group.train_nodes):
            nodes.pop(n, None)
        del groups[group.group_id]
    jobs = _draft(snapshot.jobs)
    del jobs[job_id]
    return replace(
        snapshot,
        groups=groups.freeze(),
        nodes=nodes.freeze(),
        jobs=jobs.freeze(),
        next_serial=snapshot.next_serial + 1,
    )


def snapshot_from_placements(
    hw: Hardware, placements: Sequence[Placement], time_s: float = 0.0
) -> ClusterSnapshot:
    """Apply ``placements`` in turn to an empty cluster (a convenience for tests)."""
    out = empty_snapshot(hw, time_s)
    for p in placements:
        out = apply(out, p)
    return out
