"""Order search and alternative schedules of a co-execution group.

Utilisation of a schedule with steady-state period ``P`` (see docs/theorem1.md):

* pool utilisation ``U_pool = busy node-seconds of the pool / (nodes in pool * P)``,
  rollout pool = nodes ``("R", id)``, training pool = nodes ``("T", id)``;
* aggregate utilisation ``U_R + U_T`` (the quantity of the paper's Theorem 1, in [0, 2]);
* cost-weighted utilisation ``sum_pool w_pool * busy_pool / (sum_pool w_pool * nodes_pool * P)``:
  the busy share of the money spent on the group's nodes, in [0, 1]. Its denominator is
  the group's provisioned cost over one period, so it compares schedules of one group
  (and groups with each other) on the same scale.

Search (all exact searches early-stop only on a proven bound, so they stay exact):

* :func:`best_node_orders`: per-node orders, one iteration per job, minimising the period.
  Exhaustive over the product of per-node permutations up to ``exact_limit`` combinations,
  otherwise a heuristic (best global orders, then swap/insert local search per node).
* :func:`enumerate_schedules`: every schedule with multiplicities ``1..max_multiplicity``
  and every per-node order of the occurrences, deadlocked ones skipped.
* :func:`best_schedule`: the schedule of maximal (aggregate or cost-weighted) utilisation,
  by exhaustive branch and bound over multiplicity vectors and orders.

Symmetry pruning (``symmetry=True``) removes schedules whose event graph is a *retiming*
or a relabelling of one already seen, which leaves the period unchanged:

1. *Rotating a job that heads all its nodes.* If job j's next occurrence is first on every
   node it is pinned to, moving it to the end of all those sequences shifts j's first
   rollout and training one meta-iteration later. In the event graph every edge into that
   pair of events loses a token and every edge out gains one, so every cycle keeps its
   weight and token count and the maximum cycle mean (the period) is unchanged; the
   k-th appearance still maps to the k-th occurrence after relabelling, so the result is
   again a schedule. Rotating a *single* node's sequence is not such a retiming and does
   change the period (R: A B with T: B A serialises the jobs); we never prune it.
2. *Swapping identical jobs* (same durations, pinning and multiplicity) relabels the graph.

The search enumerates combinations in a fixed order and evaluates the first member of each
equivalence class (the orbit under these moves), so results are deterministic.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rollmux.schedule.graph import (
    NodeKey,
    Schedule,
    build_schedule,
    check_durations,
    normalise_pinning,
    order_events,
    repeated_layout,
    round_robin_node_orders,
)
from rollmux.schedule.maxplus import period_of_event_graph, steady_state_period

# Relative price of a training node (H800) to a rollout node (H20), paper Table 1.
H800_PER_H20_COST = 2.85
DEFAULT_POOL_WEIGHTS: Mapping[str, float] = {"R": 1.0, "T": H800_PER_H20_COST}
# Relative tolerance for comparing periods and utilisations of float schedules.
REL_TOL = 1e-9

Objective = Literal["aggregate", "cost_weighted"]
NodeOrders = dict[NodeKey, tuple[int, ...]]


# --------------------------------------------------------------------------- utilisation


def pool_busy_s(schedule: Schedule) -> dict[str, float]:
    """Busy node-seconds per pool (``"R"``, ``"T"``) in one meta-iteration."""
    busy = {"R": 0.0, "T": 0.0}
    for node, seconds in schedule.busy_s().items():
        busy[node[0]] += seconds
    return busy


def pool_node_counts(schedule: Schedule) -> dict[str, int]:
    """Number of nodes per pool (``"R"``, ``"T"``) the schedule uses."""
    counts = {"R": 0, "T": 0}
    for node in schedule.nodes():
        counts[node[0]] += 1
    return counts


def pool_utilisation(schedule: Schedule, period_s: float) -> dict[str, float]:
    """Busy fraction per pool: busy node-seconds / (nodes in pool x period); 0 if deadlocked."""
    busy = pool_busy_s(schedule)
    counts = pool_node_counts(schedule)
    if not math.isfinite(period_s):
        return {pool: 0.0 for pool in busy}
    return {pool: busy[pool] / (counts[pool] * period_s) if counts[pool] else 0.0 for pool in busy}


def aggregate_utilisation(schedule: Schedule, period_s: float) -> float:
    """Sum of the rollout- and training-pool utilisations (Theorem 1's objective, in [0, 2])."""
    return sum(pool_utilisation(schedule, period_s).values())


def cost_weighted_utilisation(
    schedule: Schedule, period_s: float, weights: Mapping[str, float] | None = None
) -> float:
    """Busy share of the group's node cost over one period, in [0, 1] (``weights`` per node)."""
    w = DEFAULT_POOL_WEIGHTS if weights is None else weights
    if not math.isfinite(period_s):
        return 0.0
    busy = pool_busy_s(schedule)
    counts = pool_node_counts(schedule)
    paid = sum(w[pool] * counts[pool] for pool in counts) * period_s
    return sum(w[pool] * busy[pool] for pool in busy) / paid


def utilisation(
    schedule: Schedule,
    period_s: float,
    objective: Objective = "aggregate",
    weights: Mapping[str, float] | None = None,
) -> float:
    """Utilisation of ``schedule`` under ``objective`` (``"aggregate"`` or ``"cost_weighted"``)."""
    if objective == "aggregate":
        return aggregate_utilisation(schedule, period_s)
    if objective == "cost_weighted":
        return cost_weighted_utilisation(schedule, period_s, weights)
    raise ValueError(f"objective = {objective!r}: expected 'aggregate' or 'cost_weighted'")


# --------------------------------------------------------------------------- the problem


@dataclass(frozen=True)
class _Group:
    """Validated durations and pinnings, the node list and per-job node indices."""

    rollout_s: tuple[float, ...]
    train_s: tuple[float, ...]
    rollout_nodes: tuple[tuple[Hashable, ...], ...]
    train_nodes: tuple[tuple[Hashable, ...], ...]
    nodes: tuple[NodeKey, ...]
    job_node_index: tuple[tuple[int, ...], ...]
    node_jobs: tuple[tuple[int, ...], ...]

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.rollout_s)

    def identical_pairs(self, mult: Sequence[int]) -> list[tuple[int, int]]:
        """Pairs of interchangeable jobs (same durations, pinning and multiplicity)."""
        pairs = []
        for i, k in itertools.combinations(range(self.n_jobs), 2):
            if self.signature(i) == self.signature(k) and mult[i] == mult[k]:
                pairs.append((i, k))
        return pairs

    def signature(self, j: int) -> tuple[object, ...]:
        """What makes job ``j`` interchangeable with another job."""
        return (self.rollout_s[j], self.train_s[j], self.rollout_nodes[j], self.train_nodes[j])

    def lower_bound_s(self, mult: Sequence[int]) -> float:
        """A proven lower bound on the period: per-node busy time and each job's own chain."""
        node_busy = [0.0] * len(self.nodes)
        for j in range(self.n_jobs):
            for k in self.job_node_index[j]:
                dur = self.rollout_s[j] if self.nodes[k][0] == "R" else self.train_s[j]
                node_busy[k] += mult[j] * dur
        chains = [m * (r + t) for m, r, t in zip(mult, self.rollout_s, self.train_s, strict=True)]
        return max(max(node_busy), max(chains))

    def busy_by_pool(self, mult: Sequence[int]) -> dict[str, float]:
        """Busy node-seconds per pool of one meta-iteration with multiplicities ``mult``."""
        busy = {"R": 0.0, "T": 0.0}
        for j in range(self.n_jobs):
            busy["R"] += mult[j] * self.rollout_s[j] * len(self.rollout_nodes[j])
            busy["T"] += mult[j] * self.train_s[j] * len(self.train_nodes[j])
        return busy

    def objective_numerator(
        self, mult: Sequence[int], objective: Objective, weights: Mapping[str, float] | None
    ) -> float:
        """``utilisation * period`` for multiplicities ``mult``: fixed by ``mult`` alone."""
        busy = self.busy_by_pool(mult)
        counts = {"R": 0, "T": 0}
        for node in self.nodes:
            counts[node[0]] += 1
        if objective == "aggregate":
            return sum(busy[p] / counts[p] for p in busy)
        if objective == "cost_weighted":
            w = DEFAULT_POOL_WEIGHTS if weights is None else weights
            return sum(w[p] * busy[p] for p in busy) / sum(w[p] * counts[p] for p in counts)
        raise ValueError(f"objective = {objective!r}: expected 'aggregate' or 'cost_weighted'")

    def schedule(self, state: tuple[tuple[int, ...], ...]) -> Schedule:
        """The schedule whose node ``k`` serves ``state[k]``."""
        orders = dict(zip(self.nodes, state, strict=True))
        return build_schedule(
            self.rollout_s, self.train_s, self.rollout_nodes, self.train_nodes, orders
        )


