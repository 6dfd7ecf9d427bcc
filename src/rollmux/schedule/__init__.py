"""Intra-group schedules: round-robin meta-iterations, their exact steady state,
event-level execution and order search."""

from __future__ import annotations

from collections.abc import Sequence

from rollmux.schedule.graph import (
    Phase,
    Schedule,
    build_schedule,
    round_robin_lists,
    round_robin_schedule,
)
from rollmux.schedule.maxplus import period_of_event_graph, steady_state_period

__all__ = [
    "Phase",
    "Schedule",
    "build_schedule",
    "meta_iteration_time",
    "round_robin_schedule",
    "steady_state_period",
]


def meta_iteration_time(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    order: Sequence[int] | None = None,
) -> float:
    """Exact steady-state meta-iteration time (s) of a round-robin co-execution group.

    ``rollout_s[j]`` and ``train_s[j]`` are job j's phase durations; ``rollout_node[j]``
    and ``train_node[j]`` its node (an id, or a collection of ids for a job spanning
    several nodes; default: one node per pool); ``order`` the per-iteration job order
    applied on every node (default: index order). Raises ``ValueError`` naming the
    argument and the offending value on bad input.
    """
    return period_of_event_graph(
        *round_robin_lists(rollout_s, train_s, rollout_node, train_node, order)
    )
