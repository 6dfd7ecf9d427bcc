"""Random baseline: a random group that can take the job (or a new one), random nodes in it.

Paper sec. 6.5: "Assigns arriving jobs to a random group (or a new one) that can
accommodate them. The job is placed on random rollout and train nodes within this
group." It checks no SLO and provisions no node into an existing group. Options
(docs/placement.md, "Random and Greedy: the readings"):

* ``joinable``: ``"under-utilised"`` (default; only groups whose Fig. 6 status is
  under-utilised, ``T_load < T_cycle``, with room for the job's state) or
  ``"memory-only"`` (any group with room for its state); see
  :mod:`rollmux.placement.joinable`.
* ``new_group``: ``"option"`` (default; a new group is one more choice, drawn uniformly
  with the joinable groups) or ``"fallback"`` (a uniformly drawn joinable group, a new
  group only when there is none).
* ``worst_case``: phase times of the status check, worst case (max tokens, default) or
  expected.

The joinable groups are taken in creation order; inside the chosen group the rollout and
training nodes are drawn uniformly without replacement among those with room. Draws come
from the ``numpy.random.Generator`` passed as ``rng`` (or one seeded with ``seed``), so a
run is deterministic for a seed and a sequence of calls.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

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
    GroupModels,
    Joinable,
    check_choice,
    joinable_groups,
)
from rollmux.placement.snapshot import ClusterSnapshot

__all__ = ["NEW_GROUP_RULES", "NewGroupRule", "RandomPolicy"]

NewGroupRule = Literal["option", "fallback"]
NEW_GROUP_RULES: tuple[NewGroupRule, ...] = ("option", "fallback")


class RandomPolicy(PlacementPolicy):
    """A random group that can take the job (or a new one), random nodes; no SLO check."""

    name = "random"
    options = frozenset({"rng", "seed", "max_group_size", "joinable", "new_group", "worst_case"})

    def __init__(
        self,
        rng: np.random.Generator | None = None,
        seed: int = 0,
        max_group_size: int = 5,
        joinable: Joinable = "under-utilised",
        new_group: NewGroupRule = "option",
        worst_case: bool = True,
    ) -> None:
        """Use ``rng``, or a generator seeded with ``seed``; validate the options."""
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.rng = np.random.default_rng(seed) if rng is None else rng
        self.max_group_size = check_max_group_size(max_group_size)
        self.joinable: Joinable = check_choice("joinable", joinable, JOINABLE_READINGS)
        self.new_group: NewGroupRule = check_choice("new_group", new_group, NEW_GROUP_RULES)
        self._models = GroupModels(worst_case)
        self.worst_case = worst_case

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Draw a joinable group (or a new one), then nodes inside it."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        options = joinable_groups(
            job, profile, snapshot, max_group_size=self.max_group_size,
            joinable=self.joinable, models=self._models,
        )
        if self.new_group == "option":
            pick = int(self.rng.integers(len(options) + 1))
        else:
            pick = int(self.rng.integers(len(options))) if options else len(options)
        if pick == len(options):
            return new_group_placement(job, profile, snapshot)
        chosen = options[pick]
        rollout = self.rng.choice(len(chosen.rollout_nodes), size=profile.rollout_nodes,
                                  replace=False)
        train = self.rng.choice(len(chosen.train_nodes), size=profile.train_nodes, replace=False)
        return Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING,
            group_id=chosen.group.group_id,
            rollout_nodes=tuple(chosen.rollout_nodes[i] for i in sorted(int(x) for x in rollout)),
            train_nodes=tuple(chosen.train_nodes[i] for i in sorted(int(x) for x in train)),
            profile=profile,
        )