class _StatePeriods:
    """Exact periods of the states of one multiplicity vector, from plain lists.

    The same event lists :meth:`_Group.schedule` followed by
    :func:`rollmux.schedule.maxplus.steady_state_period` would build (phases laid out
    job by job, ``R1, T1, R2, T2, ...``; node sequences in the group's node order; lags
    0), so the period is the same float, without a :class:`Schedule` per state.
    ``certificate_sweeps`` as in :func:`rollmux.schedule.maxplus.period_of_event_graph`
    (``None``: the full certificate, as ``steady_state_period``).
    """

    def __init__(
        self, group: _Group, mult: Sequence[int], certificate_sweeps: int | None = None
    ) -> None:
        """Lay out the events: job j's k-th rollout and training are ``off[j] + 2k (+ 1)``."""
        self.offset, self.durations, self.chains = repeated_layout(
            group.rollout_s, group.train_s, tuple(mult)
        )
        self.lags = [0.0] * len(mult)
        self.is_train = [node[0] == "T" for node in group.nodes]
        self.certificate_sweeps = certificate_sweeps
        # Per node: its order -> its events (orders recur across the states of a vector).
        self.events: list[dict[tuple[int, ...], list[int]]] = [{} for _ in group.nodes]

    def __call__(self, state: tuple[tuple[int, ...], ...]) -> float:
        """Exact steady-state period of ``state`` (``inf`` if it deadlocks)."""
        sequences = []
        for seq, train, known in zip(state, self.is_train, self.events, strict=True):
            events = known.get(seq)
            if events is None:
                events = known[seq] = order_events(self.offset, seq, train)
            sequences.append(events)
        return period_of_event_graph(
            self.durations, self.chains, self.lags, sequences, self.certificate_sweeps
        )


