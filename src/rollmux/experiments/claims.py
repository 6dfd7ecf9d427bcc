"""Claims report: each of the paper's numbers (the claims ledger) next to ours.

The ledger, ``rollmux/data/claims.csv``, holds the rows of ``../shared/paper/claims.csv``
plus, per claim, its role (a RollMux benefit, a baseline's number, an input, ...), whether
it is reproducible here and why not, why our value may differ (a row's own sentence and
shared footnotes, ``claims_footnotes.yaml``) and the results file of the experiment that
explains the difference (``evidence``). The tolerance of each kind of claim is stated once,
in ``rollmux/data/claims_tolerances.yaml``; the calibration set (the only paper numbers
any input is fitted to) in ``rollmux/data/calibration.yaml``. Every pipeline stage that
backs a claim writes ``results/metrics/<stage>.csv`` (the metrics contract of
``workflow/README.md``); this module validates those files, joins them with the ledger on
``metric`` and classifies each claim as ``reproduced``, ``calibrated`` (a fit target),
``differs`` or ``not reproducible here``.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rollmux.experiments.metrics import METRIC_COLUMNS
from rollmux.io import write_csv, write_json, write_text

#: Columns of ``../shared/paper/claims.csv`` (the paper's facts), in order.
PAPER_COLUMNS: tuple[str, ...] = (
    "claim_id",
    "section",
    "figure",
    "statement",
    "metric",
    "paper_value",
    "paper_low",
    "paper_high",
    "unit",
    "kind",
)
#: Columns the ledger adds to the paper's.
LEDGER_COLUMNS: tuple[str, ...] = (
    *PAPER_COLUMNS,
    "role",
    "reproducible",
    "not_reproducible_reason",
    "differs_reason",
    "footnotes",
    "evidence",
)
#: What a claim is about (ledger column ``role``); ``benefit`` claims are never fitted.
ROLES: tuple[str, ...] = ("benefit", "baseline", "input", "hardware", "runtime", "property")
#: How a role reads the paper's kind where the two differ: (role, paper kind) -> the kind
#: ours is compared as. A wall-clock time of the paper's own code stated as one value
#: (role ``runtime``) is a bound its implementation meets, not a number to match on
#: another machine (§6.5: "its decision time is only 591 ms for 2,000 jobs"; §4.2:
#: "make optimal decisions in sub-seconds even in clusters with thousands of jobs"),
#: so ours must be at most the paper's.
ROLE_READINGS: dict[tuple[str, str], str] = {("runtime", "value"): "upper_bound"}
#: Columns of a fit's residuals file (results/calibration/<fit>/residuals.csv).
RESIDUAL_COLUMNS: tuple[str, ...] = ("target", "unit", "paper", "fitted", "residual", "note")
#: Columns of every ``results/metrics/<stage>.csv`` (workflow/README.md).
#: Kinds of claim and the units a ledger row may use.
KINDS: tuple[str, ...] = ("ratio", "value", "range", "lower_bound", "upper_bound", "property")
UNITS: tuple[str, ...] = ("x", "%", "USD/h", "s", "ms", "GPUs", "kUSD/h", "bool")

REPRODUCED = "reproduced"
CALIBRATED = "calibrated"
DIFFERS = "differs"
NOT_REPRODUCIBLE = "not reproducible here"
#: Statuses in report order.
STATUSES: tuple[str, ...] = (REPRODUCED, CALIBRATED, DIFFERS, NOT_REPRODUCIBLE)

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
    "ratio",
    "difference",
    "comparison",
    "tolerance",
    "status",
    "reason",
    "footnotes",
    "evidence",
    "calibration",
    "source",
)

#: Columns of the ledger of results beyond the paper (``rollmux/data/beyond.csv``).
BEYOND_COLUMNS: tuple[str, ...] = ("result_id", "source", "description", "metric", "unit",
                                   "evidence")
#: Columns of the rendered results beyond the paper: the ledger's, the value and its file.
BEYOND_REPORT_COLUMNS: tuple[str, ...] = (*BEYOND_COLUMNS, "value", "file")

# Slack on tolerance comparisons, so a value exactly at the edge is not lost to rounding.
_EPS = 1e-9


class ClaimsError(ValueError):
    """A ledger or metrics file is malformed, or a reproducible claim has no result."""


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
            return f"+-{_fmt(self.percent_points)} pp"
        if self.relative is not None:
            return f"+-{_fmt(100 * self.relative)}% relative"
        return self.rule


@dataclass(frozen=True, slots=True)
class Comparison:
    """Our value(s) against the paper's for one claim."""

    ours: str
    ratio: float
    difference: float
    comparison: str
    holds: bool


