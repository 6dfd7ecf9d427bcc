"""The smallest instances beyond each proven statement of docs/theorem1.md.

:func:`smallest_counterexample` enumerates integer groups of one *layout* (node pinnings)
by increasing total duration ``sum_j (r_j + t_j)`` and returns the first one a
*predicate* flags, with every smaller one decided. Jobs are enumerated in one canonical
order (sorted by pinning and durations), so each group up to relabelling is visited once;
ties on the total are broken by that order.

Predicates (:data:`PREDICATES`), each exact on the instances it decides:

* ``repetition_beats_round_robin``: some schedule with multiplicities ``1..3`` and any
  per-node orders has a higher utilisation than round-robin (index order). Decided by
  :func:`rollmux.schedule.repeat.repeat_schedule` with the exact settings: branch and
  bound over vectors, exhaustive orders, the proven bounds of
  :mod:`rollmux.schedule.bounds`; an instance it cannot decide is reported, never
  skipped;
* ``round_robin_above_bound``: round-robin in some global job order runs slower than
  ``max(T_load, T_cycle)``;
* ``order_beats_round_robin``: some per-node order with one iteration per job has a
  shorter period than round-robin in every global order (exhaustive
  :func:`best_node_orders`): choosing a good global order is not enough.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rollmux.schedule.graph import round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period
from rollmux.schedule.repeat import repeat_schedule
from rollmux.schedule.search import REL_TOL, Objective, best_node_orders
from rollmux.theorem1.boundary import Instance, t_cycle_s, t_load_s

__all__ = ["LAYOUTS", "PREDICATES", "Counterexample", "compositions", "smallest_counterexample"]

Pins = tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


def _one_one(n: int) -> Iterator[Pins]:
    yield ((0,),) * n, ((0,),) * n


def _shared_train(n: int) -> Iterator[Pins]:
    """One training node; each job on rollout node 0 or 1, both used."""
    for codes in itertools.product((0, 1), repeat=n):
        if set(codes) == {0, 1}:
            yield tuple((c,) for c in codes), ((0,),) * n


def _gang(n: int) -> Iterator[Pins]:
    """One training node; rollout on node 0, node 1 or both; at least one job on both."""
    choices = ((0,), (1,), (0, 1))
    for pins in itertools.product(choices, repeat=n):
        if (0, 1) in pins:
            yield tuple(pins), ((0,),) * n


def _crossing_single(n: int) -> Iterator[Pins]:
    """2 + 2 nodes, one node per job and pool, all four used, every job linked to the others."""
    for r_codes in itertools.product((0, 1), repeat=n):
        for t_codes in itertools.product((0, 1), repeat=n):
            if set(r_codes) != {0, 1} or set(t_codes) != {0, 1}:
                continue
            if _linked(r_codes, t_codes):
                yield tuple((c,) for c in r_codes), tuple((c,) for c in t_codes)


def _linked(r_codes: Sequence[int], t_codes: Sequence[int]) -> bool:
    """Whether the jobs form one group through shared rollout or training nodes."""
    reached = {0}
    frontier = [0]
    while frontier:
        a = frontier.pop()
        for b in range(len(r_codes)):
            if b not in reached and (r_codes[a] == r_codes[b] or t_codes[a] == t_codes[b]):
                reached.add(b)
                frontier.append(b)
    return len(reached) == len(r_codes)


LAYOUTS: dict[str, Callable[[int], Iterator[Pins]]] = {
    "one_one": _one_one,
    "shared_train": _shared_train,
    "gang": _gang,
    "crossing_single": _crossing_single,
}


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every tuple of ``parts`` positive integers summing to ``total``, lexicographically."""
    if parts == 1:
        if total >= 1:
            yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def _canonical(pins: Pins, values: Sequence[int], n: int) -> bool:
    """Whether jobs are in the canonical order: sorted by (pins, rollout, training)."""
    keys = [(pins[0][j], pins[1][j], values[j], values[n + j]) for j in range(n)]
    return all(keys[j] <= keys[j + 1] for j in range(n - 1))


# --------------------------------------------------------------------------- predicates


@dataclass(frozen=True)
class Verdict:
    """A predicate's answer: ``True`` (counterexample), ``False``, or ``None`` (undecided)."""

    flagged: bool | None
    detail: str = ""


def repetition_beats_round_robin(instance: Instance, objective: Objective) -> Verdict:
    """Some schedule with multiplicities 1..3 beats round-robin's utilisation (exact search)."""
    result = repeat_schedule(
        instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node,
        max_multiplicity=3, objective=objective, exact_limit=400_000, max_vectors=None,
        min_gain=1.0 + REL_TOL,
    )
    assert result is not None
    if result.gain > 1.0 + REL_TOL:
        orders = "|".join(f"{p}{n}:" + " ".join(map(str, s))
                          for (p, n), s in result.node_orders.items())
        return Verdict(True, f"m={','.join(map(str, result.multiplicity))} "
                             f"P={result.period_s:g} gain={result.gain:.6f} {orders}")
    if result.upper_bound <= result.round_robin_utilisation * (1.0 + REL_TOL):
        return Verdict(False)
    return Verdict(None, f"bound gain {result.upper_bound / result.round_robin_utilisation:.6f}")


def _round_robin_periods(instance: Instance) -> list[tuple[float, tuple[int, ...]]]:
    """Round-robin's period in every global job order, with the order."""
    args = (instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node)
    return [
        (steady_state_period(round_robin_schedule(*args, order=order)), order)
        for order in itertools.permutations(range(instance.n_jobs))
    ]


