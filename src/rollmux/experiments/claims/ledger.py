"""Claims ledger files and their validation: the paper's numbers and what we know of them.

The ledger, ``rollmux/data/claims.csv``, holds the rows of ``../shared/paper/claims.csv``
plus, per claim, its role (a RollMux benefit, a baseline's number, an input, ...), whether
it is reproducible here and why not, why our value may differ (a row's own sentence and
shared footnotes, ``claims_footnotes.yaml``) and the results file of the experiment that
explains the difference (``evidence``). The calibration set (the only paper numbers any
input is fitted to) is ``rollmux/data/calibration.yaml``. Every pipeline stage that backs
a claim writes ``results/metrics/<stage>.csv`` (the metrics contract of
``workflow/README.md``); :func:`read_metrics` validates those files. Every loader raises
:class:`ClaimsError` naming the file, line, row and column of each problem.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rollmux.experiments.metrics import (
    METRIC_COLUMNS,
    companion_error,
    split_reading,
)

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


#: Columns of a fit's residuals file (results/calibration/<fit>/residuals.csv).
RESIDUAL_COLUMNS: tuple[str, ...] = ("target", "unit", "paper", "fitted", "residual", "note")
#: Kinds of claim and the units a ledger row may use.
KINDS: tuple[str, ...] = ("ratio", "value", "range", "lower_bound", "upper_bound", "property")
UNITS: tuple[str, ...] = ("x", "%", "USD/h", "s", "ms", "GPUs", "kUSD/h", "bool", "count")


#: Columns of the ledger of results beyond the paper (``rollmux/data/beyond.csv``).
BEYOND_COLUMNS: tuple[str, ...] = ("result_id", "source", "description", "metric", "unit",
                                   "evidence")


class ClaimsError(ValueError):
    """A ledger or metrics file is malformed, or a reproducible claim has no result."""


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
        """The fit that uses ``target`` (a claim or fact id, or one end of it), or None."""
        for fit in self.fits.values():
            if target in fit.targets or any(t.partition(":")[0] == target
                                            for t in fit.targets):
                return fit
        return None

    def fitted_end(self, claim_id: str) -> str:
        """``low`` or ``high`` when a fit targets only that end of a range claim, else ''."""
        for fit in self.fits.values():
            for target in fit.targets:
                base, _, end = target.partition(":")
                if base == claim_id:
                    return end
        return ""


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
        if not isinstance(fact, dict) or parse_number(str(fact.get("value", ""))) is None:
            problems.append(f"{path}: facts.{fid}: needs a numeric `value`")
    roles = dict(zip(ledger["claim_id"], ledger["role"], strict=True))
    kinds = dict(zip(ledger["claim_id"], ledger["kind"], strict=True))
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
        for full in targets:
            target, _, end = full.partition(":")
            if end and (end not in ("low", "high") or kinds.get(target) != "range"):
                problems.append(f"{where}.targets: {full!r}: an end (`:low`, `:high`) names "
                                "one end of a range claim")
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
    table = read_table(path)
    if tuple(table.columns) != RESIDUAL_COLUMNS:
        raise ClaimsError(f"{path}:1: header must be {','.join(RESIDUAL_COLUMNS)}")
    missing = sorted({t.partition(":")[0] for t in fit.targets} - set(table["target"]))
    if missing:
        raise ClaimsError(f"{path}: no residual for target(s) {missing} of fits.{fit.name}")
    return table


def fmt(x: float) -> str:
    """Four significant digits, never in scientific notation (stable across runs)."""
    if not math.isfinite(x):
        return str(x)
    text = np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
    return "0" if text in ("-0", "0") else text


def fmt_range(low: float, high: float) -> str:
    """A range as ``low to high`` (each end by :func:`fmt`): ``-5.578 to 34.85``, never the
    ambiguous ``-5.578-34.85``."""
    return f"{fmt(low)} to {fmt(high)}"


def read_table(path: Path | str) -> pd.DataFrame:
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


def parse_number(text: str) -> float | None:
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
    table = read_table(path)
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
                value = parse_number(rec[column])
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
    table = read_table(path)
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


def compare_with_paper(ledger: pd.DataFrame, paper_csv: Path | str) -> list[str]:
    """Differences between the ledger's paper columns and ``paper_csv`` (empty: in step)."""
    paper = read_table(paper_csv)
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
        table = read_table(path)
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
            base, reading = split_reading(metric)
            if base not in by_metric.index:
                problems.append(f"{where} metric: {metric!r} is not a metric of the claims ledger")
                continue
            if reading and companion_error(base, reading):
                problems.append(f"{where} metric: {metric!r}: "
                                f"{companion_error(base, reading)}")
                continue
            if metric in seen:
                problems.append(f"{where} metric: {metric!r} already reported at {seen[metric]}")
                continue
            seen[metric] = f"{path}:{line}"
            claim = by_metric.loc[base]
            if rec["unit"].strip() != claim["unit"]:
                problems.append(
                    f"{where} unit: {rec['unit']!r}, but claim {claim['claim_id']} is in "
                    f"{claim['unit']!r}"
                )
            numbers: dict[str, float | None] = {}
            for column in ("value", "low", "high"):
                try:
                    numbers[column] = parse_number(rec[column])
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
                problems.append(f"{where} low: {fmt(low)} > high {fmt(high)}")
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
