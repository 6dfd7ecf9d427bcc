"""Solo-D baseline: every job alone on its own rollout and training GPUs, no multiplexing.

The job gets exactly the GPUs it asks for ("1:1": its rollout GPU count of its rollout
type and its training GPU count of its training type, rounded up to whole nodes) in a
dedicated group that no later job joins.
"""

from __future__ import annotations

from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    admissible_profile,
    new_group_placement,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind

__all__ = ["SoloDPolicy"]


class SoloDPolicy(PlacementPolicy):
    """Each job alone on new rollout and training nodes (disaggregated, never shared)."""

    name = "solo-d"
    options = frozenset()
    shares_nodes = False

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """A dedicated group of new nodes sized to the job's own GPU counts."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        return new_group_placement(
            job,
            profile,
            snapshot,
            kind=GroupKind.DEDICATED,
            meta_iteration_s=profile.times.solo_iteration_s,
        )
