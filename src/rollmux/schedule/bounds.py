"""Proven bounds on the period and the utilisation of any schedule of a group.

A schedule runs job ``j`` ``m_j`` times per meta-iteration of period ``P`` (per-node
orders arbitrary, see :mod:`rollmux.schedule.search`). docs/theorem1.md proves:

* **node and chain bounds**: ``P >= busy(k)`` for every node ``k`` and
  ``P >= m_j (r_j + t_j)`` for every job (each is a one-token cycle of the event graph);
* **overlap bound**: for a rollout node ``v`` and a training node ``u``,
  ``busy(v) + busy(u) <= P + D_vu`` with ``D_vu`` the time both are busy. Both busy
  means a rollout of some job ``a`` on ``v`` overlaps a training of another job ``b`` on
  ``u``; per period, ``ovl(a, b) = `` the overlap of ``a``'s rollouts with ``b``'s
  trainings obeys

  - ``ovl(a, b) <= m_a r_a`` and ``<= m_b t_b``;
  - ``<= m_a min(r_a, t_b)`` when ``b`` also rolls out on a rollout node of ``a``: two of
    ``b``'s trainings overlapping one rollout of ``a`` would enclose a rollout of ``b``
    inside it, on a node that rollout occupies;
  - ``<= m_b min(r_a, t_b)`` when ``a`` also trains on a training node of ``b`` (mirror);
  - ``sum_b ovl(a, b) <= m_a r_a`` over the ``b`` training on one node (the node runs one
    phase at a time), and ``sum_a ovl(a, b) <= m_b t_b`` over the ``a`` rolling out on one.

:func:`period_lower_bound_s` combines them for a fixed multiplicity vector;
:func:`utilisation_upper_bound` maximises utilisation over *every* multiplicity vector
(rates ``y_j = m_j / P``) as one linear programme, so it bounds what repetition can gain
as a function of the durations alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from rollmux.schedule.search import (
    DEFAULT_POOL_WEIGHTS,
    Objective,
    _Group,
    _make_group,
)

__all__ = [
    "PairCaps",
    "objective_coefficients",
    "pair_caps",
    "period_lower_bound_s",
    "period_lower_bounds_s",
    "utilisation_upper_bound",
]


@dataclass(frozen=True)
class PairCaps:
    """Per ordered pair (a, b), the per-iteration overlap caps of ``ovl(a, b)``.

    ``ovl(a, b) <= m_a per_a[a, b]`` and ``<= m_b per_b[a, b]``, where a cap is
    ``min(r_a, t_b)`` when the one-overlap argument applies (module docstring) and
    ``r_a`` (``t_b``) otherwise; the diagonal is 0 (a job never overlaps itself).
    """

    per_a: np.ndarray
    per_b: np.ndarray


def pair_caps(group: _Group) -> PairCaps:
    """The overlap caps of every ordered pair of jobs of ``group``."""
    n = group.n_jobs
    per_a = np.zeros((n, n))
    per_b = np.zeros((n, n))
    for a, b in itertools.permutations(range(n), 2):
        share_rollout = bool(set(group.rollout_nodes[a]) & set(group.rollout_nodes[b]))
        share_train = bool(set(group.train_nodes[a]) & set(group.train_nodes[b]))
        both = min(group.rollout_s[a], group.train_s[b])
        per_a[a, b] = both if share_rollout else group.rollout_s[a]
        per_b[a, b] = both if share_train else group.train_s[b]
    return PairCaps(per_a, per_b)


def _node_lists(group: _Group) -> tuple[list[int], list[int]]:
    """Indices (into ``group.nodes``) of the rollout nodes and of the training nodes."""
    rollout = [k for k, node in enumerate(group.nodes) if node[0] == "R"]
    train = [k for k, node in enumerate(group.nodes) if node[0] == "T"]
    return rollout, train


def period_lower_bound_s(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    multiplicity: Sequence[int] | None = None,
) -> float:
    """A proven lower bound on the period of every schedule with ``multiplicity`` (default 1).

    The maximum of the node bounds, the chain bounds and, per (rollout, training) node
    pair, ``busy(v) + busy(u) - D_vu`` with ``D_vu`` bounded by the cheaper of the two
    cuts of the overlap caps (module docstring). Arguments as in
    :func:`rollmux.meta_iteration_time`.
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    mult = tuple(multiplicity) if multiplicity is not None else (1,) * group.n_jobs
    if len(mult) != group.n_jobs or any(
        isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1 for m in mult
    ):
        raise ValueError(
            f"multiplicity = {multiplicity!r}: expected {group.n_jobs} integers >= 1"
        )
    return float(period_lower_bounds_s(group, np.asarray([mult]), pair_caps(group))[0])


