"""Response lengths recorded by real RL training runs (PolyTrace folders), read and fitted.

A *workload folder* holds one JSON-lines file per training step, plain (``.jsonl``) or
gzip-compressed (``.jsonl.gz``), in one of two formats (PolyTrace's README,
``shared/traces/polytrace/README.md``):

* ``packed_lengths_step_<N>``: one prompt per line, ``output`` = the token lengths of its
  sampled responses (the cap is not recorded: ``--cap``, or inferred, see
  :func:`infer_cap`);
* ``multiturn_workload_step_<N>``: one trajectory per line, ``final_response_len`` (the
  response the trainer sees: generated turns plus appended tool output),
  ``max_response_len`` (the cap), ``turn_count`` and ``tool_calls[].latency_s``.

Rows with ``validate: true`` are validation samples and are skipped. Other files of the
folder (DAPO's ``dapo_filter_indices``, DeepCoder's ``reward_timings_step_*``) are not
response lengths and are listed as ignored. :func:`read_lengths` reads a workload folder,
or every workload folder below a folder, and reports every defect as a located
:class:`rollmux.errors.Problem` (the first of each file, with a count of the rest).
:func:`step_table` gives one row per training step and :func:`fit_table` the fit of the
length model per workload (docs/stochastic.md, section 8).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from numpy.typing import NDArray
from scipy import optimize, special

from rollmux.errors import ANY_COLUMN, HEADER_ROW, InputFileError, Problem, shorten
from rollmux.io import InputPathError, open_input

__all__ = [
    "FIT_COLUMNS",
    "FORMATS",
    "STEP_COLUMNS",
    "LengthFit",
    "LengthsError",
    "StepLengths",
    "Workload",
    "fit_lengths",
    "fit_table",
    "infer_cap",
    "read_lengths",
    "read_workload",
    "step_table",
    "workload_folders",
]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: File-name patterns of the two formats (step number in group 1).
FORMATS: dict[str, re.Pattern[str]] = {
    "packed": re.compile(r"^packed_lengths_step_(\d+)\.jsonl(?:\.gz)?$"),
    "multiturn": re.compile(r"^multiturn_workload_step_(\d+)\.jsonl(?:\.gz)?$"),
}
#: Percentiles of the step table (numpy's default, linear interpolation).
PERCENTILES = (50, 90, 99)
#: Columns of :func:`step_table` (the multi-turn ones are empty for packed workloads).
STEP_COLUMNS: tuple[str, ...] = (
    "workload", "format", "step", "responses", "partial", "mean", "p50", "p90", "p99", "max",
    "max_over_mean", "cap", "at_cap", "turns_mean", "turns_max", "tool_calls",
    "tool_latency_mean_s", "tool_latency_p99_s", "tool_latency_max_s",
)
#: Columns of :func:`fit_table`.
FIT_COLUMNS: tuple[str, ...] = (
    "workload", "format", "steps", "responses", "cap", "cap_source", "mean",
    "mean_over_cap", "log_sd", "mu", "sigma", "median", "mass_at_cap", "observed_at_cap",
    "ks", "ks_5pct", "ours_sigma", "ours_mean_over_cap", "ours_ks", "ours_sigma_mu",
    "ours_sigma_ks",
)
#: A step with fewer responses than this fraction of the workload's median step is partial
#: (a run stopped while logging it): listed, but left out of the fit and of replays.
PARTIAL_FRACTION = 0.5
#: Asymptotic 5% critical value of the one-sample KS statistic, times sqrt(n).
KS_5PCT = 1.358
#: Fewest responses exactly at the observed maximum for it to be taken as the cap.
CAP_TIES = 2
#: Largest token count accepted in a record (no model generates near a billion tokens).
TOKENS_MAX = 10**9


class LengthsError(InputFileError):
    """A PolyTrace folder failed validation; ``problems`` holds every defect, located."""


@dataclass(frozen=True)
class StepLengths:
    """The training responses of one step: lengths (tokens) and, multi-turn, turns/tools."""

    step: int
    lengths: IntArray
    caps: IntArray | None = None
    turns: IntArray | None = None
    tool_latency_s: FloatArray | None = None


@dataclass(frozen=True)
class Workload:
    """One workload folder: its steps (ordered), cap and what was skipped."""

    name: str
    folder: Path
    format: str
    steps: tuple[StepLengths, ...]
    cap: float | None
    cap_source: str
    validation_rows: int = 0
    ignored_files: tuple[str, ...] = field(default=())

    def partial(self, step: StepLengths) -> bool:
        """Whether ``step`` has fewer than :data:`PARTIAL_FRACTION` of the median step's
        responses."""
        median = float(np.median([s.lengths.size for s in self.steps]))
        return step.lengths.size < PARTIAL_FRACTION * median

    def full_steps(self) -> tuple[StepLengths, ...]:
        """The steps that are not partial (those the fit and the replays use)."""
        return tuple(s for s in self.steps if not self.partial(s))

    def all_lengths(self) -> IntArray:
        """Every training response of every full step, in step order."""
        steps = self.full_steps()
        if not steps:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([s.lengths for s in steps])


# --------------------------------------------------------------------------- discovery


def _step_files(folder: Path) -> dict[str, list[tuple[int, Path]]]:
    """The step files of ``folder`` per format, by step number."""
    found: dict[str, list[tuple[int, Path]]] = {}
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for entry in entries:
        for kind, pattern in FORMATS.items():
            match = pattern.match(entry.name)
            if match and entry.is_file():
                found.setdefault(kind, []).append((int(match.group(1)), entry))
    return found


def workload_folders(path: Path) -> list[Path]:
    """``path`` if it holds step files, else every folder below it that does (sorted)."""
    if _step_files(path):
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_dir() and _step_files(p))


def _workload_name(folder: Path) -> str:
    """The name of the PolyTrace config whose ``workload_path`` ends with this folder, else
    ``<repo>/<folder>`` (the folder above ``profile``), else the folder's name."""
    folder = folder.resolve()
    for root in folder.parents:
        configs = root / "configs"
        if not configs.is_dir():
            continue
        rel = folder.relative_to(root).as_posix()
        for config in sorted(configs.glob("*.yaml")):
            try:
                data = yaml.safe_load(config.read_text(encoding="utf-8"))
            except (OSError, ValueError, yaml.YAMLError):  # not our input: skip it
                continue
            path = data.get("workload_path") if isinstance(data, dict) else None
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(path, str) and isinstance(name, str) and (
                    path.rstrip("/").endswith("/" + rel) or path.rstrip("/") == rel):
                return name
    parts = folder.parts
    if "profile" in parts:
        i = len(parts) - 1 - parts[::-1].index("profile")
        if i > 0:
            return f"{parts[i - 1]}/{folder.name}"
    return folder.name