def ledger_path() -> Path:
    """Path of the ledger shipped with the package."""
    return Path(str(resources.files("rollmux") / "data" / "claims.csv"))


def beyond_ledger_path() -> Path:
    """Path of the ledger of results beyond the paper shipped with the package."""
    return Path(str(resources.files("rollmux") / "data" / "beyond.csv"))


def tolerances_path() -> Path:
    """Path of the tolerance-by-kind file shipped with the package."""
    return Path(str(resources.files("rollmux") / "data" / "claims_tolerances.yaml"))


def footnotes_path() -> Path:
    """Path of the shared-reasons file shipped with the package."""
    return Path(str(resources.files("rollmux") / "data" / "claims_footnotes.yaml"))


def calibration_path() -> Path:
    """Path of the declared calibration set shipped with the package."""
    return Path(str(resources.files("rollmux") / "data" / "calibration.yaml"))


@dataclass(frozen=True, slots=True)
class Fit:
    """One declared fit of the calibration set (calibration.yaml, ``fits``)."""

    name: str
    description: str
    program: str
    parameters: Mapping[str, str]
    targets: tuple[str, ...]
    residuals: str


@dataclass(frozen=True, slots=True)
class Calibration:
    """The calibration set: facts of the paper's text and the fits that use them."""

    facts: Mapping[str, Mapping[str, Any]]
    fits: Mapping[str, Fit]

    def fit_of(self, target: str) -> Fit | None:
        """The fit that uses ``target`` (a claim or fact id), or None."""
        for fit in self.fits.values():
            if target in fit.targets:
                return fit
        return None


