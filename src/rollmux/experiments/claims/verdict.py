"""Claims verdicts: tolerances by kind, our value against the paper's, and the status rule.

The tolerance of each kind of claim is stated once, in
``rollmux/data/claims_tolerances.yaml``. :func:`claims_report` joins the ledger with the
metrics on ``metric`` and classifies each claim as ``reproduced``, ``calibrated`` (a fit
target), ``differs``, ``straddles`` (its 95% interval over seeds crosses the tolerance's
edge: :mod:`rollmux.experiments.intervals`) or ``not reproducible here``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from rollmux.experiments.claims.ledger import (
    BEYOND_COLUMNS,
    KINDS,
    Calibration,
    ClaimsError,
    fmt,
    fmt_range,
    parse_number,
    read_metrics,
    tolerances_path,
)
from rollmux.experiments.intervals import (
    INSIDE,
    STRADDLES,
    ClaimInterval,
    interval_envelope,
    interval_text,
    interval_verdict,
)
from rollmux.experiments.metrics import (
    ATTAINMENT_METRICS,
    BESIDE_READING,
    LENGTHS_READING,
    STATUS_READING,
    with_reading,
)
from rollmux.experiments.optimum_gaps import claim_gap

#: How a role reads the paper's kind where the two differ: (role, paper kind) -> the kind
#: ours is compared as. A wall-clock time of the paper's own code stated as one value
#: (role ``runtime``) is a bound its implementation meets, not a number to match on
#: another machine (§6.5: "its decision time is only 591 ms for 2,000 jobs"; §4.2:
#: "make optimal decisions in sub-seconds even in clusters with thousands of jobs"),
#: so ours must be at most the paper's.
ROLE_READINGS: dict[tuple[str, str], str] = {("runtime", "value"): "upper_bound"}


REPRODUCED = "reproduced"
CALIBRATED = "calibrated"
DIFFERS = "differs"
NOT_REPRODUCIBLE = "not reproducible here"
#: Statuses in report order (``straddles``: rollmux.experiments.intervals.STRADDLES).
STATUSES: tuple[str, ...] = (REPRODUCED, STRADDLES, CALIBRATED, DIFFERS, NOT_REPRODUCIBLE)

#: Columns of the report (figures/claims.csv), in order.
REPORT_COLUMNS: tuple[str, ...] = (
    "claim_id",
    "section",
    "figure",
    "statement",
    "metric",
    "unit",
    "kind",
    "role",
    "paper",
    "ours",
    "seeds",
    "mean",
    "ci_low",
    "ci_high",
    "interval",
    "optimum_gap",
    "ratio",
    "difference",
    "margin",
    "comparison",
    "tolerance",
    "status",
    "reading",
    "reference",
    "reference_status",
    "real_lengths",
    "real_lengths_interval",
    "real_lengths_status",
    "what_it_would_take",
    "reason",
    "footnotes",
    "evidence",
    "calibration",
    "source",
)


#: Columns of the rendered results beyond the paper: the ledger's, the value and its file,
#: and the metrics row's interval over seeds (``low``/``high``, NaN: none) and note.
BEYOND_REPORT_COLUMNS: tuple[str, ...] = (*BEYOND_COLUMNS, "value", "file", "low", "high",
                                          "note")

# Slack on tolerance comparisons, so a value exactly at the edge is not lost to rounding.
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How close ours must be to the paper's value for one kind of claim."""

    kind: str
    rule: str
    relative: float | None = None
    percent_points: float | None = None

    def slack(self, paper: float, unit: str) -> float:
        """Allowed absolute deviation from ``paper`` (percentage points for unit ``%``)."""
        if unit == "%" and self.percent_points is not None:
            return self.percent_points
        if self.relative is None:
            return 0.0
        return self.relative * abs(paper)

    def describe(self, unit: str) -> str:
        """One-line statement of the tolerance as applied to a claim in ``unit``."""
        if unit == "%" and self.percent_points is not None:
            return f"+-{fmt(self.percent_points)} pp"
        if self.relative is not None:
            return f"+-{fmt(100 * self.relative)}% relative"
        return self.rule


