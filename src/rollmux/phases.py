"""What a phase does when it runs: the one statement every simulator follows.

The cluster replay engine (:class:`rollmux.sim.engine.EventModel`), the micro-benchmark
simulation (:func:`rollmux.sim.stochastic.simulate_woven`) and the reference simulator
(:func:`rollmux.schedule.eventsim.simulate`) all execute phases by these rules, so they
agree on every period and finish time (tests/test_phase_semantics.py checks it). The
equations are in docs/stochastic.md (S1) and docs/metrics.md ("The two fidelity levels").

**Switch** (:func:`switch_paid`). A phase first pays a switch, on its nodes:

* *cold* when the job's state is not resident on one of the phase's nodes (the first
  phase on a node after a regrouping moved the job, or after a resubmission);
* else *warm* for a co-located (veRL) job, whose rollout and training take turns on the
  same GPUs, and for a job one of whose nodes of the phase's pool hosts another job;
* else none.

**Rollout** (:func:`rollout_release_s`). A rollout needs ``switch + node_s`` seconds of
its nodes at full capacity, where ``node_s`` is how long the rollout holds all its GPUs
(the whole rollout without long-tail migration). While migrated tails of earlier rollouts
still hold a share of a node's GPUs, the rollout progresses at the smallest free share
over its nodes (the capacity-share approximation, eq. S1); it releases its nodes when
that work is done.

**Long-tail migration** (paper sec. 4.3, "Long-Tail Migration": "When a phase enters a
tail-bound state, triggered when a threshold of responses (e.g., 80%) have completed,
the system interrupts the execution, consolidates the remaining long-tail responses onto
a small subset of workers, and immediately starts the next job's rollout phase on the
newly freed rollout GPUs"). When the rollout releases its nodes, its tail keeps
``tail_gpus`` GPUs for ``tail_s`` seconds (:func:`tail_gpus_per_node`: they fill the
job's rollout nodes in order, up to the job's GPUs on each) and only the other GPUs are
free for the next rollout on those nodes. The job's rollout is complete, and its training
may start, when the tail ends.

**Training and sync** (:func:`training_occupancy_s`). Training holds its nodes for
``switch + train_s + sync_s``: the weight sync (topology-aware or flat, chosen by the
caller) runs at the end of training on the training nodes, before they are released; a
co-located job has no sync (its weights do not move).

**Order.** Every node serves its jobs in a cyclic order, one phase at a time; a job may
appear more than once in a node's order (it then runs that many iterations per round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import IntEnum

__all__ = [
    "Switch",
    "Tail",
    "node_release_s",
    "rollout_release_s",
    "switch_paid",
    "switch_s",
    "tail_gpus_per_node",
    "training_occupancy_s",
]

#: A migrated tail on one node: (end time s, share of the node's GPUs it holds).
Tail = tuple[float, float]


class Switch(IntEnum):
    """The switch a phase pays before its work."""

    NONE = 0
    WARM = 1
    COLD = 2


def switch_paid(cold: bool, colocated: bool, shared: bool) -> Switch:
    """The switch of a phase.

    ``cold``: the job's state is not resident on one of the phase's nodes; ``colocated``:
    a veRL job; ``shared``: one of the phase's nodes hosts another job.
    """
    if cold:
        return Switch.COLD
    if colocated or shared:
        return Switch.WARM
    return Switch.NONE


def switch_s(switch: Switch, warm_s: float, cold_s: float) -> float:
    """Seconds of ``switch`` for a job with these warm and cold switch times."""
    if switch is Switch.COLD:
        return cold_s
    return warm_s if switch is Switch.WARM else 0.0


def training_occupancy_s(switch_time_s: float, train_s: float, sync_s: float) -> float:
    """How long training holds its nodes: switch, training, then the weight sync."""
    return switch_time_s + train_s + sync_s


def tail_gpus_per_node(tail_gpus: int, job_gpus_per_node: Sequence[int]) -> list[int]:
    """GPUs a migrated tail keeps on each of the job's rollout nodes, filled in order."""
    out = []
    left = tail_gpus
    for here in job_gpus_per_node:
        take = min(left, here)
        out.append(take)
        left -= take
    return out


def node_release_s(start_s: float, work_s: float, tails: Sequence[Tail]) -> float:
    """:func:`rollout_release_s` of a rollout on one node (the common case, made cheap)."""
    live = None
    for tail in tails:
        if tail[0] > start_s:
            if live is not None:  # several tails: the general computation
                return _release_s(start_s, work_s, [[t for t in tails if t[0] > start_s]])
            live = tail
    if live is None:
        return start_s + work_s
    # One tail: the free share until it ends, the whole node after.
    end, share = live
    rate = max(0.0, 1.0 - share)
    if rate > 0.0 and start_s + work_s / rate <= end:
        return start_s + work_s / rate
    return end + (work_s - rate * (end - start_s))


def rollout_release_s(start_s: float, work_s: float, tails: Sequence[Sequence[Tail]]) -> float:
    """When a rollout starting at ``start_s`` releases its nodes (eq. S1).

    ``work_s``: the switch plus ``node_s``, seconds of its nodes at full capacity;
    ``tails``: per node of the rollout, the migrated tails holding a share of it (those
    that end at or before ``start_s`` do not count). The rollout progresses at the
    smallest free share over its nodes.
    """
    if len(tails) == 1:
        return node_release_s(start_s, work_s, tails[0])
    # Nodes without a live tail are free (share 1): they never set the smallest share.
    busy = [live for live in ([t for t in node if t[0] > start_s] for node in tails) if live]
    if not busy:
        return start_s + work_s
    if len(busy) == 1:
        return node_release_s(start_s, work_s, busy[0])
    return _release_s(start_s, work_s, busy)


def _release_s(start_s: float, work_s: float, live: Sequence[Sequence[Tail]]) -> float:
    """Integrate the smallest free share over the nodes until ``work_s`` is done.

    ``live``: per node, the tails that end after ``start_s``.
    """
    breaks = sorted({end for node in live for end, _ in node})
    now, left = start_s, work_s
    for bp in [*breaks, math.inf]:
        rate = min(max(0.0, 1.0 - sum(share for end, share in node if end > now))
                   for node in live)
        if rate > 0.0 and now + left / rate <= bp:
            return now + left / rate
        left -= rate * (bp - now)
        now = bp
    raise AssertionError("unreachable: the last segment is unbounded")  # pragma: no cover