# --------------------------------------------------------------------------- reading


class _FileProblems:
    """The first problem of one file and how many more bad lines it has."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.first: Problem | None = None
        self.lines: set[int] = set()

    def add(self, line: int, column: str, message: str) -> None:
        """Record a defect at ``line`` (1-based; 0: the file as a whole)."""
        if self.first is None:
            self.first = Problem(self.name, line, line if line else HEADER_ROW, column,
                                 message)
        self.lines.add(line)

    def problem(self) -> Problem | None:
        """The file's one problem line (None: the file is clean)."""
        if self.first is None:
            return None
        more = len(self.lines) - 1
        if more <= 0:
            return self.first
        p = self.first
        return Problem(p.file, p.line, p.row, p.column,
                       f"{p.message} (and {more} more bad line(s) in this file)")


def _lines(path: Path, bad: _FileProblems) -> Iterator[tuple[int, str]]:
    """(line number, text) of a plain or gzip JSON-lines file; read errors become problems."""
    number = 0
    try:
        with open_input(path) as raw_handle, (
                gzip.GzipFile(fileobj=raw_handle) if path.name.endswith(".gz")
                else raw_handle) as handle:
            for raw in handle:
                number += 1
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError:
                    bad.add(number, ANY_COLUMN, "not UTF-8 text")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        bad.add(number + 1 if number else 0, ANY_COLUMN,
                f"not a readable gzip file ({type(exc).__name__}: {shorten(str(exc))})")
    except InputPathError as exc:  # a FIFO or a device named like a lengths file
        bad.add(0, ANY_COLUMN, exc.reason)
    except OSError as exc:
        bad.add(0, ANY_COLUMN, f"cannot read: {exc.strerror or exc}")


