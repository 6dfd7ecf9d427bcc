"""Round-robin's worst case: the largest ratio best schedule / round-robin an adversary finds.

For a *cell* (family of the boundary map, objective, number of jobs) the adversary
searches a *domain* of integer instances for the largest ratio of the best schedule
found (:func:`rollmux.schedule.repeat.repeat_schedule`, multiplicities
``1..max_multiplicity``, any per-node orders) to round-robin (every job once, index order
on every node), both under the objective (aggregate or cost-weighted utilisation).

Domain of a family with ``n`` jobs and durations up to ``D`` (integers keep the exact
periods exactly representable):

* pinnings as in the boundary map (:mod:`rollmux.theorem1.boundary`): (a), (d) one
  rollout and one training node; (b) one training node, each job on one of 3 rollout
  nodes; (c) 2 + 2 nodes, each job on node 0, node 1 or both of each pool, both training
  nodes used, every job linked to the others through shared nodes (else it is two
  groups, and round-robin needlessly throttles the jobs of the smaller one); (e) one
  training node, each job on one of 2 rollout nodes;
* unsaturated families (a)-(d): every job but an *anchor* has durations in ``1..D``; the
  anchor is raised by :func:`rollmux.theorem1.boundary.unsaturate` until
  ``T_load <= T_cycle``, plus extra rollout and training time in ``0..D`` (every
  unsaturated group has this form); (e): every duration in ``1..D`` and
  ``T_load > T_cycle``.

Search, per cell (deterministic for a seed):

0. the previous group size's worst instance grown by a unit job (:func:`extend`);
1. Hypothesis, guided by ``target(ratio)``: ``examples`` draws of the anchor, pinning and
   durations (generate, then target phase: hill climbing on the observed ratio);
2. a local optimiser over the durations of the best instances found (their anchor and
   pinning kept): :func:`scipy.optimize.differential_evolution` on the integer vector,
   seeded with the best instance of each of the ``optimizer_starts`` best structures,
   then a compass search (steps of +-1, +-2 per duration) from the best;
3. where the domain is small (``check``), exhaustive enumeration of every instance, to
   show that 1-2 reach the true maximum there.

The inner best schedule is exact for small groups (exhaustive orders, proven bounds) and
a heuristic above; every row carries the instance, the best schedule found (a witness:
the ratio is achieved) and a proven upper bound on that instance's ratio
(:mod:`rollmux.schedule.bounds`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from rollmux.schedule.repeat import RepeatSchedule, repeat_schedule
from rollmux.schedule.search import Objective
from rollmux.theorem1.boundary import (
    FAMILIES,
    GENERATORS,
    Instance,
    t_cycle_s,
    t_load_s,
    unsaturate,
)
from rollmux.theorem1.settings import BUDGET_FLAGS, Budget

__all__ = [
    "BUDGET_FLAGS",
    "CHECK_COLUMNS",
    "WORST_CASE_COLUMNS",
    "Budget",
    "Domain",
    "Genome",
    "cells",
    "check_table",
    "evaluate",
    "exhaustive_cell",
    "extend",
    "search_cell",
    "worst_case_table",
]

# Node subsets a job may be pinned to, per pool, by family: code -> node ids.
_ONE: tuple[tuple[int, ...], ...] = ((0,),)
_PINS: dict[str, tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]] = {
    "a_one_rollout_one_train": (_ONE, _ONE),
    "b_shared_train": (((0,), (1,), (2,)), _ONE),
    "c_crossing": (((0,), (1,), (0, 1)), ((0,), (1,), (0, 1))),
    "d_cost_weighted": (_ONE, _ONE),
    "e_saturated": (((0,), (1,)), _ONE),
}
_SATURATED = frozenset({"e_saturated"})

WORST_CASE_COLUMNS: tuple[str, ...] = (
    "family",
    "objective",
    "n_jobs",
    "max_multiplicity",
    "max_duration_s",
    "ratio",
    "upper_bound_ratio",
    "best_exact",
    "instance",
    "rr_period_s",
    "rr_utilisation",
    "best_period_s",
    "best_utilisation",
    "best_multiplicity",
    "best_node_orders",
    "found_by",
    "n_instances",
)
CHECK_COLUMNS: tuple[str, ...] = (
    "family",
    "objective",
    "n_jobs",
    "max_multiplicity",
    "max_duration_s",
    "n_domain",
    "n_inexact",
    "exhaustive_ratio",
    "exhaustive_instance",
    "search_ratio",
    "search_instance",
    "search_reaches_exhaustive",
)
REL_TOL = 1e-9


def cells(families: Sequence[str] = FAMILIES) -> list[tuple[str, Objective]]:
    """(family, objective) pairs: each family's own objective, and the other one for (b), (c), (e).

    (a) and (d) share a domain and differ only in the objective, so each covers one.
    """
    out: list[tuple[str, Objective]] = []
    for family in families:
        if family not in GENERATORS:
            raise ValueError(f"family {family!r}: expected one of {', '.join(FAMILIES)}")
        own = GENERATORS[family][1]
        out.append((family, own))
        if family in ("b_shared_train", "c_crossing", "e_saturated"):
            out.append((family, "cost_weighted" if own == "aggregate" else "aggregate"))
    return out


# --------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Genome:
    """One point of a domain: anchor, pin codes per job and pool, integer durations."""

    anchor: int
    rollout_codes: tuple[int, ...]
    train_codes: tuple[int, ...]
    values: tuple[int, ...]


@dataclass(frozen=True)
class Domain:
    """The integer instances of one family with ``n_jobs`` jobs and durations up to ``D``."""

    family: str
    n_jobs: int
    max_duration_s: int

    def __post_init__(self) -> None:
        """Validate the family, the job count and the duration range."""
        if self.family not in _PINS:
            raise ValueError(f"family {self.family!r}: expected one of {', '.join(FAMILIES)}")
        for name, value, low in (("n_jobs", self.n_jobs, 2), ("max_duration_s",
                                                              self.max_duration_s, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} = {value!r}: expected an int >= {low}")

    @property
    def saturated(self) -> bool:
        """Whether the family is the saturated one (``T_load > T_cycle``)."""
        return self.family in _SATURATED

    @property
    def n_codes(self) -> tuple[int, int]:
        """Number of pin choices per job in the rollout and the training pool."""
        r, t = _PINS[self.family]
        return len(r), len(t)

    def value_bounds(self) -> list[tuple[int, int]]:
        """Inclusive bounds of the integer durations a genome carries.

        Unsaturated: the other jobs' rollouts and trainings (``1..D``), then the anchor's
        extra rollout and training (``0..D``). Saturated: every rollout and training.
        """
        d = self.max_duration_s
        if self.saturated:
            return [(1, d)] * (2 * self.n_jobs)
        return [(1, d)] * (2 * (self.n_jobs - 1)) + [(0, d), (0, d)]

    def decode(self, genome: Genome) -> Instance | None:
        """The instance of ``genome``, or ``None`` when it lies outside the family."""
        r_pins_of, t_pins_of = _PINS[self.family]
        n = self.n_jobs
        r_pins = tuple(r_pins_of[c] for c in genome.rollout_codes)
        t_pins = tuple(t_pins_of[c] for c in genome.train_codes)
        if self.family == "c_crossing" and (
            {x for p in t_pins for x in p} != {0, 1} or not _connected(r_pins, t_pins)
        ):
            return None
        v = [float(x) for x in genome.values]
        if self.saturated:
            r, t = tuple(v[:n]), tuple(v[n:])
            if t_load_s(r, t, r_pins, t_pins) <= t_cycle_s(r, t):
                return None
            return Instance(r, t, r_pins, t_pins)
        others = [j for j in range(n) if j != genome.anchor]
        r_base = [1.0] * n
        t_base = [1.0] * n
        for i, j in enumerate(others):
            r_base[j] = v[i]
            t_base[j] = v[n - 1 + i]
        r, t = unsaturate(r_base, t_base, r_pins, t_pins, genome.anchor, v[-2], v[-1])
        return Instance(r, t, r_pins, t_pins)

    def genomes(self) -> Iterator[Genome]:
        """Every genome of the domain (the exhaustive enumeration)."""
        n = self.n_jobs
        n_r, n_t = self.n_codes
        anchors = [0] if self.saturated else list(range(n))
        ranges = [range(lo, hi + 1) for lo, hi in self.value_bounds()]
        for anchor in anchors:
            for r_codes in itertools.product(range(n_r), repeat=n):
                for t_codes in itertools.product(range(n_t), repeat=n):
                    for values in itertools.product(*ranges):
                        yield Genome(anchor, r_codes, t_codes, values)


def _connected(r_pins: Sequence[tuple[int, ...]], t_pins: Sequence[tuple[int, ...]]) -> bool:
    """Whether every job is linked to every other through shared nodes (one group, not two)."""
    n = len(r_pins)
    reached = {0}
    frontier = [0]
    while frontier:
        a = frontier.pop()
        for b in range(n):
            if b not in reached and (set(r_pins[a]) & set(r_pins[b])
                                     or set(t_pins[a]) & set(t_pins[b])):
                reached.add(b)
                frontier.append(b)
    return len(reached) == n


def canonical(instance: Instance) -> str:
    """The instance with each pool's nodes renumbered by first use (same ratio), compact."""

    def relabel(pins: Sequence[tuple[int, ...]]) -> tuple[tuple[int, ...], ...]:
        order: dict[int, int] = {}
        for p in pins:
            for x in p:
                order.setdefault(x, len(order))
        return tuple(tuple(sorted(order[x] for x in p)) for p in pins)

    return Instance(instance.rollout_s, instance.train_s, relabel(instance.rollout_node),
                    relabel(instance.train_node)).compact()


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class Evaluation:
    """Round-robin and the best schedule found for one instance."""

    instance: Instance
    ratio: float
    upper_bound_ratio: float
    best: RepeatSchedule


