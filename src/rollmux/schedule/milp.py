"""Certified optimal repeated schedules: a mixed-integer programme over cyclic timetables.

For a multiplicity vector ``m`` (job ``j`` runs ``m_j`` iterations per meta-iteration),
:func:`min_period` finds the shortest period ``P`` of any schedule (any per-node cyclic
orders) by a MILP over *1-periodic timetables* (HiGHS via :func:`scipy.optimize.milp`,
relative gap 0):

* one potential ``t_e`` per event (job ``j``'s k-th rollout and training; occurrence
  ``i`` of the event starts at ``t_e + i P``), ``t`` of job 0's first rollout fixed at 0;
* job chains: ``R_j^k -> T_j^k -> R_j^(k+1)`` in the same meta-iteration, and the wrap
  ``T_j^(m_j-1) -> R_j^0`` one meta-iteration later (``t_{R^0} + P >= t_{T^last} + t_j``);
* per node, for each pair of events of different jobs, a binary order: ``e`` before ``f``
  in the node's sequence (``t_f >= t_e + d_e`` and ``t_e + P >= t_f + d_f``, the second
  through the sequence's wrap) or the reverse (big-M linearisation).

Why this is exact (docs/theorem1.md, "The SLO-constrained optimum"): the binaries of a
feasible point form a linear order per node (a cycle ``e < f < g < e`` would force
``t_e > t_e``), i.e. a schedule of :mod:`rollmux.schedule.graph` with the k-th appearance
of a job its k-th phase (the chain orders a job's events), and ``t`` satisfies every edge
of its event graph with period ``P`` (consecutive entries and the node's wrap are pairs
of the order), so its max-plus period is at most ``P``. Conversely every schedule's
event graph has potentials at its max-plus period, which satisfy every pair constraint
(paths of the graph). :func:`min_period` returns the orders with their exact max-plus
period.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from rollmux.schedule.bounds import objective_coefficients, pair_caps, period_lower_bounds_s
from rollmux.schedule.search import REL_TOL, Objective, _Group, _make_group, _multiplicity_vectors

__all__ = ["NODE_LIMIT", "CertifiedSchedule", "MinPeriod", "certified_best", "min_period"]


#: Branch-and-bound nodes per MILP before it counts as not certified. A deterministic
#: guard (a wall-clock limit made the certified count depend on the machine's load); the
#: quick profile's largest solve needs under 1,000 nodes and 5 s CPU.
NODE_LIMIT = 200_000


@dataclass(frozen=True)
class MinPeriod:
    """The shortest period of one multiplicity vector and the orders achieving it."""

    period_s: float
    state: tuple[tuple[int, ...], ...] | None
    optimal: bool


def min_period(group: _Group, mult: Sequence[int], max_period_s: float,
               node_limit: int | None = NODE_LIMIT,
               time_limit_s: float | None = None) -> MinPeriod:
    """Shortest period of any schedule with multiplicities ``mult``, if at most ``max_period_s``.

    ``period_s`` is ``inf`` (and ``state`` None) when no schedule reaches ``max_period_s``
    (``optimal`` True: proven infeasible). ``optimal`` False when HiGHS hit a limit.
    ``node_limit`` (branch-and-bound nodes) is the default guard because it is
    deterministic: the same instance gives the same answer on any machine and load. A
    wall-clock ``time_limit_s`` (None: none) makes the answer depend on the load.
    """
    from rollmux.schedule.repeat import _Evaluator

    n = group.n_jobs
    events: list[tuple[int, int, str]] = []  # (job, occurrence, "R" | "T")
    index: dict[tuple[int, int, str], int] = {}
    for j in range(n):
        for k in range(mult[j]):
            for kind in ("R", "T"):
                index[(j, k, kind)] = len(events)
                events.append((j, k, kind))
    dur = [group.rollout_s[j] if kind == "R" else group.train_s[j] for j, _, kind in events]
    n_ev = len(events)
    pairs: list[tuple[int, int, int]] = []  # (node index, e, f)
    for node, jobs in enumerate(group.node_jobs):
        kind = group.nodes[node][0]
        on = [index[(j, k, kind)] for j in jobs for k in range(mult[j])]
        for a in range(len(on)):
            for b in range(a + 1, len(on)):
                if events[on[a]][0] != events[on[b]][0]:
                    pairs.append((node, on[a], on[b]))
    # Variables: t_0..t_{E-1}, P, x_0..x_{K-1}.
    p_col = n_ev
    n_var = n_ev + 1 + len(pairs)
    # In a feasible point a node's events lie within one period of each other and a job's
    # chain spans at most one period, so potentials (t of job 0's first rollout = 0) stay
    # within (jobs + nodes) periods of 0 and M = P_max + max duration relaxes every
    # disjunct (docs/theorem1.md).
    span = (n + len(group.nodes)) * max_period_s
    big = max_period_s + max(dur)
    rows: list[dict[int, float]] = []
    lows: list[float] = []

    def ge(entries: dict[int, float], low: float) -> None:
        rows.append(entries)
        lows.append(low)

    for j in range(n):
        chain = [index[(j, k, kind)] for k in range(mult[j]) for kind in ("R", "T")]
        for u, v in itertools.pairwise(chain):
            ge({v: 1.0, u: -1.0}, dur[u])
        ge({chain[0]: 1.0, p_col: 1.0, chain[-1]: -1.0}, dur[chain[-1]])
    for i, (_, e, f) in enumerate(pairs):
        x = n_ev + 1 + i
        # x = 1: e then f.  t_f - t_e - big x >= d_e - big
        ge({f: 1.0, e: -1.0, x: -big}, dur[e] - big)
        ge({e: 1.0, p_col: 1.0, f: -1.0, x: -big}, dur[f] - big)
        # x = 0: f then e.
        ge({e: 1.0, f: -1.0, x: big}, dur[f])
        ge({f: 1.0, p_col: 1.0, e: -1.0, x: big}, dur[e])
    matrix = np.zeros((len(rows), n_var))
    for r, entries in enumerate(rows):
        for col, value in entries.items():
            matrix[r, col] += value
    lower = np.zeros(n_var)
    upper = np.full(n_var, np.inf)
    lower[:n_ev] = -span
    upper[:n_ev] = span
    upper[p_col] = max_period_s
    upper[n_ev + 1:] = 1.0
    lower[index[(0, 0, "R")]] = upper[index[(0, 0, "R")]] = 0.0
    cost = np.zeros(n_var)
    cost[p_col] = 1.0
    integrality = np.zeros(n_var)
    integrality[n_ev + 1:] = 1
    options: dict[str, object] = {"mip_rel_gap": 0.0, "disp": False}
    if node_limit is not None:
        options["node_limit"] = int(node_limit)
    if time_limit_s is not None:
        options["time_limit"] = float(time_limit_s)
    res = milp(cost, constraints=LinearConstraint(matrix, np.asarray(lows), np.inf),
               integrality=integrality, bounds=Bounds(lower, upper), options=options)
    if res.status == 4:  # a HiGHS solve error (numerics): once more without presolve
        res = milp(cost, constraints=LinearConstraint(matrix, np.asarray(lows), np.inf),
                   integrality=integrality, bounds=Bounds(lower, upper),
                   options={**options, "presolve": False})
    if res.x is None:
        return MinPeriod(math.inf, None, res.status == 2)
    x = res.x[n_ev + 1:] > 0.5
    before: dict[tuple[int, int], bool] = {}
    for (_, e, f), e_first in zip(pairs, x.tolist(), strict=True):
        before[(e, f)] = e_first
        before[(f, e)] = not e_first
    state = []
    for node, jobs in enumerate(group.node_jobs):
        kind = group.nodes[node][0]
        on = [index[(j, k, kind)] for j in jobs for k in range(mult[j])]
        # Position = number of events before it (same job: by occurrence).
        def rank(e: int, on: list[int] = on) -> int:
            return sum(1 for f in on if f != e and (
                before[(f, e)] if (f, e) in before else events[f][1] < events[e][1]))
        state.append(tuple(events[e][0] for e in sorted(on, key=rank)))
    period = _Evaluator(group, tuple(mult)).period(tuple(state))
    return MinPeriod(period, tuple(state), res.status == 0)


@dataclass(frozen=True)
class CertifiedSchedule:
    """The best schedule under per-job caps on ``P / m_j``, with its certificate."""

    multiplicity: tuple[int, ...]
    state: tuple[tuple[int, ...], ...]
    period_s: float
    utilisation: float
    certified: bool
    n_solved: int


def certified_best(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    *,
    max_iteration_s: Sequence[float],
    max_multiplicity: int = 3,
    objective: Objective = "cost_weighted",
    weights: Mapping[str, float] | None = None,
    rollout_work_s: Sequence[float] | None = None,
    train_work_s: Sequence[float] | None = None,
    node_limit: int | None = NODE_LIMIT,
    time_limit_s: float | None = None,
    incumbent: tuple[Sequence[int], Sequence[Sequence[int]]] | None = None,
) -> CertifiedSchedule | None:
    """The highest-utilisation schedule with every ``P / m_j <= max_iteration_s[j]``, proven.

    Vectors by decreasing ``c(m) / LB(m)`` (Lemma 1's bound), each solved by
    :func:`min_period` with ``P <= min_j m_j cap_j`` and, once a schedule is known, ``P``
    short enough to beat it (``c(m) / P`` above the best utilisation: a vector that
    cannot is proven so by an infeasible MILP, which a tight period bound makes fast),
    until no vector left can beat the best: an exact branch and bound over
    multiplicities ``1..max_multiplicity``. ``incumbent``: a known schedule
    (multiplicities, per-node orders in the group's node order, e.g. a heuristic's) to
    start from; it is checked, and ignored when it misses a cap. ``certified`` is False
    only when a MILP hit its limit (``node_limit``, deterministic, or the wall-clock
    ``time_limit_s`` when one is given: see :func:`min_period`). ``None`` when no
    schedule meets the caps.
    Arguments as in :func:`rollmux.schedule.repeat.repeat_schedule`.
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    caps = [float(c) for c in max_iteration_s]
    if len(caps) != group.n_jobs or any(not c > 0 for c in caps):
        raise ValueError(f"max_iteration_s: expected {group.n_jobs} positive caps")
    coef = objective_coefficients(group, objective, weights, rollout_work_s, train_work_s)
    vectors = _multiplicity_vectors(group, max_multiplicity, True)
    lbs = period_lower_bounds_s(group, np.asarray(vectors), pair_caps(group))
    scored = []
    for mult, lb in zip(vectors, lbs.tolist(), strict=True):
        limit = min(m * c for m, c in zip(mult, caps, strict=True))
        if lb > limit * (1.0 + REL_TOL):
            continue
        numerator = sum(m * c for m, c in zip(mult, coef, strict=True))
        # Rounded so that a repeated vector (same bound) sorts after the original.
        scored.append((-float(f"{numerator / lb:.12g}"), sum(mult), tuple(mult), numerator,
                       limit))
    scored.sort()
    best: CertifiedSchedule | None = None
    if incumbent is not None:
        from rollmux.schedule.repeat import _Evaluator

        mult0 = tuple(int(m) for m in incumbent[0])
        state0 = tuple(tuple(int(j) for j in seq) for seq in incumbent[1])
        period0 = _Evaluator(group, mult0).period(state0)
        if math.isfinite(period0) and all(
                period0 <= m * c * (1.0 + REL_TOL) for m, c in zip(mult0, caps, strict=True)):
            util0 = sum(m * c for m, c in zip(mult0, coef, strict=True)) / period0
            best = CertifiedSchedule(mult0, state0, period0, util0, True, 0)
    certified = True
    n_solved = 0
    for neg_bound, _, mult, numerator, limit in scored:
        if best is not None and -neg_bound <= best.utilisation * (1.0 + REL_TOL):
            break
        if best is not None:
            # Only a period that beats the best schedule matters (c(m) / P > U_best).
            limit = min(limit, numerator / (best.utilisation * (1.0 + REL_TOL)))
        found = min_period(group, mult, limit * (1.0 + 1e-9), node_limit, time_limit_s)
        n_solved += 1
        certified = certified and found.optimal
        if found.state is None or found.period_s > limit * (1.0 + REL_TOL):
            continue
        util = numerator / found.period_s
        if best is None or util > best.utilisation * (1.0 + REL_TOL):
            best = CertifiedSchedule(mult, found.state, found.period_s, util, True, 0)
    if best is None:
        return None
    return CertifiedSchedule(best.multiplicity, best.state, best.period_s, best.utilisation,
                             certified, n_solved)