def _integer(value: object) -> int | None:
    """``value`` as a non-negative integer token count (None if it is not one)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= TOKENS_MAX:
        return value
    return None


def _records(path: Path, bad: _FileProblems) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) of each non-blank line; non-objects and bad JSON become problems."""
    for number, text in _lines(path, bad):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            bad.add(number, ANY_COLUMN, f"not valid JSON ({reason})")
            continue
        if not isinstance(record, dict):
            bad.add(number, ANY_COLUMN, f"expected a JSON object, got {type(record).__name__}")
            continue
        yield number, record


def _common(record: dict[str, Any], number: int, step: int, bad: _FileProblems) -> bool | None:
    """Whether the record is a validation row (None: the record is bad)."""
    validate = record.get("validate", False)
    if not isinstance(validate, bool):
        bad.add(number, "validate", f"expected true or false, got {shorten(repr(validate))}")
        return None
    got = record.get("step")
    if "step" not in record:
        bad.add(number, "step", "missing")
        return None
    if _integer(got) != step:
        bad.add(number, "step", f"{shorten(repr(got))} in the file of step {step}")
        return None
    return validate


def _read_packed(path: Path, step: int, cap: float | None, bad: _FileProblems
                 ) -> tuple[StepLengths, int]:
    """One packed step: every training response's length, and the validation rows."""
    lengths: list[int] = []
    skipped = 0
    for number, record in _records(path, bad):
        validate = _common(record, number, step, bad)
        if validate is None:
            continue
        output = record.get("output")
        if not isinstance(output, list) or not output:
            bad.add(number, "output", "expected a non-empty list of token counts"
                    if "output" in record else "missing")
            continue
        values = [_integer(v) for v in output]
        if any(v is None for v in values):
            first = next(v for v, w in zip(output, values, strict=True) if w is None)
            bad.add(number, "output", f"{shorten(repr(first))} is not a token count "
                    f"(an integer from 0 to {TOKENS_MAX})")
            continue
        counts = [int(v) for v in values if v is not None]
        if cap is not None and max(counts) > cap:
            bad.add(number, "output", f"{max(counts)} tokens exceed the cap {cap:g} (--cap)")
            continue
        if validate:
            skipped += 1
        else:
            lengths.extend(counts)
    return StepLengths(step, np.asarray(lengths, dtype=np.int64)), skipped


def _read_multiturn(path: Path, step: int, bad: _FileProblems) -> tuple[StepLengths, int]:
    """One multi-turn step: each training trajectory's response length, cap, turns, tools."""
    lengths: list[int] = []
    caps: list[int] = []
    turns: list[int] = []
    latency: list[float] = []
    skipped = 0
    for number, record in _records(path, bad):
        validate = _common(record, number, step, bad)
        if validate is None:
            continue
        values = {}
        for name in ("final_response_len", "max_response_len"):
            value = _integer(record.get(name))
            if value is None:
                bad.add(number, name, "missing" if name not in record else
                        f"{shorten(repr(record.get(name)))} is not a token count")
                break
            values[name] = value
        else:
            if values["max_response_len"] < 1:
                bad.add(number, "max_response_len", "must be at least 1 token")
                continue
            if values["final_response_len"] > values["max_response_len"]:
                bad.add(number, "final_response_len",
                        f"{values['final_response_len']} exceeds max_response_len "
                        f"{values['max_response_len']}")
                continue
            count = record.get("turn_count")
            if count is None and isinstance(record.get("turns"), list):
                count = len(record["turns"])
            n_turns = _integer(count)
            if n_turns is None:
                bad.add(number, "turn_count", "missing" if count is None else
                        f"{shorten(repr(count))} is not a count")
                continue
            calls = record.get("tool_calls", [])
            if not isinstance(calls, list):
                bad.add(number, "tool_calls", "expected a list")
                continue
            seconds: list[float] = []
            for call in calls:
                value = call.get("latency_s") if isinstance(call, dict) else None
                if isinstance(value, bool) or not isinstance(value, int | float) or not (
                        math.isfinite(value) and value >= 0):
                    bad.add(number, "tool_calls.latency_s",
                            f"{shorten(repr(value))} is not a duration in seconds")
                    break
                seconds.append(float(value))
            else:
                if validate:
                    skipped += 1
                    continue
                lengths.append(values["final_response_len"])
                caps.append(values["max_response_len"])
                turns.append(n_turns)
                latency.extend(seconds)
    return StepLengths(step, np.asarray(lengths, dtype=np.int64),
                       caps=np.asarray(caps, dtype=np.int64),
                       turns=np.asarray(turns, dtype=np.int64),
                       tool_latency_s=np.asarray(latency, dtype=float)), skipped