def evaluate(
    instance: Instance, objective: Objective, budget: Budget, min_gain: float = 0.0
) -> Evaluation:
    """Best schedule found / round-robin for ``instance`` (with a proven upper bound).

    ``min_gain``: only look for ratios above it (see
    :func:`rollmux.schedule.repeat.repeat_schedule`); an adversary passes its best so far.
    """
    best = repeat_schedule(
        instance.rollout_s,
        instance.train_s,
        instance.rollout_node,
        instance.train_node,
        max_multiplicity=budget.max_multiplicity,
        objective=objective,
        exact_limit=budget.exact_limit,
        local_evaluations=budget.local_evaluations,
        max_vectors=budget.max_vectors,
        min_gain=min_gain,
        seed=0,
    )
    assert best is not None  # no caps: round-robin is always a candidate
    rr = best.round_robin_utilisation
    return Evaluation(instance, best.utilisation / rr, best.upper_bound / rr, best)


@dataclass
class _Tracker:
    """Evaluations cached by instance, and the best one with how it was found."""

    domain: Domain
    objective: Objective
    budget: Budget
    cache: dict[str, Evaluation] = field(default_factory=dict)
    structures: dict[tuple[object, ...], tuple[float, Genome]] = field(default_factory=dict)
    best: Evaluation | None = None
    best_genome: Genome | None = None
    found_by: str = ""

    def score(self, genome: Genome, source: str) -> float | None:
        """Ratio of ``genome`` (None outside the family); remembers the best."""
        instance = self.domain.decode(genome)
        if instance is None:
            return None
        key = instance.compact()
        result = self.cache.get(key)
        if result is None:
            # Branch and bound across instances: only a ratio above the best counts.
            floor = self.best.ratio if self.best is not None else 0.0
            result = evaluate(instance, self.objective, self.budget, floor)
            self.cache[key] = result
        if self.best is None or result.ratio > self.best.ratio * (1.0 + REL_TOL):
            self.best, self.best_genome, self.found_by = result, genome, source
        shape = (genome.anchor, genome.rollout_codes, genome.train_codes)
        known = self.structures.get(shape)
        if known is None or result.ratio > known[0] * (1.0 + REL_TOL):
            self.structures[shape] = (result.ratio, genome)
        return result.ratio

    def top_genomes(self, k: int) -> list[Genome]:
        """The best genome of each of the ``k`` best structures (anchor and pinning)."""
        ranked = sorted(self.structures.values(), key=lambda item: -item[0])
        return [genome for _, genome in ranked[:k]]