def _yaml_mapping(path: Path | str, what: str) -> dict[str, Any]:
    """A YAML file that must hold a mapping; ClaimsError naming the file otherwise."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"{path}: cannot read {what} ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ClaimsError(f"{path}: expected a mapping ({what})")
    return data


def load_footnotes(path: Path | str | None = None) -> dict[str, str]:
    """Footnote id -> text (claims_footnotes.yaml); ClaimsError for a non-text entry."""
    path = footnotes_path() if path is None else Path(path)
    data = _yaml_mapping(path, "footnotes")
    bad = [str(k) for k, v in data.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ClaimsError(f"{path}: footnote(s) {bad} must be non-empty text")
    return {str(k): " ".join(str(v).split()) for k, v in data.items()}


def load_calibration(ledger: pd.DataFrame, path: Path | str | None = None) -> Calibration:
    """Load and check the calibration set against the ledger.

    ClaimsError (naming the fit and the target) for an unknown target, a target used by two
    fits, a claim whose role is ``benefit`` (RollMux's results are never fitted), or a fit
    missing one of its keys.
    """
    path = calibration_path() if path is None else Path(path)
    data = _yaml_mapping(path, "calibration set")
    facts = data.get("facts") or {}
    fits_raw = data.get("fits") or {}
    if not isinstance(facts, dict) or not isinstance(fits_raw, dict):
        raise ClaimsError(f"{path}: `facts` and `fits` must be mappings")
    problems: list[str] = []
    for fid, fact in facts.items():
        if not isinstance(fact, dict) or _number(str(fact.get("value", ""))) is None:
            problems.append(f"{path}: facts.{fid}: needs a numeric `value`")
    roles = dict(zip(ledger["claim_id"], ledger["role"], strict=True))
    fits: dict[str, Fit] = {}
    used: dict[str, str] = {}
    for name, entry in fits_raw.items():
        where = f"{path}: fits.{name}"
        keys = ("description", "program", "parameters", "targets", "residuals")
        if not isinstance(entry, dict) or any(k not in entry for k in keys):
            problems.append(f"{where}: needs the keys {', '.join(keys)}")
            continue
        targets = tuple(str(t) for t in entry["targets"] or ())
        if not targets:
            problems.append(f"{where}.targets: empty")
        for target in targets:
            if target not in roles and target not in facts:
                problems.append(f"{where}.targets: {target!r} is neither a claim nor a fact")
            elif roles.get(target) == "benefit":
                problems.append(f"{where}.targets: {target} is a RollMux benefit claim "
                                "(ledger role `benefit`); benefit claims are never fitted")
            if target in used:
                problems.append(f"{where}.targets: {target} is already a target of "
                                f"fits.{used[target]}")
            used[target] = str(name)
        params = entry["parameters"]
        if not isinstance(params, dict) or not params:
            problems.append(f"{where}.parameters: a non-empty mapping name -> where it is used")
            params = {}
        fits[str(name)] = Fit(str(name), " ".join(str(entry["description"]).split()),
                              str(entry["program"]), {str(k): str(v) for k, v in params.items()},
                              targets, str(entry["residuals"]))
    if problems:
        raise ClaimsError("\n".join(problems))
    return Calibration(facts={str(k): v for k, v in facts.items()}, fits=fits)


def read_residuals(fit: Fit, root: Path | str = ".") -> pd.DataFrame:
    """A fit's residuals file (columns RESIDUAL_COLUMNS); ClaimsError if absent or malformed."""
    path = Path(root) / fit.residuals
    table = _read_table(path)
    if tuple(table.columns) != RESIDUAL_COLUMNS:
        raise ClaimsError(f"{path}:1: header must be {','.join(RESIDUAL_COLUMNS)}")
    missing = sorted(set(fit.targets) - set(table["target"]))
    if missing:
        raise ClaimsError(f"{path}: no residual for target(s) {missing} of fits.{fit.name}")
    return table


def _fmt(x: float) -> str:
    """Four significant digits, never in scientific notation (stable across runs)."""
    if not math.isfinite(x):
        return str(x)
    text = np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
    return "0" if text in ("-0", "0") else text


def _where(path: Path | str, row: int, column: str) -> str:
    """Location prefix ``file:line: row N, column C`` (header on line 1, rows from 1)."""
    return f"{path}:{row + 1}: row {row}, column {column}"


def _read_table(path: Path | str) -> pd.DataFrame:
    """Read a CSV as strings, lines starting with ``#`` skipped; a clear error if unreadable."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ClaimsError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimsError(f"{path}: cannot read ({exc})") from exc
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    try:
        return pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ClaimsError(f"{path}: not a readable CSV file ({exc})") from exc


def _data_line_numbers(path: Path | str) -> list[int]:
    """File line number of each data row (comment and blank lines skipped, header first)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    content = [i + 1 for i, line in enumerate(lines) if line.strip() and not line.startswith("#")]
    return content[1:]


def _number(text: str) -> float | None:
    """Parse a finite number; ``None`` for an empty cell; ``ValueError`` otherwise."""
    text = text.strip()
    if text == "":
        return None
    if text.lower() in ("true", "false"):
        return 1.0 if text.lower() == "true" else 0.0
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def load_ledger(path: Path | str | None = None) -> pd.DataFrame:
    """Load and validate the claims ledger (strings; numbers parsed where used)."""
    path = ledger_path() if path is None else Path(path)
    table = _read_table(path)
    missing = [c for c in LEDGER_COLUMNS if c not in table.columns]
    extra = [c for c in table.columns if c not in LEDGER_COLUMNS]
    if missing or extra:
        raise ClaimsError(
            f"{path}: header must be {','.join(LEDGER_COLUMNS)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; unexpected {extra}" if extra else "")
        )
    lines = _data_line_numbers(path)
    problems: list[str] = []
    seen_ids: dict[str, int] = {}
    seen_metrics: dict[str, int] = {}
    for i, rec in enumerate(table.to_dict("records")):
        line = lines[i] if i < len(lines) else i + 2
        where = f"{path}:{line}: row {i + 1} ({rec['claim_id'] or '?'}), column"
        for key, seen in (("claim_id", seen_ids), ("metric", seen_metrics)):
            if not rec[key]:
                problems.append(f"{where} {key}: empty")
            elif rec[key] in seen:
                problems.append(f"{where} {key}: duplicate {rec[key]!r} (row {seen[rec[key]]})")
            else:
                seen[rec[key]] = i + 1
        if rec["kind"] not in KINDS:
            problems.append(f"{where} kind: {rec['kind']!r} is not one of {', '.join(KINDS)}")
        if rec["unit"] not in UNITS:
            problems.append(f"{where} unit: {rec['unit']!r} is not one of {', '.join(UNITS)}")
        needed = ("paper_low", "paper_high") if rec["kind"] == "range" else ("paper_value",)
        for column in ("paper_value", "paper_low", "paper_high"):
            try:
                value = _number(rec[column])
            except ValueError:
                problems.append(f"{where} {column}: not a number: {rec[column]!r}")
                continue
            if column in needed and value is None:
                problems.append(f"{where} {column}: empty, but kind {rec['kind']} needs it")
        if rec["role"] not in ROLES:
            problems.append(f"{where} role: {rec['role']!r} is not one of {', '.join(ROLES)}")
        problem = _evidence_problem(rec["evidence"].strip())
        if problem:
            problems.append(f"{where} evidence: {problem}")
        if rec["reproducible"] not in ("yes", "no"):
            problems.append(f"{where} reproducible: {rec['reproducible']!r} must be yes or no")
        if rec["reproducible"] == "no" and not rec["not_reproducible_reason"].strip():
            problems.append(f"{where} not_reproducible_reason: empty for a claim marked no")
    if problems:
        raise ClaimsError("\n".join(problems))
    return table


