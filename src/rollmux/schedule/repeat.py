"""Repetition-aware schedules: multiplicities and per-node orders of maximal utilisation.

:func:`repeat_schedule` searches schedules where job ``j`` runs ``m_j`` in
``1..max_multiplicity`` iterations per meta-iteration, in any per-node order, for the
highest (aggregate or cost-weighted) utilisation, optionally subject to a cap on each
job's average iteration time ``P / m_j`` (an SLO). It scales to groups where the
exhaustive :func:`rollmux.schedule.search.best_schedule` cannot run:

* multiplicity vectors are visited by decreasing ``c(m) / LB(m)``, with ``c(m)`` the
  utilisation numerator and ``LB(m)`` the proven period bound of
  :func:`rollmux.schedule.bounds.period_lower_bound_s`; the search stops once no
  remaining vector can beat the best schedule found (branch and bound, exact);
* per vector, orders are enumerated exhaustively (with the symmetry pruning of
  :mod:`rollmux.schedule.search`) when the space has at most ``exact_limit`` states;
  otherwise a heuristic: global occurrence orders (spread, grouped and seeded random
  ones) restricted to each node, then first-improvement local search relocating one
  entry within one node's order, until the period reaches ``LB(m)`` or
  ``local_evaluations`` periods were computed.

The search also stops once the best schedule reaches the linear-programme bound of
:func:`rollmux.schedule.bounds.utilisation_upper_bound` over every vector.
``upper_bound`` in the result is a proven bound on the optimum over multiplicities
``1..max_multiplicity`` (the LP, or the largest bound of a vector not searched to
optimality), and ``exact`` says whether the answer reaches it. Round-robin (every
``m_j = 1``, index order on every node) is always a candidate, so when it meets the caps
the result is never worse than it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rollmux.schedule.bounds import (
    group_utilisation_upper_bound,
    objective_coefficients,
    pair_caps,
    period_lower_bounds_s,
)
from rollmux.schedule.graph import Schedule, order_events, repeated_layout
from rollmux.schedule.maxplus import period_of_event_graph
from rollmux.schedule.search import (
    REL_TOL,
    NodeOrders,
    Objective,
    _Group,
    _make_group,
    _multiplicity_vectors,
    _states,
)

__all__ = ["PLANNER_SEARCH", "RepeatSchedule", "repeat_schedule", "steady_iterations_s"]

State = tuple[tuple[int, ...], ...]
# Bellman-Ford sweeps spent on the lower-bound certificate before Howard's iteration:
# schedules with repetitions rarely run at the simple bound, and a failed full
# certificate costs as much as Howard (measured: 2x faster searches, same periods).
CERTIFICATE_SWEEPS = 4
#: The search settings ``rollmux-repeat`` plans a group with (its defaults,
#: :class:`rollmux.placement.rollmux_repeat.RollMuxRepeatPolicy`).
PLANNER_SEARCH: dict[str, int] = {"max_multiplicity": 3, "exact_limit": 2_000,
                                  "local_evaluations": 200, "max_vectors": 48}


@dataclass(frozen=True)
class RepeatSchedule:
    """Result of :func:`repeat_schedule` (periods in seconds, job indices in orders)."""

    multiplicity: tuple[int, ...]
    node_orders: NodeOrders
    period_s: float
    utilisation: float
    round_robin_period_s: float
    round_robin_utilisation: float
    upper_bound: float
    exact: bool
    n_evaluated: int
    schedule: Schedule

    @property
    def gain(self) -> float:
        """Utilisation over round-robin's (``inf`` when round-robin misses a cap)."""
        if self.round_robin_utilisation <= 0.0:
            return math.inf
        return self.utilisation / self.round_robin_utilisation

    def iteration_s(self) -> tuple[float, ...]:
        """Each job's average iteration time ``P / m_j``."""
        return tuple(self.period_s / m for m in self.multiplicity)


class _Evaluator:
    """Exact periods of states with one multiplicity vector, from plain lists, cached."""

    def __init__(self, group: _Group, mult: Sequence[int]) -> None:
        """Lay out the events: job j's k-th rollout and training are ``off[j] + 2k (+ 1)``."""
        self.group = group
        self.mult = tuple(mult)
        self.offset, self.durations, self.chains = repeated_layout(
            group.rollout_s, group.train_s, self.mult)
        self.lags = [0.0] * len(self.mult)
        self.is_train = [node[0] == "T" for node in group.nodes]
        self.cache: dict[State, float] = {}

    def period(self, state: State) -> float:
        """Exact steady-state period of ``state`` (``inf`` if it deadlocks)."""
        hit = self.cache.get(state)
        if hit is not None:
            return hit
        sequences = [order_events(self.offset, seq, train)
                     for seq, train in zip(state, self.is_train, strict=True)]
        period = period_of_event_graph(
            self.durations, self.chains, self.lags, sequences, CERTIFICATE_SWEEPS
        )
        self.cache[state] = period
        return period


