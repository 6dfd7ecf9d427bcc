"""Round-robin's worst case over *all* multiplicities on one rollout and one training node.

docs/theorem1.md, "The supremum on one rollout and one training node", proves: in the
worst-case domain of families (a) and (d) (:class:`rollmux.theorem1.worst_case.Domain`:
``n`` jobs, an anchor raised until ``T_load <= T_cycle`` plus extras ``0..D``, every
other duration in ``1..D``), the supremum over instances and schedules with any
multiplicities of best schedule / round-robin is

* aggregate utilisation, ``n >= 3``: ``2 / min U_RR = 2 (n - 1 + D) / (2 (n - 1) + D)``;
* cost-weighted utilisation (node weights ``w_R``, ``w_T``), ``n >= 3``:
  ``1 / min U_RR`` with ``min U_RR = 1 - max_(x, y) (w_R y + w_T x) / ((w_R + w_T)
  (2 (n - 1) + x + y))`` over the corners ``x, y in {0, D}`` (the anchor's extras);
* aggregate, ``n = 2``: 1 (Theorem C); cost-weighted, ``n = 2``: not derived (``None``).

None is attained: the *ping-pong* schedules :func:`ping_pong` (two unit jobs alternating
``k`` times under the anchor) approach it as ``k`` grows; :func:`supremum_table` gives
their exact ratios next to the closed form.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rollmux.schedule.graph import build_schedule, round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period
from rollmux.schedule.search import DEFAULT_POOL_WEIGHTS, utilisation
from rollmux.theorem1.boundary import Instance

__all__ = ["PING_PONG_KS", "SUPREMUM_COLUMNS", "PingPong", "Supremum", "ping_pong", "supremum",
           "supremum_table", "witness"]

#: Ping-pong rounds tabulated (exact max-plus periods; k = 1000 takes about 20 s).
PING_PONG_KS: tuple[int, ...] = (1, 2, 3, 10, 100)
ONE_ONE = {"a_one_rollout_one_train": "aggregate", "d_cost_weighted": "cost_weighted"}
SUPREMUM_COLUMNS: tuple[str, ...] = (
    "family", "objective", "n_jobs", "max_duration_s", "supremum", "status", "instance",
    "rr_utilisation", "k", "multiplicity", "period_s", "closed_form_period_s", "ratio",
)


@dataclass(frozen=True)
class Supremum:
    """A family's supremum over all multiplicities, its status and where it is approached."""

    value: float
    status: str
    instance: Instance | None


def _cost_corner(n: int, d: int, w: Mapping[str, float]) -> tuple[int, int]:
    """The anchor's extras ``(x, y)`` minimising round-robin's cost-weighted utilisation."""
    s = 2 * (n - 1)
    return max(((x, y) for x in (0, d) for y in (0, d)),
               key=lambda c: (w["R"] * c[1] + w["T"] * c[0]) / (s + c[0] + c[1]))


def witness(n: int, d: int, objective: str,
            weights: Mapping[str, float] | None = None) -> Instance:
    """The instance of least round-robin utilisation: job 0 the anchor, jobs 1.. unit."""
    if n < 3:
        raise ValueError(f"n = {n}: the ping-pong witness needs at least 3 jobs")
    w = DEFAULT_POOL_WEIGHTS if weights is None else weights
    x, y = (d, d) if objective == "aggregate" else _cost_corner(n, d, w)
    r = (float(n - 1 + x),) + (1.0,) * (n - 1)
    t = (float(n - 1 + y),) + (1.0,) * (n - 1)
    pins = ((0,),) * n
    return Instance(r, t, pins, pins)


def supremum(family: str, objective: str, n: int, d: int,
             weights: Mapping[str, float] | None = None) -> Supremum | None:
    """The proven supremum of a (family, objective, size) cell, or ``None`` when not derived.

    Only the one-rollout-one-training-node families (a) and (d) under their own
    objective; see the module docstring.
    """
    if ONE_ONE.get(family) != objective:
        return None
    w = DEFAULT_POOL_WEIGHTS if weights is None else weights
    if n == 2:
        if objective == "aggregate":
            return Supremum(1.0, "proven (Theorem C)", None)
        return None
    inst = witness(n, d, objective, w)
    rr = round_robin_schedule(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node)
    u_rr = utilisation(rr, steady_state_period(rr), objective, w)  # type: ignore[arg-type]
    top = 2.0 if objective == "aggregate" else 1.0
    return Supremum(top / u_rr, "proven", inst)


@dataclass(frozen=True)
class PingPong:
    """One ping-pong schedule: its multiplicities, exact period and ratio to round-robin."""

    multiplicity: tuple[int, ...]
    period_s: float
    closed_form_period_s: float
    ratio: float
    rr_utilisation: float


def ping_pong(instance: Instance, k: int, objective: str,
              weights: Mapping[str, float] | None = None) -> PingPong:
    """The anchor (job 0) once, jobs 1 and 2 alternating ``k`` times, the others once.

    Both nodes serve ``0, (1, 2)^k, 3, ..., n-1``. The proof's timetable runs it at
    ``P_k = s_0 + 2k + n - 4`` (``closed_form_period_s``, an upper bound on the exact
    max-plus period ``period_s``).
    """
    n = instance.n_jobs
    if n < 3 or k < 1:
        raise ValueError(f"ping_pong needs n >= 3 jobs and k >= 1, got n={n}, k={k}")
    seq = [0] + [1, 2] * k + list(range(3, n))
    orders: dict[tuple[str, Hashable], list[int]] = {("R", 0): seq, ("T", 0): seq}
    schedule = build_schedule(instance.rollout_s, instance.train_s, instance.rollout_node,
                              instance.train_node, orders)
    period = steady_state_period(schedule)
    rr = round_robin_schedule(instance.rollout_s, instance.train_s, instance.rollout_node,
                              instance.train_node)
    u_rr = utilisation(rr, steady_state_period(rr), objective, weights)  # type: ignore[arg-type]
    u = utilisation(schedule, period, objective, weights)  # type: ignore[arg-type]
    closed = instance.rollout_s[0] + instance.train_s[0] + 2 * k + n - 4
    return PingPong((1, k, k) + (1,) * (n - 3), period, closed, u / u_rr, u_rr)


def supremum_table(sizes: Sequence[int], d: int, ks: Sequence[int]) -> pd.DataFrame:
    """Per family (a), (d) and size: the supremum and the ping-pong ratios for each ``k``."""
    rows = []
    for family, objective in ONE_ONE.items():
        for n in sizes:
            sup = supremum(family, objective, n, d)
            base = {"family": family, "objective": objective, "n_jobs": n,
                    "max_duration_s": d, "supremum": "" if sup is None else sup.value,
                    "status": "open" if sup is None else sup.status}
            if sup is None or sup.instance is None:
                rows.append({**base, "instance": "", "rr_utilisation": "", "k": "",
                             "multiplicity": "", "period_s": "", "closed_form_period_s": "",
                             "ratio": ""})
                continue
            for k in ks:
                pp = ping_pong(sup.instance, k, objective)
                rows.append({**base, "instance": sup.instance.compact(),
                             "rr_utilisation": pp.rr_utilisation, "k": k,
                             "multiplicity": ",".join(str(m) for m in pp.multiplicity),
                             "period_s": pp.period_s,
                             "closed_form_period_s": pp.closed_form_period_s,
                             "ratio": pp.ratio})
    return pd.DataFrame(rows, columns=list(SUPREMUM_COLUMNS))
