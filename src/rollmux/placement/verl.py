"""veRL baseline: co-located, every phase time-shares the job's own training GPUs (H800).

The job gets its training GPU count (whole nodes) of its training GPU type and no
rollout GPU. Its iteration is :func:`rollmux.closedform.verl`: rollout rescaled to the
training GPUs' HBM bandwidth, plus training, plus two engine switches, and no
cross-cluster weight sync. Only the training state is held in host memory.
"""

from __future__ import annotations

from rollmux.closedform import verl
from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    new_group_placement,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind

__all__ = ["VerlPolicy"]


class VerlPolicy(PlacementPolicy):
    """Each job alone on new training-GPU nodes running rollout and training in turn."""

    name = "verl"
    options = frozenset()
    shares_nodes = False

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """A co-located group of ``ceil(train_gpus / gpus_per_node)`` new training nodes."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        metrics = verl(profile.phases, profile.pools)
        return new_group_placement(
            job,
            profile,
            snapshot,
            strategy=Strategy.COLOCATED,
            kind=GroupKind.COLOCATED,
            rollout_nodes=0,
            meta_iteration_s=metrics.iteration_s,
        )
