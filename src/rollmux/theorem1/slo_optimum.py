"""rollmux-repeat's planner against the certified SLO-constrained optimum, on random groups.

For seeded random groups of 3-5 jobs (:func:`random_group`) this compares two answers to
the question ``rollmux-repeat`` asks when it plans a group: the schedule of highest
cost-weighted utilisation (multiplicities ``1..M``, any per-node orders) under which every
job's average iteration ``P / m_j`` stays within ``SLO_j x T_solo_j``:

* the *certified optimum* (:func:`rollmux.schedule.milp.certified_best`: a branch and
  bound over multiplicity vectors, each vector's shortest period by a MILP over cyclic
  timetables, solved to gap 0 by HiGHS);
* the *heuristic* ``rollmux-repeat`` uses (:func:`rollmux.schedule.repeat.repeat_schedule`
  with the policy's default search settings
  :data:`rollmux.schedule.repeat.PLANNER_SEARCH`, as
  :func:`rollmux.placement.rollmux_repeat.plan_group` calls it).

``gap = 1 - U_heuristic / U_optimum`` (0: the heuristic is optimal; 1: it found no
feasible schedule although one exists).

Random groups: ``n`` jobs, rollout and training seconds uniform integers in
``1..max_duration_s``; one training node; ``1..min(3, n)`` rollout nodes (uniform), each
job on one of them (uniform); SLOs uniform in ``slo_range`` (rounded to 0.05). A draw
where no schedule meets every SLO (no group RollMux could form) is redrawn; ``draws``
counts the draws a kept group took.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rollmux.schedule.milp import certified_best
from rollmux.schedule.repeat import PLANNER_SEARCH, RepeatSchedule, repeat_schedule
from rollmux.theorem1.boundary import Instance

__all__ = ["SLO_OPTIMUM_COLUMNS", "SLO_SUMMARY_COLUMNS", "GroupDraw", "random_group",
           "slo_optimum_summary", "slo_optimum_table", "some_schedule_may_meet_caps"]

SLO_OPTIMUM_COLUMNS: tuple[str, ...] = (
    "group", "n_jobs", "draws", "instance", "slo", "rr_feasible", "certified",
    "optimum_utilisation", "optimum_multiplicity", "optimum_period_s",
    "heuristic_utilisation", "heuristic_multiplicity", "heuristic_period_s",
    "rr_utilisation", "gap", "heuristic_optimal", "milp_solves",
)
SLO_SUMMARY_COLUMNS: tuple[str, ...] = (
    "n_jobs", "groups", "rr_feasible", "certified", "heuristic_optimal_share", "gap_mean",
    "gap_mean_low", "gap_mean_high", "gap_p95", "gap_max", "optimum_over_rr_mean",
)
REL_TOL = 1e-9
#: Draws per kept group before giving up (no feasible group in the setting).
MAX_DRAWS = 10_000


@dataclass(frozen=True)
class GroupDraw:
    """One random group: its instance (durations, pinning) and per-job SLOs."""

    instance: Instance
    slo: tuple[float, ...]

    def caps_s(self) -> list[float]:
        """Each job's cap on its average iteration time, ``SLO_j x T_solo_j``."""
        return [s * (r + t) for s, r, t in zip(self.slo, self.instance.rollout_s,
                                               self.instance.train_s, strict=True)]


def random_group(rng: np.random.Generator, n_jobs: int, max_duration_s: int = 20,
                 slo_range: tuple[float, float] = (1.2, 2.5)) -> GroupDraw:
    """A seeded random group (module docstring)."""
    r = tuple(float(x) for x in rng.integers(1, max_duration_s + 1, size=n_jobs))
    t = tuple(float(x) for x in rng.integers(1, max_duration_s + 1, size=n_jobs))
    n_rollout = int(rng.integers(1, min(3, n_jobs) + 1))
    pins = tuple((int(x),) for x in rng.integers(0, n_rollout, size=n_jobs))
    slo = tuple(round(float(rng.uniform(*slo_range)) * 20) / 20 for _ in range(n_jobs))
    return GroupDraw(Instance(r, t, pins, ((0,),) * n_jobs), slo)


def some_schedule_may_meet_caps(draw: GroupDraw, max_multiplicity: int) -> bool:
    """Whether the planner or the certified optimum may find a schedule meeting every cap.

    False proves both return ``None`` on ``draw``, so the draw is redrawn without either
    search. It asks what both ask first, with the same floats: round-robin's period
    (:func:`rollmux.schedule.repeat.repeat_schedule` keeps round-robin when it meets the
    caps) and whether some multiplicity vector's proven lower bound ``LB(m)``
    (:func:`rollmux.schedule.bounds.period_lower_bounds_s`, the same call) stays within
    ``min_j m_j cap_j (1 + 1e-9)``: ``repeat_schedule`` returns ``None`` when round-robin
    misses a cap and no vector passes, and :func:`rollmux.schedule.milp.certified_best`
    without an incumbent has no vector to solve, so returns ``None`` too.
    """
    from rollmux.schedule.bounds import pair_caps, period_lower_bounds_s
    from rollmux.schedule.repeat import _Evaluator, _restrict
    from rollmux.schedule.search import _make_group, _multiplicity_vectors

    inst = draw.instance
    group = _make_group(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node)
    caps = np.asarray([float(c) for c in draw.caps_s()])
    n = group.n_jobs
    rr_period = _Evaluator(group, (1,) * n).period(_restrict(group, list(range(n))))
    if all(rr_period <= c * (1.0 + REL_TOL) for c in caps.tolist()):
        return True
    vectors = np.asarray(_multiplicity_vectors(group, max_multiplicity, True))
    lbs = period_lower_bounds_s(group, vectors, pair_caps(group))
    # min_j (m_j cap_j) (1 + tol) = min_j (m_j cap_j (1 + tol)): rounding is monotone.
    limits = (vectors * caps).min(axis=1) * (1.0 + REL_TOL)
    return bool((lbs <= limits).any())