def _genome_strategy(domain: Domain):  # type: ignore[no-untyped-def]
    """Hypothesis strategy of the domain's genomes."""
    from hypothesis import strategies as st

    n = domain.n_jobs
    n_r, n_t = domain.n_codes
    anchor = st.just(0) if domain.saturated else st.integers(0, n - 1)
    values = st.tuples(*(st.integers(lo, hi) for lo, hi in domain.value_bounds()))
    return st.builds(
        Genome,
        anchor,
        st.tuples(*([st.integers(0, n_r - 1)] * n)),
        st.tuples(*([st.integers(0, n_t - 1)] * n)),
        values,
    )


def _hypothesis_phase(tracker: _Tracker, examples: int, seed: int) -> None:
    """Hypothesis draws guided by ``target(ratio)`` (generate and target phases only)."""
    from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate, Phase.target],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @hypothesis_seed(seed)
    @given(_genome_strategy(tracker.domain))
    def explore(genome: Genome) -> None:
        ratio = tracker.score(genome, "hypothesis")
        if ratio is None:
            assume(False)  # outside the family: draw again, not counted
            return
        target(ratio, label="ratio")

    # Too few valid draws in a tiny domain: the optimiser and the caller decide.
    with contextlib.suppress(Unsatisfiable):
        explore()


