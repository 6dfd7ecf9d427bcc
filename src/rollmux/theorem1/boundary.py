"""Where Theorem 1 holds: the boundary map of round-robin optimality.

Theorem 1 (paper §4.3): for a group with ``T_load <= T_cycle`` the round-robin
meta-iteration (one rollout and one training per job, a fixed cyclic order on every
node) maximises aggregate utilisation ``U_R + U_T``. Its proof covers one rollout node
and one training node. :func:`boundary_map` measures, on seeded random small integer
instances, how far the claim reaches, comparing round-robin in index order with the
exhaustive optimum of :func:`rollmux.schedule.search.best_schedule` (all per-node orders,
multiplicities ``1..max_multiplicity``) and with the best per-node order of
:func:`rollmux.schedule.search.best_node_orders`.

Families (``FAMILIES``):

* ``a_one_rollout_one_train``: 1 rollout + 1 training node, ``T_load <= T_cycle``;
* ``b_shared_train``: 1 shared training node, each job on one of 2-3 rollout nodes,
  ``T_load <= T_cycle``;
* ``c_crossing``: 2 rollout + 2 training nodes, jobs pinned to crossing subsets
  (some span both nodes of a pool), both training nodes used, ``T_load <= T_cycle``;
* ``d_cost_weighted``: as (a), objective cost-weighted utilisation with a training node
  costing 2.85 rollout nodes (H800 / H20);
* ``e_saturated``: 1 shared training node, 1-2 rollout nodes, ``T_load > T_cycle``.

``T_cycle = max_j (r_j + t_j)``; ``T_load`` = the largest busy time of any one node
(the paper's "sum of train on the shared training node(s), max over rollout nodes of the
rollout sum on that node", per node when a group has several training nodes).

Columns of the summary (:data:`SUMMARY_COLUMNS`), one row per family:

``family``, ``objective`` (``aggregate`` | ``cost_weighted``), ``max_multiplicity``
(searched per job: 3 for 2-job instances, else 2), ``n_instances``,
``rr_optimal_fraction`` (round-robin in index order reaches the exhaustive optimum,
rel. tol 1e-9), ``rr_period_at_bound_fraction`` (its period equals ``max(T_load,
T_cycle)``), ``worst_util_ratio`` (max of optimum / round-robin utilisation),
``worst_period_ratio`` (max of round-robin period / best per-node-order period),
``worst_rr_period_over_bound`` (max of round-robin period / ``max(T_load, T_cycle)``),
``n_counterexamples`` (instances where round-robin is not optimal),
``order_search_closes_gap_fraction`` (of those, the share where the best per-node order
with one iteration per job already reaches the optimum; empty when there are none),
``n_need_repetition`` (instances whose optimum needs some ``m_j > 1``),
``min_counterexample`` (the smallest counterexample: fewest jobs, then nodes, then total
duration; ``r=..;t=..;R=..;T=..`` with per-job durations and pinned node ids, ``+``
joining the nodes of a job spanning several), ``min_counterexample_util_ratio`` and
``min_counterexample_max_multiplicity`` (the cap M under which that ratio was found: the
family's ``max_multiplicity`` is the largest cap of its instances, and a 3-job
counterexample is searched with M = 2 only).

Run: ``rollmux theorem1 --instances 100 --seed 0 --out results/theorem1/summary.csv``
(or ``python -m rollmux.theorem1`` with the same options; :mod:`rollmux.theorem1.cli`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rollmux.schedule.graph import round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period
from rollmux.schedule.search import (
    REL_TOL,
    Objective,
    best_node_orders,
    best_schedule,
    utilisation,
)
from rollmux.theorem1.settings import FAMILIES

SUMMARY_COLUMNS: tuple[str, ...] = (
    "family",
    "objective",
    "max_multiplicity",
    "n_instances",
    "rr_optimal_fraction",
    "rr_period_at_bound_fraction",
    "worst_util_ratio",
    "worst_period_ratio",
    "worst_rr_period_over_bound",
    "n_counterexamples",
    "order_search_closes_gap_fraction",
    "n_need_repetition",
    "min_counterexample",
    "min_counterexample_util_ratio",
    "min_counterexample_max_multiplicity",
)
# Integer durations 1..MAX_DURATION_S keep the exact periods exactly representable.
MAX_DURATION_S = 9


@dataclass(frozen=True)
class Instance:
    """A small co-execution group: durations and each job's pinned node ids per pool."""

    rollout_s: tuple[float, ...]
    train_s: tuple[float, ...]
    rollout_node: tuple[tuple[int, ...], ...]
    train_node: tuple[tuple[int, ...], ...]

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.rollout_s)

    @property
    def n_nodes(self) -> int:
        """Number of distinct nodes used (both pools)."""
        rollout = {n for pins in self.rollout_node for n in pins}
        train = {n for pins in self.train_node for n in pins}
        return len(rollout) + len(train)

    def compact(self) -> str:
        """``r=..;t=..;R=..;T=..``: durations and pinned node ids, ``+`` joins gang nodes."""

        def nums(xs: Sequence[float]) -> str:
            return ",".join(f"{x:g}" for x in xs)

        def pins(ps: Sequence[Sequence[int]]) -> str:
            return ",".join("+".join(str(n) for n in p) for p in ps)

        return (
            f"r={nums(self.rollout_s)};t={nums(self.train_s)};"
            f"R={pins(self.rollout_node)};T={pins(self.train_node)}"
        )

    def size_key(self) -> tuple[float, ...]:
        """Ordering for 'smallest': jobs, nodes, total duration, then the string."""
        return (self.n_jobs, self.n_nodes, sum(self.rollout_s) + sum(self.train_s))


