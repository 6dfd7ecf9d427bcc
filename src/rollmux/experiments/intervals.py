"""Claims over seeds: per-seed metrics, each claim's mean and 95% interval, its status.

Every stochastic experiment behind a claim is replayed over the config's ``seeds``
(config/README.md). Each stage that backs claims writes, beside its metrics file
``results/metrics/<stage>.csv`` (the metrics contract, :mod:`rollmux.experiments.metrics`),
the same metrics computed from each seed's replays alone:
``results/metrics/seeds/<stage>.csv``, columns :data:`SEED_METRIC_COLUMNS`, one row per
metric and seed (:func:`per_seed_metrics`). The metrics file's value of such a metric is
the mean of its per-seed values (:func:`mean_over_seeds`), so the claims report's ``ours``
is the mean over seeds.

From the per-seed values, :func:`t_interval` gives the mean and the two-sided 95%
Student-t interval (mean +- t(0.975, n-1) s / sqrt(n), s the sample standard deviation
of the n per-seed values; docs/metrics.md, "Seeds and intervals"); a range claim has one
interval per end. :func:`interval_verdict` places the interval against the claim's
tolerance: ``inside`` (the whole interval within it: the claim is reproduced),
``outside`` (none of it: the claim differs) or ``straddles`` (the interval crosses the
tolerance's edge: the seeds cannot decide; status :data:`STRADDLES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy import special

from rollmux.experiments.metrics import (
    METRIC_COLUMNS,
    companion_error,
    read_checked_table,
    split_reading,
)

__all__ = [
    "INSIDE",
    "INTERVAL_LEVEL",
    "INTERVAL_METHOD",
    "OUTSIDE",
    "SEED_METRIC_COLUMNS",
    "STRADDLES",
    "ClaimInterval",
    "SeedInterval",
    "SeedMetricsError",
    "claim_intervals",
    "interval_envelope",
    "interval_text",
    "interval_verdict",
    "mean_over_seeds",
    "per_seed_metrics",
    "read_seed_metrics",
    "seed_metrics_path",
    "t_errorbar",
    "t_interval",
    "whisker_lengths",
]

#: Columns of ``results/metrics/seeds/<stage>.csv``: one row per metric and seed.
SEED_METRIC_COLUMNS: tuple[str, ...] = ("metric", "seed", "value", "low", "high", "unit")
#: Confidence level of every interval over seeds.
INTERVAL_LEVEL = 0.95
#: How the interval is computed (the report's captions name it).
INTERVAL_METHOD = "Student-t"
#: Status of a claim whose interval over seeds crosses the edge of its tolerance.
STRADDLES = "straddles"
#: Verdicts of :func:`interval_verdict`.
INSIDE, OUTSIDE = "inside", "outside"

# Slack on tolerance comparisons, as the point comparison's (a value exactly at the edge
# is inside).
_EPS = 1e-9


class SeedMetricsError(ValueError):
    """A per-seed metrics file is malformed or disagrees with its metrics file."""


class _Tolerance(Protocol):
    """What :func:`interval_verdict` needs of a claim's tolerance."""

    def slack(self, paper: float, unit: str) -> float:
        """Allowed absolute deviation from ``paper``."""
        ...


@dataclass(frozen=True, slots=True)
class SeedInterval:
    """Mean and two-sided interval of one quantity over ``n`` seeds (n = 1: no interval,
    ``low`` = ``high`` = the value)."""

    n: int
    mean: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class ClaimInterval:
    """A claim's intervals over seeds: of its value, or of each end of a range."""

    n: int
    value: SeedInterval | None = None
    low: SeedInterval | None = None
    high: SeedInterval | None = None