def _optimiser_phase(tracker: _Tracker, budget: Budget, seed: int) -> None:
    """Differential evolution over the integer durations of the best structures found.

    One run per structure (anchor and pinning) among the ``optimizer_starts`` best that
    the Hypothesis phase saw, each seeded with that structure's best durations.
    """
    if budget.optimizer_generations == 0:
        return
    from scipy.optimize import differential_evolution

    bounds = tracker.domain.value_bounds()
    for k, start in enumerate(tracker.top_genomes(budget.optimizer_starts)):

        def negative_ratio(x: np.ndarray, start: Genome = start) -> float:
            values = tuple(int(v) for v in np.rint(x))
            genome = Genome(start.anchor, start.rollout_codes, start.train_codes, values)
            ratio = tracker.score(genome, "optimizer")
            return 0.0 if ratio is None else -ratio

        differential_evolution(
            negative_ratio,
            bounds=[(lo, hi) for lo, hi in bounds],
            integrality=[True] * len(bounds),
            x0=np.asarray(start.values, dtype=float),
            seed=seed + k,
            maxiter=budget.optimizer_generations,
            popsize=budget.optimizer_popsize,
            polish=False,
            tol=0.0,
            updating="immediate",
            workers=1,
        )


def _polish_phase(tracker: _Tracker, max_evaluations: int) -> None:
    """Compass search on the best genome: steps of +-1 and +-2 per duration while improving."""
    if tracker.best_genome is None:
        return
    bounds = tracker.domain.value_bounds()
    spent = 0
    improved = True
    while improved and spent < max_evaluations:
        improved = False
        current = tracker.best_genome
        base = tracker.best.ratio if tracker.best is not None else 0.0
        for i, (lo, hi) in enumerate(bounds):
            for step in (1, -1, 2, -2):
                value = current.values[i] + step
                if not lo <= value <= hi:
                    continue
                values = (*current.values[:i], value, *current.values[i + 1:])
                genome = Genome(current.anchor, current.rollout_codes, current.train_codes,
                                values)
                ratio = tracker.score(genome, "optimizer")
                spent += 1
                if ratio is not None and ratio > base * (1.0 + REL_TOL):
                    improved = True
                    break
                if spent >= max_evaluations:
                    return
            if improved:
                break


def _cell_seed(seed: int, family: str, objective: str, n_jobs: int, salt: int) -> int:
    """A 32-bit seed per cell, from the run seed and the cell's identity."""
    words = [seed, FAMILIES.index(family), 0 if objective == "aggregate" else 1, n_jobs, salt]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def search_cell(
    family: str,
    objective: Objective,
    n_jobs: int,
    max_duration_s: int,
    budget: Budget,
    seed: int = 0,
    starts: Sequence[Genome] = (),
) -> dict[str, object]:
    """The worst case an adversarial search finds in one cell (a row of the table).

    ``starts`` are evaluated first (e.g. a smaller cell's worst instance grown by a job,
    see :func:`extend`), so the optimiser may refine them too.
    """
    return _search(family, objective, n_jobs, max_duration_s, budget, seed, starts)[0]


