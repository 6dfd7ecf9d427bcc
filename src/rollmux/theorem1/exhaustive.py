"""Exhaustive enumeration of a worst-case domain: its true maximum ratio, by branch and bound.

A domain (:class:`rollmux.theorem1.domain.Domain`: a family, a group size, durations
``1..D``) is decoded in bulk with numpy, one *structure* (anchor and pin codes) at a
time, and reduced to its distinct instances up to relabelling: nodes are renumbered by
first use, and in *star* families (one training node, each job on one rollout node:
(a), (b), (d), (e)) jobs are also permuted, because there round-robin runs at
``max(T_load, T_cycle)`` in every order (Theorem A, docs/theorem1.md) and the best
schedule does not depend on the job order. Crossing groups (c) keep the job order (their
round-robin period depends on it).

Every instance gets a proven upper bound on its ratio best schedule / round-robin over
multiplicities ``1..M``: ``max_m c(m) / LB(m)`` over round-robin's utilisation, with
``LB(m)`` Lemma 1's period bound (node, chain and overlap bounds, the same as
:func:`rollmux.schedule.bounds.period_lower_bounds_s`, vectorised over instances). The
instances are then evaluated exactly (:func:`rollmux.schedule.repeat.repeat_schedule`,
every multiplicity vector, exhaustive orders) by decreasing bound, until the next bound
cannot beat the best ratio found: the result is the maximum over the whole domain, and
every instance not evaluated is proven not to beat it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rollmux.schedule.search import DEFAULT_POOL_WEIGHTS

__all__ = ["Batch", "ExhaustiveResult", "batches", "n_genomes", "ratio_bounds"]

Pins = tuple[tuple[int, ...], ...]
# Durations are small integers; keys pack them in base _BASE (see _encode).
_BASE = 128
_STAR = frozenset({"a_one_rollout_one_train", "b_shared_train", "d_cost_weighted",
                   "e_saturated"})


@dataclass(frozen=True)
class Batch:
    """Distinct instances of one pinning: ``rollout_s``, ``train_s`` are (instances x jobs)."""

    rollout_node: Pins
    train_node: Pins
    rollout_s: np.ndarray
    train_s: np.ndarray


@dataclass(frozen=True)
class ExhaustiveResult:
    """The maximum of a domain and how it was proven."""

    n_domain: int
    n_evaluated: int


def n_genomes(domain: object) -> int:
    """Number of genomes (anchor, pin codes, durations) of ``domain``, before reduction."""
    from rollmux.theorem1.domain import Domain

    assert isinstance(domain, Domain)
    n = domain.n_jobs
    n_r, n_t = domain.n_codes
    anchors = 1 if domain.saturated else n
    values = math.prod(hi - lo + 1 for lo, hi in domain.value_bounds())
    return anchors * n_r ** n * n_t ** n * values


def _relabel(pins: Pins) -> Pins:
    """Node ids renumbered by first use."""
    order: dict[int, int] = {}
    for p in pins:
        for x in p:
            order.setdefault(x, len(order))
    return tuple(tuple(sorted(order[x] for x in p)) for p in pins)


def _incidence(pins: Pins) -> np.ndarray:
    """(jobs x nodes) 0/1 matrix of a pool's pinning (nodes 0..max)."""
    n_nodes = 1 + max(x for p in pins for x in p)
    inc = np.zeros((len(pins), n_nodes))
    for j, p in enumerate(pins):
        for x in p:
            inc[j, x] = 1.0
    return inc


