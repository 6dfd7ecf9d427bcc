"""Exact steady-state period of a cyclic schedule, by max-plus algebra.

Executing a :class:`~rollmux.schedule.graph.Schedule` as early as possible is a
timed event graph: event ``p`` (the start of phase ``p``) in meta-iteration ``k``
waits for each predecessor ``u`` in the same meta-iteration (edges with no token)
or in meta-iteration ``k - 1`` (edges with one token, the wrap-around of a job's
chain or of a node's sequence), plus ``u``'s duration. Its start times grow by the
*maximum cycle mean* of the graph, the cycle weight over the tokens it carries
(Baccelli, Cohen, Olsder, Quadrat: *Synchronization and Linearity*, 1992, ch. 3).

We compute it exactly, not from a long run:

1. The token-free edges form a DAG (otherwise the schedule deadlocks inside a
   meta-iteration and its period is infinite). Longest paths in it from each
   *entry* event (an event with an incoming token edge) give ``L[s, u]``.
2. The start-time recurrence reduces to ``y(k+1) = M (x) y(k)`` over entry events,
   with ``M[s, s'] = max over token edges (u -> s', w) of L[s, u] + w``.
3. The period is the max-plus eigenvalue of ``M``: its maximum cycle mean,
   computed with Karp's theorem (Karp 1978) over walks from every vertex.
"""

from __future__ import annotations

import math

import numpy as np

from rollmux.schedule.graph import Schedule

NEG_INF = -math.inf


def _edges(schedule: Schedule) -> list[tuple[int, int, float, int]]:
    """Edges ``(u, v, weight, tokens)`` of the schedule's event graph."""
    phases = schedule.phases
    edges: list[tuple[int, int, float, int]] = []
    for chain, lag in zip(schedule.job_chains, schedule.lag_s, strict=True):
        for a, b in zip(chain, chain[1:], strict=False):
            edges.append((a, b, phases[a].duration_s, 0))
        edges.append((chain[-1], chain[0], phases[chain[-1]].duration_s + lag, 1))
    for _, seq in schedule.node_sequences:
        for a, b in zip(seq, seq[1:], strict=False):
            edges.append((a, b, phases[a].duration_s, 0))
        edges.append((seq[-1], seq[0], phases[seq[-1]].duration_s, 1))
    return edges


def reduced_matrix(schedule: Schedule) -> tuple[np.ndarray, list[int]] | None:
    """The reduced max-plus matrix ``M`` over entry events, or ``None`` on deadlock.

    Returns ``(M, entries)``, where ``entries[i]`` is the phase index of row ``i``.
    """
    n_events = len(schedule.phases)
    edges = _edges(schedule)
    preds: list[list[tuple[int, float]]] = [[] for _ in range(n_events)]
    succs: list[list[int]] = [[] for _ in range(n_events)]
    indeg = [0] * n_events
    token_edges: list[tuple[int, int, float]] = []
    for u, v, w, tokens in edges:
        if tokens:
            token_edges.append((u, v, w))
        else:
            preds[v].append((u, w))
            succs[u].append(v)
            indeg[v] += 1
    entries = sorted({v for _, v, _ in token_edges})
    entry_row = {v: i for i, v in enumerate(entries)}

    # Kahn's algorithm; a leftover event means a token-free cycle (deadlock).
    topo = [v for v in range(n_events) if indeg[v] == 0]
    for v in topo:
        for s in succs[v]:
            indeg[s] -= 1
            if indeg[s] == 0:
                topo.append(s)
    if len(topo) != n_events:
        return None

    m = len(entries)
    longest = np.full((n_events, m), NEG_INF)
    for v in topo:
        col = longest[v]
        row = entry_row.get(v)
        if row is not None:
            col[row] = 0.0
        for u, w in preds[v]:
            np.maximum(col, longest[u] + w, out=col)
    matrix = np.full((m, m), NEG_INF)
    for u, v, w in token_edges:
        col = matrix[:, entry_row[v]]
        np.maximum(col, longest[u] + w, out=col)
    return matrix, entries


def max_cycle_mean(matrix: np.ndarray) -> float:
    """Maximum cycle mean of the weighted digraph ``matrix[u, v]`` (``-inf``: no edge).

    Karp's theorem with walks starting anywhere: ``lambda = max_v min_k
    (D_m(v) - D_k(v)) / (m - k)``, ``D_k(v)`` the heaviest ``k``-edge walk ending at
    ``v``. Returns ``-inf`` for an acyclic graph.
    """
    m = matrix.shape[0]
    walks = np.empty((m + 1, m))
    walks[0] = 0.0
    for k in range(1, m + 1):
        np.max(walks[k - 1][:, None] + matrix, axis=0, out=walks[k])
    last = walks[m]
    finite = np.isfinite(last)
    if not finite.any():
        return NEG_INF
    head = walks[:m]
    with np.errstate(invalid="ignore"):
        ratios = (last[None, :] - head) / (m - np.arange(m, dtype=float))[:, None]
    ratios[~np.isfinite(head)] = math.inf
    best = ratios.min(axis=0)
    return float(best[finite].max())


def steady_state_period(schedule: Schedule) -> float:
    """Exact steady-state meta-iteration time of ``schedule`` in seconds.

    Returns ``math.inf`` when the per-node orders contradict the job chains so that
    the schedule deadlocks within a meta-iteration.
    """
    reduced = reduced_matrix(schedule)
    if reduced is None:
        return math.inf
    return max_cycle_mean(reduced[0])
