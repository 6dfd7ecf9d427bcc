"""Placement: cluster snapshots, the policy interface and registry, and every policy.

``get_policy(name, **options)`` builds a registered policy (a built-in, or a plug-in
declared by an installed package in the ``rollmux.policies`` entry-point group); ``policy.place(job,
snapshot)`` returns a decision; ``apply`` / ``release`` return updated snapshots.
See docs/placement.md.
"""

from __future__ import annotations

from rollmux.placement.base import (
    Decision,
    NewNode,
    Placement,
    PlacementPolicy,
    Regrouping,
    Strategy,
)
from rollmux.placement.registry import (
    ENTRY_POINT_GROUP,
    PluginError,
    builtin_policy_names,
    clear_registry,
    get_policy,
    policy_class,
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
    "ENTRY_POINT_GROUP",
    "ClusterSnapshot",
    "Decision",
    "GroupKind",
    "GroupState",
    "NewNode",
    "NodeState",
    "PlacedJob",
    "Placement",
    "PlacementPolicy",
    "PluginError",
    "Pool",
    "Regrouping",
    "Strategy",
    "apply",
    "builtin_policy_names",
    "clear_registry",
    "empty_snapshot",
    "get_policy",
    "policy_class",
    "policy_names",
    "policy_options",
    "policy_shares_nodes",
    "register_policy",
    "release",
]
