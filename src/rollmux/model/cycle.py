"""The group model's rules, stated once: a member's effective phases and a group's cycle.

A member of a group runs its phases by the rules of :mod:`rollmux.phases`; at the steady
state with expected (or worst-case) phase times, each of its phases holds its nodes for

* rollout: ``rollout_s`` plus the switch it pays (:func:`rollmux.phases.rollout_work_s`);
* training: ``train_s`` and its sync, plus the switch it pays
  (:func:`rollmux.phases.training_occupancy_s`);
* a co-located (veRL) job runs its rollout on its training GPUs, ``coloc_ratio`` times
  its rollout time, with no sync; both of its phases pay the warm switch.

The switch is :func:`rollmux.phases.switch_paid` of whether one of the phase's nodes hosts
another job (a resident job: never cold at the steady state). :func:`member_phases_s` is
the one function placement's group metrics (:class:`rollmux.group.CoExecutionGroup`,
RollMux's summaries), the analytic replay and the micro-benchmark tables take effective
phases from; the event model applies the same :mod:`rollmux.phases` functions phase by
phase. :func:`cycle` is the period of a group's node orders from the max-plus code
(:mod:`rollmux.schedule.maxplus`) and each member's iterations per cycle.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from rollmux.phases import (
    order_multiplicities,
    rollout_work_s,
    switch_paid,
    switch_s,
    training_occupancy_s,
)
from rollmux.phasetimes import PhaseTimes
from rollmux.schedule import meta_iteration_time
from rollmux.schedule.graph import order_events, repeated_layout
from rollmux.schedule.maxplus import period_of_event_graph

__all__ = ["cycle", "handover_s", "member_phases_s", "round_robin_period_s", "steady_switch_s"]

N = TypeVar("N", bound=Hashable)


def steady_switch_s(times: PhaseTimes, *, shared: bool, colocated: bool = False) -> float:
    """The switch a resident member's phase pays at the steady state (never cold).

    ``shared``: one of the phase's nodes hosts another job; ``colocated``: a veRL job.
    """
    return switch_s(switch_paid(False, colocated, shared), times.warm_switch_s,
                    times.cold_switch_s)


def handover_s(times: PhaseTimes, wake_up_s: float) -> float:
    """What a co-located phase of a time slice pays on top of its switch at a hand-over.

    Its state is snapshotted back to host DRAM at its end: the same copy as the warm
    switch's restore, the other way, without the wake-up constant ``wake_up_s``
    (``perf.warm_switch_const_s``). :func:`member_phases_s` adds it to each phase.
    """
    return max(0.0, times.warm_switch_s - wake_up_s)


def member_phases_s(times: PhaseTimes, sync_s: float, *, rollout_shared: bool,
                    train_shared: bool, colocated: bool = False, coloc_ratio: float = 1.0,
                    handover_s: float = 0.0) -> tuple[float, float]:
    """A member's effective (rollout, training) durations at the steady state.

    ``times``: its phase times (expected or worst case in ``rollout_s``/``train_s``);
    ``sync_s``: the sync of the chosen mode; ``rollout_shared``/``train_shared``: one of
    its nodes of that pool hosts another job; ``coloc_ratio``: a co-located job's rollout
    time on its training GPUs over that on its rollout GPUs; ``handover_s``: what a
    co-located phase pays on top when it hands its nodes over to or from another job of a
    time slice (its state is snapshotted at its end as well as restored at its start).
    """
    if colocated:
        switch = steady_switch_s(times, shared=False, colocated=True)
        snap = handover_s if train_shared else 0.0
        return (rollout_work_s(switch, times.rollout_s * coloc_ratio) + snap,
                training_occupancy_s(switch, times.train_s, 0.0) + snap)
    r_switch = steady_switch_s(times, shared=rollout_shared)
    t_switch = steady_switch_s(times, shared=train_shared)
    return (rollout_work_s(r_switch, times.rollout_s),
            training_occupancy_s(t_switch, times.train_s, sync_s))


def round_robin_period_s(
    times: Sequence[PhaseTimes],
    sync_s: Sequence[float],
    rollout_nodes: Sequence[Sequence[N]],
    train_nodes: Sequence[Sequence[N]],
) -> float:
    """The round-robin meta-iteration (s) of members at the steady state, in index order.

    Each member's effective phases are :func:`member_phases_s` with its phase shared where
    one of its nodes holds another member; the period is the max-plus code's
    (:func:`rollmux.schedule.meta_iteration_time`). The same floats as
    :meth:`rollmux.group.CoExecutionGroup.meta_iteration_s` of those members, without
    building (and validating) a group: what placement's exact check runs per candidate.
    """
    seen: set[N] = set()
    r_shared: set[N] = set()
    for pins in rollout_nodes:
        r_shared.update(n for n in pins if n in seen)
        seen.update(pins)
    seen = set()
    t_shared: set[N] = set()
    for pins in train_nodes:
        t_shared.update(n for n in pins if n in seen)
        seen.update(pins)
    rollout, train = [], []
    for t, sync, r_pins, t_pins in zip(times, sync_s, rollout_nodes, train_nodes, strict=True):
        r, tr = member_phases_s(t, sync, rollout_shared=not r_shared.isdisjoint(r_pins),
                                train_shared=not t_shared.isdisjoint(t_pins))
        rollout.append(r)
        train.append(tr)
    return meta_iteration_time(rollout, train, rollout_node=rollout_nodes,
                               train_node=train_nodes)


def cycle(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_nodes: Sequence[Sequence[N]],
    train_nodes: Sequence[Sequence[N]],
    node_orders: Mapping[N, Sequence[int]] | None = None,
) -> tuple[float, list[int]]:
    """The period (s) of a group's cycle and each member's multiplicity (iterations per cycle).

    ``rollout_s``/``train_s``: members' effective phases (:func:`member_phases_s`);
    ``rollout_nodes``/``train_nodes``: each member's nodes (keys distinct across pools);
    ``node_orders``: node -> cyclic order of member indices (a member may appear several
    times; default: round robin in index order). ValueError on orders that break
    :func:`rollmux.phases.order_multiplicities`; ``inf`` when they deadlock.
    """
    n = len(rollout_s)
    r_nodes = {node for pins in rollout_nodes for node in pins}
    if node_orders is None:
        mult = [1] * n
        sequences: dict[tuple[int, N], list[int]] = {}
        for j, pins in enumerate(rollout_nodes):
            for node in pins:
                sequences.setdefault((0, node), []).append(j)
        for j, pins in enumerate(train_nodes):
            for node in pins:
                sequences.setdefault((1, node), []).append(j)
    else:
        by_job = order_multiplicities(
            node_orders, {j: (*rollout_nodes[j], *train_nodes[j]) for j in range(n)})
        mult = [by_job[j] for j in range(n)]
        sequences = {(0 if node in r_nodes else 1, node): list(order)
                     for node, order in node_orders.items()}
    offsets, durations, chains = repeated_layout(rollout_s, train_s, mult)
    period = period_of_event_graph(
        durations, chains, [0.0] * n,
        [order_events(offsets, sequences[key], key[0] == 1)
         for key in sorted(sequences, key=_node_key)],
    )
    return period, mult


def _node_key(key: tuple[int, Hashable]) -> tuple[int, str, Hashable]:
    """Pool, then node: ints sort numerically among themselves (as sorted() did)."""
    pool, node = key
    return (pool, type(node).__name__, node)