def period_lower_bounds_s(group: _Group, mults: np.ndarray, caps: PairCaps) -> np.ndarray:
    """:func:`period_lower_bound_s` for every row of ``mults`` (vectors x jobs), at once."""
    v = np.asarray(mults, dtype=float)
    r = np.asarray(group.rollout_s)
    t = np.asarray(group.train_s)
    work = np.zeros((group.n_jobs, len(group.nodes)))
    for j in range(group.n_jobs):
        for k in group.job_node_index[j]:
            work[j, k] = r[j] if group.nodes[k][0] == "R" else t[j]
    busy = v @ work
    bound = np.maximum(busy.max(axis=1), (v * (r + t)).max(axis=1))
    # ovl[i, a, b]: the cap on ovl(a, b) under vector i (0 on the diagonal).
    ovl = np.minimum(v[:, :, None] * caps.per_a[None], v[:, None, :] * caps.per_b[None])
    rollout_nodes, train_nodes = _node_lists(group)
    for node_v in rollout_nodes:
        jobs_v = list(group.node_jobs[node_v])
        for node_u in train_nodes:
            jobs_u = list(group.node_jobs[node_u])
            sub = ovl[:, jobs_v][:, :, jobs_u]
            # Two cuts of the overlap network: rows capped by m_a r_a, columns by m_b t_b.
            rows = np.minimum(sub.sum(axis=2), v[:, jobs_v] * r[jobs_v]).sum(axis=1)
            cols = np.minimum(sub.sum(axis=1), v[:, jobs_u] * t[jobs_u]).sum(axis=1)
            pair_busy = busy[:, node_v] + busy[:, node_u]
            overlap = np.minimum(np.minimum(rows, cols),
                                 np.minimum(busy[:, node_v], busy[:, node_u]))
            bound = np.maximum(bound, pair_busy - overlap)
    return bound


def objective_coefficients(
    group: _Group,
    objective: Objective,
    weights: Mapping[str, float] | None = None,
    rollout_work_s: Sequence[float] | None = None,
    train_work_s: Sequence[float] | None = None,
) -> list[float]:
    """Per job, the utilisation one iteration adds per second of period (``c(e_j)``).

    Busy time is the phase duration, or ``rollout_work_s``/``train_work_s`` when given
    (useful work, e.g. without switches, while the durations set the period).
    """
    counts = {"R": 0, "T": 0}
    for node in group.nodes:
        counts[node[0]] += 1
    work_r = group.rollout_s if rollout_work_s is None else tuple(rollout_work_s)
    work_t = group.train_s if train_work_s is None else tuple(train_work_s)
    for name, work in (("rollout_work_s", work_r), ("train_work_s", work_t)):
        if len(work) != group.n_jobs or any(not 0.0 <= w < math.inf for w in work):
            raise ValueError(f"{name}: expected {group.n_jobs} finite work times >= 0")
    coef = []
    w = DEFAULT_POOL_WEIGHTS if weights is None else weights
    for j in range(group.n_jobs):
        busy_r = work_r[j] * len(group.rollout_nodes[j])
        busy_t = work_t[j] * len(group.train_nodes[j])
        if objective == "aggregate":
            coef.append(busy_r / counts["R"] + busy_t / counts["T"])
        elif objective == "cost_weighted":
            paid = w["R"] * counts["R"] + w["T"] * counts["T"]
            coef.append((w["R"] * busy_r + w["T"] * busy_t) / paid)
        else:
            raise ValueError(
                f"objective = {objective!r}: expected 'aggregate' or 'cost_weighted'"
            )
    return coef