def _evidence_problem(evidence: str) -> str | None:
    """Why an evidence path is not a relative path under results/ (None: it is)."""
    if evidence and (Path(evidence).is_absolute() or not evidence.startswith("results/")
                     or ".." in Path(evidence).parts):
        return f"{evidence!r} must be a path under results/"
    return None


def load_beyond_ledger(path: Path | str | None = None) -> pd.DataFrame:
    """Load and validate the ledger of results beyond the paper (strings).

    ClaimsError listing every problem (file, line, row and column): a wrong header, an
    empty or duplicate id or metric, a unit outside :data:`UNITS`, an evidence path that
    is not under results/.
    """
    path = beyond_ledger_path() if path is None else Path(path)
    table = _read_table(path)
    if tuple(table.columns) != BEYOND_COLUMNS:
        raise ClaimsError(f"{path}:1: header {','.join(table.columns)} must be exactly "
                          f"{','.join(BEYOND_COLUMNS)}")
    lines = _data_line_numbers(path)
    problems: list[str] = []
    seen: dict[str, dict[str, int]] = {"result_id": {}, "metric": {}}
    for i, rec in enumerate(table.to_dict("records")):
        line = lines[i] if i < len(lines) else i + 2
        where = f"{path}:{line}: row {i + 1} ({rec['result_id'] or '?'}), column"
        for key in ("result_id", "metric", "description"):
            if not rec[key].strip():
                problems.append(f"{where} {key}: empty")
        for key, known in seen.items():
            if rec[key] in known:
                problems.append(f"{where} {key}: duplicate {rec[key]!r} (row {known[rec[key]]})")
            known.setdefault(rec[key], i + 1)
        if rec["unit"] not in UNITS:
            problems.append(f"{where} unit: {rec['unit']!r} is not one of {', '.join(UNITS)}")
        problem = _evidence_problem(rec["evidence"].strip()) or (
            None if rec["evidence"].strip() else "empty: every result names its results file")
        if problem:
            problems.append(f"{where} evidence: {problem}")
    if problems:
        raise ClaimsError("\n".join(problems))
    return table


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
             "file": metrics.loc[rec["metric"], "file"]}
            for rec in ledger.to_dict("records")]
    return pd.DataFrame(rows, columns=list(BEYOND_REPORT_COLUMNS))


def compare_with_paper(ledger: pd.DataFrame, paper_csv: Path | str) -> list[str]:
    """Differences between the ledger's paper columns and ``paper_csv`` (empty: in step)."""
    paper = _read_table(paper_csv)
    if tuple(paper.columns) != PAPER_COLUMNS:
        return [f"{paper_csv}: columns {list(paper.columns)}, ledger expects {PAPER_COLUMNS}"]
    ours = ledger.set_index("claim_id")
    theirs = paper.set_index("claim_id")
    problems = [
        f"{cid}: in {paper_csv} but not in the ledger"
        for cid in theirs.index.difference(ours.index)
    ]
    problems += [
        f"{cid}: in the ledger but not in {paper_csv}"
        for cid in ours.index.difference(theirs.index)
    ]
    for cid in theirs.index.intersection(ours.index, sort=False):
        for column in PAPER_COLUMNS[1:]:
            a, b = str(ours.at[cid, column]).strip(), str(theirs.at[cid, column]).strip()
            if a != b:
                problems.append(f"{cid}, column {column}: ledger {a!r}, paper {b!r}")
    return problems


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