def _heuristic(draw: GroupDraw, max_multiplicity: int) -> RepeatSchedule | None:
    """rollmux-repeat's planner on the group."""
    inst = draw.instance
    return repeat_schedule(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node,
                           max_multiplicity=max_multiplicity, objective="cost_weighted",
                           max_iteration_s=draw.caps_s(),
                           exact_limit=PLANNER_SEARCH["exact_limit"],
                           local_evaluations=PLANNER_SEARCH["local_evaluations"],
                           max_vectors=PLANNER_SEARCH["max_vectors"])


def slo_optimum_table(sizes: Sequence[int], groups: int, seed: int,
                      max_multiplicity: int = 3, max_duration_s: int = 20,
                      slo_range: tuple[float, float] = (1.2, 2.5),
                      progress: Callable[[str], object] | None = None) -> pd.DataFrame:
    """One row per random group (:data:`SLO_OPTIMUM_COLUMNS`), ``groups`` per size."""
    from rollmux.schedule.graph import round_robin_schedule
    from rollmux.schedule.maxplus import steady_state_period
    from rollmux.schedule.search import utilisation

    rows = []
    for n in sizes:
        rng = np.random.default_rng([seed, n])
        for g in range(groups):
            draws = 0
            while True:
                draws += 1
                if draws > MAX_DRAWS:
                    raise RuntimeError(f"{n} jobs: no feasible group in {MAX_DRAWS} draws")
                draw = random_group(rng, n, max_duration_s, slo_range)
                if not some_schedule_may_meet_caps(draw, max_multiplicity):
                    continue  # both searches would return None: redraw
                inst = draw.instance
                caps = draw.caps_s()
                # The planner's schedule is the branch and bound's first incumbent (the
                # MILPs then only ask whether a vector beats it: same optimum, faster).
                heur = _heuristic(draw, max_multiplicity)
                start = None if heur is None else (
                    heur.multiplicity, tuple(heur.node_orders.values()))
                best = certified_best(inst.rollout_s, inst.train_s, inst.rollout_node,
                                      inst.train_node, max_iteration_s=caps,
                                      max_multiplicity=max_multiplicity, incumbent=start)
                if best is not None:
                    break
            rr = round_robin_schedule(inst.rollout_s, inst.train_s, inst.rollout_node,
                                      inst.train_node)
            rr_period = steady_state_period(rr)
            rr_ok = all(rr_period <= c * (1 + REL_TOL) for c in caps)
            nan = math.nan
            gap = 1.0 if heur is None else max(0.0, 1.0 - heur.utilisation / best.utilisation)
            rows.append({
                "group": g, "n_jobs": n, "draws": draws, "instance": inst.compact(),
                "slo": ",".join(f"{s:g}" for s in draw.slo),
                "rr_feasible": rr_ok, "certified": best.certified,
                "optimum_utilisation": best.utilisation,
                "optimum_multiplicity": ",".join(map(str, best.multiplicity)),
                "optimum_period_s": best.period_s,
                "heuristic_utilisation": nan if heur is None else heur.utilisation,
                "heuristic_multiplicity": "" if heur is None
                else ",".join(map(str, heur.multiplicity)),
                "heuristic_period_s": nan if heur is None else heur.period_s,
                "rr_utilisation": utilisation(rr, rr_period, "cost_weighted") if rr_ok else nan,
                "gap": gap,
                "heuristic_optimal": bool(gap <= 1e-9),
                "milp_solves": best.n_solved,
            })
            if progress is not None:
                progress(f"n={n} group {g}")
    return pd.DataFrame(rows, columns=list(SLO_OPTIMUM_COLUMNS))


def slo_optimum_summary(table: pd.DataFrame, seed: int = 0,
                        resamples: int = 2000) -> pd.DataFrame:
    """Per group size: the gap's distribution, with a 95 % interval of its mean.

    ``gap_mean_low``/``gap_mean_high``: percentile bootstrap interval of the mean gap
    (``resamples`` resamples, seeded).
    """
    rows = []
    for n, part in table.groupby("n_jobs", sort=True):
        ok = part
        gaps = ok["gap"].to_numpy(dtype=float)
        rng = np.random.default_rng([seed, int(n)])
        if len(gaps):
            means = rng.choice(gaps, size=(resamples, len(gaps))).mean(axis=1)
            low, high = np.percentile(means, [2.5, 97.5])
        else:
            low = high = math.nan
        rr = ok[ok["rr_feasible"].astype(bool)]
        ratio = (rr["optimum_utilisation"] / rr["rr_utilisation"]).to_numpy(dtype=float)
        rows.append({
            "n_jobs": int(n), "groups": len(part),
            "rr_feasible": int(part["rr_feasible"].astype(bool).sum()),
            "certified": int(ok["certified"].astype(bool).sum()),
            "heuristic_optimal_share": float(ok["heuristic_optimal"].astype(bool).mean())
            if len(ok) else math.nan,
            "gap_mean": float(gaps.mean()) if len(gaps) else math.nan,
            "gap_mean_low": float(low), "gap_mean_high": float(high),
            "gap_p95": float(np.percentile(gaps, 95)) if len(gaps) else math.nan,
            "gap_max": float(gaps.max()) if len(gaps) else math.nan,
            "optimum_over_rr_mean": float(ratio.mean()) if len(ratio) else math.nan,
        })
    return pd.DataFrame(rows, columns=list(SLO_SUMMARY_COLUMNS))