@dataclass(frozen=True, slots=True)
class Comparison:
    """Our value(s) against the paper's for one claim."""

    ours: str
    ratio: float
    difference: float
    comparison: str
    holds: bool


def _maybe(value: Any) -> float:
    """A metrics row's optional number as a float (NaN: absent)."""
    return math.nan if value is None or pd.isna(value) else float(value)


def beyond_report(ledger: pd.DataFrame, metrics_paths: Sequence[Path | str],
                  evidence_root: Path | str = ".", require_evidence: bool = True
                  ) -> pd.DataFrame:
    """One row per result beyond the paper (:data:`BEYOND_REPORT_COLUMNS`), values read
    from the metrics files.

    The metrics files follow the metrics contract and may hold only the ledger's metrics,
    in the ledger's units (:func:`read_metrics`). ClaimsError naming every result whose
    metric is in no file, and, with ``require_evidence``, every result whose evidence
    file does not exist under ``evidence_root``.
    """
    as_claims = ledger.assign(claim_id=ledger["result_id"], kind="value")
    metrics = read_metrics(list(metrics_paths), as_claims).set_index("metric")
    problems = [f"{rec['result_id']} ({rec['metric']}): no value in "
                f"{', '.join(map(str, metrics_paths)) or 'no metrics file'}"
                for rec in ledger.to_dict("records") if rec["metric"] not in metrics.index]
    if require_evidence:
        problems += [f"{rec['result_id']} ({rec['metric']}): evidence {rec['evidence']} not found"
                     for rec in ledger.to_dict("records")
                     if not (Path(evidence_root) / rec["evidence"]).is_file()]
    if problems:
        raise ClaimsError("results beyond the paper without their numbers:\n  "
                          + "\n  ".join(problems))
    rows = [{**{c: rec[c] for c in BEYOND_COLUMNS},
             "value": float(metrics.loc[rec["metric"], "value"]),
             "file": metrics.loc[rec["metric"], "file"],
             **{k: _maybe(metrics.loc[rec["metric"], k]) for k in ("low", "high")},
             "note": metrics.loc[rec["metric"], "note"]}
            for rec in ledger.to_dict("records")]
    return pd.DataFrame(rows, columns=list(BEYOND_REPORT_COLUMNS))


def load_tolerances(
    path: Path | str | None = None, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Tolerance]:
    """Tolerance per kind of claim, from the tolerances file with per-kind ``overrides``."""
    path = tolerances_path() if path is None else Path(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"{path}: cannot read tolerances ({exc})") from exc
    if not isinstance(data, dict):
        raise ClaimsError(f"{path}: expected a mapping of kind -> tolerance")
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(KINDS))
    if unknown:
        raise ClaimsError(f"claims.tolerance_overrides: unknown kind(s) {unknown}; known {KINDS}")
    tolerances: dict[str, Tolerance] = {}
    for kind in KINDS:
        entry = {**(data.get(kind) or {}), **dict(overrides.get(kind, {}))}
        if "rule" not in entry:
            raise ClaimsError(f"{path}: kind {kind!r} has no entry with a `rule`")
        for key in ("relative", "percent_points"):
            value = entry.get(key)
            if value is not None and (not isinstance(value, int | float) or value < 0):
                raise ClaimsError(f"{path}: {kind}.{key} = {value!r} must be a number >= 0")
        tolerances[kind] = Tolerance(
            kind=kind,
            rule=str(entry["rule"]),
            relative=None if entry.get("relative") is None else float(entry["relative"]),
            percent_points=(
                None if entry.get("percent_points") is None else float(entry["percent_points"])
            ),
        )
    return tolerances


