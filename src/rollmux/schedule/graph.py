"""Intra-group schedules as cyclic phase graphs (timed event graphs).

A *schedule* of a co-execution group fixes, for one meta-iteration, which phases
run (every job's rollouts and trainings, possibly several of each) and the cyclic
order in which each node serves them. Executing it as early as possible is a
max-plus linear system; :mod:`rollmux.schedule.maxplus` computes its exact
steady-state period and :mod:`rollmux.schedule.eventsim` executes it.

Conventions (see docs/model.md, "Intra-group schedules"):

* A phase occupies every node in ``nodes`` for ``duration_s`` seconds (gang
  scheduling: a job that spans two rollout nodes uses both at once).
* Node keys are ``("R", id)`` for rollout nodes and ``("T", id)`` for training
  nodes, so the two pools never share a key.
* ``job_chains[j]`` lists job ``j``'s phases in execution order within one
  meta-iteration (``R1, T1, R2, T2, ...``); the last phase precedes the first
  phase of the next meta-iteration. ``lag_s[j]`` is a delay on that wrap-around
  edge that occupies no node (unused by the paper's model, kept for sync
  experiments).
* ``node_sequences[node]`` lists the phases that node serves, in order; the last
  precedes the first of the next meta-iteration.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Literal

from rollmux.phases import appearances

PhaseKind = Literal["rollout", "train"]
NodeKey = tuple[str, Hashable]

ROLLOUT: PhaseKind = "rollout"
TRAIN: PhaseKind = "train"


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase occurrence inside a meta-iteration."""

    job: int
    kind: PhaseKind
    occurrence: int
    duration_s: float
    nodes: tuple[NodeKey, ...]


@dataclass(frozen=True, slots=True)
class Schedule:
    """A cyclic schedule of one co-execution group (one meta-iteration)."""

    phases: tuple[Phase, ...]
    job_chains: tuple[tuple[int, ...], ...]
    node_sequences: tuple[tuple[NodeKey, tuple[int, ...]], ...]
    lag_s: tuple[float, ...]

    @property
    def n_jobs(self) -> int:
        """Number of jobs in the group."""
        return len(self.job_chains)

    def multiplicity(self) -> tuple[int, ...]:
        """Iterations each job completes per meta-iteration."""
        return tuple(len(chain) // 2 for chain in self.job_chains)

    def nodes(self) -> tuple[NodeKey, ...]:
        """All nodes the schedule uses, rollout nodes first."""
        return tuple(node for node, _ in self.node_sequences)

    def busy_s(self) -> dict[NodeKey, float]:
        """Busy seconds per node in one meta-iteration."""
        return {
            node: sum(self.phases[p].duration_s for p in seq) for node, seq in self.node_sequences
        }


# --------------------------------------------------------------------------- validation


def check_durations(name: str, values: Sequence[float] | Iterable[float]) -> tuple[float, ...]:
    """Return ``values`` as floats, or raise ``ValueError`` naming ``name`` and the bad entry."""
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a sequence of numbers, got {values!r}") from exc
    if not out:
        raise ValueError(f"{name}: expected at least one duration, got an empty sequence")
    for i, v in enumerate(out):
        if not math.isfinite(v) or v <= 0.0:
            raise ValueError(f"{name}[{i}] = {v!r}: durations must be positive and finite")
    return out


def _check_node_id(name: str, j: int, node: object) -> Hashable:
    if isinstance(node, bool) or node is None:
        raise ValueError(f"{name}[{j}] = {node!r}: unknown node id (use an int >= 0 or a str)")
    if isinstance(node, int):
        if node < 0:
            raise ValueError(f"{name}[{j}] = {node!r}: unknown node id (negative)")
        return node
    if isinstance(node, str) and node:
        return node
    raise ValueError(f"{name}[{j}] = {node!r}: unknown node id (use an int >= 0 or a str)")


def normalise_pinning(
    name: str, pinning: Sequence[object] | None, n_jobs: int
) -> tuple[tuple[Hashable, ...], ...]:
    """Turn a per-job pinning (a node id or a collection of ids per job) into tuples of ids.

    ``None`` pins every job to node ``0``. Raises ``ValueError`` naming ``name``.
    """
    if pinning is None:
        return tuple((0,) for _ in range(n_jobs))
    if isinstance(pinning, str | bytes) or not isinstance(pinning, Sequence):
        raise ValueError(f"{name}: expected one node (or node collection) per job, got {pinning!r}")
    if len(pinning) != n_jobs:
        raise ValueError(f"{name}: expected {n_jobs} entries (one per job), got {len(pinning)}")
    out: list[tuple[Hashable, ...]] = []
    for j, entry in enumerate(pinning):
        if type(entry) is int and entry >= 0:  # fast path: the ABC checks below are slow
            out.append((entry,))
            continue
        if (  # fast path: a tuple of distinct ints >= 0 (a group's pinning) is already normal
            type(entry) is tuple
            and entry
            and all(type(n) is int and n >= 0 for n in entry)
            and len(set(entry)) == len(entry)
        ):
            out.append(entry)
            continue
        if isinstance(entry, Iterable) and not isinstance(entry, str):
            ids = tuple(_check_node_id(name, j, n) for n in entry)
            if not ids:
                raise ValueError(f"{name}[{j}] = {entry!r}: a job needs at least one node")
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name}[{j}] = {entry!r}: repeated node id")
        else:
            ids = (_check_node_id(name, j, entry),)
        out.append(ids)
    return tuple(out)