def _search(
    family: str,
    objective: Objective,
    n_jobs: int,
    max_duration_s: int,
    budget: Budget,
    seed: int,
    starts: Sequence[Genome],
) -> tuple[dict[str, object], Genome]:
    """:func:`search_cell`, also returning the worst genome."""
    domain = Domain(family, n_jobs, max_duration_s)
    tracker = _Tracker(domain, objective, budget)
    for genome in starts:
        tracker.score(genome, "extension")
    _hypothesis_phase(tracker, budget.examples, _cell_seed(seed, family, objective, n_jobs, 0))
    _optimiser_phase(tracker, budget, _cell_seed(seed, family, objective, n_jobs, 1))
    _polish_phase(tracker, budget.polish_evaluations)
    if tracker.best is None or tracker.best_genome is None:
        raise RuntimeError(f"{family} with {n_jobs} jobs: the search found no instance")
    # The worst instance once more with a larger search: a better witness, a tighter bound.
    wider = replace(budget, max_vectors=None if budget.max_vectors is None
                    else 4 * budget.max_vectors, local_evaluations=2 * budget.local_evaluations)
    final = evaluate(tracker.best.instance, objective, wider)
    if final.ratio < tracker.best.ratio * (1.0 - REL_TOL):
        final = Evaluation(final.instance, tracker.best.ratio,
                           min(final.upper_bound_ratio, tracker.best.upper_bound_ratio),
                           tracker.best.best)
    row = _row(domain, objective, budget, final, tracker.found_by, len(tracker.cache))
    return row, tracker.best_genome


def extend(domain: Domain, genome: Genome) -> Genome:
    """``genome`` (of ``domain.n_jobs - 1`` jobs) plus a job with unit durations.

    The new job takes the last job's pin codes; in unsaturated families it joins the
    non-anchor jobs (its durations before the anchor's extras).
    """
    n_old = domain.n_jobs - 1
    if len(genome.rollout_codes) != n_old:
        raise ValueError(f"genome has {len(genome.rollout_codes)} jobs, expected {n_old}")
    r_codes = (*genome.rollout_codes, genome.rollout_codes[-1])
    t_codes = (*genome.train_codes, genome.train_codes[-1])
    v = genome.values
    if domain.saturated:
        values = (*v[:n_old], 1, *v[n_old:], 1)
    else:
        k = n_old - 1  # durations of the other jobs per pool
        values = (*v[:k], 1, *v[k:2 * k], 1, *v[2 * k:])
    return Genome(genome.anchor, r_codes, t_codes, values)


def _orders_text(best: RepeatSchedule) -> str:
    """``R0:0 1 0|T0:0 0 1``: each node's cyclic order of job indices."""
    return "|".join(
        f"{pool}{node}:" + " ".join(str(j) for j in seq)
        for (pool, node), seq in best.node_orders.items()
    )


def _row(domain: Domain, objective: Objective, budget: Budget, result: Evaluation,
         found_by: str, n_instances: int) -> dict[str, object]:
    """One row of :data:`WORST_CASE_COLUMNS`."""
    best = result.best
    return {
        "family": domain.family,
        "objective": objective,
        "n_jobs": domain.n_jobs,
        "max_multiplicity": budget.max_multiplicity,
        "max_duration_s": domain.max_duration_s,
        "ratio": result.ratio,
        "upper_bound_ratio": result.upper_bound_ratio,
        "best_exact": best.exact,
        "instance": result.instance.compact(),
        "rr_period_s": best.round_robin_period_s,
        "rr_utilisation": best.round_robin_utilisation,
        "best_period_s": best.period_s,
        "best_utilisation": best.utilisation,
        "best_multiplicity": ",".join(str(m) for m in best.multiplicity),
        "best_node_orders": _orders_text(best),
        "found_by": found_by,
        "n_instances": n_instances,
    }


