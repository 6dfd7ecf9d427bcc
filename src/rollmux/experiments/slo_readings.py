"""SLO readings: which of the three readings tells RollMux from the SLO-blind baselines.

Every replay reports SLO attainment in three readings (docs/metrics.md, "SLO readings";
:data:`rollmux.sim.metrics.SLO_READINGS`): ``planned`` (worst-case co-execution over
worst-case solo, what Algorithm 1 checks), ``reference`` (realised over the worst-case solo
estimate, the paper's reading) and ``realised`` (realised over solo on the same draws). A
reading discriminates when RollMux, which checks SLOs at admission, scores at least
:data:`DISCRIMINATION_PP` points above the best of the SLO-blind Random and Greedy on the
same trace; a reading that cannot tell them apart does not test an attainment claim.
:func:`readings_table` writes ``results/evidence/slo_readings.csv`` (the evidence of C03).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rollmux.sim.metrics import SLO_READINGS

__all__ = [
    "DISCRIMINATION_PP",
    "READINGS_COLUMNS",
    "SLO_BLIND",
    "discriminating",
    "readings_table",
]

#: The policies that never check an SLO (paper sec. 6.5: "SLO-blind" baselines).
SLO_BLIND: tuple[str, ...] = ("random", "greedy")
#: Smallest lead (percentage points) of RollMux over the best SLO-blind baseline for a
#: reading to discriminate (ours: a fifth of the scale, far above the seed-to-seed spread
#: of the baselines' attainment on the production trace).
DISCRIMINATION_PP = 20.0
#: Columns of ``results/evidence/slo_readings.csv``.
READINGS_COLUMNS: tuple[str, ...] = (
    "claim", "study", "policy", "seeds", *(f"{r}_pct" for r in SLO_READINGS),
    "discriminates", "note",
)
#: The gap row's policy label.
GAP = "rollmux - best SLO-blind"


def _reading_means(runs: pd.DataFrame, policy: str) -> dict[str, float]:
    """Mean over seeds of each reading of ``policy``'s replays, in percent."""
    part = runs[runs["policy"] == policy]
    return {r: 100.0 * float(part[col].mean()) if len(part) else math.nan
            for r, col in SLO_READINGS.items()}


def discriminating(means: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Per reading, RollMux's lead over the best SLO-blind baseline (percentage points)."""
    return {r: means["rollmux"][r] - max(means[p][r] for p in SLO_BLIND) for r in SLO_READINGS}


def readings_table(runs: pd.DataFrame, study: str, claim: str = "C03",
                   policies: Sequence[str] = ()) -> pd.DataFrame:
    """One row per policy (the three readings, mean over seeds) and one gap row.

    ``runs``: replays of one trace and setting (columns ``policy``, ``seed`` and the
    reading columns of :data:`rollmux.sim.sweeps.READING_COLUMNS`); it must hold RollMux
    and the SLO-blind baselines (ValueError naming the missing ones). ``policies``: the
    other policies to list (default: every other policy in ``runs``).
    """
    present = set(runs["policy"])
    missing = [p for p in ("rollmux", *SLO_BLIND) if p not in present]
    if missing:
        raise ValueError(f"slo readings of {study}: no replay of {missing} (the discrimination "
                         "needs rollmux and the SLO-blind random and greedy)")
    others = [p for p in (policies or sorted(present)) if p not in ("rollmux", *SLO_BLIND)]
    order = ["rollmux", *SLO_BLIND, *others]
    means = {p: _reading_means(runs, p) for p in order}
    rows: list[dict[str, Any]] = []
    for policy in order:
        seeds = int(runs.loc[runs["policy"] == policy, "seed"].nunique())
        rows.append({"claim": claim, "study": study, "policy": policy, "seeds": seeds,
                     **{f"{r}_pct": v for r, v in means[policy].items()},
                     "discriminates": "", "note": "SLO-blind" if policy in SLO_BLIND else ""})
    gaps = discriminating(means)
    good = [r for r, g in gaps.items() if g >= DISCRIMINATION_PP]
    rows.append({"claim": claim, "study": study, "policy": GAP,
                 "seeds": int(runs["seed"].nunique()),
                 **{f"{r}_pct": g for r, g in gaps.items()},
                 "discriminates": ";".join(good),
                 "note": f"percentage points; a reading discriminates at >= {DISCRIMINATION_PP:g}"})
    return pd.DataFrame(rows, columns=list(READINGS_COLUMNS))