def check_order(name: str, order: Sequence[int] | None, n_jobs: int) -> tuple[int, ...]:
    """Return ``order`` as a tuple, or raise ``ValueError`` if it is not a permutation of jobs.

    Entries must be integers (numpy integers included); floats and bools are rejected.
    """
    if order is None:
        return tuple(range(n_jobs))
    if type(order) is tuple and all(type(o) is int for o in order):
        out = order  # fast path: already a tuple of ints (the ABC checks below are slow)
    else:
        if isinstance(order, str | bytes) or not isinstance(order, Iterable):
            raise ValueError(_order_message(name, order, n_jobs))
        items = list(order)
        if any(isinstance(o, bool) or not isinstance(o, Integral) for o in items):
            raise ValueError(_order_message(name, order, n_jobs))
        out = tuple(int(o) for o in items)
    if sorted(out) != list(range(n_jobs)):
        raise ValueError(_order_message(name, order, n_jobs))
    return out


def _order_message(name: str, order: object, n_jobs: int) -> str:
    return f"{name} = {order!r}: expected a permutation of 0..{n_jobs - 1}"


# --------------------------------------------------------------------------- builders


def build_schedule(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_nodes: Sequence[Sequence[Hashable]],
    train_nodes: Sequence[Sequence[Hashable]],
    node_orders: Mapping[NodeKey, Sequence[int]],
    lag_s: Sequence[float] | None = None,
) -> Schedule:
    """Build a schedule from per-node sequences of job indices.

    ``node_orders[("R", n)]`` lists the jobs node ``n`` serves in one meta-iteration,
    a job appearing once per iteration it runs there; the k-th appearance of job j
    is j's k-th rollout (or training on ``("T", n)``). Every node of a job must list
    the job equally often, and its rollout and training nodes must agree, so that the
    job runs whole iterations. Durations must already be validated.
    """
    n = len(rollout_s)
    mult: dict[int, int] = {}
    for pool, pins in (("R", rollout_nodes), ("T", train_nodes)):
        for j in range(n):
            for node in pins[j]:
                seq = node_orders.get((pool, node))
                if seq is None:
                    raise ValueError(f"node_orders: no sequence for node {(pool, node)!r}")
                count = sum(1 for x in seq if x == j)
                if mult.setdefault(j, count) != count:
                    raise ValueError(
                        f"node_orders[{(pool, node)!r}]: job {j} appears {count} times, "
                        f"other nodes of the job list it {mult[j]} times"
                    )
    for node, seq in node_orders.items():
        pool, node_id = node
        pins = rollout_nodes if pool == "R" else train_nodes
        for j in seq:
            if not 0 <= j < n or node_id not in pins[j]:
                raise ValueError(f"node_orders[{node!r}]: job {j!r} is not pinned to this node")
    for j in range(n):
        if mult.get(j, 0) < 1:
            raise ValueError(f"node_orders: job {j} never runs")

    phases: list[Phase] = []
    index: dict[tuple[int, str, int], int] = {}
    chains: list[tuple[int, ...]] = []
    for j in range(n):
        chain = []
        r_nodes = tuple(("R", x) for x in rollout_nodes[j])
        t_nodes = tuple(("T", x) for x in train_nodes[j])
        for k in range(mult[j]):
            steps = ((ROLLOUT, rollout_s[j], r_nodes), (TRAIN, train_s[j], t_nodes))
            for kind, dur, nodes in steps:
                index[(j, kind, k)] = len(phases)
                chain.append(len(phases))
                phases.append(Phase(j, kind, k, float(dur), nodes))
        chains.append(tuple(chain))

    sequences = []
    for node in sorted(node_orders, key=lambda key: (key[0] != "R", str(type(key[1])), key[1])):
        kind = ROLLOUT if node[0] == "R" else TRAIN
        order = node_orders[node]
        seq = tuple(index[(j, kind, k)] for j, k in zip(order, appearances(order), strict=True))
        sequences.append((node, seq))
    lags = tuple(float(x) for x in lag_s) if lag_s is not None else (0.0,) * n
    return Schedule(tuple(phases), tuple(chains), tuple(sequences), lags)