def worst_case_table(
    families: Sequence[str],
    sizes: Sequence[int],
    max_duration_s: int,
    budget: Budget,
    seed: int = 0,
    progress: Callable[[str], object] | None = None,
) -> pd.DataFrame:
    """One row per (family, objective, group size): :data:`WORST_CASE_COLUMNS`.

    Sizes run in increasing order; each cell also starts from the previous size's worst
    instance grown by a unit job (:func:`extend`). ``progress(label)`` is called after
    each of the ``len(cells(families)) * len(sizes)`` cells.
    """
    plan = [(f, o, n) for f, o in cells(families) for n in sorted(sizes)]
    rows = []
    previous: dict[tuple[str, str, int], Genome] = {}
    for family, objective, n in plan:
        smaller = previous.get((family, objective, n - 1))
        starts = [extend(Domain(family, n, max_duration_s), smaller)] if smaller else []
        row, genome = _search(family, objective, n, max_duration_s, budget, seed, starts)
        previous[(family, objective, n)] = genome
        rows.append(row)
        if progress is not None:
            progress(f"{family} {objective} n={n}")
    return pd.DataFrame(rows, columns=list(WORST_CASE_COLUMNS))


# --------------------------------------------------------------------------- exhaustive check


def exhaustive_cell(
    family: str, objective: Objective, n_jobs: int, max_duration_s: int, budget: Budget
) -> tuple[Evaluation, int, int]:
    """The maximum over a whole domain: (best evaluation, distinct instances, open ones).

    Every instance is evaluated with the exact inner search (no vector limit), as a
    branch and bound across instances (only ratios above the best so far are sought).
    The third value counts instances whose proven upper bound still exceeds the maximum
    found; when it is 0 the maximum is the true one over multiplicities
    ``1..max_multiplicity``.
    """
    domain = Domain(family, n_jobs, max_duration_s)
    exact_budget = replace(budget, max_vectors=None, exact_limit=max(budget.exact_limit, 20_000))
    seen: set[str] = set()
    best: Evaluation | None = None
    bounds: list[float] = []
    for genome in domain.genomes():
        instance = domain.decode(genome)
        if instance is None:
            continue
        key = canonical(instance)
        if key in seen:
            continue
        seen.add(key)
        floor = best.ratio if best is not None else 0.0
        result = evaluate(instance, objective, exact_budget, floor)
        bounds.append(result.upper_bound_ratio)
        if best is None or result.ratio > best.ratio * (1.0 + REL_TOL):
            best = result
    if best is None:
        raise RuntimeError(f"{family} with {n_jobs} jobs, durations <= {max_duration_s}: empty")
    top = best.ratio * (1.0 + REL_TOL)
    return best, len(seen), sum(1 for b in bounds if b > top)


def check_table(
    families: Sequence[str],
    sizes: Sequence[int],
    max_duration_s: int,
    budget: Budget,
    seed: int = 0,
    progress: Callable[[str], object] | None = None,
) -> pd.DataFrame:
    """Exhaustive maximum vs the adversarial search on small domains (:data:`CHECK_COLUMNS`);
    ``progress(label)`` is called after each cell."""
    plan = [(f, o, n) for f, o in cells(families) for n in sizes]
    rows = []
    for family, objective, n in plan:
        truth, n_domain, inexact = exhaustive_cell(family, objective, n, max_duration_s,
                                                   budget)
        found = search_cell(family, objective, n, max_duration_s, budget, seed)
        rows.append(
            {
                "family": family,
                "objective": objective,
                "n_jobs": n,
                "max_multiplicity": budget.max_multiplicity,
                "max_duration_s": max_duration_s,
                "n_domain": n_domain,
                "n_inexact": inexact,
                "exhaustive_ratio": truth.ratio,
                "exhaustive_instance": truth.instance.compact(),
                "search_ratio": found["ratio"],
                "search_instance": found["instance"],
                "search_reaches_exhaustive": bool(
                    float(found["ratio"]) >= truth.ratio * (1.0 - REL_TOL)  # type: ignore[arg-type]
                ),
            }
        )
        if progress is not None:
            progress(f"{family} {objective} n={n}")
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