def _restrict(group: _Group, occurrences: Sequence[int]) -> State:
    """Per-node sequences: a global order of job occurrences restricted to each node."""
    members = [set(jobs) for jobs in group.node_jobs]
    return tuple(tuple(j for j in occurrences if j in on) for on in members)


def _start_states(
    group: _Group, mult: Sequence[int], rng: np.random.Generator, n_random: int
) -> Iterator[State]:
    """Global occurrence orders (never deadlocked): spread, grouped, reversed, random."""
    occ = [(j, k) for j, m in enumerate(mult) for k in range(m)]
    yield _restrict(group, [j for j, _ in sorted(occ, key=lambda o: ((o[1] + 0.5) / mult[o[0]],
                                                                     o[0]))])
    yield _restrict(group, [j for j, _ in occ])
    yield _restrict(group, [j for j, _ in sorted(occ, key=lambda o: ((o[1] + 0.5) / mult[o[0]],
                                                                     -o[0]))])
    flat = [j for j, _ in occ]
    for _ in range(n_random):
        yield _restrict(group, [flat[i] for i in rng.permutation(len(flat))])


def _relocations(seq: tuple[int, ...], order: np.ndarray) -> Iterator[tuple[int, ...]]:
    """Sequences one relocation of one entry away from ``seq``, in the order of ``order``."""
    n = len(seq)
    for idx in order:
        a, b = divmod(int(idx), n)
        if a == b or seq[a] == seq[b]:
            continue  # moving an entry among equal neighbours changes nothing
        s = list(seq)
        x = s.pop(a)
        s.insert(b, x)
        out = tuple(s)
        if out != seq:
            yield out


def _local_search(
    evaluator: _Evaluator,
    state: State,
    period: float,
    target_s: float,
    budget: int,
    rng: np.random.Generator,
) -> tuple[State, float]:
    """First-improvement relocations within one node, until ``target_s`` or ``budget``."""
    start = len(evaluator.cache)
    improved = True
    while improved and period > target_s * (1.0 + REL_TOL):
        improved = False
        for k in rng.permutation(len(state)):
            seq = state[int(k)]
            if len(set(seq)) < 2:
                continue
            for cand in _relocations(seq, rng.permutation(len(seq) * len(seq))):
                new = (*state[: int(k)], cand, *state[int(k) + 1 :])
                p = evaluator.period(new)
                if p < period * (1.0 - REL_TOL):
                    state, period, improved = new, p, True
                    break
                if len(evaluator.cache) - start >= budget:
                    return state, period
            if improved:
                break
    return state, period


def _space_size(group: _Group, mult: Sequence[int]) -> int:
    """Number of per-node order combinations (multiset permutations per node)."""
    size = 1
    for jobs in group.node_jobs:
        counts = [mult[j] for j in jobs]
        size *= math.factorial(sum(counts)) // math.prod(math.factorial(c) for c in counts)
    return size


def _best_orders(
    group: _Group,
    mult: Sequence[int],
    lower_bound_s: float,
    exact_limit: int,
    local_evaluations: int,
    n_random_starts: int,
    rng: np.random.Generator,
) -> tuple[State, float, bool, int]:
    """The shortest-period orders found for ``mult``: (state, period, exact, evaluations)."""
    evaluator = _Evaluator(group, mult)
    target = lower_bound_s * (1.0 + REL_TOL)
    if _space_size(group, mult) <= exact_limit:
        best_state: State | None = None
        best = math.inf
        for state in _states(group, mult, True):
            p = evaluator.period(state)
            if p < best * (1.0 - REL_TOL):
                best_state, best = state, p
            if best <= target:
                break
        assert best_state is not None
        return best_state, best, True, len(evaluator.cache)
    starts = list(dict.fromkeys(_start_states(group, mult, rng, n_random_starts)))
    scored = sorted(((evaluator.period(s), i) for i, s in enumerate(starts)))
    period, index = scored[0]
    state = starts[index]
    if period > target:
        state, period = _local_search(evaluator, state, period, lower_bound_s,
                                      local_evaluations, rng)
    return state, period, period <= target, len(evaluator.cache)