def infer_cap(lengths: IntArray) -> float | None:
    """The cap of packed lengths: their maximum if at least :data:`CAP_TIES` responses
    reach it exactly (responses cut at a limit pile up there), else None (unknown)."""
    if lengths.size == 0:
        return None
    top = int(lengths.max())
    return float(top) if top > 0 and int((lengths == top).sum()) >= CAP_TIES else None


def read_workload(folder: Path, cap: float | None = None) -> Workload:
    """Read one workload folder (LengthsError lists every bad file, one line each).

    ``cap`` (tokens) is the response cap of a packed workload, whose records do not carry
    it; None infers it (:func:`infer_cap`). Multi-turn records carry their own cap.
    """
    return _read(folder, cap)[0]


def _read(folder: Path, cap: float | None) -> tuple[Workload, list[Problem]]:
    """A workload and the problems of its files."""
    files = _step_files(folder)
    problems: list[Problem] = []
    name = _workload_name(folder)
    if len(files) > 1:
        problems.append(Problem(str(folder), 0, HEADER_ROW, ANY_COLUMN,
                                "holds step files of both formats (" + ", ".join(sorted(files))
                                + "); one workload folder has one format"))
    kind = sorted(files)[0]
    steps: list[StepLengths] = []
    skipped = 0
    seen: dict[int, Path] = {}
    for step, path in sorted(files[kind]):
        bad = _FileProblems(str(path))
        if step in seen:
            bad.add(0, ANY_COLUMN, f"step {step} is also in {seen[step].name}")
        else:
            seen[step] = path
            if kind == "packed":
                result, rows = _read_packed(path, step, cap, bad)
            else:
                result, rows = _read_multiturn(path, step, bad)
            skipped += rows
            if result.lengths.size:
                steps.append(result)
        problem = bad.problem()
        if problem is not None:
            problems.append(problem)
    stepped = {p.name for _, p in files[kind]}
    ignored = tuple(sorted(p.name for p in folder.iterdir()
                           if p.is_file() and p.name not in stepped)) if folder.is_dir() else ()
    lengths = np.concatenate([s.lengths for s in steps]) if steps else np.zeros(0, np.int64)
    if kind == "multiturn":
        all_caps = [int(s.caps.max()) for s in steps if s.caps is not None and s.caps.size]
        found, source = (float(max(all_caps)), "records") if all_caps else (None, "unknown")
    elif cap is not None:
        found, source = float(cap), "option"
    else:
        found = infer_cap(lengths)
        source = "inferred" if found is not None else "unknown"
    return Workload(name, folder, kind, tuple(steps), found, source, skipped, ignored), problems


def read_lengths(path: str | Path, cap: float | None = None) -> list[Workload]:
    """Every workload under ``path`` (a workload folder or a folder above several).

    Raises :class:`LengthsError` with one located problem per bad file (and one for a
    folder that holds no step file), never a partial result.
    """
    root = Path(path)
    if not root.is_dir():
        raise LengthsError([Problem(str(root), 0, HEADER_ROW, ANY_COLUMN,
                                    "not a folder" if root.exists() else "no such folder")])
    folders = workload_folders(root)
    if not folders:
        patterns = " or ".join(f"{p.pattern[1:-1]}" for p in FORMATS.values())
        raise LengthsError([Problem(str(root), 0, HEADER_ROW, ANY_COLUMN,
                                    "no PolyTrace step files here or below (file names "
                                    f"matching {patterns})")])
    workloads: list[Workload] = []
    problems: list[Problem] = []
    for folder in folders:
        workload, found = _read(folder, cap)
        problems += found
        workloads.append(workload)
    if not problems:
        for workload in workloads:
            if not workload.steps:
                problems.append(Problem(str(workload.folder), 0, HEADER_ROW, ANY_COLUMN,
                                        "no training responses in any step file"))
    if problems:
        raise LengthsError(problems)
    return workloads


# --------------------------------------------------------------------------- statistics


def _percentiles(values: NDArray[Any]) -> list[float]:
    """The :data:`PERCENTILES` of ``values`` (numpy's linear interpolation)."""
    return [float(v) for v in np.percentile(values, PERCENTILES)]


