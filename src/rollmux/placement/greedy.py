"""Greedy (Most-Idle) baseline: the group with the highest idle share, its most idle nodes.

Idle share of a group: ``1 - (U_R * |R| + U_T * |T|) / (|R| + |T|)``, the node-weighted
idle fraction of its rollout and training pools over one meta-iteration of the group
model at *expected* phase times (what a monitor would observe). Among the shared groups
with fewer than ``max_group_size`` jobs and enough memory-feasible nodes (the job's
state fits; same GPU types), the most idle wins (ties: the older group). Inside it, the
job goes on the nodes with the least summed phase time per meta-iteration (ties: node
id order). It checks no SLO (a baseline, paper sec. 6.5); with no feasible group it
opens a new one.
"""

from __future__ import annotations

from rollmux.group import CoExecutionGroup, NodeCapacity
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    check_max_group_size,
    feasible_nodes,
    group_members,
    new_group_placement,
    register_policy,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind, GroupState

__all__ = ["GreedyPolicy"]

_CACHE_MAX = 50_000


class _Idle:
    """Cached idle share and per-node load of one group state."""

    __slots__ = ("idle_share", "node_load_s")

    def __init__(self, idle_share: float, node_load_s: dict[str, float]) -> None:
        self.idle_share = idle_share
        self.node_load_s = node_load_s


@register_policy("greedy")
class GreedyPolicy(PlacementPolicy):
    """Most-Idle: highest idle share group, least loaded memory-feasible nodes; no SLO check."""

    name = "greedy"
    options = frozenset({"max_group_size"})

    def __init__(self, max_group_size: int = 5) -> None:
        """Set the group-size limit."""
        self.max_group_size = check_max_group_size(max_group_size)
        self._cache: dict[int, tuple[GroupState, Hardware, _Idle]] = {}

    def _idle(self, group: GroupState, snapshot: ClusterSnapshot) -> _Idle:
        """The group's idle share and node loads (cached per group state)."""
        hit = self._cache.get(id(group))
        if hit is not None and hit[0] is group and hit[1] is snapshot.hw:
            return hit[2]
        hw = snapshot.hw
        model = CoExecutionGroup(
            jobs=group_members(group, snapshot, worst_case=False),
            rollout_node_ids=group.rollout_nodes,
            train_node_ids=group.train_nodes,
            node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
        )
        m = model.metrics()
        n_r, n_t = len(group.rollout_nodes), len(group.train_nodes)
        busy = m.rollout_utilisation * n_r + m.train_utilisation * n_t
        loads = {node: load for (_, node), load in model.node_load_s().items()}
        idle = _Idle(1.0 - busy / (n_r + n_t), {str(k): v for k, v in loads.items()})
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[id(group)] = (group, hw, idle)
        return idle

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """The most idle feasible group and its least loaded feasible nodes."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        best = None
        best_key: tuple[float, int] | None = None
        for group in snapshot.groups.values():
            if group.kind is not GroupKind.SHARED or len(group.jobs) >= self.max_group_size:
                continue
            roll_ok, train_ok = feasible_nodes(group, snapshot, job, profile)
            if len(roll_ok) < profile.rollout_nodes or len(train_ok) < profile.train_nodes:
                continue
            idle = self._idle(group, snapshot)
            key = (-idle.idle_share, group.serial)
            if best_key is None or key < best_key:
                best, best_key = (group, roll_ok, train_ok, idle), key
        if best is None:
            return new_group_placement(job, profile, snapshot)
        group, roll_ok, train_ok, idle = best

        def least_loaded(nodes: list[str], k: int) -> tuple[str, ...]:
            ranked = sorted(nodes, key=lambda n: (idle.node_load_s[n], len(n), n))
            return tuple(ranked[:k])

        return Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING,
            group_id=group.group_id,
            rollout_nodes=least_loaded(roll_ok, profile.rollout_nodes),
            train_nodes=least_loaded(train_ok, profile.train_nodes),
            profile=profile,
        )