def round_robin_node_orders(
    rollout_nodes: Sequence[Sequence[Hashable]],
    train_nodes: Sequence[Sequence[Hashable]],
    order: Sequence[int],
    multiplicity: Sequence[int] | None = None,
) -> dict[NodeKey, list[int]]:
    """Per-node sequences of the round-robin schedule: ``order`` restricted to each node.

    With a ``multiplicity``, job j appears ``multiplicity[j]`` times in a row at its place.
    """
    mult = multiplicity if multiplicity is not None else [1] * len(order)
    orders: dict[NodeKey, list[int]] = {}
    for pool, pins in (("R", rollout_nodes), ("T", train_nodes)):
        for j in order:
            for node in pins[j]:
                orders.setdefault((pool, node), []).extend([j] * mult[j])
    return orders


def repeated_layout(
    rollout_s: Sequence[float], train_s: Sequence[float], multiplicity: Sequence[int]
) -> tuple[list[int], list[float], list[list[int]]]:
    """The events of a schedule with multiplicities as plain lists: ``(offsets, durations,
    chains)``.

    Job j's k-th rollout is event ``offsets[j] + 2k`` and its k-th training the event
    after it; ``chains[j]`` runs through them in order. :func:`order_events` places a
    node's order on these events; with them, the lists
    :func:`rollmux.schedule.maxplus.period_of_event_graph` takes (lags 0).
    """
    offsets: list[int] = []
    durations: list[float] = []
    chains: list[list[int]] = []
    for r, t, m in zip(rollout_s, train_s, multiplicity, strict=True):
        offsets.append(len(durations))
        chains.append(list(range(len(durations), len(durations) + 2 * m)))
        durations.extend([r, t] * m)
    return offsets, durations, chains


def order_events(offsets: Sequence[int], order: Sequence[int], train: bool) -> list[int]:
    """A node's cyclic order of job indices as events of :func:`repeated_layout`.

    The k-th appearance of job j is j's k-th rollout, or training on a training node
    (:func:`rollmux.phases.appearances`).
    """
    pool = 1 if train else 0
    return [offsets[j] + 2 * k + pool for j, k in zip(order, appearances(order), strict=True)]


def round_robin_lists(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    order: Sequence[int] | None = None,
) -> tuple[list[float], list[list[int]], list[float], list[list[int]]]:
    """The round-robin event graph as plain lists ``(durations, chains, lags, sequences)``.

    Event ``j`` is job j's rollout and event ``n + j`` its training; this is the
    allocation-light form that :func:`rollmux.meta_iteration_time` feeds to
    :func:`rollmux.schedule.maxplus.period_of_event_graph`. Validates like
    :func:`round_robin_schedule`.
    """
    r = check_durations("rollout_s", rollout_s)
    t = check_durations("train_s", train_s)
    n = len(r)
    if len(t) != n:
        raise ValueError(
            f"train_s: expected {n} durations (one per job, like rollout_s), got {len(t)}"
        )
    r_nodes = normalise_pinning("rollout_node", rollout_node, n)
    t_nodes = normalise_pinning("train_node", train_node, n)
    perm = check_order("order", order, n)
    sequences: dict[NodeKey, list[int]] = {}
    for j in perm:
        for node in r_nodes[j]:
            sequences.setdefault(("R", node), []).append(j)
    for j in perm:
        for node in t_nodes[j]:
            sequences.setdefault(("T", node), []).append(n + j)
    return (
        [*r, *t],
        [[j, n + j] for j in range(n)],
        [0.0] * n,
        list(sequences.values()),
    )


def round_robin_schedule(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    order: Sequence[int] | None = None,
) -> Schedule:
    """The paper's round-robin meta-iteration: one rollout and one training per job.

    Arguments are those of :func:`rollmux.meta_iteration_time` and are validated the
    same way (``ValueError`` naming the argument and the offending value).
    """
    r = check_durations("rollout_s", rollout_s)
    t = check_durations("train_s", train_s)
    if len(r) != len(t):
        raise ValueError(
            f"train_s: expected {len(r)} durations (one per job, like rollout_s), got {len(t)}"
        )
    r_nodes = normalise_pinning("rollout_node", rollout_node, len(r))
    t_nodes = normalise_pinning("train_node", train_node, len(r))
    perm = check_order("order", order, len(r))
    orders = round_robin_node_orders(r_nodes, t_nodes, perm)
    return build_schedule(r, t, r_nodes, t_nodes, orders)