def repeat_schedule(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    *,
    max_multiplicity: int = 3,
    objective: Objective = "aggregate",
    weights: Mapping[str, float] | None = None,
    max_iteration_s: Sequence[float] | None = None,
    rollout_work_s: Sequence[float] | None = None,
    train_work_s: Sequence[float] | None = None,
    exact_limit: int = 2_000,
    local_evaluations: int = 300,
    n_random_starts: int = 4,
    max_vectors: int | None = None,
    min_gain: float = 0.0,
    seed: int = 0,
    per_iteration: bool = False,
) -> RepeatSchedule | None:
    """The highest-utilisation schedule found with multiplicities ``1..max_multiplicity``.

    ``max_iteration_s[j]`` caps job j's average iteration time ``P / m_j`` (e.g.
    ``SLO_j * T_solo_j``); ``None`` when no schedule meets the caps (round-robin included).
    ``rollout_work_s``/``train_work_s``: the busy time the objective counts per phase
    (default: the phase durations, which always set the period).
    ``max_vectors`` limits how many multiplicity vectors get an order search (``None``:
    all that the bounds cannot exclude). ``min_gain``: only schedules above ``min_gain``
    times round-robin's utilisation are sought (a branch-and-bound incumbent); vectors
    that cannot beat it are skipped, so the result may stay below it, and then its
    ``upper_bound`` proves that nothing reaches much above it. Arguments as in
    :func:`rollmux.meta_iteration_time`; the search is deterministic for a ``seed``.
    ``per_iteration``: a schedule with repetitions must also keep every iteration of
    every job within its cap in the steady state (:func:`steady_iterations_s`), not only
    the average (round-robin is kept as the caps on ``P`` admit it). See the module
    docstring.
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    n = group.n_jobs
    caps = _check_caps(max_iteration_s, n)
    for name, value, low in (("max_multiplicity", max_multiplicity, 1),
                             ("exact_limit", exact_limit, 0),
                             ("local_evaluations", local_evaluations, 0),
                             ("n_random_starts", n_random_starts, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} = {value!r}: expected an int >= {low}")
    if max_vectors is not None and (
        isinstance(max_vectors, bool) or not isinstance(max_vectors, int) or max_vectors < 1
    ):
        raise ValueError(f"max_vectors = {max_vectors!r}: expected None or an int >= 1")
    coef = objective_coefficients(group, objective, weights, rollout_work_s, train_work_s)
    rng = np.random.default_rng(seed)

    def feasible(mult: Sequence[int], period: float) -> bool:
        return caps is None or all(
            period <= m * cap * (1.0 + REL_TOL) for m, cap in zip(mult, caps, strict=True)
        )

    if not min_gain >= 0.0:
        raise ValueError(f"min_gain = {min_gain!r}: expected a number >= 0")
    ones = (1,) * n
    rr_state = _restrict(group, list(range(n)))
    rr_period = _Evaluator(group, ones).period(rr_state)
    rr_util = sum(coef) / rr_period
    incumbent = min_gain * rr_util
    best: tuple[float, tuple[int, ...], State, float] | None = None
    if feasible(ones, rr_period):
        best = (rr_util, ones, rr_state, rr_period)
    if caps is not None and best is None:
        # Round-robin misses a cap: first the cheap question whether any vector's lower
        # bound lets every job meet its cap (an SLO-constrained planner mostly asks it).
        vectors = _multiplicity_vectors(group, max_multiplicity, True)
        lbs = period_lower_bounds_s(group, np.asarray(vectors), pair_caps(group))
        if not any(feasible(m, lb) for m, lb in zip(vectors, lbs.tolist(), strict=True)):
            return None
    # The LP bound over every vector: once reached, nothing is left to find.
    ceiling = group_utilisation_upper_bound(group, coef, float(max_multiplicity))
    scored = []
    if ceiling > max(incumbent, best[0] if best is not None else 0.0) * (1.0 + REL_TOL):
        vectors = _multiplicity_vectors(group, max_multiplicity, True)
        lbs = period_lower_bounds_s(group, np.asarray(vectors), pair_caps(group))
        for mult, lb in zip(vectors, lbs.tolist(), strict=True):
            if not feasible(mult, lb):
                continue
            numerator = sum(m * c for m, c in zip(mult, coef, strict=True))
            # Rounded so that a repeated round-robin (same ratio) sorts after the original.
            scored.append((-float(f"{numerator / lb:.12g}"), sum(mult), mult, numerator, lb))
        scored.sort()
    open_bound = 0.0  # the largest bound of a vector not closed by an exact search
    n_evaluated = 1
    for i, (neg_bound, _, mult, numerator, lb) in enumerate(scored):
        target = max(incumbent, best[0] if best is not None else 0.0)
        if -neg_bound <= target * (1.0 + REL_TOL) or target >= ceiling * (1.0 - REL_TOL):
            open_bound = max(open_bound, min(-neg_bound, incumbent))
            break
        if max_vectors is not None and i >= max_vectors:
            open_bound = max(open_bound, -neg_bound)
            break
        state, period, proven, evaluated = _best_orders(
            group, mult, lb, exact_limit, local_evaluations, n_random_starts, rng
        )
        n_evaluated += evaluated
        if not proven:
            open_bound = max(open_bound, -neg_bound)
        if not math.isfinite(period) or not feasible(mult, period):
            continue
        util = numerator / period
        if best is None or util > best[0] * (1.0 + REL_TOL):
            if per_iteration and caps is not None and not _iterations_within(
                    group, state, caps):
                continue
            best = (util, tuple(mult), state, period)
    if best is None:
        return None
    util, mult, state, period = best
    upper = min(ceiling, max(util, open_bound))
    return RepeatSchedule(
        multiplicity=mult,
        node_orders=dict(zip(group.nodes, state, strict=True)),
        period_s=period,
        utilisation=util,
        round_robin_period_s=rr_period,
        round_robin_utilisation=rr_util,
        upper_bound=max(upper, util),
        exact=upper <= util * (1.0 + REL_TOL),
        n_evaluated=n_evaluated,
        schedule=group.schedule(state),
    )


#: Meta-iterations :func:`steady_iterations_s` runs before it measures, and measures.
STEADY_WARMUP, STEADY_MEASURED = 6, 12


def steady_iterations_s(schedule: Schedule, warmup: int = STEADY_WARMUP,
                        measured: int = STEADY_MEASURED) -> tuple[float, ...]:
    """Each job's longest iteration in the steady state of ``schedule``'s execution.

    The schedule runs as the replay runs planned orders (every node serves its fixed
    cyclic order, each phase as soon as it may: :func:`rollmux.schedule.eventsim.simulate`)
    for ``warmup + measured + 1`` meta-iterations; job j's iteration lasts from one of its
    rollout starts to the next, and the longest of the ``measured`` meta-iterations after
    the ``warmup`` ones is returned (a max-plus system is periodic after a transient,
    with a cyclicity the measured window covers up to ``measured``).
    """
    from rollmux.schedule.eventsim import simulate

    if warmup < 0 or measured < 1:
        raise ValueError(f"warmup = {warmup}, measured = {measured}: expected >= 0 and >= 1")
    mult = schedule.multiplicity()
    starts: dict[int, dict[int, float]] = {}
    for r in simulate(schedule, warmup + measured + 1):
        if r.phase == "rollout":
            per_job = starts.setdefault(r.job, {})
            per_job[r.iteration] = min(r.start_s, per_job.get(r.iteration, math.inf))
    out = []
    for j, m in enumerate(mult):
        t = starts.get(j, {})
        out.append(max((t[k + 1] - t[k] for k in range(warmup * m, (warmup + measured) * m)
                        if k in t and k + 1 in t), default=math.inf))
    return tuple(out)


def _iterations_within(group: _Group, state: State, caps: Sequence[float]) -> bool:
    """Whether every steady-state iteration of ``state`` meets its job's cap."""
    longest = steady_iterations_s(group.schedule(state))
    return all(x <= cap * (1.0 + REL_TOL) for x, cap in zip(longest, caps, strict=True))


def _check_caps(max_iteration_s: Sequence[float] | None, n_jobs: int) -> tuple[float, ...] | None:
    """``max_iteration_s`` as floats (positive, ``inf`` allowed), or ValueError naming it."""
    if max_iteration_s is None:
        return None
    try:
        caps = tuple(float(x) for x in max_iteration_s)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"max_iteration_s = {max_iteration_s!r}: expected numbers") from exc
    if len(caps) != n_jobs:
        raise ValueError(f"max_iteration_s: expected {n_jobs} caps (one per job), got {len(caps)}")
    for j, cap in enumerate(caps):
        if math.isnan(cap) or cap <= 0.0:
            raise ValueError(f"max_iteration_s[{j}] = {cap!r}: caps must be positive")
    return caps
