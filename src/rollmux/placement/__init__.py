"""Placement: cluster snapshots, the policy interface and registry, and every policy.

``get_policy(name, **options)`` builds a registered policy; ``policy.place(job,
snapshot)`` returns a decision; ``apply`` / ``release`` return updated snapshots.
See docs/placement.md.
"""

from __future__ import annotations

from rollmux.placement.base import (
    Decision,
    JobProfile,
    NewNode,
    Placement,
    PlacementPolicy,
    Regrouping,
    Strategy,
    get_policy,
    job_profile,
    policy_names,
    policy_options,
    policy_shares_nodes,
    register_policy,
)
from rollmux.placement.snapshot import (
    ClusterSnapshot,
    GroupKind,
    GroupState,
    NodeState,
    PlacedJob,
    Pool,
    apply,
    empty_snapshot,
    release,
)

__all__ = [
    "ClusterSnapshot",
    "Decision",
    "GroupKind",
    "GroupState",
    "JobProfile",
    "NewNode",
    "NodeState",
    "PlacedJob",
    "Placement",
    "PlacementPolicy",
    "Pool",
    "Regrouping",
    "Strategy",
    "apply",
    "empty_snapshot",
    "get_policy",
    "job_profile",
    "policy_names",
    "policy_options",
    "policy_shares_nodes",
    "register_policy",
    "release",
]