def read_metrics(paths: Sequence[Path | str], ledger: pd.DataFrame) -> pd.DataFrame:
    """Read and validate metrics files; one row per metric, with ``file`` and ``line``.

    Raises ClaimsError listing every problem (file, line, row and column): wrong header,
    a metric not in the ledger, a unit other than the ledger's, a value that is not a
    number, a missing value (or low/high for range claims), or a metric reported twice.
    """
    by_metric = ledger.set_index("metric")
    problems: list[str] = []
    records: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for path in paths:
        table = _read_table(path)
        if tuple(table.columns) != METRIC_COLUMNS:
            problems.append(
                f"{path}:1: header {','.join(table.columns)} must be exactly "
                f"{','.join(METRIC_COLUMNS)} (workflow/README.md)"
            )
            continue
        lines = _data_line_numbers(path)
        for i, rec in enumerate(table.to_dict("records")):
            line = lines[i] if i < len(lines) else i + 2
            where = f"{path}:{line}: row {i + 1}, column"
            metric = rec["metric"].strip()
            if metric not in by_metric.index:
                problems.append(f"{where} metric: {metric!r} is not a metric of the claims ledger")
                continue
            if metric in seen:
                problems.append(f"{where} metric: {metric!r} already reported at {seen[metric]}")
                continue
            seen[metric] = f"{path}:{line}"
            claim = by_metric.loc[metric]
            if rec["unit"].strip() != claim["unit"]:
                problems.append(
                    f"{where} unit: {rec['unit']!r}, but claim {claim['claim_id']} is in "
                    f"{claim['unit']!r}"
                )
            numbers: dict[str, float | None] = {}
            for column in ("value", "low", "high"):
                try:
                    numbers[column] = _number(rec[column])
                except ValueError:
                    problems.append(f"{where} {column}: not a number: {rec[column]!r}")
                    numbers[column] = None
            needed = ("low", "high") if claim["kind"] == "range" else ("value",)
            for column in needed:
                if numbers[column] is None and rec[column].strip() == "":
                    problems.append(
                        f"{where} {column}: empty, but claim {claim['claim_id']} "
                        f"({claim['kind']}) needs it"
                    )
            low, high = numbers["low"], numbers["high"]
            if low is not None and high is not None and low > high:
                problems.append(f"{where} low: {_fmt(low)} > high {_fmt(high)}")
            records.append(
                {
                    "metric": metric,
                    **numbers,
                    "source": rec["source"].strip(),
                    "note": rec["note"].strip(),
                    "file": str(path),
                    "line": line,
                }
            )
    if problems:
        raise ClaimsError("\n".join(problems))
    return pd.DataFrame(
        records, columns=["metric", "value", "low", "high", "source", "note", "file", "line"]
    )


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
            ours=f"{_fmt(o_low)}-{_fmt(o_high)}",
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
    return Comparison(_fmt(o_value), ratio, difference, text, holds)


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
        return f"{_fmt(low or 0.0)}-{_fmt(high or 0.0)}"
    return _fmt(value or 0.0)


#: Footnote ids with this prefix qualify an agreement: they stay on a reproduced row.
CAVEAT_PREFIX = "caveat-"


def _footnote_ids(rec: Mapping[str, Any]) -> list[str]:
    """The footnote ids of a ledger row (``;``-separated, blanks dropped)."""
    return [f.strip() for f in str(rec["footnotes"]).split(";") if f.strip()]