def _decode(domain: object, anchor: int, r_pins: Pins, t_pins: Pins,
            values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durations (rows x jobs) of the genomes with these pins and ``values`` rows, vectorised.

    The same arithmetic as :meth:`rollmux.theorem1.domain.Domain.decode` (and
    :func:`rollmux.theorem1.boundary.unsaturate`); rows outside the family are dropped by
    the caller (saturated: ``T_load > T_cycle``).
    """
    from rollmux.theorem1.domain import Domain

    assert isinstance(domain, Domain)
    n = domain.n_jobs
    inc_r, inc_t = _incidence(r_pins), _incidence(t_pins)
    if domain.saturated:
        return values[:, :n].astype(float), values[:, n:].astype(float)
    rows = len(values)
    others = [j for j in range(n) if j != anchor]
    r = np.ones((rows, n))
    t = np.ones((rows, n))
    for i, j in enumerate(others):
        r[:, j] = values[:, i]
        t[:, j] = values[:, n - 1 + i]
    mask = np.ones(n)
    mask[anchor] = 0.0
    load_t = (t * mask) @ inc_t  # others' training load per training node
    load_r = (r * mask) @ inc_r
    r_a = np.maximum(1.0, (load_t * inc_t[anchor]).max(axis=1)) + values[:, -2]
    t_a = np.maximum(1.0, (load_r * inc_r[anchor]).max(axis=1)) + values[:, -1]
    r[:, anchor] = r_a
    t[:, anchor] = t_a
    t_load = np.maximum((r @ inc_r).max(axis=1), (t @ inc_t).max(axis=1))
    deficit = t_load - (r_a + t_a)
    t[:, anchor] = t_a + np.maximum(deficit, 0.0)
    return r, t


def _t_load(r: np.ndarray, t: np.ndarray, r_pins: Pins, t_pins: Pins) -> np.ndarray:
    """``T_load`` of each row."""
    return np.maximum((r @ _incidence(r_pins)).max(axis=1), (t @ _incidence(t_pins)).max(axis=1))


def batches(domain: object) -> list[Batch]:
    """The domain's distinct instances up to relabelling (module docstring), by pinning."""
    from rollmux.theorem1.domain import _PINS, Domain, _connected

    assert isinstance(domain, Domain)
    n = domain.n_jobs
    r_choices, t_choices = _PINS[domain.family]
    star = domain.family in _STAR
    perms = list(itertools.permutations(range(n))) if star else [tuple(range(n))]
    grids = [np.arange(lo, hi + 1) for lo, hi in domain.value_bounds()]
    values = np.stack(np.meshgrid(*grids, indexing="ij"), axis=-1).reshape(-1, len(grids))
    anchors = [0] if domain.saturated else list(range(n))
    structure_ids: dict[tuple[Pins, Pins], int] = {}
    structures: list[tuple[Pins, Pins]] = []
    keys: list[np.ndarray] = []
    seen_shapes: set[tuple[int, Pins, Pins]] = set()
    for anchor in anchors:
        for r_codes in itertools.product(range(len(r_choices)), repeat=n):
            for t_codes in itertools.product(range(len(t_choices)), repeat=n):
                r_pins = tuple(r_choices[c] for c in r_codes)
                t_pins = tuple(t_choices[c] for c in t_codes)
                if domain.family == "c_crossing" and (
                    {x for p in t_pins for x in p} != {0, 1} or not _connected(r_pins, t_pins)
                ):
                    continue
                # Relabelled pinnings with the same anchor decode to relabelled instances.
                shape = (anchor, _relabel(r_pins), _relabel(t_pins))
                if shape in seen_shapes:
                    continue
                seen_shapes.add(shape)
                r, t = _decode(domain, anchor, r_pins, t_pins, values)
                if domain.saturated:
                    keep = _t_load(r, t, r_pins, t_pins) > (r + t).max(axis=1)
                    r, t = r[keep], t[keep]
                if not len(r):
                    continue
                best: np.ndarray | None = None
                for perm in perms:
                    p_r = _relabel(tuple(r_pins[j] for j in perm))
                    p_t = _relabel(tuple(t_pins[j] for j in perm))
                    sid = structure_ids.setdefault((p_r, p_t), len(structure_ids))
                    if sid == len(structures):
                        structures.append((p_r, p_t))
                    key = _encode(sid, r[:, list(perm)], t[:, list(perm)])
                    best = key if best is None else np.minimum(best, key)
                assert best is not None
                keys.append(best)
    unique = np.unique(np.concatenate(keys))
    out: list[Batch] = []
    ids, r_all, t_all = _decode_keys(unique, n)
    for s in np.unique(ids):
        rows = ids == s
        r_pins, t_pins = structures[int(s)]
        out.append(Batch(r_pins, t_pins, r_all[rows], t_all[rows]))
    return out


def _encode(sid: int, r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """One int64 key per row: structure id, then every duration, in base ``_BASE``."""
    if r.size and max(r.max(), t.max()) >= _BASE:
        raise ValueError(f"durations up to {max(r.max(), t.max()):g}: above {_BASE - 1}")
    key = np.full(len(r), sid, dtype=np.int64)
    for col in (*r.T, *t.T):
        key = key * _BASE + col.astype(np.int64)
    return key


def _decode_keys(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of :func:`_encode`: structure ids and the (rows x jobs) durations."""
    digits = []
    rest = keys.copy()
    for _ in range(2 * n):
        digits.append(rest % _BASE)
        rest //= _BASE
    digits.reverse()
    r = np.stack(digits[:n], axis=1).astype(float)
    t = np.stack(digits[n:], axis=1).astype(float)
    return rest, r, t


def ratio_bounds(batch: Batch, objective: str, max_multiplicity: int,
                 rr_period_s: np.ndarray | None = None,
                 weights: Mapping[str, float] | None = None,
                 chunk: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per instance: (upper bound on the ratio, round-robin's period, its utilisation).

    The bound is ``max_m c(m) / LB(m)`` over multiplicities ``1..max_multiplicity``,
    divided by round-robin's utilisation ``c(1) / P_RR`` (``objective = "both_pools"``:
    ``c(m) = min_pool busy_pool(m) / busy_pool(1)``, the both-pools ratio of
    :func:`rollmux.theorem1.worst_case.both_pools_gain`); ``rr_period_s`` defaults to
    ``max(T_load, T_cycle)``, round-robin's exact period in star groups (Theorem A).
    """
    r_pins, t_pins = batch.rollout_node, batch.train_node
    inc_r, inc_t = _incidence(r_pins), _incidence(t_pins)
    n = len(r_pins)
    n_r, n_t = inc_r.shape[1], inc_t.shape[1]
    w = DEFAULT_POOL_WEIGHTS if weights is None else weights
    vectors = np.asarray(list(itertools.product(range(1, max_multiplicity + 1), repeat=n)),
                         dtype=float)
    size_r, size_t = inc_r.sum(axis=1), inc_t.sum(axis=1)
    share_r = (inc_r @ inc_r.T) > 0
    share_t = (inc_t @ inc_t.T) > 0
    bound_out, period_out, util_out = [], [], []
    for start in range(0, len(batch.rollout_s), chunk):
        r = batch.rollout_s[start:start + chunk]
        t = batch.train_s[start:start + chunk]
        if objective == "aggregate":
            coef = r * size_r / n_r + t * size_t / n_t
        elif objective == "cost_weighted":
            coef = (w["R"] * r * size_r + w["T"] * t * size_t) / (w["R"] * n_r + w["T"] * n_t)
        elif objective == "both_pools":
            coef = None
        else:
            raise ValueError(f"objective = {objective!r}: expected 'aggregate', "
                             "'cost_weighted' or 'both_pools'")
        if coef is None:
            # min over pools of busy(m) / busy(1): the numerator of the both-pools ratio
            # with round-robin's period folded in below (round-robin scores 1).
            pool_r = (r * size_r) @ vectors.T
            pool_t = (t * size_t) @ vectors.T
            numer = np.minimum(pool_r / pool_r[:, :1], pool_t / pool_t[:, :1])
        else:
            numer = coef @ vectors.T  # (rows, vectors)
        # busy[i, v, node]: rollout nodes then training nodes.
        busy_r = np.einsum("vj,ij,jk->ivk", vectors, r, inc_r)
        busy_t = np.einsum("vj,ij,jk->ivk", vectors, t, inc_t)
        bound = np.maximum(np.maximum(busy_r.max(axis=2), busy_t.max(axis=2)),
                           (vectors[None] * (r + t)[:, None]).max(axis=2))
        both = np.minimum(r[:, :, None], t[:, None, :])  # min(r_a, t_b)
        per_a = np.where(share_r[None], both, r[:, :, None])
        per_b = np.where(share_t[None], both, t[:, None, :])
        eye = np.eye(n, dtype=bool)[None]
        per_a = np.where(eye, 0.0, per_a)
        per_b = np.where(eye, 0.0, per_b)
        ovl = np.minimum(vectors[None, :, :, None] * per_a[:, None],
                         vectors[None, :, None, :] * per_b[:, None])  # (i, v, a, b)
        vr = vectors[None] * r[:, None]  # m_a r_a
        vt = vectors[None] * t[:, None]
        for kv in range(n_r):
            jobs_v = np.flatnonzero(inc_r[:, kv])
            for ku in range(n_t):
                jobs_u = np.flatnonzero(inc_t[:, ku])
                sub = ovl[:, :, jobs_v][:, :, :, jobs_u]
                rows_cut = np.minimum(sub.sum(axis=3), vr[:, :, jobs_v]).sum(axis=2)
                cols_cut = np.minimum(sub.sum(axis=2), vt[:, :, jobs_u]).sum(axis=2)
                bv, bu = busy_r[:, :, kv], busy_t[:, :, ku]
                overlap = np.minimum(np.minimum(rows_cut, cols_cut), np.minimum(bv, bu))
                bound = np.maximum(bound, bv + bu - overlap)
        if rr_period_s is None:
            t_load = np.maximum((r @ inc_r).max(axis=1), (t @ inc_t).max(axis=1))
            period = np.maximum(t_load, (r + t).max(axis=1))
        else:
            period = np.asarray(rr_period_s[start:start + chunk], dtype=float)
        rr_util = numer[:, 0] / period  # vectors[0] is all ones
        bound_out.append((numer / bound).max(axis=1) / rr_util)
        period_out.append(period)
        util_out.append(rr_util)
    return np.concatenate(bound_out), np.concatenate(period_out), np.concatenate(util_out)


def rr_periods(batch: Batch) -> np.ndarray:
    """Round-robin's exact period (index order) of every instance of ``batch``, vectorised.

    Round-robin's event graph (job j's rollout ``j`` and training ``n + j``; chain edges
    ``R_j -> T_j`` without and ``T_j -> R_j`` with a token; each node's jobs in index
    order, the wrap with a token) has the same elementary cycles for every instance of a
    pinning; an edge out of event ``u`` weighs ``u``'s duration. The period is the
    largest cycle weight over its tokens (:mod:`rollmux.schedule.maxplus`), a maximum of
    linear functions of the durations.
    """
    n = len(batch.rollout_node)
    tokens: dict[tuple[int, int], int] = {}

    def edge(u: int, v: int, k: int) -> None:
        tokens[(u, v)] = min(k, tokens.get((u, v), k))

    for j in range(n):
        edge(j, n + j, 0)
        edge(n + j, j, 1)
    for offset, pins in ((0, batch.rollout_node), (n, batch.train_node)):
        for node in sorted({x for p in pins for x in p}):
            seq = [offset + j for j in range(n) if node in pins[j]]
            for a, b in itertools.pairwise(seq):
                edge(a, b, 0)
            edge(seq[-1], seq[0], 1)
    succ: dict[int, list[int]] = {}
    for u, v in tokens:
        succ.setdefault(u, []).append(v)
    cycles: list[tuple[list[int], int]] = []

    def walk(start: int, path: list[int], k: int) -> None:
        for v in succ.get(path[-1], []):
            if v == start:
                cycles.append((list(path), k + tokens[(path[-1], v)]))
            elif v > start and v not in path:
                walk(start, [*path, v], k + tokens[(path[-1], v)])

    for start in range(2 * n):
        walk(start, [start], 0)
    durations = np.concatenate([batch.rollout_s, batch.train_s], axis=1)
    period = np.zeros(len(durations))
    for path, k in cycles:
        weight = durations[:, path].sum(axis=1)
        period = np.maximum(period, weight / k if k else np.inf)
    return period


def to_instances(batch: Batch, rows: Sequence[int]) -> list[object]:
    """The :class:`rollmux.theorem1.boundary.Instance` of each of ``rows``."""
    from rollmux.theorem1.boundary import Instance

    return [Instance(tuple(float(x) for x in batch.rollout_s[i]),
                     tuple(float(x) for x in batch.train_s[i]),
                     batch.rollout_node, batch.train_node) for i in rows]