def t_interval(values: Sequence[float] | np.ndarray, level: float = INTERVAL_LEVEL
               ) -> SeedInterval:
    """Mean and Student-t interval at ``level`` of per-seed ``values`` (finite numbers).

    n = 1 gives the value itself as a zero-width interval (no spread can be estimated);
    identical values give a zero-width interval. ValueError for no value, a non-finite
    value or a level outside (0, 1).
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not len(x):
        raise ValueError("an interval needs at least one per-seed value")
    if not np.isfinite(x).all():
        raise ValueError(f"per-seed values must be finite, got {x.tolist()}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    mean = float(x.mean())
    if len(x) == 1:
        return SeedInterval(1, mean, mean, mean)
    # Student's t quantile: scipy.stats.t.ppf(q, df) is special.stdtrit(df, q), bit for bit
    # (importing scipy.stats costs ~0.45 s of CPU in each pipeline job that reads metrics)
    half = float(special.stdtrit(len(x) - 1, 0.5 + level / 2.0) * x.std(ddof=1)
                 / math.sqrt(len(x)))
    return SeedInterval(len(x), mean, mean - half, mean + half)


def t_errorbar(values: Sequence[float] | np.ndarray | pd.Series) -> tuple[float, float]:
    """The 95% Student-t interval of ``values`` as (low, high): the whiskers of a bar of
    their mean (seaborn's ``errorbar=`` callable; one value: a zero-length whisker)."""
    ci = t_interval(np.asarray(values, dtype=float))
    return ci.low, ci.high


def whisker_lengths(means: Sequence[float] | np.ndarray,
                    spans: Sequence[tuple[float, float]]) -> np.ndarray:
    """Matplotlib's ``yerr`` (rows: below, above) for bars at ``means`` with intervals
    ``spans``, each (low, high) of the same seeds (e.g. :func:`t_errorbar`).

    A bar's mean and its interval may come from two summations of the same values
    (pandas' groupby mean, numpy's mean), so a zero-width interval can sit a few units in
    the last place beside its bar: such lengths are 0, as matplotlib refuses negative ones.
    A mean outside its interval by more than rounding (1e-9 of its size) is a ValueError.
    """
    mean = np.asarray(means, dtype=float)
    bounds = np.asarray(spans, dtype=float).reshape(len(mean), 2)
    err = np.vstack([mean - bounds[:, 0], bounds[:, 1] - mean])
    slack = 1e-9 * np.maximum(1.0, np.abs(mean))
    if np.any(err < -slack):
        bad = int(np.argmax((err < -slack).any(axis=0)))
        low, high = (float(b) for b in bounds[bad])
        raise ValueError(f"bar {bad}: mean {float(mean[bad])!r} lies outside its interval "
                         f"({low!r}, {high!r})")
    return np.clip(err, 0.0, None)


# --------------------------------------------------------------------------- writing


def seed_metrics_path(stage: str, root: str | Path = "results/metrics") -> Path:
    """The per-seed metrics file of ``stage``: ``<root>/seeds/<stage>.csv``."""
    return Path(root) / "seeds" / f"{stage}.csv"


def per_seed_metrics(build: Callable[[Any], pd.DataFrame], seeds: Iterable[Any],
                     metrics: Iterable[str] | None = None) -> pd.DataFrame:
    """The metrics ``build(seed)`` computes from each seed's replays alone, stacked.

    ``build`` returns rows of the metrics contract (:data:`METRIC_COLUMNS`);
    ``metrics`` (default: every one) keeps those that depend on the seed. One row per
    metric and seed (:data:`SEED_METRIC_COLUMNS`), metrics in ``build``'s order, then
    seeds ascending. ValueError when seeds repeat or a seed's rows lack a metric the
    first seed has.
    """
    seeds = sorted(int(s) for s in seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and non-empty, got {seeds}")
    keep = None if metrics is None else set(metrics)
    parts: list[pd.DataFrame] = []
    order: list[str] = []
    for seed in seeds:
        frame = build(seed)
        missing = [c for c in METRIC_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"seed {seed}: metrics rows lack the columns {missing}")
        if keep is not None:
            frame = frame[frame["metric"].isin(keep)]
        names = [str(m) for m in frame["metric"]]
        if not order:
            order = names
        elif set(names) != set(order):
            raise ValueError(f"seed {seed}: metrics {sorted(set(order) ^ set(names))} are "
                             f"not computed at every seed")
        part = frame[["metric", "value", "low", "high", "unit"]].copy()
        part.insert(1, "seed", seed)
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    for column in ("value", "low", "high"):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    rank = {m: i for i, m in enumerate(order)}
    table = table.sort_values(["metric", "seed"], key=lambda s: s.map(rank)
                              if s.name == "metric" else s, kind="mergesort")
    return table.reset_index(drop=True)[list(SEED_METRIC_COLUMNS)]


def _round6(x: float) -> Any:
    """A number as the metrics contract writes it (6 significant digits; '' if missing)."""
    return "" if x is None or not math.isfinite(x) else float(f"{x:.6g}")


def mean_over_seeds(metrics: pd.DataFrame, per_seed: pd.DataFrame) -> pd.DataFrame:
    """``metrics`` (rows of the contract) with the value, low and high of every metric
    of ``per_seed`` replaced by their means over its seeds, and the note saying so."""
    out = metrics.copy()
    for column in ("value", "low", "high", "note"):
        out[column] = out[column].astype(object)
    groups = per_seed.groupby("metric", sort=False)
    for i, rec in enumerate(out.to_dict("records")):
        if rec["metric"] not in groups.groups:
            continue
        part = groups.get_group(rec["metric"])
        for column in ("value", "low", "high"):
            values = pd.to_numeric(part[column], errors="coerce").to_numpy(dtype=float)
            out.iat[i, out.columns.get_loc(column)] = (
                _round6(float(values.mean())) if np.isfinite(values).all() else "")
        seeds = ", ".join(str(int(s)) for s in part["seed"])
        out.iat[i, out.columns.get_loc("note")] = (
            f"{rec['note']}; mean of the per-seed values over seeds {seeds}")
    return out


# --------------------------------------------------------------------------- reading


def _cell_number(text: Any) -> float | None:
    """A cell as a finite number, None when empty; ValueError otherwise."""
    text = str(text).strip()
    if text == "" or text.lower() == "nan":
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def read_seed_metrics(paths: Sequence[str | Path], units: Mapping[str, str]
                      ) -> pd.DataFrame:
    """Read and check per-seed metrics files; one row per metric and seed, with ``file``.

    ``units`` maps every known metric to its unit (the claims ledger's); a companion row
    ``<metric>@<reading>`` that :func:`rollmux.experiments.metrics.companion_error` allows
    (an SLO attainment metric's paper-reference reading, a production metric with real
    lengths) is known with its metric's unit.
    SeedMetricsError listing every problem (file, line, column): a wrong header, an
    unknown metric, a unit other than the ledger's, a value that is not a number, a
    (metric, seed) twice, or a metric in two files.
    """
    problems: list[str] = []
    records: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    for path in paths:
        table = read_checked_table(path, SEED_METRIC_COLUMNS, problems)
        if table is None:
            continue
        seen: set[tuple[str, int]] = set()
        for i, rec in enumerate(table.to_dict("records")):
            where = f"{path}:{i + 2}: row {i + 1}, column"
            metric = rec["metric"].strip()
            base, reading = split_reading(metric)
            if base not in units:
                problems.append(f"{where} metric: {metric!r} is not a metric of the claims "
                                "ledger")
                continue
            if reading and companion_error(base, reading):
                problems.append(f"{where} metric: {companion_error(base, reading)}")
                continue
            if owner.setdefault(metric, str(path)) != str(path):
                problems.append(f"{where} metric: {metric!r} already in {owner[metric]}")
                continue
            if rec["unit"].strip() != units[base]:
                problems.append(f"{where} unit: {rec['unit']!r}, but {metric} is in "
                                f"{units[base]!r}")
            try:
                seed = int(rec["seed"])
                if seed < 0:
                    raise ValueError(seed)
            except ValueError:
                problems.append(f"{where} seed: {rec['seed']!r} is not an integer >= 0")
                continue
            if (metric, seed) in seen:
                problems.append(f"{where} seed: {metric} at seed {seed} listed twice")
                continue
            seen.add((metric, seed))
            numbers: dict[str, float | None] = {}
            for column in ("value", "low", "high"):
                try:
                    numbers[column] = _cell_number(rec[column])
                except ValueError:
                    problems.append(f"{where} {column}: not a finite number: "
                                    f"{rec[column]!r}")
                    numbers[column] = None
            records.append({"metric": metric, "seed": seed, **numbers, "file": str(path)})
    if problems:
        raise SeedMetricsError("\n".join(problems))
    return pd.DataFrame(records, columns=["metric", "seed", "value", "low", "high", "file"])


def claim_intervals(per_seed: pd.DataFrame, level: float = INTERVAL_LEVEL
                    ) -> dict[str, ClaimInterval]:
    """Metric -> its intervals over seeds (:func:`t_interval` of the value and of each
    end), from rows of :func:`read_seed_metrics`. SeedMetricsError when a metric has a
    value at some seeds and none at others."""
    out: dict[str, ClaimInterval] = {}
    for metric, part in per_seed.groupby("metric", sort=True):
        parts: dict[str, SeedInterval | None] = {}
        for column in ("value", "low", "high"):
            values = part[column]
            present = values.notna()
            if present.any() and not present.all():
                missing = sorted(int(s) for s in part.loc[~present, "seed"])
                raise SeedMetricsError(f"{part['file'].iloc[0]}: {metric}: no {column} at "
                                       f"seed(s) {missing}")
            parts[column] = (t_interval(values.to_numpy(dtype=float), level)
                             if present.all() else None)
        out[str(metric)] = ClaimInterval(n=len(part), **parts)
    return out


# --------------------------------------------------------------------------- verdicts


def _place(low: float, high: float, lo_edge: float | None, hi_edge: float | None) -> str:
    """Where the interval [low, high] lies against the band [lo_edge, hi_edge] (an edge
    None: unbounded on that side)."""
    below = lo_edge is not None and high < lo_edge - _EPS
    above = hi_edge is not None and low > hi_edge + _EPS
    if below or above:
        return OUTSIDE
    inside = ((lo_edge is None or low >= lo_edge - _EPS)
              and (hi_edge is None or high <= hi_edge + _EPS))
    return INSIDE if inside else STRADDLES


def interval_verdict(kind: str, unit: str,
                     paper: tuple[float | None, float | None, float | None],
                     ci: ClaimInterval, tolerance: _Tolerance) -> str:
    """:data:`INSIDE`, :data:`OUTSIDE` or :data:`STRADDLES`: the claim's intervals over
    seeds against the tolerance its kind's point comparison uses.

    ``ratio``/``value``: the band paper +- slack; ``lower_bound``: at least the paper's;
    ``upper_bound``: at most it; ``property``: equal to it; ``range``: the low end's
    interval at least the paper's low minus its slack and the high end's at most the
    paper's high plus its slack (inside only if both ends are inside, outside if either
    end is). ValueError when the claim lacks the numbers its kind needs.
    """
    p_value, p_low, p_high = paper
    if kind == "range":
        if p_low is None or p_high is None or ci.low is None or ci.high is None:
            raise ValueError(f"range claim needs both ends: paper {paper}, ours {ci}")
        ends = (_place(ci.low.low, ci.low.high, p_low - tolerance.slack(p_low, unit), None),
                _place(ci.high.low, ci.high.high, None,
                       p_high + tolerance.slack(p_high, unit)))
        if OUTSIDE in ends:
            return OUTSIDE
        return INSIDE if ends == (INSIDE, INSIDE) else STRADDLES
    if p_value is None or ci.value is None:
        raise ValueError(f"{kind} claim needs a value: paper {paper}, ours {ci}")
    low, high = ci.value.low, ci.value.high
    if kind in ("ratio", "value"):
        slack = tolerance.slack(p_value, unit)
        return _place(low, high, p_value - slack, p_value + slack)
    if kind == "lower_bound":
        return _place(low, high, p_value, None)
    if kind == "upper_bound":
        return _place(low, high, None, p_value)
    if kind == "property":
        return _place(low, high, p_value, p_value)
    raise ValueError(f"unknown kind of claim {kind!r}")


def _fmt(x: float) -> str:
    """Four significant digits, never in scientific notation."""
    text = np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
    return "0" if text in ("-0", "0") else text


def interval_text(kind: str, ci: ClaimInterval) -> str:
    """The interval(s) as the report shows them: ``[a, b]``, or for a range claim
    ``low [a, b], high [c, d]``; '' with fewer than two seeds."""
    if ci.n < 2:
        return ""

    def one(s: SeedInterval | None) -> str:
        return "-" if s is None else f"[{_fmt(s.low)}, {_fmt(s.high)}]"

    if kind == "range":
        return f"low {one(ci.low)}, high {one(ci.high)}"
    return one(ci.value)


def interval_envelope(kind: str, ci: ClaimInterval) -> tuple[float, float]:
    """The claim's interval as two numbers: the value's interval, or for a range claim
    the low end's lower bound and the high end's upper bound (what the range must keep
    within the tolerance); NaN with fewer than two seeds."""
    if ci.n < 2:
        return math.nan, math.nan
    if kind == "range":
        return (ci.low.low if ci.low else math.nan, ci.high.high if ci.high else math.nan)
    return (ci.value.low, ci.value.high) if ci.value else (math.nan, math.nan)