def claims_report(
    ledger: pd.DataFrame,
    metrics: pd.DataFrame,
    tolerances: Mapping[str, Tolerance],
    calibration: Calibration | None = None,
    footnotes: Mapping[str, str] | None = None,
    evidence_root: Path | str = ".",
    require_evidence: bool = True,
) -> pd.DataFrame:
    """One row per claim: paper, ours, comparison, status, reason and evidence.

    A claim that a fit of ``calibration`` uses is ``calibrated`` whatever its value. A
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
    for rec in ledger.to_dict("records"):
        kind, unit = ROLE_READINGS.get((rec["role"], rec["kind"]), rec["kind"]), rec["unit"]
        tolerance = tolerances[kind]
        paper = (_number(rec["paper_value"]), _number(rec["paper_low"]), _number(rec["paper_high"]))
        fit = calibration.fit_of(rec["claim_id"])
        row: dict[str, Any] = {
            **{c: rec[c] for c in ("claim_id", "section", "figure", "statement", "metric")},
            "unit": unit,
            "kind": kind,
            "role": rec["role"],
            "paper": _paper_text(kind, *paper),
            "ours": "",
            "ratio": math.nan,
            "difference": math.nan,
            "comparison": "",
            "tolerance": tolerance.describe(unit),
            "footnotes": ";".join(_footnote_ids(rec)),
            "evidence": "",
            "calibration": "" if fit is None else fit.name,
            "source": "",
        }
        holds = False
        if rec["metric"] in ours_by_metric.index:
            ours = ours_by_metric.loc[rec["metric"]]
            numbers = (_opt(ours["value"]), _opt(ours["low"]), _opt(ours["high"]))
            result = compare(kind, unit, paper, numbers, tolerance)
            holds = result.holds
            row.update(
                ours=result.ours,
                ratio=result.ratio,
                difference=result.difference,
                comparison=result.comparison,
                source=ours["source"],
            )
        if rec["reproducible"] == "no":
            reason = rec["not_reproducible_reason"]
            if rec["metric"] not in ours_by_metric.index:
                reason = f"no result: {reason}"
            row.update(status=NOT_REPRODUCIBLE, reason=reason, footnotes="")
        elif fit is not None:
            row.update(status=CALIBRATED, footnotes="",
                       reason=f"a target of the fit `{fit.name}` (calibration.yaml): agreement "
                              "is by construction; residuals in " + fit.residuals)
        elif holds:
            caveats = [f for f in _footnote_ids(rec) if f.startswith(CAVEAT_PREFIX)]
            row.update(status=REPRODUCED, reason="", footnotes=";".join(caveats))
        else:
            evidence = rec["evidence"].strip()
            row.update(status=DIFFERS, reason=rec["differs_reason"], evidence=evidence)
            if not evidence or not (Path(evidence_root) / evidence).is_file():
                unexplained.append(f"{rec['claim_id']} ({rec['metric']}): "
                                   + (f"evidence {evidence} not found" if evidence
                                      else "no evidence in the ledger"))
        rows.append(row)
    if require_evidence and unexplained:
        raise ClaimsError(
            "claims that differ without an experiment explaining them (ledger column "
            "`evidence`: a results file the pipeline writes):\n  " + "\n  ".join(unexplained))
    return pd.DataFrame(rows, columns=list(REPORT_COLUMNS))


def status_counts(report: pd.DataFrame) -> dict[str, int]:
    """Number of claims per status (every status present, zero included)."""
    return {status: int((report["status"] == status).sum()) for status in STATUSES}


def counts_line(counts: Mapping[str, int]) -> str:
    """One-line summary, e.g. ``56 claims: 30 reproduced, 23 differs, 3 not reproducible here``."""
    total = sum(counts.values())
    return f"{total} claims: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES)


def _cell(text: Any) -> str:
    """A Markdown table cell: pipes escaped, no line breaks."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(
    report: pd.DataFrame,
    tolerances: Mapping[str, Tolerance],
    calibration: Calibration | None = None,
    footnotes: Mapping[str, str] | None = None,
    residuals: Mapping[str, pd.DataFrame] | None = None,
    beyond: pd.DataFrame | None = None,
) -> str:
    """The claims report as Markdown: counts, the calibration split, the table, footnotes,
    and the results beyond the paper (``beyond``: rows of :func:`beyond_report`)."""
    calibration = calibration or Calibration(facts={}, fits={})
    footnotes = dict(footnotes or {})
    lines = [
        "# Claims: the paper's numbers next to ours",
        "",
        f"**{counts_line(status_counts(report))}.**",
        "",
        "Status: `reproduced` (ours within the tolerance of the claim's kind, predicted from"
        " inputs that were not fitted to it), `calibrated` (a target of a declared fit: agreement"
        " by construction), `differs` (outside the tolerance; the evidence column names the"
        " results file of the experiment that explains the difference), `not reproducible"
        " here` (the ledger, src/rollmux/data/claims.csv, says why).",
        "",
        "Tolerances by kind (src/rollmux/data/claims_tolerances.yaml):",
        "",
    ]
    for kind in KINDS:
        tol = tolerances[kind]
        numbers = []
        if tol.relative is not None:
            numbers.append(f"relative {_fmt(tol.relative)}")
        if tol.percent_points is not None:
            numbers.append(f"{_fmt(tol.percent_points)} pp for %")
        suffix = f" ({', '.join(numbers)})" if numbers else ""
        lines.append(f"- `{kind}`: {tol.rule}{suffix}")
    lines += ["", "## Calibration set", ""]
    if not calibration.fits:
        lines.append("No input is fitted to any of the paper's numbers: every value is a "
                     "prediction.")
    else:
        lines.append("Inputs we cannot read are fitted only to these numbers "
                     "(src/rollmux/data/calibration.yaml); everything else is predicted.")
        for fit in calibration.fits.values():
            lines += ["", f"### Fit `{fit.name}`", "", fit.description, "",
                      f"Program: {fit.program}. Parameters: "
                      + "; ".join(f"`{k}` ({v})" for k, v in fit.parameters.items()) + ".", ""]
            table = (residuals or {}).get(fit.name)
            if table is not None:
                lines += ["| target | unit | paper | fitted | residual | note |",
                          "|---|---|---|---|---|---|"]
                for rec in table.to_dict("records"):
                    lines.append("| " + " | ".join(_cell(rec[c]) for c in RESIDUAL_COLUMNS)
                                 + " |")
    lines += [
        "",
        "## Claims",
        "",
        "| claim | where | statement | role | unit | paper | ours | ours vs paper | status "
        "| reason | evidence |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in report.to_dict("records"):
        notes = [f"[{f}]" for f in str(rec["footnotes"]).split(";") if f]
        reason = " ".join(part for part in (rec["reason"], *notes) if part)
        cells = [
            rec["claim_id"],
            f"§{rec['section']} {rec['figure']}",
            rec["statement"],
            rec["role"],
            rec["unit"],
            rec["paper"],
            rec["ours"] or "-",
            rec["comparison"] or "-",
            rec["status"],
            reason,
            rec["evidence"] or "",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    used = sorted({f for text in report["footnotes"] for f in str(text).split(";") if f})
    if used:
        lines += ["", "## Footnotes", ""]
        lines += [f"- **[{f}]** {footnotes.get(f, '')}" for f in used]
    if beyond is not None and len(beyond):
        lines += [
            "",
            "## Results beyond the paper",
            "",
            "Questions the paper leaves open, answered by this pipeline: the ledger"
            " src/rollmux/data/beyond.csv names each result, the pipeline computes its value"
            " (results/metrics/, from the evidence file).",
            "",
            "| result | source | description | value | unit | evidence |",
            "|---|---|---|---|---|---|",
        ]
        for rec in beyond.to_dict("records"):
            cells = [rec["result_id"], rec["source"], rec["description"], _fmt(rec["value"]),
                     rec["unit"], rec["evidence"]]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


#: Status -> background colour of its cells in the HTML report (light, readable in print).
STATUS_COLOURS: dict[str, str] = {
    REPRODUCED: "#d4edda",
    CALIBRATED: "#d6e9f8",
    DIFFERS: "#fde2cf",
    NOT_REPRODUCIBLE: "#e9e9e9",
}

#: The HTML report's style: inline, so the report stays one self-contained file. The
#: ``:has`` rules widen the Snakemake report's landing-page column that holds the table
#: and start it at the top left (the report centres its content, which would cut off the
#: top of a page taller than the window); the table scrolls inside its box.
_HTML_STYLE = """
#rollmux-claims { font-family: sans-serif; font-size: 12px; line-height: 1.35; }
#rollmux-claims table { border-collapse: collapse; margin: 0.5em 0 1em; }
#rollmux-claims th, #rollmux-claims td { border: 1px solid #ccc; padding: 2px 5px;
  vertical-align: top; text-align: left; }
#rollmux-claims th { background: #f3f3f3; }
#rollmux-claims td.num { white-space: nowrap; }
#rollmux-claims .headline td { font-size: 14px; font-weight: bold; text-align: right; }
#rollmux-claims table.headline { width: auto; }
#rollmux-claims .scroll { max-height: 60vh; overflow: auto; border: 1px solid #ccc; }
#rollmux-claims .scroll table { margin: 0; }
.prose:has(#rollmux-claims) { max-width: min(60rem, calc(100vw - 30rem)); }
.overflow-auto:has(#rollmux-claims) { align-items: flex-start; justify-content: flex-start; }
"""


def _html_cell(text: Any, cls: str = "", style: str = "") -> str:
    """One ``<td>``, its text escaped."""
    attrs = (f' class="{cls}"' if cls else "") + (f' style="{style}"' if style else "")
    return f"<td{attrs}>{html.escape(str(text))}</td>"


def html_headline(counts: Mapping[str, int]) -> str:
    """The headline counts: one row per status and the total, as an HTML table."""
    rows = [f'<tr><th>{html.escape(s)}</th><td style="background:{STATUS_COLOURS[s]}">'
            f"{counts[s]}</td></tr>" for s in STATUSES]
    rows.append(f"<tr><th>claims in all</th><td>{sum(counts.values())}</td></tr>")
    return '<table class="headline">' + "".join(rows) + "</table>"


def _html_claims_table(report: pd.DataFrame) -> str:
    """Every claim as one row: where, statement, paper, ours, ours vs paper, status, why."""
    head = ("claim", "where", "statement", "paper", "ours", "ours vs paper", "status",
            "reason", "evidence")
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for rec in report.to_dict("records"):
        notes = [f"[{f}]" for f in str(rec["footnotes"]).split(";") if f]
        reason = " ".join(part for part in (rec["reason"], *notes) if part)
        status = str(rec["status"])
        rows.append("<tr>" + "".join([
            _html_cell(rec["claim_id"]),
            _html_cell(f"§{rec['section']} {rec['figure']}", "num"),
            _html_cell(rec["statement"]),
            _html_cell(rec["paper"], "num"),
            _html_cell(rec["ours"] or "-", "num"),
            _html_cell(rec["comparison"] or "-", "num"),
            _html_cell(status, "num", f"background:{STATUS_COLOURS.get(status, '#fff')}"),
            _html_cell(reason),
            _html_cell(rec["evidence"] or ""),
        ]) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _html_footnotes(report: pd.DataFrame, footnotes: Mapping[str, str]) -> str:
    """The footnotes the table cites, as a list ('' when none is cited)."""
    used = sorted({f for text in report["footnotes"] for f in str(text).split(";") if f})
    if not used:
        return ""
    items = "".join(f"<li><b>[{html.escape(f)}]</b> {html.escape(footnotes.get(f, ''))}</li>"
                    for f in used)
    return f"<h3>Footnotes</h3><ul>{items}</ul>"


def render_html_fragment(report: pd.DataFrame,
                         footnotes: Mapping[str, str] | None = None) -> str:
    """The claims report as an HTML fragment (style, headline counts, table, footnotes).

    The report's sections are listed in one place (``sections`` below), so a new section
    is one more entry. Used on the landing page of the Snakemake report and, wrapped by
    :func:`render_html`, as ``figures/claims.html``.
    """
    counts = status_counts(report)
    sections = [
        ("Claims: the paper's numbers next to ours",
         f"<p><b>{html.escape(counts_line(counts))}.</b></p>" + html_headline(counts)),
        ("Every claim", f'<div class="scroll">{_html_claims_table(report)}</div>'),
        ("", _html_footnotes(report, footnotes or {})),
    ]
    body = "".join((f"<h2>{html.escape(title)}</h2>" if title else "") + content
                   for title, content in sections if content)
    return f'<style>{_HTML_STYLE}</style><div id="rollmux-claims">{body}</div>\n'


def render_html(report: pd.DataFrame, footnotes: Mapping[str, str] | None = None) -> str:
    """The claims report as one self-contained HTML page (:func:`render_html_fragment`)."""
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>rollmux claims report</title></head><body>"
            + render_html_fragment(report, footnotes) + "</body></html>\n")


def build_claims_report(
    metrics_paths: Iterable[Path | str],
    out_csv: Path | str,
    out_md: Path | str,
    out_summary: Path | str,
    ledger: Path | str | None = None,
    tolerances: Path | str | None = None,
    tolerance_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    calibration: Path | str | None = None,
    footnotes: Path | str | None = None,
    results_root: Path | str = ".",
    require_evidence: bool = True,
    beyond_metrics_paths: Iterable[Path | str] = (),
    beyond_ledger: Path | str | None = None,
    out_html: Path | str | None = None,
    out_html_fragment: Path | str | None = None,
) -> dict[str, int]:
    """Validate, join and classify; write the CSV, Markdown and JSON counts atomically.

    ``results_root`` is the folder that evidence and residual paths (``results/...``) are
    relative to (the pipeline's working directory). With ``beyond_metrics_paths``, the
    results beyond the paper (``beyond_ledger``, default the shipped one) are rendered
    after the claims (:func:`beyond_report`). ``out_html`` and ``out_html_fragment``,
    when given, receive the report as an HTML page and as a fragment for the landing page
    of the Snakemake report.
    """
    table = load_ledger(ledger)
    tols = load_tolerances(tolerances, tolerance_overrides)
    cal = load_calibration(table, calibration)
    notes = load_footnotes(footnotes)
    metrics = read_metrics(list(metrics_paths), table)
    report = claims_report(table, metrics, tols, cal, notes, results_root, require_evidence)
    residuals = {name: read_residuals(fit, results_root) for name, fit in cal.fits.items()}
    beyond_paths = list(beyond_metrics_paths)
    beyond = (beyond_report(load_beyond_ledger(beyond_ledger), beyond_paths, results_root,
                            require_evidence) if beyond_paths else None)
    counts = status_counts(report)
    write_csv(report, out_csv, float_format="%.4g")
    write_text(out_md, render_markdown(report, tols, cal, notes, residuals, beyond))
    if out_html is not None:
        write_text(out_html, render_html(report, notes))
    if out_html_fragment is not None:
        write_text(out_html_fragment, render_html_fragment(report, notes))
    write_json(
        {"counts": counts, "total": len(report), "summary": counts_line(counts),
         "calibration": {name: list(fit.targets) for name, fit in cal.fits.items()},
         "beyond": 0 if beyond is None else len(beyond)},
        out_summary,
    )
    return counts
