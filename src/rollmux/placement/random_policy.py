"""Random baseline: a uniformly random memory-feasible group (or a new one), random nodes.

"Feasible" means host memory and GPU type only: the job's state fits every chosen node
and the group has fewer than ``max_group_size`` jobs. It does *not* check SLOs; that is
what makes it a baseline (paper sec. 6.5). The options are the feasible shared groups in
creation order plus "a new group", drawn uniformly; inside a group the rollout and
training nodes are drawn uniformly without replacement among those with the memory.
Draws come from the ``numpy.random.Generator`` passed as ``rng`` (or one seeded with
``seed``), so a run is deterministic for a seed and a sequence of calls.
"""

from __future__ import annotations

import numpy as np

from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    check_max_group_size,
    feasible_nodes,
    new_group_placement,
    register_policy,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind

__all__ = ["RandomPolicy"]


@register_policy("random")
class RandomPolicy(PlacementPolicy):
    """A random memory-feasible group or a new one; no SLO check."""

    name = "random"
    options = frozenset({"rng", "seed", "max_group_size"})

    def __init__(
        self, rng: np.random.Generator | None = None, seed: int = 0, max_group_size: int = 5
    ) -> None:
        """Use ``rng``, or a generator seeded with ``seed``."""
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.rng = np.random.default_rng(seed) if rng is None else rng
        self.max_group_size = check_max_group_size(max_group_size)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Draw a feasible group (or a new one), then nodes inside it."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        options = []
        for group in sorted(snapshot.groups.values(), key=lambda g: g.serial):
            if group.kind is not GroupKind.SHARED or len(group.jobs) >= self.max_group_size:
                continue
            roll_ok, train_ok = feasible_nodes(group, snapshot, job, profile)
            if len(roll_ok) >= profile.rollout_nodes and len(train_ok) >= profile.train_nodes:
                options.append((group, roll_ok, train_ok))
        pick = int(self.rng.integers(len(options) + 1))
        if pick == len(options):
            return new_group_placement(job, profile, snapshot)
        group, roll_ok, train_ok = options[pick]
        rollout = self.rng.choice(len(roll_ok), size=profile.rollout_nodes, replace=False)
        train = self.rng.choice(len(train_ok), size=profile.train_nodes, replace=False)
        return Placement(
            job=job,
            strategy=Strategy.DIRECT_PACKING,
            group_id=group.group_id,
            rollout_nodes=tuple(roll_ok[i] for i in sorted(int(x) for x in rollout)),
            train_nodes=tuple(train_ok[i] for i in sorted(int(x) for x in train)),
            profile=profile,
        )