def round_robin_above_bound(instance: Instance, objective: Objective) -> Verdict:
    """Round-robin in some global order runs slower than ``max(T_load, T_cycle)``."""
    del objective  # a period statement: the objective does not matter
    args = (instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node)
    bound = max(t_load_s(*args), t_cycle_s(instance.rollout_s, instance.train_s))
    period, order = max(_round_robin_periods(instance))
    if period > bound * (1.0 + REL_TOL):
        return Verdict(True, f"P={period:g} in order {','.join(map(str, order))} "
                             f"bound={bound:g}")
    return Verdict(False)


def order_beats_round_robin(instance: Instance, objective: Objective) -> Verdict:
    """Some per-node order (one iteration per job) beats round-robin in every global order."""
    del objective  # one iteration per job: utilisation is c / P for every objective
    args = (instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node)
    period, _ = min(_round_robin_periods(instance))
    best = best_node_orders(*args, exact_limit=10**9)
    if best.period_s < period * (1.0 - REL_TOL):
        orders = "|".join(f"{p}{n}:" + " ".join(map(str, s))
                          for (p, n), s in best.node_orders.items())
        return Verdict(True, f"P={best.period_s:g} best round-robin={period:g} {orders}")
    return Verdict(False)


PREDICATES: dict[str, Callable[[Instance, Objective], Verdict]] = {
    "repetition_beats_round_robin": repetition_beats_round_robin,
    "round_robin_above_bound": round_robin_above_bound,
    "order_beats_round_robin": order_beats_round_robin,
}


# --------------------------------------------------------------------------- search


@dataclass(frozen=True)
class Counterexample:
    """The first flagged instance by total duration, and what the search went through."""

    instance: Instance | None
    detail: str
    total_s: int
    n_checked: int
    undecided: tuple[str, ...]


def smallest_counterexample(
    layout: str,
    n_jobs: int,
    predicate: str,
    *,
    objective: Objective = "aggregate",
    condition: str = "unsaturated",
    max_total_s: int = 40,
    min_total_s: int | None = None,
) -> Counterexample:
    """The smallest group of ``layout`` (by total duration) that ``predicate`` flags.

    ``condition``: ``"unsaturated"`` (``T_load <= T_cycle``), ``"saturated"`` or
    ``"any"``. Totals ``min_total_s .. max_total_s`` are searched (default from the
    smallest possible, ``2 n_jobs``); ``instance`` is ``None`` when none is flagged up to
    ``max_total_s``. Instances a predicate cannot decide are listed in ``undecided``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout = {layout!r}: expected one of {', '.join(LAYOUTS)}")
    if predicate not in PREDICATES:
        raise ValueError(f"predicate = {predicate!r}: expected one of {', '.join(PREDICATES)}")
    if condition not in ("unsaturated", "saturated", "any"):
        raise ValueError(f"condition = {condition!r}: expected unsaturated, saturated or any")
    check = PREDICATES[predicate]
    pinnings = list(LAYOUTS[layout](n_jobs))
    n_checked = 0
    undecided: list[str] = []
    start = 2 * n_jobs if min_total_s is None else max(min_total_s, 2 * n_jobs)
    for total in range(start, max_total_s + 1):
        for values in compositions(total, 2 * n_jobs):
            for pins in pinnings:
                if not _canonical(pins, values, n_jobs):
                    continue
                instance = Instance(
                    tuple(float(v) for v in values[:n_jobs]),
                    tuple(float(v) for v in values[n_jobs:]),
                    pins[0],
                    pins[1],
                )
                args = (instance.rollout_s, instance.train_s, pins[0], pins[1])
                load, cycle = t_load_s(*args), t_cycle_s(instance.rollout_s, instance.train_s)
                if condition == "unsaturated" and load > cycle:
                    continue
                if condition == "saturated" and load <= cycle:
                    continue
                n_checked += 1
                verdict = check(instance, objective)
                if verdict.flagged is None:
                    undecided.append(f"{instance.compact()} ({verdict.detail})")
                elif verdict.flagged:
                    return Counterexample(instance, verdict.detail, total, n_checked,
                                          tuple(undecided))
    return Counterexample(None, "", max_total_s, n_checked, tuple(undecided))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: print the smallest counterexample of one layout, size and predicate."""
    parser = argparse.ArgumentParser(
        prog="python -m rollmux.theorem1.counterexamples", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--layout", choices=sorted(LAYOUTS), required=True)
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--predicate", choices=sorted(PREDICATES), required=True)
    parser.add_argument("--objective", choices=["aggregate", "cost_weighted"],
                        default="aggregate")
    parser.add_argument("--condition", choices=["unsaturated", "saturated", "any"],
                        default="unsaturated")
    parser.add_argument("--max-total", type=int, default=40, help="largest total duration (s)")
    args = parser.parse_args(argv)
    found = smallest_counterexample(args.layout, args.jobs, args.predicate,
                                    objective=args.objective, condition=args.condition,
                                    max_total_s=args.max_total)
    if found.instance is None:
        print(f"none up to total {found.total_s} ({found.n_checked} groups checked)")
    else:
        print(f"{found.instance.compact()} total={found.total_s} {found.detail} "
              f"({found.n_checked} groups checked)")
    for item in found.undecided:
        print(f"undecided: {item}")
    return 0 if not found.undecided else 1


if __name__ == "__main__":
    raise SystemExit(main())
