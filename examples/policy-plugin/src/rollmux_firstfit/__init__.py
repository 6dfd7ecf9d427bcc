"""First-fit: a rollmux placement policy shipped as a plug-in package.

Each job joins the oldest shared group that can take it (fewer than ``max_group_size``
jobs, nodes of its GPU types with room for its state, and an under-utilised status), on
that group's first nodes by id; when none can, it opens a new group. No SLO check, like
the Random and Greedy baselines, so it is a floor to compare them with.
"""

from __future__ import annotations

from rollmux.jobs import RLJob
from rollmux.placement import ClusterSnapshot, Placement, PlacementPolicy, Strategy
from rollmux.placement.base import admissible_profile, check_max_group_size, new_group_placement
from rollmux.placement.joinable import GroupModels, joinable_groups

__all__ = ["FirstFitPolicy"]


class FirstFitPolicy(PlacementPolicy):
    """The oldest group that can take the job, its first nodes; else a new group."""

    name = "first-fit"  # must equal the entry point's name
    options = frozenset({"max_group_size"})

    def __init__(self, max_group_size: int = 5) -> None:
        """Keep the group-size limit (ValueError names it when it is not an integer >= 1)."""
        self.max_group_size = check_max_group_size(max_group_size)
        self._models = GroupModels(worst_case=True)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Join the first group (in creation order) with room, or open a new one."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):  # rejected: no node fits, or already admitted
            return profile
        candidates = joinable_groups(
            job, profile, snapshot, max_group_size=self.max_group_size,
            joinable="under-utilised", models=self._models,
        )
        if not candidates:
            return new_group_placement(job, profile, snapshot)
        first = candidates[0]
        return Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING,
            group_id=first.group.group_id,
            rollout_nodes=first.rollout_nodes[: profile.rollout_nodes],
            train_nodes=first.train_nodes[: profile.train_nodes],
            profile=profile,
        )