def utilisation_upper_bound(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[object] | None = None,
    train_node: Sequence[object] | None = None,
    *,
    objective: Objective = "aggregate",
    weights: Mapping[str, float] | None = None,
    max_multiplicity_ratio: float | None = None,
    rollout_work_s: Sequence[float] | None = None,
    train_work_s: Sequence[float] | None = None,
) -> float:
    """Upper bound on the utilisation of every schedule, any multiplicities and orders.

    The linear programme over rates ``y_j = m_j / P`` and overlaps ``z_ab = ovl(a, b) / P``
    (module docstring): maximise ``sum_j c_j y_j`` subject to every node bound, chain
    bound, overlap cap and (rollout, training) node-pair bound. With
    ``max_multiplicity_ratio = M`` it covers only schedules with ``max m / min m <= M``
    (``y_a <= M y_b``), e.g. multiplicities ``1..M``. ``*_work_s`` as in
    :func:`objective_coefficients`. Solved by HiGHS.
    """
    group = _make_group(rollout_s, train_s, rollout_node, train_node)
    if max_multiplicity_ratio is not None and not max_multiplicity_ratio >= 1.0:
        raise ValueError(
            f"max_multiplicity_ratio = {max_multiplicity_ratio!r}: expected a number >= 1"
        )
    coef = objective_coefficients(group, objective, weights, rollout_work_s, train_work_s)
    return group_utilisation_upper_bound(group, coef, max_multiplicity_ratio)


def group_utilisation_upper_bound(
    group: _Group, coef: Sequence[float], max_multiplicity_ratio: float | None
) -> float:
    """:func:`utilisation_upper_bound` on a validated group, objective coefficients given."""
    n = group.n_jobs
    r, t = group.rollout_s, group.train_s
    pairs = list(itertools.permutations(range(n), 2))
    z_index = {pair: n + i for i, pair in enumerate(pairs)}
    n_vars = n + len(pairs)
    rows: list[np.ndarray] = []
    rhs: list[float] = []

    def add(entries: Mapping[int, float], bound: float) -> None:
        row = np.zeros(n_vars)
        for col, value in entries.items():
            row[col] += value
        rows.append(row)
        rhs.append(bound)

    for k, jobs in enumerate(group.node_jobs):
        dur = r if group.nodes[k][0] == "R" else t
        add({j: dur[j] for j in jobs}, 1.0)
    for j in range(n):
        add({j: r[j] + t[j]}, 1.0)
    caps = pair_caps(group)
    for (a, b), col in z_index.items():
        add({col: 1.0, a: -float(caps.per_a[a, b])}, 0.0)
        add({col: 1.0, b: -float(caps.per_b[a, b])}, 0.0)
    rollout_nodes, train_nodes = _node_lists(group)
    for u in train_nodes:  # one training node: a's rollouts overlap its trainings at most r_a
        for a in range(n):
            cols = [z_index[(a, b)] for b in group.node_jobs[u] if b != a]
            if cols:
                add({a: -r[a], **{c: 1.0 for c in cols}}, 0.0)
    for v in rollout_nodes:
        for b in range(n):
            cols = [z_index[(a, b)] for a in group.node_jobs[v] if a != b]
            if cols:
                add({b: -t[b], **{c: 1.0 for c in cols}}, 0.0)
    for v in rollout_nodes:
        for u in train_nodes:
            entries: dict[int, float] = {}
            for a in group.node_jobs[v]:
                entries[a] = entries.get(a, 0.0) + r[a]
            for b in group.node_jobs[u]:
                entries[b] = entries.get(b, 0.0) + t[b]
            for a in group.node_jobs[v]:
                for b in group.node_jobs[u]:
                    if a != b:
                        entries[z_index[(a, b)]] = -1.0
            add(entries, 1.0)
    if max_multiplicity_ratio is not None:
        for a, b in pairs:
            add({a: 1.0, b: -float(max_multiplicity_ratio)}, 0.0)
    cost = np.zeros(n_vars)
    cost[:n] = -np.asarray(coef)
    res = linprog(cost, A_ub=np.vstack(rows), b_ub=np.asarray(rhs), bounds=(0, None),
                  method="highs")
    if res.status != 0:  # pragma: no cover - the programme is bounded and feasible (y = 0)
        raise RuntimeError(f"utilisation_upper_bound: HiGHS status {res.status}: {res.message}")
    return float(-res.fun)
