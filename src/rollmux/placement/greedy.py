"""Greedy (Most-Idle) baseline: the group with the highest idle share, its most idle nodes.

Paper sec. 6.5: "Assigns arriving jobs to the group with the highest idle-time
percentage. Within that group, it places the job on the most idle rollout and train
nodes." It checks no SLO and provisions no node into an existing group; when no group
can take the job it opens a new one. Options (docs/placement.md, "Random and Greedy: the
readings"):

* ``joinable``: ``"under-utilised"`` (default; only groups whose Fig. 6 status is
  under-utilised, ``T_load < T_cycle``, with room for the job's state) or
  ``"memory-only"`` (any group with room for its state); see
  :mod:`rollmux.placement.joinable`.
* ``idle``: the idle-time percentage of a group. ``"pools"`` (default): the GPU-weighted
  idle share of its rollout and training pools over one round-robin meta-iteration,
  ``1 - (U_R |R| + U_T |T|) / (|R| + |T|)`` (every node has the same GPUs);
  ``"bottleneck"``: the idle share of its busiest node over the natural cycle,
  ``1 - T_load / T_cycle`` (the slack of Fig. 6; <= 0 for a full or saturated group).
* ``worst_case``: the group model's phase times, worst case (max tokens, default; the
  profile Algorithm 1 computes group status with) or expected.

Ties between groups go to the older group. Inside the group the job goes on the nodes
with the least summed phase time per meta-iteration (the most idle: every node of a
group shares its meta-iteration), ties by node id.
"""

from __future__ import annotations

from typing import Literal

from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    check_max_group_size,
    new_group_placement,
)
from rollmux.placement.joinable import (
    JOINABLE_READINGS,
    Candidate,
    GroupModels,
    Joinable,
    check_choice,
    joinable_groups,
)
from rollmux.placement.snapshot import ClusterSnapshot

__all__ = ["IDLE_MEASURES", "GreedyPolicy", "IdleMeasure"]

IdleMeasure = Literal["pools", "bottleneck"]
IDLE_MEASURES: tuple[IdleMeasure, ...] = ("pools", "bottleneck")


class GreedyPolicy(PlacementPolicy):
    """Most-Idle: the idlest group that can take the job, its least loaded nodes; no SLO check."""

    name = "greedy"
    options = frozenset({"max_group_size", "joinable", "idle", "worst_case"})

    def __init__(
        self,
        max_group_size: int = 5,
        joinable: Joinable = "under-utilised",
        idle: IdleMeasure = "pools",
        worst_case: bool = True,
    ) -> None:
        """Validate the options (ValueError names the option and the bad value)."""
        self.max_group_size = check_max_group_size(max_group_size)
        self.joinable: Joinable = check_choice("joinable", joinable, JOINABLE_READINGS)
        self.idle: IdleMeasure = check_choice("idle", idle, IDLE_MEASURES)
        self._models = GroupModels(worst_case)
        self.worst_case = worst_case

    def idle_share(self, candidate: Candidate, snapshot: ClusterSnapshot) -> float:
        """The group's idle-time percentage (as a fraction) under the ``idle`` measure."""
        group = candidate.group
        if self.idle == "bottleneck":
            model = self._models.model(group, snapshot)
            return 1.0 - model.t_load_s() / model.t_cycle_s()
        m = self._models.metrics(group, snapshot)
        n_r, n_t = len(group.rollout_nodes), len(group.train_nodes)
        busy = m.rollout_utilisation * n_r + m.train_utilisation * n_t
        return 1.0 - busy / (n_r + n_t)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """The most idle group that can take the job and its least loaded nodes."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        candidates = joinable_groups(
            job, profile, snapshot, max_group_size=self.max_group_size,
            joinable=self.joinable, models=self._models,
        )
        if not candidates:
            return new_group_placement(job, profile, snapshot)
        # Candidates come in creation order and max() keeps the first maximum: the older
        # group wins a tie.
        best = max(candidates, key=lambda c: self.idle_share(c, snapshot))
        load = self._models.node_load_s(best.group, snapshot)

        def least_loaded(nodes: tuple[str, ...], k: int) -> tuple[str, ...]:
            return tuple(sorted(nodes, key=lambda n: (load[n], len(n), n))[:k])

        return Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING,
            group_id=best.group.group_id,
            rollout_nodes=least_loaded(best.rollout_nodes, profile.rollout_nodes),
            train_nodes=least_loaded(best.train_nodes, profile.train_nodes),
            profile=profile,
        )