def compare(
    kind: str,
    unit: str,
    paper: tuple[float | None, float | None, float | None],
    ours: tuple[float | None, float | None, float | None],
    tolerance: Tolerance,
) -> Comparison:
    """Compare our (value, low, high) with the paper's for one claim of ``kind``.

    ``ratio`` (ours / paper) and ``difference`` (ours - paper) are set for single values
    and NaN for ranges, whose ``comparison`` text compares each end.
    """
    p_value, p_low, p_high = paper
    o_value, o_low, o_high = ours
    pp = unit == "%"
    if kind == "range":
        if p_low is None or p_high is None or o_low is None or o_high is None:
            raise ClaimsError(f"range claim needs low and high: paper {paper}, ours {ours}")
        lo_ok = o_low >= p_low - tolerance.slack(p_low, unit) - _EPS
        hi_ok = o_high <= p_high + tolerance.slack(p_high, unit) + _EPS
        if pp:
            text = f"low {o_low - p_low:+.1f} pp, high {o_high - p_high:+.1f} pp"
        else:
            text = f"low x{_ratio(o_low, p_low):.3f}, high x{_ratio(o_high, p_high):.3f}"
        return Comparison(
            ours=fmt_range(o_low, o_high),
            ratio=math.nan,
            difference=math.nan,
            comparison=text,
            holds=lo_ok and hi_ok,
        )
    if p_value is None or o_value is None:
        raise ClaimsError(f"{kind} claim needs a value: paper {paper}, ours {ours}")
    ratio = _ratio(o_value, p_value)
    difference = o_value - p_value
    if kind in ("ratio", "value"):
        holds = abs(difference) <= tolerance.slack(p_value, unit) + _EPS
        text = f"{difference:+.1f} pp" if pp else f"x{ratio:.3f}"
    elif kind == "lower_bound":
        holds = o_value >= p_value - _EPS
        text = "ours >= paper" if holds else "ours < paper"
    elif kind == "upper_bound":
        holds = o_value <= p_value + _EPS
        text = "ours <= paper" if holds else "ours > paper"
    elif kind == "property":
        holds = abs(difference) <= _EPS
        text = "equal" if holds else "not equal"
    else:
        raise ClaimsError(f"unknown kind of claim {kind!r}; known {KINDS}")
    return Comparison(fmt(o_value), ratio, difference, text, holds)


def _ratio(ours: float, paper: float) -> float:
    """ours / paper, NaN when the paper's value is 0."""
    return ours / paper if paper != 0 else math.nan


def _opt(x: Any) -> float | None:
    """A number from a metrics row, ``None`` for an empty (NaN) cell."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)


def _paper_text(kind: str, value: float | None, low: float | None, high: float | None) -> str:
    """The paper's value or range as shown in the report."""
    if kind == "range":
        return fmt_range(low or 0.0, high or 0.0)
    return fmt(value or 0.0)


#: Footnote ids with this prefix qualify an agreement: they stay on a reproduced row.
CAVEAT_PREFIX = "caveat-"


def _footnote_ids(rec: Mapping[str, Any]) -> list[str]:
    """The footnote ids of a ledger row (``;``-separated, blanks dropped)."""
    return [f.strip() for f in str(rec["footnotes"]).split(";") if f.strip()]


def range_ends(
    unit: str,
    paper: tuple[float | None, float | None, float | None],
    ours: tuple[float | None, float | None, float | None],
    tolerance: Tolerance,
) -> dict[str, bool]:
    """Whether each end of a range claim holds: ``{"low": ..., "high": ...}``."""
    _, p_low, p_high = paper
    _, o_low, o_high = ours
    if p_low is None or p_high is None or o_low is None or o_high is None:
        raise ClaimsError(f"range claim needs low and high: paper {paper}, ours {ours}")
    return {"low": o_low >= p_low - tolerance.slack(p_low, unit) - _EPS,
            "high": o_high <= p_high + tolerance.slack(p_high, unit) + _EPS}