def _make_group(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None,
    train_node: Sequence[object] | None,
) -> _Group:
    r = check_durations("rollout_s", rollout_s)
    t = check_durations("train_s", train_s)
    if len(r) != len(t):
        raise ValueError(
            f"train_s: expected {len(r)} durations (one per job, like rollout_s), got {len(t)}"
        )
    r_nodes = normalise_pinning("rollout_node", rollout_node, len(r))
    t_nodes = normalise_pinning("train_node", train_node, len(r))
    # Same node order as build_schedule, so states line up with Schedule.node_sequences.
    keys = round_robin_node_orders(r_nodes, t_nodes, range(len(r)))
    nodes = tuple(sorted(keys, key=lambda key: (key[0] != "R", str(type(key[1])), key[1])))
    index = {node: k for k, node in enumerate(nodes)}
    job_nodes = tuple(
        tuple(index[("R", x)] for x in r_nodes[j]) + tuple(index[("T", x)] for x in t_nodes[j])
        for j in range(len(r))
    )
    node_jobs = tuple(tuple(keys[node]) for node in nodes)
    return _Group(r, t, r_nodes, t_nodes, nodes, job_nodes, node_jobs)


# --------------------------------------------------------------------------- enumeration


def multiset_permutations(items: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Distinct permutations of ``items`` in lexicographic order (Narayana's algorithm)."""
    a = sorted(items)
    n = len(a)
    while True:
        yield tuple(a)
        i = n - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            return
        k = n - 1
        while a[k] <= a[i]:
            k -= 1
        a[i], a[k] = a[k], a[i]
        a[i + 1 :] = reversed(a[i + 1 :])


def _orbit(
    state: tuple[tuple[int, ...], ...],
    job_nodes: Sequence[Sequence[int]],
    swaps: Sequence[tuple[int, int]],
) -> set[tuple[tuple[int, ...], ...]]:
    """All states equivalent to ``state`` under whole-job rotations and identical-job swaps."""
    seen = {state}
    queue = deque([state])
    while queue:
        cur = queue.popleft()
        nxt = []
        for j, nodes in enumerate(job_nodes):
            if all(cur[k][0] == j for k in nodes):
                nxt.append(tuple(s[1:] + s[:1] if k in nodes else s for k, s in enumerate(cur)))
            if all(cur[k][-1] == j for k in nodes):
                nxt.append(tuple(s[-1:] + s[:-1] if k in nodes else s for k, s in enumerate(cur)))
        for i, k in swaps:
            relabel = {i: k, k: i}
            nxt.append(tuple(tuple(relabel.get(x, x) for x in s) for s in cur))
        for s in nxt:
            if s not in seen:
                seen.add(s)
                queue.append(s)
    return seen


def _states(
    group: _Group, mult: Sequence[int], symmetry: bool
) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Per-node sequences with job j appearing ``mult[j]`` times, one per equivalence class."""
    per_node = [
        list(multiset_permutations([j for j in jobs for _ in range(mult[j])]))
        for jobs in group.node_jobs
    ]
    swaps = group.identical_pairs(mult) if symmetry else []
    done: set[tuple[tuple[int, ...], ...]] = set()
    for state in itertools.product(*per_node):
        if symmetry:
            if state in done:
                continue
            done |= _orbit(state, group.job_node_index, swaps)
        yield state


def _multiplicity_vectors(
    group: _Group, max_multiplicity: int, symmetry: bool
) -> list[tuple[int, ...]]:
    """Multiplicity vectors; with ``symmetry``, non-increasing within identical jobs."""
    if max_multiplicity < 1:
        raise ValueError(f"max_multiplicity = {max_multiplicity!r}: expected an int >= 1")
    vectors = list(itertools.product(range(1, max_multiplicity + 1), repeat=group.n_jobs))
    if not symmetry:
        return vectors
    same = [
        (i, k)
        for i, k in itertools.combinations(range(group.n_jobs), 2)
        if group.signature(i) == group.signature(k)
    ]
    return [m for m in vectors if all(m[i] >= m[k] for i, k in same)]


@dataclass(frozen=True)
class ScheduleCandidate:
    """One schedule found by a search, with its exact period."""

    schedule: Schedule
    period_s: float
    multiplicity: tuple[int, ...]
    node_orders: NodeOrders


def enumerate_schedules(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    max_multiplicity: int = 2,
    *,
    symmetry: bool = True,
) -> Iterator[ScheduleCandidate]:
    """Every non-deadlocked schedule with multiplicities 1..``max_multiplicity``, every order.

    Per-node orders are multiset permutations of the job occurrences pinned to the node.
    With ``symmetry`` one representative per retiming/relabelling class is yielded (same
    period, see the module docstring). Arguments as in :func:`rollmux.meta_iteration_time`.
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    for mult in _multiplicity_vectors(group, max_multiplicity, symmetry):
        for state in _states(group, mult, symmetry):
            schedule = group.schedule(state)
            period = steady_state_period(schedule)
            if math.isfinite(period):
                orders = dict(zip(group.nodes, state, strict=True))
                yield ScheduleCandidate(schedule, period, mult, orders)


@dataclass(frozen=True)
class BestSchedule:
    """Result of :func:`best_schedule`."""

    schedule: Schedule
    period_s: float
    utilisation: float
    multiplicity: tuple[int, ...]
    node_orders: NodeOrders
    n_evaluated: int


def best_schedule(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    max_multiplicity: int = 2,
    *,
    objective: Objective = "aggregate",
    weights: Mapping[str, float] | None = None,
    symmetry: bool = True,
) -> BestSchedule:
    """Schedule of maximal utilisation over multiplicities 1..``max_multiplicity`` and all orders.

    Exhaustive branch and bound: utilisation is ``c(m) / P`` with ``c`` fixed by the
    multiplicity vector ``m`` and ``P >= LB(m)`` (per-node busy time, ``m_j (r_j + t_j)``),
    so vectors are visited by decreasing ``c(m) / LB(m)`` and the search stops once that
    bound cannot beat the best found; within a vector it stops when ``P = LB(m)``.
    Ties keep the first schedule found (vectors by decreasing bound, then fewer iterations).
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    vectors = _multiplicity_vectors(group, max_multiplicity, symmetry)
    scored = []
    for mult in vectors:
        num = group.objective_numerator(mult, objective, weights)
        lb = group.lower_bound_s(mult)
        # Rounded so that a repeated round-robin (same ratio) sorts after the original.
        scored.append((-float(f"{num / lb:.12g}"), sum(mult), mult, num, lb))
    scored.sort()
    # (utilisation, period, multiplicity, state, evaluations so far) of the best found.
    best: tuple[float, float, tuple[int, ...], tuple[tuple[int, ...], ...], int] | None = None
    n_evaluated = 0
    for neg_bound, _, mult, num, lb in scored:
        if best is not None and -neg_bound <= best[0] * (1.0 + REL_TOL):
            break
        period_of = _StatePeriods(group, mult)
        for state in _states(group, mult, symmetry):
            period = period_of(state)
            n_evaluated += 1
            if not math.isfinite(period):
                continue
            util = num / period
            if best is None or util > best[0] * (1.0 + REL_TOL):
                best = (util, period, mult, state, n_evaluated)
            if period <= lb * (1.0 + REL_TOL):
                break
    if best is None:  # unreachable: round-robin orders never deadlock
        raise RuntimeError("best_schedule: every schedule deadlocked")
    util, period, mult, state, _ = best
    return BestSchedule(
        group.schedule(state),
        period,
        util,
        mult,
        dict(zip(group.nodes, state, strict=True)),
        n_evaluated,
    )


# --------------------------------------------------------------------------- order search


@dataclass(frozen=True)
class OrderSearchResult:
    """Result of :func:`best_node_orders`."""

    node_orders: NodeOrders
    period_s: float
    lower_bound_s: float
    exact: bool
    n_evaluated: int


def _search_space_size(group: _Group) -> int:
    return math.prod(math.factorial(len(jobs)) for jobs in group.node_jobs)


def best_node_orders(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    *,
    exact_limit: int = 20_000,
    n_global_orders: int = 120,
    n_starts: int = 3,
    seed: int = 0,
    symmetry: bool = True,
) -> OrderSearchResult:
    """Per-node job orders (one iteration per job) minimising the exact steady-state period.

    Exhaustive (with the symmetry pruning of the module docstring, stopping early only at
    the lower bound ``max(T_load, T_cycle)``) when the product of per-node factorials is at
    most ``exact_limit``; otherwise a heuristic: the ``n_starts`` best of all global orders
    (or ``n_global_orders`` seeded random ones when ``n! > n_global_orders``) restricted to
    each node, each improved by first-improvement local search over swaps and insertions
    within one node's order. ``exact`` tells which ran (or that the bound was reached).
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    mult = (1,) * group.n_jobs
    lb = group.lower_bound_s(mult)
    if _search_space_size(group) <= exact_limit:
        best_state: tuple[tuple[int, ...], ...] | None = None
        best_period = math.inf
        n_evaluated = 0
        period_of = _StatePeriods(group, mult)
        for state in _states(group, mult, symmetry):
            period = period_of(state)
            n_evaluated += 1
            if period < best_period * (1.0 - REL_TOL):
                best_state, best_period = state, period
            if best_period <= lb * (1.0 + REL_TOL):
                break
        assert best_state is not None
        return OrderSearchResult(
            dict(zip(group.nodes, best_state, strict=True)), best_period, lb, True, n_evaluated
        )
    return _heuristic_orders(group, lb, n_global_orders, n_starts, seed)


def _heuristic_orders(
    group: _Group, lb: float, n_global_orders: int, n_starts: int, seed: int
) -> OrderSearchResult:
    """Best global orders, then per-node swap/insert local search."""
    n = group.n_jobs
    if math.factorial(n) <= n_global_orders:
        orders = list(itertools.permutations(range(n)))
    else:
        rng = np.random.default_rng(seed)
        orders = [tuple(range(n))]
        orders += [tuple(int(x) for x in rng.permutation(n)) for _ in range(n_global_orders - 1)]
    cache: dict[tuple[tuple[int, ...], ...], float] = {}
    periods = _StatePeriods(group, (1,) * n)

    def period_of(state: tuple[tuple[int, ...], ...]) -> float:
        if state not in cache:
            cache[state] = periods(state)
        return cache[state]

    def global_state(order: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        rank = {j: i for i, j in enumerate(order)}
        return tuple(tuple(sorted(jobs, key=rank.__getitem__)) for jobs in group.node_jobs)

    starts = sorted({global_state(o) for o in orders}, key=lambda s: (period_of(s), s))[:n_starts]
    best_state, best_period = starts[0], period_of(starts[0])
    for start in starts:
        state, period = start, period_of(start)
        improved = True
        while improved and period > lb * (1.0 + REL_TOL):
            improved = False
            for k, seq in enumerate(state):
                for cand in _neighbours(seq):
                    new = (*state[:k], cand, *state[k + 1 :])
                    p = period_of(new)
                    if p < period * (1.0 - REL_TOL):
                        state, period, improved = new, p, True
                        break
                if improved:
                    break
        if period < best_period * (1.0 - REL_TOL):
            best_state, best_period = state, period
        if best_period <= lb * (1.0 + REL_TOL):
            break
    exact = best_period <= lb * (1.0 + REL_TOL)
    return OrderSearchResult(
        dict(zip(group.nodes, best_state, strict=True)), best_period, lb, exact, len(cache)
    )


def _neighbours(seq: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Orders one swap or one insertion away from ``seq``."""
    n = len(seq)
    for a, b in itertools.combinations(range(n), 2):
        s = list(seq)
        s[a], s[b] = s[b], s[a]
        yield tuple(s)
    for a in range(n):
        for b in range(n):
            if b in (a, a + 1):
                continue
            s = list(seq)
            x = s.pop(a)
            s.insert(b if b < a else b - 1, x)
            yield tuple(s)
