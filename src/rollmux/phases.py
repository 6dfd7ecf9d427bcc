"""What a phase does when it runs: the one statement every simulator follows.

The cluster replay's event model (:class:`rollmux.sim.eventmodel.EventModel`), the
micro-benchmark simulation (:func:`rollmux.sim.stochastic.simulate_woven`) and the
reference simulator (:func:`rollmux.schedule.eventsim.simulate`) all execute phases by
these rules, so they agree on every period and finish time; the replay's analytic model
(:class:`rollmux.sim.analytic.AnalyticModel`) runs every group at the steady state of the
same rules (tests/test_phase_semantics.py checks all four). The equations are in
docs/stochastic.md (S1) and docs/metrics.md ("The two fidelity levels").

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

**Order** (:func:`appearances`, :func:`order_multiplicities`). Every node serves its
jobs' phases of its pool (rollouts on a rollout node, trainings on a training node) one
at a time, in a cyclic order that it runs in a loop: a *cycle* is one pass through it.

* *Appearances.* A job may appear several times in a node's order. It appears on each of
  its nodes (both pools) equally often, ``m_j`` times, its *multiplicity*, and at least
  once: it runs ``m_j`` iterations per cycle. The k-th time job j appears on a rollout
  (training) node in a cycle is its k-th rollout (training) of that cycle, so the cycle's
  k-th rollout and k-th training of a job are one iteration.
* *When a phase starts.* A job's rollout waits for its previous training to end (with its
  sync); its training waits for its rollout to be complete (with its migrated tail). A
  phase on several nodes (gang) starts only when it is next on all of them and all are
  free; each node then moves on to the next appearance of its order.
* *Iterations.* An iteration counts when its training ends. A job that has run all its
  iterations leaves: its remaining appearances are passed over (the replay removes it at
  that instant). With expected phase times the cycles settle at the period ``P`` of the
  order's timed event graph (:mod:`rollmux.schedule.maxplus`), and job j runs ``m_j``
  iterations per ``P``: its achieved iteration time tends to ``P / m_j`` (docs/metrics.md).
* *A job joining a running group* takes the last place of each of its nodes' orders,
  once, from the current cycle of the most advanced of its nodes (nodes still in an
  earlier cycle pass over it in that cycle).
* *New orders for a running group* (a re-plan) take over at once: every node of the group
  starts a new cycle. A job whose rollout has started but not yet its training finishes
  that iteration first: its training takes the place of its last appearance on its
  training nodes in a cycle before the new one (a *carry-over* cycle, in which every other
  appearance is passed over, so carry-over trainings keep the new order among
  themselves). Every job then starts its next iteration at its first appearance of the
  new cycle. Orders are applied only once every job they name has been admitted.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from enum import IntEnum
from typing import TypeVar

__all__ = [
    "DeadlockError",
    "Switch",
    "Tail",
    "appearances",
    "node_release_s",
    "order_multiplicities",
    "rollout_release_s",
    "rollout_work_s",
    "switch_paid",
    "switch_s",
    "tail_gpus_per_node",
    "training_occupancy_s",
]

#: A migrated tail on one node: (end time s, share of the node's GPUs it holds).
Tail = tuple[float, float]

J = TypeVar("J", bound=Hashable)
N = TypeVar("N", bound=Hashable)


class DeadlockError(RuntimeError):
    """Node orders that contradict the job chains: no phase can start."""


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


def rollout_work_s(switch_time_s: float, node_s: float) -> float:
    """Seconds of its nodes at full capacity a rollout needs: its switch, then ``node_s``."""
    return node_s + switch_time_s


def training_occupancy_s(switch_time_s: float, train_s: float, sync_s: float) -> float:
    """How long training holds its nodes: switch, training, then the weight sync.

    Summed as ``(train_s + sync_s) + switch``: every model adds the terms in this order,
    so they agree to the bit.
    """
    return train_s + sync_s + switch_time_s


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


def appearances(order: Iterable[J]) -> list[int]:
    """Which appearance of its job each entry of a node's order is (0 for the job's first).

    The entry with appearance k of job j serves j's k-th rollout (training) of the cycle.
    """
    seen: dict[J, int] = {}
    out = []
    for job in order:
        k = seen.get(job, 0)
        seen[job] = k + 1
        out.append(k)
    return out


def order_multiplicities(orders: Mapping[N, Sequence[J]],
                         nodes_of: Mapping[J, Iterable[N]]) -> dict[J, int]:
    """Each job's multiplicity ``m_j`` in a group's node orders (its iterations per cycle).

    ``orders``: node -> cyclic order of jobs, for every node of the jobs in ``nodes_of``
    (job -> all its nodes, both pools). ValueError when an order lists a job that does not
    run on its node, leaves out one that does (each must appear at least once), or when a
    job appears a different number of times on two of its nodes (it runs whole
    iterations: a rollout per training).
    """
    on_node: dict[N, set[J]] = {}
    for job, nodes in nodes_of.items():
        for node in nodes:
            on_node.setdefault(node, set()).add(job)
    counts: dict[J, dict[N, int]] = {job: {} for job in nodes_of}
    for node, order in orders.items():
        here = on_node.get(node, set())
        strangers = [job for job in dict.fromkeys(order) if job not in here]
        if strangers:
            raise ValueError(f"node orders: the order of node {node} lists job(s) {strangers} "
                             f"that do not run on that node")
        for job in order:
            counts[job][node] = counts[job].get(node, 0) + 1
        missing = sorted((job for job in here if job not in counts or node not in counts[job]),
                         key=str)
        if missing:
            raise ValueError(f"node orders: the order of node {node} leaves out job(s) "
                             f"{missing} of that node (each must appear at least once)")
    out: dict[J, int] = {}
    for job, nodes in nodes_of.items():
        per_node = {node: counts[job].get(node, 0) for node in nodes}
        unlisted = [node for node in per_node if node not in orders]
        if unlisted:
            raise ValueError(f"node orders: no order for node(s) {unlisted} of job {job}")
        if len(set(per_node.values())) != 1:
            raise ValueError(f"node orders: job {job} appears {per_node} times on its nodes "
                             f"(node: count); it must appear equally often on each")
        out[job] = next(iter(per_node.values()))
    return out