def step_table(workloads: list[Workload]) -> pd.DataFrame:
    """One row per training step (columns :data:`STEP_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for w in workloads:
        for s in w.steps:
            x = s.lengths
            mean = float(x.mean())
            cap = float(s.caps.max()) if s.caps is not None and s.caps.size else w.cap
            if s.caps is not None and s.caps.size:
                at_cap: float = float((x >= s.caps).sum())
            else:
                at_cap = float((x >= cap).sum()) if cap is not None else math.nan
            p50, p90, p99 = _percentiles(x)
            row: dict[str, Any] = {
                "workload": w.name, "format": w.format, "step": s.step,
                "responses": int(x.size), "partial": w.partial(s), "mean": mean,
                "p50": p50, "p90": p90, "p99": p99, "max": int(x.max()),
                "max_over_mean": float(x.max()) / mean if mean > 0 else math.nan,
                "cap": math.nan if cap is None else cap, "at_cap": at_cap,
            }
            if s.turns is not None:
                lat = s.tool_latency_s if s.tool_latency_s is not None else np.zeros(0)
                row.update({
                    "turns_mean": float(s.turns.mean()), "turns_max": int(s.turns.max()),
                    "tool_calls": int(lat.size),
                    "tool_latency_mean_s": float(lat.mean()) if lat.size else math.nan,
                    "tool_latency_p99_s": _percentiles(lat)[2] if lat.size else math.nan,
                    "tool_latency_max_s": float(lat.max()) if lat.size else math.nan,
                })
            rows.append(row)
    return pd.DataFrame(rows, columns=list(STEP_COLUMNS))


@dataclass(frozen=True)
class LengthFit:
    """A lognormal fitted to lengths censored at the cap (docs/stochastic.md, eq. P1-P3)."""

    mu: float
    sigma: float
    mass_at_cap: float
    observed_at_cap: float
    ks: float


def _log_lengths(x: NDArray[Any]) -> FloatArray:
    """log(max(x, 1)): a zero-token response counts as one token (our model's floor)."""
    return np.log(np.maximum(np.asarray(x, dtype=float), 1.0))


def _ks(x: NDArray[Any], cdf: Any, cap: float | None) -> float:
    """Largest gap between the empirical CDF of ``x`` and ``cdf`` below the cap (and just
    below it, where a censored model jumps to 1)."""
    values = np.sort(np.maximum(np.asarray(x, dtype=float), 1.0))
    n = values.size
    below = values if cap is None else values[values < cap]
    if below.size == 0:
        gap = 0.0
    else:
        points = np.unique(below)
        model = cdf(points)
        right = np.searchsorted(values, points, side="right") / n
        left = np.searchsorted(values, points, side="left") / n
        gap = float(max(np.max(np.abs(right - model)), np.max(np.abs(left - model))))
    if cap is not None:
        gap = max(gap, abs(below.size / n - float(cdf(np.array([cap]))[0])))
    return gap


def fit_lengths(x: NDArray[Any], cap: float | None) -> LengthFit:
    """Maximum-likelihood lognormal of ``x``, responses at the cap right-censored (P1)."""
    logs = _log_lengths(x)
    censored = np.zeros(logs.size, dtype=bool) if cap is None else np.asarray(x) >= cap
    free = logs[~censored]
    mu, sigma = float(free.mean()), float(max(free.std(), 1e-6))
    k = int(censored.sum())
    if cap is not None and k and free.size:
        log_cap = math.log(cap)

        def negative(theta: FloatArray) -> float:
            """Negative censored log-likelihood at (mu, log sigma)."""
            m, s = float(theta[0]), math.exp(float(theta[1]))
            z = (free - m) / s
            tail = special.log_ndtr(-(log_cap - m) / s)
            return -float(np.sum(-0.5 * z * z - math.log(s)) + k * tail)

        best = optimize.minimize(negative, np.array([mu, math.log(sigma)]),
                                 method="Nelder-Mead",
                                 options={"xatol": 1e-9, "fatol": 1e-9, "maxiter": 4000})
        mu, sigma = float(best.x[0]), math.exp(float(best.x[1]))
    mass = math.nan if cap is None else float(special.ndtr(-(math.log(cap) - mu) / sigma))
    observed = math.nan if cap is None else k / logs.size

    def cdf(v: FloatArray) -> FloatArray:
        """The censored lognormal's CDF below the cap."""
        return np.asarray(special.ndtr((np.log(v) - mu) / sigma), dtype=float)

    return LengthFit(mu, sigma, mass, observed, _ks(x, cdf, cap))


def _truncated_cdf(mu: float, sigma: float, cap: float) -> Any:
    """CDF of a lognormal truncated to [1, cap] (our model, docs/stochastic.md L1)."""
    a, b = (0.0 - mu) / sigma, (math.log(cap) - mu) / sigma
    lo, hi = float(special.ndtr(a)), float(special.ndtr(b))

    def cdf(v: FloatArray) -> FloatArray:
        """P(L <= v)."""
        z = np.clip((np.log(v) - mu) / sigma, a, b)
        return np.asarray((special.ndtr(z) - lo) / (hi - lo), dtype=float)

    return cdf


def fit_table(workloads: list[Workload], sigma: float, mean_fraction: float) -> pd.DataFrame:
    """The fit of the length model per workload (columns :data:`FIT_COLUMNS`).

    ``sigma`` and ``mean_fraction`` are our estimates (``workload.response_len_sigma``,
    ``workload.mean_response_fraction``): ``ours_ks`` is the KS distance of our model
    (truncated at the cap, mean ``mean_fraction`` of it), ``ours_sigma_mu`` and
    ``ours_sigma_ks`` the best location at our shape and its distance.
    """
    from rollmux.jobs import ResponseLengthDist

    rows = []
    for w in workloads:
        x = w.all_lengths()
        fit = fit_lengths(x, w.cap)
        logs = _log_lengths(x)
        ours_ks = math.nan
        if w.cap is not None and 1.0 < mean_fraction * w.cap < w.cap:
            dist = ResponseLengthDist(max_tokens=w.cap, mean_tokens=mean_fraction * w.cap,
                                      sigma=sigma)
            ours_ks = _ks(x, _truncated_cdf(dist.mu, sigma, w.cap), None)
        at_sigma = _best_location(x, w.cap, sigma)
        mean = float(x.mean())
        rows.append({
            "workload": w.name, "format": w.format, "steps": len(w.full_steps()),
            "responses": int(x.size), "cap": math.nan if w.cap is None else w.cap,
            "cap_source": w.cap_source, "mean": mean,
            "mean_over_cap": math.nan if w.cap is None else mean / w.cap,
            "log_sd": float(logs.std()), "mu": fit.mu, "sigma": fit.sigma,
            "median": math.exp(fit.mu), "mass_at_cap": fit.mass_at_cap,
            "observed_at_cap": fit.observed_at_cap, "ks": fit.ks,
            "ks_5pct": KS_5PCT / math.sqrt(x.size), "ours_sigma": sigma,
            "ours_mean_over_cap": mean_fraction, "ours_ks": ours_ks,
            "ours_sigma_mu": at_sigma[0], "ours_sigma_ks": at_sigma[1],
        })
    return pd.DataFrame(rows, columns=list(FIT_COLUMNS))


def _best_location(x: NDArray[Any], cap: float | None, sigma: float) -> tuple[float, float]:
    """The censored-likelihood location at a fixed shape, and its KS distance."""
    logs = _log_lengths(x)
    censored = np.zeros(logs.size, dtype=bool) if cap is None else np.asarray(x) >= cap
    free, k = logs[~censored], int(censored.sum())
    if cap is None or not k:
        mu = float(logs.mean())
    else:
        log_cap = math.log(cap)

        def negative(m: float) -> float:
            """Negative censored log-likelihood at location ``m``."""
            z = (free - m) / sigma
            return -float(np.sum(-0.5 * z * z) + k * special.log_ndtr(-(log_cap - m) / sigma))

        lo, hi = float(logs.min()) - 5 * sigma, log_cap + 5 * sigma
        mu = float(optimize.minimize_scalar(negative, bounds=(lo, hi), method="bounded",
                                            options={"xatol": 1e-9}).x)

    def cdf(v: FloatArray) -> FloatArray:
        """The censored lognormal's CDF below the cap."""
        return np.asarray(special.ndtr((np.log(v) - mu) / sigma), dtype=float)

    return mu, _ks(x, cdf, cap)