def margin_of(
    kind: str,
    unit: str,
    paper: tuple[float | None, float | None, float | None],
    ours: tuple[float | None, float | None, float | None],
    tolerance: Tolerance,
) -> float:
    """(ours - paper) as a fraction of the tolerance: 0 exact, +-1 at the edge.

    A range: each end's margin; the one nearer its failing side (the low end fails below
    -1, the high end above +1) is returned, so a range holds iff its margin's low end is
    >= -1 and its high end <= +1, and |margin| <= 1 on a range near its edge. NaN where
    the kind has no tolerance band (bounds, properties) or the paper's value is 0.
    """
    if kind in ("ratio", "value"):
        p, o = paper[0], ours[0]
        if p is None or o is None:
            return math.nan
        slack = tolerance.slack(p, unit)
        return (o - p) / slack if slack > 0 else math.nan
    if kind == "range":
        margins = []
        for p, o in ((paper[1], ours[1]), (paper[2], ours[2])):
            slack = 0.0 if p is None else tolerance.slack(p, unit)
            margins.append(math.nan if p is None or o is None or slack <= 0
                           else (o - p) / slack)
        low, high = margins
        if math.isnan(low) or math.isnan(high):
            return math.nan
        return low if -low >= high else high
    return math.nan


def claims_report(
    ledger: pd.DataFrame,
    metrics: pd.DataFrame,
    tolerances: Mapping[str, Tolerance],
    calibration: Calibration | None = None,
    footnotes: Mapping[str, str] | None = None,
    evidence_root: Path | str = ".",
    require_evidence: bool = True,
    intervals: Mapping[str, ClaimInterval] | None = None,
    gaps: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """One row per claim: paper, ours, comparison, status, reason and evidence.

    ``intervals`` (metric -> :class:`ClaimInterval`, from the per-seed metrics files) give
    a claim with two or more seeds its mean and 95% interval over them, and its status
    from the interval (:func:`rollmux.experiments.intervals.interval_verdict`):
    ``reproduced`` only if the whole interval lies within the tolerance, ``differs`` if
    none of it does, ``straddles`` otherwise; ours (the metrics file's value) must then
    be the mean of the per-seed values (ClaimsError otherwise: a stale file).

    ``gaps`` (metric -> the certified gap of the optimum it is normalised by, from the
    gaps files; :mod:`rollmux.experiments.optimum_gaps`) fill ``optimum_gap``: NaN for a
    claim not normalised by an optimum, 1 where some decision of its optimum has no lower
    bound (only the trivial bound 0).

    A claim that a fit of ``calibration`` uses is ``calibrated`` only where ours is within
    the tolerance (the fit reaches it), else ``differs`` with the fit's residuals as its
    evidence; a range claim with one fitted end (target ``Cnn:low``/``Cnn:high``) judges
    the other end as a prediction. An SLO attainment claim (``ATTAINMENT_METRICS``) takes
    its status from the realised reading, with the paper-reference reading (the metrics
    row ``<metric>@reference``, required) beside it. A claim whose metric has a
    ``<metric>@real-lengths`` row (the production replays with real response lengths)
    gets that value, its interval and the status the same rule gives it in the
    ``real_lengths*`` columns, beside ours; its own status stays the lognormal one's. A
    reproducible claim whose metric is in no metrics file raises ClaimsError naming every
    such metric, so a gap cannot pass silently; so does, with ``require_evidence``, a
    ``differs`` row whose ledger ``evidence`` is empty or names no file under
    ``evidence_root``, and a footnote id that ``footnotes`` lacks.
    """
    calibration = calibration or Calibration(facts={}, fits={})
    footnotes = dict(footnotes or {})
    ours_by_metric = metrics.set_index("metric")
    missing = [
        f"{rec['metric']} (claim {rec['claim_id']})"
        for rec in ledger.to_dict("records")
        if rec["reproducible"] == "yes" and rec["metric"] not in ours_by_metric.index
    ]
    if missing:
        files = sorted(set(metrics["file"])) if len(metrics) else []
        raise ClaimsError(
            "no result for reproducible claim(s): "
            + ", ".join(missing)
            + f"; looked in {', '.join(files) if files else 'no metrics rows'}"
            + " (add the metric to a results/metrics/<stage>.csv, or mark the claim"
            " reproducible=no with a reason in the ledger)"
        )
    unknown_notes = sorted({f for rec in ledger.to_dict("records") for f in _footnote_ids(rec)}
                           - set(footnotes))
    if unknown_notes:
        raise ClaimsError(f"ledger footnotes {unknown_notes} are not in the footnotes file")
    rows: list[dict[str, Any]] = []
    unexplained: list[str] = []
    no_reference: list[str] = []
    for rec in ledger.to_dict("records"):
        kind, unit = ROLE_READINGS.get((rec["role"], rec["kind"]), rec["kind"]), rec["unit"]
        tolerance = tolerances[kind]
        paper = (parse_number(rec["paper_value"]), parse_number(rec["paper_low"]),
                 parse_number(rec["paper_high"]))
        fit = calibration.fit_of(rec["claim_id"])
        row: dict[str, Any] = {
            **{c: rec[c] for c in ("claim_id", "section", "figure", "statement", "metric")},
            "unit": unit,
            "kind": kind,
            "role": rec["role"],
            "paper": _paper_text(kind, *paper),
            "ours": "",
            "seeds": 1,
            "mean": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "interval": "",
            "optimum_gap": claim_gap(gaps, rec["metric"]),
            "ratio": math.nan,
            "difference": math.nan,
            "margin": math.nan,
            "comparison": "",
            "tolerance": tolerance.describe(unit),
            "reading": "",
            "reference": "",
            "reference_status": "",
            "real_lengths": "",
            "real_lengths_interval": "",
            "real_lengths_status": "",
            "what_it_would_take": "",
            "footnotes": ";".join(_footnote_ids(rec)),
            "evidence": "",
            "calibration": "" if fit is None else fit.name,
            "source": "",
        }
        holds = point_holds = False
        verdict = ""  # the interval's (intervals.INSIDE / OUTSIDE / STRADDLES), if any
        numbers: tuple[float | None, float | None, float | None] = (None, None, None)
        attainment = rec["metric"] in ATTAINMENT_METRICS
        reference: Comparison | None = None
        if rec["metric"] in ours_by_metric.index:
            ours = ours_by_metric.loc[rec["metric"]]
            numbers = (_opt(ours["value"]), _opt(ours["low"]), _opt(ours["high"]))
            result = compare(kind, unit, paper, numbers, tolerance)
            holds = point_holds = result.holds
            ci = (intervals or {}).get(rec["metric"])
            if ci is not None and ci.n >= 2:
                _check_mean(rec["claim_id"], numbers, ci)
                verdict = interval_verdict(kind, unit, paper, ci, tolerance)
                holds = verdict == INSIDE
                low, high = interval_envelope(kind, ci)
                row.update(seeds=ci.n, mean=ci.value.mean if ci.value else math.nan,
                           ci_low=low, ci_high=high, interval=interval_text(kind, ci))
            row.update(
                ours=result.ours,
                ratio=result.ratio,
                difference=result.difference,
                margin=margin_of(kind, unit, paper, numbers, tolerance),
                comparison=result.comparison,
                source=ours["source"],
            )
            if attainment:
                companion = with_reading(rec["metric"], BESIDE_READING)
                if companion not in ours_by_metric.index:
                    no_reference.append(f"{companion} (claim {rec['claim_id']})")
                else:
                    ref = ours_by_metric.loc[companion]
                    reference = compare(kind, unit, paper, (_opt(ref["value"]), _opt(ref["low"]),
                                                            _opt(ref["high"])), tolerance)
                    row.update(reading=STATUS_READING, reference=reference.ours,
                               reference_status=REPRODUCED if reference.holds else DIFFERS)
        real = with_reading(rec["metric"], LENGTHS_READING)
        if real in ours_by_metric.index and rec["reproducible"] == "yes":
            row.update(_beside(rec["claim_id"], kind, unit, paper, ours_by_metric.loc[real],
                               (intervals or {}).get(real), tolerance))
        end = "" if fit is None else calibration.fitted_end(rec["claim_id"])
        if rec["reproducible"] == "no":
            reason = rec["not_reproducible_reason"]
            if rec["metric"] not in ours_by_metric.index:
                reason = f"no result: {reason}"
            row.update(status=NOT_REPRODUCIBLE, reason=reason, footnotes="", reference_status="")
        elif fit is not None:
            reached, predicted = holds, ""
            if end and kind == "range":  # one fitted end; the other is a prediction
                ends = range_ends(unit, paper, numbers, tolerance)
                other = "low" if end == "high" else "high"
                reached = ends[end]
                predicted = (f"; its {other} end is not fitted, a prediction "
                             + ("within" if ends[other] else "outside")
                             + f" the tolerance ({row['comparison']})")
                holds = reached and ends[other]
            if holds:
                row.update(status=CALIBRATED, footnotes="",
                           reason=f"a target of the fit `{fit.name}` (calibration.yaml) that "
                                  f"the fit reaches within the tolerance{predicted}; residuals "
                                  "in " + fit.residuals)
            else:
                row.update(status=DIFFERS, footnotes="", evidence=fit.residuals,
                           reason=f"a target of the fit `{fit.name}` (calibration.yaml) that "
                                  + ("the fit reaches" if reached else
                                     "the fit does not reach within the tolerance")
                                  + f"{predicted}; the fit's residuals are the evidence")
                if not (Path(evidence_root) / fit.residuals).is_file():
                    unexplained.append(f"{rec['claim_id']} ({rec['metric']}): residuals "
                                       f"{fit.residuals} not found")
        elif holds:
            caveats = [f for f in _footnote_ids(rec) if f.startswith(CAVEAT_PREFIX)]
            row.update(status=REPRODUCED, reason="", footnotes=";".join(caveats))
        elif verdict == STRADDLES:
            row.update(status=STRADDLES, evidence=rec["evidence"].strip(), reason=(
                f"the 95% interval over {row['seeds']} seeds ({row['interval']}) crosses the "
                f"edge of the tolerance ({tolerance.describe(unit)}): the seeds cannot decide"
                + ("" if point_holds else f"; its mean is outside: {rec['differs_reason']}")))
        else:
            evidence = rec["evidence"].strip()
            row.update(status=DIFFERS, reason=rec["differs_reason"], evidence=evidence)
            if not evidence or not (Path(evidence_root) / evidence).is_file():
                unexplained.append(f"{rec['claim_id']} ({rec['metric']}): "
                                   + (f"evidence {evidence} not found" if evidence
                                      else "no evidence in the ledger"))
        if reference is not None and row["status"] in (REPRODUCED, DIFFERS) \
                and row["reference_status"] != row["status"]:
            row["reason"] = " ".join(part for part in (
                f"The readings disagree: realised {row['ours']} ({row['status']}), paper "
                f"reference {row['reference']} ({row['reference_status']}); the status is "
                "the realised reading's.", row["reason"]) if part)
        rows.append(row)
    if no_reference:
        raise ClaimsError(
            "SLO attainment claim(s) without their paper-reference reading (a metrics row "
            "`<metric>@reference`, rollmux.experiments.metrics.ATTAINMENT_METRICS): "
            + ", ".join(no_reference))
    if require_evidence and unexplained:
        raise ClaimsError(
            "claims that differ without an experiment explaining them (ledger column "
            "`evidence`: a results file the pipeline writes):\n  " + "\n  ".join(unexplained))
    return pd.DataFrame(rows, columns=list(REPORT_COLUMNS))


#: |margin| above which a reproduced claim needs a what-it-would-take row (issue 19 item 5).
NEAR_EDGE = 0.5
#: Columns a what-it-would-take table must have (results/microbench/what_it_would_take.csv).
WIT_COLUMNS: tuple[str, ...] = ("claim_id", "quantity", "unit", "ours", "needed", "note")


def near_edge(report: pd.DataFrame) -> list[str]:
    """Claim ids of the reproduced rows with |margin| > :data:`NEAR_EDGE`."""
    margin = pd.to_numeric(report["margin"], errors="coerce").abs()
    return list(report.loc[(report["status"] == REPRODUCED) & (margin > NEAR_EDGE), "claim_id"])


def attach_what_it_would_take(report: pd.DataFrame, tables: Mapping[str, pd.DataFrame]
                              ) -> pd.DataFrame:
    """Fill ``what_it_would_take`` of every near-edge reproduced row from computed tables.

    ``tables``: file -> a table with :data:`WIT_COLUMNS` (rows with an empty ``needed``
    are readings, not inputs, and are skipped); each computed input the model needs to
    give the paper's value exactly becomes ``quantity: ours X, needed Y (file)``, and
    where the table has ``fed_back`` and ``paper`` (the claim's value recomputed at the
    needed input) ``..., which gives F (paper P)``; in such a table (a search's) a row
    without ``needed`` says that no value of the input gives the paper's, with its note.
    A near-edge row with none says ``not computed``, so the gap is visible.
    """
    out = report.copy()
    found: dict[str, list[str]] = {}
    for path, table in tables.items():
        missing = [c for c in WIT_COLUMNS if c not in table.columns]
        if missing:
            raise ClaimsError(f"{path}: a what-it-would-take table needs the columns {missing}")
        searched = "fed_back" in table.columns  # a search's table: say where it found none
        for rec in table.to_dict("records"):
            if str(rec["needed"]).strip() in ("", "nan"):
                if searched:
                    found.setdefault(str(rec["claim_id"]), []).append(
                        f"{rec['quantity']}: ours {fmt(float(rec['ours']))}, none gives the "
                        f"paper's value ({rec['note']}) ({path})")
                continue
            fed = ""
            if str(rec.get("fed_back", "")).strip() not in ("", "nan"):
                fed = (f", which gives {fmt(float(rec['fed_back']))} (paper "
                       f"{fmt(float(rec['paper']))})")
            found.setdefault(str(rec["claim_id"]), []).append(
                f"{rec['quantity']}: ours {fmt(float(rec['ours']))}, needed "
                f"{fmt(float(rec['needed']))} {rec['unit']}{fed} ({path})")
    for cid in near_edge(out):
        text = "; ".join(found.get(cid, [])) or "not computed"
        out.loc[out["claim_id"] == cid, "what_it_would_take"] = text
    return out


def _beside(claim_id: str, kind: str, unit: str,
            paper: tuple[float | None, float | None, float | None], ours: pd.Series,
            ci: ClaimInterval | None, tolerance: Tolerance) -> dict[str, Any]:
    """The real-lengths columns of a claim: its ``@real-lengths`` value, interval and the
    status the claims' own rule gives it (from the interval over seeds when there are two
    or more seeds, else from the value; a fit target's is a prediction, never
    ``calibrated``)."""
    numbers = (_opt(ours["value"]), _opt(ours["low"]), _opt(ours["high"]))
    result = compare(kind, unit, paper, numbers, tolerance)
    status = REPRODUCED if result.holds else DIFFERS
    interval = ""
    if ci is not None and ci.n >= 2:
        _check_mean(f"{claim_id} ({LENGTHS_READING})", numbers, ci)
        verdict = interval_verdict(kind, unit, paper, ci, tolerance)
        status = {INSIDE: REPRODUCED, STRADDLES: STRADDLES}.get(verdict, DIFFERS)
        interval = f"{interval_text(kind, ci)} ({ci.n})"
    return {"real_lengths": result.ours, "real_lengths_interval": interval,
            "real_lengths_status": status}


def _check_mean(claim_id: str, numbers: tuple[float | None, float | None, float | None],
                ci: ClaimInterval) -> None:
    """ClaimsError unless our value(s) are the means of the per-seed values (to the six
    significant digits of the metrics files)."""
    for ours, part in zip(numbers, (ci.value, ci.low, ci.high), strict=True):
        if part is None and ours is None:
            continue
        if part is None or ours is None or not math.isclose(ours, part.mean, rel_tol=1e-5,
                                                            abs_tol=1e-9):
            raise ClaimsError(
                f"{claim_id}: the metrics file's value {ours} is not the mean of its per-seed "
                f"values ({None if part is None else part.mean}); rebuild both files")


def status_counts(report: pd.DataFrame) -> dict[str, int]:
    """Number of claims per status (every status present, zero included)."""
    return {status: int((report["status"] == status).sum()) for status in STATUSES}


def counts_line(counts: Mapping[str, int]) -> str:
    """One-line summary, e.g. ``56 claims: 30 reproduced, 23 differs, 3 not reproducible here``."""
    total = sum(counts.values())
    return f"{total} claims: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