def t_cycle_s(rollout_s: Sequence[float], train_s: Sequence[float]) -> float:
    """``T_cycle``: the longest solo iteration ``max_j (r_j + t_j)``."""
    return max(r + t for r, t in zip(rollout_s, train_s, strict=True))


def t_load_s(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[Sequence[int]],
    train_node: Sequence[Sequence[int]],
) -> float:
    """``T_load``: the largest per-node busy time of one round-robin meta-iteration."""
    load: dict[tuple[str, int], float] = {}
    for j, (r, t) in enumerate(zip(rollout_s, train_s, strict=True)):
        for n in rollout_node[j]:
            load[("R", n)] = load.get(("R", n), 0.0) + r
        for n in train_node[j]:
            load[("T", n)] = load.get(("T", n), 0.0) + t
    return max(load.values())


def unsaturate(
    rollout_s: Sequence[float],
    train_s: Sequence[float],
    rollout_node: Sequence[Sequence[int]],
    train_node: Sequence[Sequence[int]],
    anchor: int,
    extra_rollout_s: float = 0.0,
    extra_train_s: float = 0.0,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Raise job ``anchor``'s durations until ``T_load <= T_cycle`` (extras 0 give a full group).

    Every such group has this form: the job of longest iteration must roll out at least as
    long as the others train on its training nodes, and train at least as long as the
    others roll out on its rollout nodes; other nodes' loads are covered by its cycle.
    """
    r = [float(x) for x in rollout_s]
    t = [float(x) for x in train_s]
    others = [j for j in range(len(r)) if j != anchor]

    def load(pool: str, node: int) -> float:
        pins, dur = (rollout_node, r) if pool == "R" else (train_node, t)
        return sum(dur[j] for j in others if node in pins[j])

    r[anchor] = max([1.0] + [load("T", n) for n in train_node[anchor]]) + extra_rollout_s
    t[anchor] = max([1.0] + [load("R", n) for n in rollout_node[anchor]]) + extra_train_s
    deficit = t_load_s(r, t, rollout_node, train_node) - (r[anchor] + t[anchor])
    if deficit > 0:
        t[anchor] += deficit
    return tuple(r), tuple(t)


# --------------------------------------------------------------------------- generators


def _durations(rng: np.random.Generator, n: int) -> list[float]:
    return [float(x) for x in rng.integers(1, MAX_DURATION_S + 1, size=n)]


def _unsaturated(
    rng: np.random.Generator,
    rollout_node: Sequence[tuple[int, ...]],
    train_node: Sequence[tuple[int, ...]],
) -> Instance:
    n = len(rollout_node)
    anchor = int(rng.integers(n))
    extras = rng.integers(0, MAX_DURATION_S + 1, size=2)
    r, t = unsaturate(
        _durations(rng, n),
        _durations(rng, n),
        rollout_node,
        train_node,
        anchor,
        float(extras[0]),
        float(extras[1]),
    )
    return Instance(r, t, tuple(rollout_node), tuple(train_node))


def _one_one(rng: np.random.Generator) -> Instance:
    n = int(rng.integers(2, 4))
    return _unsaturated(rng, [(0,)] * n, [(0,)] * n)


def _shared_train(rng: np.random.Generator) -> Instance:
    n = int(rng.integers(2, 4))
    n_rollout = int(rng.integers(2, 4))
    pins = [(int(x),) for x in rng.integers(0, n_rollout, size=n)]
    return _unsaturated(rng, pins, [(0,)] * n)


def _subset(rng: np.random.Generator) -> tuple[int, ...]:
    return (0, 1) if rng.random() < 0.25 else (int(rng.integers(2)),)


def _crossing(rng: np.random.Generator) -> Instance:
    n = int(rng.integers(2, 4))
    while True:
        r_pins = [_subset(rng) for _ in range(n)]
        t_pins = [_subset(rng) for _ in range(n)]
        if {x for p in t_pins for x in p} == {0, 1}:
            return _unsaturated(rng, r_pins, t_pins)


def _saturated(rng: np.random.Generator) -> Instance:
    while True:
        n = int(rng.integers(2, 4))
        n_rollout = int(rng.integers(1, 3))
        r_pins = [(int(x),) for x in rng.integers(0, n_rollout, size=n)]
        t_pins = [(0,)] * n
        r, t = _durations(rng, n), _durations(rng, n)
        if t_load_s(r, t, r_pins, t_pins) > t_cycle_s(r, t):
            return Instance(tuple(r), tuple(t), tuple(r_pins), tuple(t_pins))


GENERATORS: dict[str, tuple[Callable[[np.random.Generator], Instance], Objective]] = {
    "a_one_rollout_one_train": (_one_one, "aggregate"),
    "b_shared_train": (_shared_train, "aggregate"),
    "c_crossing": (_crossing, "aggregate"),
    "d_cost_weighted": (_one_one, "cost_weighted"),
    "e_saturated": (_saturated, "aggregate"),
}


def generate(family: str, rng: np.random.Generator) -> Instance:
    """One random instance of ``family`` (see the module docstring) drawn from ``rng``."""
    return GENERATORS[family][0](rng)


def max_multiplicity_for(instance: Instance) -> int:
    """Multiplicities searched: up to 3 for two jobs, else up to 2."""
    return 3 if instance.n_jobs <= 2 else 2


# --------------------------------------------------------------------------- evaluation


def evaluate(instance: Instance, objective: Objective = "aggregate") -> dict[str, object]:
    """Round-robin (index order) vs exhaustive optimum vs best per-node order, one instance."""
    args = (instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node)
    rr = round_robin_schedule(*args)
    rr_period = steady_state_period(rr)
    rr_util = utilisation(rr, rr_period, objective)
    m_max = max_multiplicity_for(instance)
    opt = best_schedule(*args, max_multiplicity=m_max, objective=objective)
    orders = best_node_orders(*args)
    # One iteration per job: utilisation scales as 1 / period.
    order_util = rr_util * rr_period / orders.period_s
    bound = max(t_load_s(*args), t_cycle_s(instance.rollout_s, instance.train_s))
    return {
        "instance": instance.compact(),
        "n_jobs": instance.n_jobs,
        "n_nodes": instance.n_nodes,
        "objective": objective,
        "max_multiplicity": m_max,
        "t_load_s": t_load_s(*args),
        "t_cycle_s": t_cycle_s(instance.rollout_s, instance.train_s),
        "rr_period_s": rr_period,
        "rr_util": rr_util,
        "opt_util": opt.utilisation,
        "opt_period_s": opt.period_s,
        "opt_multiplicity": ",".join(str(m) for m in opt.multiplicity),
        "order_period_s": orders.period_s,
        "order_util": order_util,
        "rr_optimal": rr_util >= opt.utilisation * (1.0 - REL_TOL),
        "rr_period_at_bound": math.isclose(rr_period, bound, rel_tol=REL_TOL),
        "order_reaches_opt": order_util >= opt.utilisation * (1.0 - REL_TOL),
        "util_ratio": opt.utilisation / rr_util,
        "period_ratio": rr_period / orders.period_s,
        "rr_period_over_bound": rr_period / bound,
    }


def instance_table(
    n_instances: int, seed: int, progress: Callable[[int], object] | None = None
) -> pd.DataFrame:
    """One row per (family, instance): the per-instance comparison behind :func:`boundary_map`.

    ``progress(1)`` is called after each instance.
    """
    rows = []
    for k, family in enumerate(FAMILIES):
        rng = np.random.default_rng([seed, k])
        objective = GENERATORS[family][1]
        for i in range(n_instances):
            instance = generate(family, rng)
            row = evaluate(instance, objective)
            row["family"] = family
            row["index"] = i
            row["_size"] = instance.size_key()
            rows.append(row)
            if progress is not None:
                progress(1)
    return pd.DataFrame(rows)


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Aggregate an :func:`instance_table` into the boundary map (:data:`SUMMARY_COLUMNS`)."""
    out = []
    for family in FAMILIES:
        df = table[table["family"] == family]
        if df.empty:
            continue
        bad = df[~df["rr_optimal"]]
        smallest = (
            bad.loc[min(bad.index, key=lambda i: (bad.at[i, "_size"], bad.at[i, "instance"]))]
            if not bad.empty
            else None
        )
        out.append(
            {
                "family": family,
                "objective": df["objective"].iloc[0],
                "max_multiplicity": int(df["max_multiplicity"].max()),
                "n_instances": len(df),
                "rr_optimal_fraction": float(df["rr_optimal"].mean()),
                "rr_period_at_bound_fraction": float(df["rr_period_at_bound"].mean()),
                "worst_util_ratio": float(df["util_ratio"].max()),
                "worst_period_ratio": float(df["period_ratio"].max()),
                "worst_rr_period_over_bound": float(df["rr_period_over_bound"].max()),
                "n_counterexamples": len(bad),
                "order_search_closes_gap_fraction": (
                    float(bad["order_reaches_opt"].mean()) if not bad.empty else math.nan
                ),
                "n_need_repetition": int((~df["order_reaches_opt"]).sum()),
                "min_counterexample": smallest["instance"] if smallest is not None else "",
                "min_counterexample_util_ratio": (
                    float(smallest["util_ratio"]) if smallest is not None else math.nan
                ),
                "min_counterexample_max_multiplicity": (
                    int(smallest["max_multiplicity"]) if smallest is not None else ""
                ),
            }
        )
    return pd.DataFrame(out, columns=list(SUMMARY_COLUMNS))


def boundary_map(n_instances: int, seed: int) -> pd.DataFrame:
    """Per-family summary of where round-robin is utilisation-optimal (module docstring)."""
    if n_instances < 1:
        raise ValueError(f"n_instances = {n_instances!r}: expected an int >= 1")
    return summarise(instance_table(n_instances, seed))


# --------------------------------------------------------------------------- order-search gap


def order_search_gap(
    n_instances: int,
    seed: int,
    exact_limit: int = 20_000,
    progress: Callable[[int], object] | None = None,
) -> pd.DataFrame:
    """Heuristic vs exhaustive :func:`best_node_orders` on random small crossing instances.

    Instances: 4-5 jobs, random durations 1..9 (saturated or not), 2 rollout + 2 training
    nodes, each job on one node of a pool or (probability 0.3) on both; instances whose
    search space exceeds ``exact_limit`` are redrawn. One row per instance: round-robin
    (index order), exact and heuristic periods, the lower bound ``max(T_load, T_cycle)``
    and ``gap = heuristic / exact - 1``. ``progress(1)`` is called after each instance.
    """
    rng = np.random.default_rng([seed, 99])
    rows: list[dict[str, object]] = []
    while len(rows) < n_instances:
        n = int(rng.integers(4, 6))
        r_pins = tuple(_gang_or_single(rng) for _ in range(n))
        t_pins = tuple(_gang_or_single(rng) for _ in range(n))
        sizes = [
            sum(1 for pins in pool if node in pins) for pool in (r_pins, t_pins) for node in (0, 1)
        ]
        if math.prod(math.factorial(k) for k in sizes) > exact_limit:
            continue
        instance = Instance(tuple(_durations(rng, n)), tuple(_durations(rng, n)), r_pins, t_pins)
        args = (instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node)
        exact = best_node_orders(*args, exact_limit=exact_limit)
        heuristic = best_node_orders(*args, exact_limit=0, seed=seed + len(rows))
        rows.append(
            {
                "instance": instance.compact(),
                "rr_period_s": steady_state_period(round_robin_schedule(*args)),
                "lower_bound_s": exact.lower_bound_s,
                "exact_period_s": exact.period_s,
                "heuristic_period_s": heuristic.period_s,
                "gap": heuristic.period_s / exact.period_s - 1.0,
                "exact_evaluations": exact.n_evaluated,
                "heuristic_evaluations": heuristic.n_evaluated,
            }
        )
        if progress is not None:
            progress(1)
    return pd.DataFrame(rows)


def _gang_or_single(rng: np.random.Generator) -> tuple[int, ...]:
    return (0, 1) if rng.random() < 0.3 else (int(rng.integers(2)),)
