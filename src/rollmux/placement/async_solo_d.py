"""``async-solo-d``: Solo-D with asynchronous (off-policy) RL inside each job (docs/designs.md).

Every job runs alone on its own rollout and training GPUs, as Solo-D, but its rollout of
iteration k + 1 (up to ``staleness`` iterations ahead) overlaps its training of
iteration k, as AReaL and ROLL Flash do: rollout k may start once training
k - 1 - staleness has ended, training k once rollout k is complete and training k - 1
has ended. The steady period is the larger of rollout and training + sync (the sync
holds the training GPUs, as in every design here); the samples a training consumes were
generated up to ``staleness`` policy versions ago. The SLO compares against the job's
synchronous solo time, as for every policy.
"""

from __future__ import annotations

from dataclasses import replace

from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    admissible_profile,
    new_group_placement,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind

__all__ = ["AsyncSoloDPolicy", "check_staleness"]


def check_staleness(value: object) -> int:
    """``value`` as a staleness bound >= 1, else ValueError naming staleness."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"staleness must be an integer >= 1, got {value!r}")
    return value


class AsyncSoloDPolicy(PlacementPolicy):
    """Each job alone on new rollout and training nodes, rollout overlapping training."""

    name = "async-solo-d"
    options = frozenset({"staleness"})
    shares_nodes = False

    def __init__(self, staleness: int = 1) -> None:
        """``staleness``: how many iterations a rollout may run ahead of training (>= 1)."""
        self.staleness = check_staleness(staleness)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """A dedicated asynchronous group of new nodes sized to the job's own GPU counts."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        times = profile.times
        period = max(times.rollout_max_s, times.train_max_s + times.sync_s)
        return replace(new_group_placement(job, profile, snapshot, kind=GroupKind.ASYNC,
                                           meta_iteration_s=period),
                       staleness=self.staleness)
