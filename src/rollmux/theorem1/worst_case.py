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

A cell whose whole domain has at most ``Budget.exhaustive_max_genomes`` genomes (every
2-job cell at the default ``D = 9``) is not searched but enumerated
(:mod:`rollmux.theorem1.exhaustive`: every instance bounded, the promising ones evaluated
exactly, so the maximum is the domain's true one; ``method = exhaustive``). A searched
cell (``method = search``) starts from the previous size's worst instance grown by a
unit job and from the *ping-pong* instance of the family (an anchor job with unit jobs,
the instance at which the supremum over all multiplicities is approached,
:mod:`rollmux.theorem1.supremum`).

Readings of every row (docs/theorem1.md, "Readings"): per-pool, aggregate and
cost-weighted utilisation of round-robin and of the best schedule, and the best
*both-pools* ratio ``min(U_R / U_R^RR, U_T / U_T^RR)`` of any schedule found on the
instance (above 1: a schedule beats round-robin on both pools at once); exhaustive cells
also carry the largest both-pools ratio over their whole domain.

The inner best schedule is exact for small groups (exhaustive orders, proven bounds) and
a heuristic above; every row carries the instance, the best schedule found (a witness:
the ratio is achieved) and a proven upper bound on that instance's ratio
(:mod:`rollmux.schedule.bounds`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from rollmux.schedule.graph import round_robin_schedule
from rollmux.schedule.repeat import RepeatSchedule, repeat_schedule
from rollmux.schedule.search import Objective, pool_utilisation, utilisation
from rollmux.theorem1.boundary import FAMILIES, GENERATORS, Instance
from rollmux.theorem1.domain import _PINS, Domain, Genome
from rollmux.theorem1.settings import BUDGET_FLAGS, Budget

__all__ = [
    "BOTH_POOLS",
    "BUDGET_FLAGS",
    "CHECK_COLUMNS",
    "WORST_CASE_COLUMNS",
    "Budget",
    "Domain",
    "Genome",
    "both_pools_gain",
    "cells",
    "check_table",
    "evaluate",
    "exhaustive_cell",
    "extend",
    "genome_of",
    "search_cell",
    "worst_case_table",
]


WORST_CASE_COLUMNS: tuple[str, ...] = (
    "family",
    "objective",
    "n_jobs",
    "max_multiplicity",
    "max_duration_s",
    "method",
    "ratio",
    "instance_bound_ratio",
    "best_exact",
    "instance",
    "rr_period_s",
    "rr_utilisation",
    "best_period_s",
    "best_utilisation",
    "best_multiplicity",
    "best_node_orders",
    "rr_util_rollout",
    "rr_util_train",
    "rr_aggregate",
    "rr_cost_weighted",
    "best_util_rollout",
    "best_util_train",
    "best_aggregate",
    "best_cost_weighted",
    "both_pools_ratio",
    "both_pools_multiplicity",
    "domain_both_pools_ratio",
    "domain_both_pools_instance",
    "supremum_any_m",
    "supremum_status",
    "found_by",
    "n_instances",
    "n_domain",
)
#: The both-pools reading: ``min(U_R / U_R^RR, U_T / U_T^RR)`` of a schedule.
BOTH_POOLS = "both_pools"
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


# --------------------------------------------------------------------------- evaluation




@dataclass(frozen=True)
class Evaluation:
    """Round-robin and the best schedule found for one instance."""

    instance: Instance
    ratio: float
    instance_bound_ratio: float
    best: RepeatSchedule


def evaluate(
    instance: Instance, objective: Objective, budget: Budget, min_gain: float = 0.0
) -> Evaluation:
    """Best schedule found / round-robin for ``instance`` (with a proven upper bound).

    The bound (``instance_bound_ratio``) holds for this instance and multiplicities
    ``1..budget.max_multiplicity`` only: Theorem B's programme with ``y_a <= M y_b``, or
    the exhaustive search where it closed every vector. ``min_gain``: only look for
    ratios above it (see :func:`rollmux.schedule.repeat.repeat_schedule`); an adversary
    passes its best so far.
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
                           min(final.instance_bound_ratio, tracker.best.instance_bound_ratio),
                           tracker.best.best)
    row = _row(domain, objective, budget, final, tracker.found_by, len(tracker.cache),
               "search")
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


def _readings(instance: Instance, best: RepeatSchedule) -> dict[str, float]:
    """Per-pool, aggregate and cost-weighted utilisation of round-robin and of ``best``."""
    rr = round_robin_schedule(instance.rollout_s, instance.train_s, instance.rollout_node,
                              instance.train_node)
    out: dict[str, float] = {}
    for name, schedule, period in (("rr", rr, best.round_robin_period_s),
                                   ("best", best.schedule, best.period_s)):
        pools = pool_utilisation(schedule, period)
        out[f"{name}_util_rollout"] = pools["R"]
        out[f"{name}_util_train"] = pools["T"]
        out[f"{name}_aggregate"] = utilisation(schedule, period, "aggregate")
        out[f"{name}_cost_weighted"] = utilisation(schedule, period, "cost_weighted")
    return out


@dataclass(frozen=True)
class BothPools:
    """The best both-pools ratio ``min_pool U_pool / U_pool^RR`` found on one instance."""

    ratio: float
    multiplicity: tuple[int, ...]
    period_s: float
    exact: bool


def both_pools_gain(instance: Instance, max_multiplicity: int, exact_limit: int = 20_000,
                    local_evaluations: int = 80) -> BothPools:
    """The schedule maximising ``min(U_R / U_R^RR, U_T / U_T^RR)`` (above 1: beats both pools).

    For a multiplicity vector ``m`` the ratio is ``min_pool busy_pool(m) / busy_pool(1)``
    times ``P_RR / P(m)``, so the shortest period per vector decides: vectors by
    decreasing bound (Lemma 1's ``LB(m)`` in place of ``P(m)``), orders exhaustive up to
    ``exact_limit`` states (else local search, ``exact`` False), stopping when no vector
    left can beat the best. Round-robin itself scores 1.
    """
    from rollmux.schedule.bounds import pair_caps, period_lower_bounds_s
    from rollmux.schedule.repeat import _best_orders, _Evaluator, _restrict
    from rollmux.schedule.search import _make_group, _multiplicity_vectors

    group = _make_group(instance.rollout_s, instance.train_s, instance.rollout_node,
                        instance.train_node)
    n = group.n_jobs
    ones = (1,) * n
    rr_period = _Evaluator(group, ones).period(_restrict(group, list(range(n))))
    base = group.busy_by_pool(ones)
    vectors = _multiplicity_vectors(group, max_multiplicity, True)
    lbs = period_lower_bounds_s(group, np.asarray(vectors), pair_caps(group))
    scored = []
    for mult, lb in zip(vectors, lbs.tolist(), strict=True):
        busy = group.busy_by_pool(mult)
        factor = min(busy[p] / base[p] for p in base if base[p] > 0)
        scored.append((-factor * rr_period / lb, sum(mult), mult, factor, lb))
    scored.sort()
    best = BothPools(1.0, ones, rr_period, True)
    exact = True
    rng = np.random.default_rng(0)
    for neg_bound, _, mult, factor, lb in scored:
        if -neg_bound <= best.ratio * (1.0 + REL_TOL):
            break
        _, period, proven, _ = _best_orders(group, mult, lb, exact_limit, local_evaluations,
                                            4, rng)
        exact = exact and proven
        if math.isfinite(period) and factor * rr_period / period > best.ratio * (1.0 + REL_TOL):
            best = BothPools(factor * rr_period / period, tuple(mult), period, True)
    return replace(best, exact=exact)


def _row(domain: Domain, objective: Objective, budget: Budget, result: Evaluation,
         found_by: str, n_instances: int, method: str,
         n_domain: int | None = None,
         domain_both: tuple[float, str] | None = None) -> dict[str, object]:
    """One row of :data:`WORST_CASE_COLUMNS`."""
    from rollmux.theorem1.supremum import supremum

    best = result.best
    both = both_pools_gain(result.instance, budget.max_multiplicity,
                           max(budget.exact_limit, 2_000), budget.local_evaluations)
    sup = supremum(domain.family, objective, domain.n_jobs, domain.max_duration_s)
    return {
        "family": domain.family,
        "objective": objective,
        "n_jobs": domain.n_jobs,
        "max_multiplicity": budget.max_multiplicity,
        "max_duration_s": domain.max_duration_s,
        "method": method,
        "ratio": result.ratio,
        "instance_bound_ratio": result.instance_bound_ratio,
        "best_exact": best.exact,
        "instance": result.instance.compact(),
        "rr_period_s": best.round_robin_period_s,
        "rr_utilisation": best.round_robin_utilisation,
        "best_period_s": best.period_s,
        "best_utilisation": best.utilisation,
        "best_multiplicity": ",".join(str(m) for m in best.multiplicity),
        "best_node_orders": _orders_text(best),
        **_readings(result.instance, best),
        "both_pools_ratio": both.ratio,
        "both_pools_multiplicity": ",".join(str(m) for m in both.multiplicity),
        "domain_both_pools_ratio": "" if domain_both is None else domain_both[0],
        "domain_both_pools_instance": "" if domain_both is None else domain_both[1],
        "supremum_any_m": "" if sup is None else sup.value,
        "supremum_status": "" if sup is None else sup.status,
        "found_by": found_by,
        "n_instances": n_instances,
        "n_domain": "" if n_domain is None else n_domain,
    }


def genome_of(domain: Domain, instance: Instance) -> Genome | None:
    """A genome of ``domain`` decoding to ``instance`` (``None`` when none is found).

    Unsaturated families: the anchor is the job of longest iteration and its extras are
    what :func:`rollmux.theorem1.boundary.unsaturate` adds (checked by decoding).
    """
    r_choices, t_choices = _PINS[domain.family]
    try:
        r_codes = tuple(r_choices.index(tuple(p)) for p in instance.rollout_node)
        t_codes = tuple(t_choices.index(tuple(p)) for p in instance.train_node)
    except ValueError:
        return None
    n = instance.n_jobs
    r, t = instance.rollout_s, instance.train_s
    if domain.saturated:
        candidates = [Genome(0, r_codes, t_codes, tuple(int(x) for x in (*r, *t)))]
    else:
        candidates = []
        for anchor in sorted(range(n), key=lambda j: -(r[j] + t[j])):
            others = [j for j in range(n) if j != anchor]
            probe = Genome(anchor, r_codes, t_codes,
                           tuple(int(r[j]) for j in others) + tuple(int(t[j]) for j in others)
                           + (0, 0))
            base = domain.decode(probe)
            if base is None:
                continue
            extras = (int(r[anchor] - base.rollout_s[anchor]),
                      int(t[anchor] - base.train_s[anchor]))
            candidates.append(replace(probe, values=probe.values[:-2] + extras))
    for genome in candidates:
        bounds = domain.value_bounds()
        if any(not lo <= v <= hi for v, (lo, hi) in zip(genome.values, bounds, strict=True)):
            continue
        decoded = domain.decode(genome)
        if decoded is not None and decoded.compact() == instance.compact():
            return genome
    return None


def ping_pong_genomes(domain: Domain) -> list[Genome]:
    """Seeds: an anchor (the last job) with unit jobs, extras ``(D, D)`` and ``(D, 0)``.

    The instances at which round-robin's utilisation is lowest and the supremum over all
    multiplicities is approached (:mod:`rollmux.theorem1.supremum`), on each pinning
    with every job on the first node(s) and with the anchor on a node of its own.
    """
    n = domain.n_jobs
    d = domain.max_duration_s
    n_r, n_t = domain.n_codes
    pinnings = [((0,) * n, (0,) * n)]
    if n_r > 1:
        pinnings.append(((0,) * (n - 1) + (1,), (0,) * n))
    if n_t > 1:
        pinnings += [((0,) * n, (0,) * (n - 1) + (n_t - 1,)),
                     ((0,) * (n - 1) + (1,), (0,) * (n - 1) + (n_t - 1,))]
    out = []
    for r_codes, t_codes in pinnings:
        if domain.saturated:
            out.append(Genome(0, r_codes, t_codes, (d,) + (1,) * (n - 1) + (1,) * n))
            continue
        for extras in ((d, d), (d, 0)):
            out.append(Genome(n - 1, r_codes, t_codes, (1,) * (2 * (n - 1)) + extras))
    return out


def worst_case_table(
    families: Sequence[str],
    sizes: Sequence[int],
    max_duration_s: int,
    budget: Budget,
    seed: int = 0,
    progress: Callable[[str], object] | None = None,
) -> pd.DataFrame:
    """One row per (family, objective, group size): :data:`WORST_CASE_COLUMNS`.

    Sizes run in increasing order. A cell whose domain has at most
    ``budget.exhaustive_max_genomes`` genomes is enumerated (:func:`exhaustive_cell`);
    any other is searched, starting from the previous size's worst instance grown by a
    unit job (:func:`extend`) and from :func:`ping_pong_genomes`. ``progress(label)`` is
    called after each of the ``len(cells(families)) * len(sizes)`` cells.
    """
    from rollmux.theorem1.exhaustive import n_genomes

    plan = [(f, o, n) for f, o in cells(families) for n in sorted(sizes)]
    rows = []
    previous: dict[tuple[str, str, int], Genome] = {}
    for family, objective, n in plan:
        domain = Domain(family, n, max_duration_s)
        if n_genomes(domain) <= budget.exhaustive_max_genomes:
            found = exhaustive_cell(family, objective, n, max_duration_s, budget)
            row = _row(domain, objective, budget, found.best, "exhaustive", found.n_evaluated,
                       "exhaustive", found.n_domain, found.both_pools)
            genome = genome_of(domain, found.best.instance)
        else:
            smaller = previous.get((family, objective, n - 1))
            starts = [extend(domain, smaller)] if smaller else []
            starts += ping_pong_genomes(domain)
            row, genome = _search(family, objective, n, max_duration_s, budget, seed, starts)
        if genome is not None:
            previous[(family, objective, n)] = genome
        rows.append(row)
        if progress is not None:
            progress(f"{family} {objective} n={n}")
    return pd.DataFrame(rows, columns=list(WORST_CASE_COLUMNS))


# --------------------------------------------------------------------------- exhaustive


@dataclass(frozen=True)
class Exhaustive:
    """The maximum over a whole domain (:func:`exhaustive_cell`)."""

    best: Evaluation
    n_domain: int
    n_evaluated: int
    n_inexact: int
    both_pools: tuple[float, str] | None


def exhaustive_cell(
    family: str, objective: Objective, n_jobs: int, max_duration_s: int, budget: Budget,
    both_pools: bool = True,
) -> Exhaustive:
    """The maximum ratio over a whole domain, proven (:mod:`rollmux.theorem1.exhaustive`).

    Every distinct instance (up to relabelling) gets Lemma 1's bound on its ratio over
    multiplicities ``1..max_multiplicity``; instances are evaluated exactly (every
    vector, exhaustive orders) by decreasing bound until no bound left beats the best
    ratio. ``n_inexact`` counts evaluated instances whose exact search could not close
    (0: the maximum is the true one). With ``both_pools``, the same branch and bound
    finds the largest both-pools ratio (:func:`both_pools_gain`) over the domain.
    """
    from rollmux.theorem1.exhaustive import batches, ratio_bounds, rr_periods, to_instances

    domain = Domain(family, n_jobs, max_duration_s)
    exact_budget = replace(budget, max_vectors=None, exact_limit=max(budget.exact_limit, 20_000))
    parts = batches(domain)
    star = family != "c_crossing"
    candidates: list[tuple[float, int, int]] = []
    both_candidates: list[tuple[float, int, int]] = []
    for b, batch in enumerate(parts):
        rr = None if star else rr_periods(batch)
        bound, _, _ = ratio_bounds(batch, objective, budget.max_multiplicity, rr)
        candidates += [(-float(x), b, i) for i, x in enumerate(bound)]
        if both_pools:
            both_bound, _, _ = ratio_bounds(batch, BOTH_POOLS, budget.max_multiplicity, rr)
            both_candidates += [(-float(x), b, i) for i, x in enumerate(both_bound)]
    candidates.sort()
    best: Evaluation | None = None
    n_evaluated = 0
    bounds: list[float] = []
    for neg_bound, b, i in candidates:
        if best is not None and -neg_bound <= best.ratio * (1.0 + REL_TOL):
            break
        (instance,) = to_instances(parts[b], [i])
        floor = best.ratio if best is not None else 0.0
        result = evaluate(instance, objective, exact_budget, floor)  # type: ignore[arg-type]
        n_evaluated += 1
        bounds.append(result.instance_bound_ratio)
        if best is None or result.ratio > best.ratio * (1.0 + REL_TOL):
            best = result
    if best is None:
        raise RuntimeError(f"{family} with {n_jobs} jobs, durations <= {max_duration_s}: empty")
    # Evaluated instances whose exact search left a bound above the maximum (0 expected).
    n_inexact = sum(1 for x in bounds if x > best.ratio * (1.0 + REL_TOL))
    both = None
    if both_pools:
        both_candidates.sort()
        top_both: tuple[float, str] = (1.0, "")
        for neg_bound, b, i in both_candidates:
            if -neg_bound <= top_both[0] * (1.0 + REL_TOL):
                break
            (instance,) = to_instances(parts[b], [i])
            gain = both_pools_gain(instance, budget.max_multiplicity,  # type: ignore[arg-type]
                                   exact_budget.exact_limit, budget.local_evaluations)
            if gain.ratio > top_both[0] * (1.0 + REL_TOL):
                top_both = (gain.ratio, instance.compact())  # type: ignore[attr-defined]
        both = top_both
    n_domain = sum(len(p.rollout_s) for p in parts)
    return Exhaustive(best, n_domain, n_evaluated, n_inexact, both)


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
        truth = exhaustive_cell(family, objective, n, max_duration_s, budget, both_pools=False)
        found = search_cell(family, objective, n, max_duration_s, budget, seed)
        rows.append(
            {
                "family": family,
                "objective": objective,
                "n_jobs": n,
                "max_multiplicity": budget.max_multiplicity,
                "max_duration_s": max_duration_s,
                "n_domain": truth.n_domain,
                "n_inexact": truth.n_inexact,
                "exhaustive_ratio": truth.best.ratio,
                "exhaustive_instance": truth.best.instance.compact(),
                "search_ratio": found["ratio"],
                "search_instance": found["instance"],
                "search_reaches_exhaustive": bool(
                    float(found["ratio"]) >= truth.best.ratio * (1.0 - REL_TOL)  # type: ignore[arg-type]
                ),
            }
        )
        if progress is not None:
            progress(f"{family} {objective} n={n}")
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
