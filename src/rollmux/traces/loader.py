"""Read and validate trace files; every defect becomes a located Problem.

Writing traces: :mod:`rollmux.traces.writer`.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.errors import clip, echo
from rollmux.jobs import PHASE_TIME_FIELDS
from rollmux.traces.errors import ANY_COLUMN, HEADER_ROW, Problem, TraceError
from rollmux.traces.hwview import HardwareView, hardware_view
from rollmux.traces.schema import (
    SUPPORTED_VERSIONS,
    ColumnSpec,
    TraceSchema,
    bound_text,
    load_schema,
)

_VERSION_RE = re.compile(r"^#\s*schema_version\s*:\s*(\S+)\s*$")
# A NaN or infinity literal at the start of a cell: such files take the exact path.
_NAN_INF_RE = re.compile(r"(?:^|,)\s*[+-]?(?:nan|inf)", re.IGNORECASE | re.MULTILINE)
_PARQUET_SUFFIXES = (".parquet", ".pq")
# C0 and C1 control characters and DEL: never part of an id or a label (a NUL in a job
# id, an escape sequence in a workload name).
_CONTROL_RE = "[\x00-\x1f\x7f-\x9f]"
# C0 controls (but tab) and DEL beside non-UTF-8 bytes in a header (or a NUL, or two
# garbled columns): a binary file, not a CSV with a bad column name.
_BINARY_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
#: Permissions of written traces (mkstemp would leave them owner-only).
FILE_MODE = 0o644
#: Longest text cell (a job id, a GPU type, a workload name): a longer one is a broken
#: file (a whole file in one cell), never a name.
TEXT_MAX = 256
# Integers beyond this lose exactness as floats; no sensible trace value comes near it.
_INT_LIMIT = 2**53
# The csv module's default limit (128 KiB per field) is a fine guard; keep it explicit.
csv.field_size_limit(1 << 17)


@dataclasses.dataclass(slots=True)
class _Table:
    """Raw cells of a trace: header, rows of strings, and each row's line and row number."""

    header: list[str]
    rows: list[list[str]]
    lines: list[int]
    row_numbers: list[int]
    version: int
    header_line: int = 1
    clean_utf8: bool = False


def _read_bytes(path: Path, problems: list[Problem]) -> bytes | None:
    """The file's bytes, or None with a problem recorded."""
    from rollmux.io import InputPathError, read_input_bytes

    try:
        return read_input_bytes(path)
    except InputPathError as exc:  # a FIFO, a device, a folder: refused, never read
        problems.append(Problem(str(path), 0, HEADER_ROW, ANY_COLUMN, exc.reason))
    except FileNotFoundError:
        problems.append(Problem(str(path), 0, HEADER_ROW, ANY_COLUMN, "file not found"))
    except IsADirectoryError:
        problems.append(Problem(str(path), 0, HEADER_ROW, ANY_COLUMN, "is a directory"))
    except OSError as exc:
        problems.append(
            Problem(str(path), 0, HEADER_ROW, ANY_COLUMN, f"cannot read: {exc.strerror}")
        )
    return None


def _parse_version(comment: str, name: str, line: int, problems: list[Problem]) -> int | None:
    """The schema version a `# schema_version: N` comment declares (None if not such a line)."""
    match = _VERSION_RE.match(comment.strip())
    if not match:
        return None
    text = match.group(1)
    if not text.isdigit() or int(text) not in SUPPORTED_VERSIONS:
        supported = ", ".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
        problems.append(
            Problem(
                name,
                line,
                HEADER_ROW,
                "schema_version",
                f"unsupported schema_version {echo(text)} (this loader reads {supported})",
            )
        )
        return -1
    return int(text)


def _parse_csv(raw: bytes, name: str, problems: list[Problem]) -> _Table | None:
    """Split CSV bytes into header and rows, recording encoding and shape problems."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        problems.append(Problem(name, 1, HEADER_ROW, ANY_COLUMN, "empty file (no header, no rows)"))
        return None
    # surrogateescape keeps undecodable bytes as lone surrogates, so they can be traced
    # to the exact cell that holds them instead of failing the whole file.
    try:
        text = raw.decode("utf-8")
        clean_utf8 = True
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="surrogateescape")
        clean_utf8 = False
    version = max(SUPPORTED_VERSIONS)
    offset = 0
    line_no = 0
    while offset < len(text) and text[offset] == "#":
        end = text.find("\n", offset)
        end = len(text) if end < 0 else end + 1
        line_no += 1
        declared = _parse_version(text[offset:end], name, line_no, problems)
        if declared is not None:
            if declared < 0:
                return None
            version = declared
        offset = end
    body = text[offset:]
    reader = csv.reader(io.StringIO(body, newline=""))
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    row_numbers: list[int] = []
    previous_end = 0
    row_no = 0
    try:
        for record in reader:
            start_line = line_no + previous_end + 1
            previous_end = reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue  # blank line
            if header is None:
                header = record
                header_line = start_line
                continue
            row_no += 1
            rows.append(record)
            lines.append(start_line)
            row_numbers.append(row_no)
    except csv.Error as exc:
        problems.append(
            Problem(
                name, line_no + previous_end + 1, row_no + 1, ANY_COLUMN, f"malformed CSV: {exc}"
            )
        )
        return None
    if header is None:
        problems.append(Problem(name, line_no + 1, HEADER_ROW, ANY_COLUMN, "no header line"))
        return None
    header = [h.strip() for h in header]
    garbled = [column for column in header if _has_surrogate(column)]
    if (len(garbled) > 1 or any(_BINARY_RE.search(column) for column in garbled)
            or any("\x00" in column for column in header)):
        # Not a text CSV at all (a binary file, a compressed trace): one line, not one per
        # garbled column name.
        problems.append(Problem(name, header_line, HEADER_ROW, ANY_COLUMN,
                                "not a CSV trace: the header line holds binary data "
                                "(non-UTF-8 bytes or control characters)"))
        return None
    for position, column in enumerate(header):
        if _has_surrogate(column):
            problems.append(
                Problem(
                    name, header_line, HEADER_ROW, f"#{position + 1}", "non-UTF-8 bytes in header"
                )
            )
    if not rows:
        problems.append(
            Problem(
                name, header_line, HEADER_ROW, ANY_COLUMN, "empty trace (a header but no job rows)"
            )
        )
        return None
    return _Table(header, rows, lines, row_numbers, version, header_line, clean_utf8)


def _has_surrogate(text: str) -> bool:
    """True if decoding left lone surrogates (i.e. the bytes were not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _read_parquet(path: Path, problems: list[Problem]) -> _Table | None:
    """Read a Parquet trace into string cells (needs pyarrow)."""
    name = str(path)
    try:
        import pyarrow.parquet as pq  # noqa: F401  (optional dependency)
    except ImportError:
        problems.append(
            Problem(
                name,
                0,
                HEADER_ROW,
                ANY_COLUMN,
                "reading Parquet needs pyarrow, which is not installed; "
                "install pyarrow or convert the trace to CSV",
            )
        )
        return None
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types; all mean "unreadable"
        problems.append(Problem(name, 0, HEADER_ROW, ANY_COLUMN, f"unreadable Parquet: {exc}"))
        return None
    if frame.empty:
        problems.append(Problem(name, 0, HEADER_ROW, ANY_COLUMN, "empty trace (no job rows)"))
        return None
    header = [str(c).strip() for c in frame.columns]
    cells = frame.astype(object).where(frame.notna(), "")
    rows = [[_cell_text(v) for v in record] for record in cells.itertuples(index=False)]
    numbers = list(range(1, len(rows) + 1))
    return _Table(header, rows, numbers, numbers, max(SUPPORTED_VERSIONS))


def _cell_text(value: object) -> str:
    """A Parquet cell as the text a CSV would hold."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _check_header(table: _Table, schema: TraceSchema, name: str, problems: list[Problem]) -> bool:
    """Check the header for duplicate, unknown and missing columns; True if usable."""
    usable = True
    seen: set[str] = set()
    for column in table.header:
        if column in seen:
            problems.append(
                Problem(
                    name, table.header_line, HEADER_ROW, column or "''", "column appears twice"
                )
            )
            usable = False
        seen.add(column)
        if column not in schema.names and not column.startswith("#"):
            hint = difflib.get_close_matches(column, schema.names, n=1)
            extra = f" (did you mean {echo(hint[0])}?)" if hint else ""
            problems.append(
                Problem(
                    name, table.header_line, HEADER_ROW, column or "''", f"unknown column{extra}"
                )
            )
            usable = False
    for column in schema.required:
        if column not in seen:
            problems.append(
                Problem(name, table.header_line, HEADER_ROW, column, "required column is missing")
            )
            usable = False
    return usable


def _shape_rows(table: _Table, name: str, problems: list[Problem]) -> np.ndarray:
    """Boolean mask of rows whose field count matches the header; report the others."""
    width = len(table.header)
    ok = np.ones(len(table.rows), dtype=bool)
    for index, record in enumerate(table.rows):
        if len(record) != width:
            kind = "truncated row" if len(record) < width else "row has extra fields"
            problems.append(
                Problem(
                    name,
                    table.lines[index],
                    table.row_numbers[index],
                    table.header[min(len(record), width - 1)]
                    if len(record) < width
                    else ANY_COLUMN,
                    f"{kind}: expected {width} fields, found {len(record)}",
                )
            )
            ok[index] = False
    return ok


def _unit(spec: ColumnSpec) -> str:
    """' unit' for messages, empty for dimensionless columns."""
    return "" if spec.unit in ("-", "x") else f" {spec.unit}"


def _column_values(
    spec: ColumnSpec,
    cells: pd.Series,
    table: _Table,
    index: np.ndarray,
    name: str,
    problems: list[Problem],
    check_bytes: bool = True,
) -> tuple[pd.Series, np.ndarray]:
    """Typed values of one column and a mask of rows whose cell is valid."""

    def report(mask: np.ndarray, message: Any) -> None:
        """Record a problem for each masked row (message: text or row -> text)."""
        for i in np.flatnonzero(mask):
            row = index[i]
            text = message(i) if callable(message) else message
            problems.append(
                Problem(name, table.lines[row], table.row_numbers[row], spec.name, text)
            )

    if cells.dtype != object:
        # Fast path: the column was parsed as float by pandas (see _fast_table); an empty
        # cell is NaN, and literal NaN/inf text was excluded before parsing.
        number_array = cells.to_numpy(dtype=float)
        empty = np.isnan(number_array)
        valid = np.ones(len(cells), dtype=bool)
        if spec.required:
            report(empty, "missing value (column is required)")
            valid &= ~empty
        numbers = cells.astype(float)

        def text(i: int) -> str:
            """The cell as text (only built for messages)."""
            return clip(repr(float(number_array[i])))

        present = ~empty
    else:
        stripped = cells.str.strip()
        valid = np.ones(len(cells), dtype=bool)
        if check_bytes:
            bad_bytes = np.fromiter(
                (_has_surrogate(v) for v in stripped), dtype=bool, count=len(stripped)
            )
            report(bad_bytes, "non-UTF-8 bytes in cell")
            valid &= ~bad_bytes
        empty = (stripped == "").to_numpy()
        if spec.required:
            report(empty & valid, "missing value (column is required)")
            valid &= ~empty
        if spec.type == "str":
            controls = (stripped.str.contains(_CONTROL_RE, regex=True) & valid).to_numpy()
            report(controls, lambda i: f"control characters are not allowed: "
                   f"{echo(stripped.iloc[i])}")
            valid &= ~controls
            lengths = stripped.str.len().to_numpy()
            too_long = valid & (lengths > TEXT_MAX)
            report(too_long, lambda i: f"text of {int(lengths[i]):,} characters is longer than "
                   f"{TEXT_MAX}: {echo(stripped.iloc[i])}")
            valid &= ~too_long
            values = stripped.where(~empty, spec.default if spec.default is not None else "")
            return values, valid
        numbers = pd.to_numeric(stripped.where(~empty & valid, None), errors="coerce")
        numbers = numbers.astype(float)
        number_array = numbers.to_numpy()

        def text(i: int) -> str:
            """The cell as written."""
            return clip(str(stripped.iloc[i]))

        present = ~empty & valid
        lowered = stripped.str.lower()
        is_nan_text = lowered.isin(("nan", "+nan", "-nan")).to_numpy()
        unparsable = present & np.isnan(number_array) & ~is_nan_text
        report(unparsable, lambda i: f"not a number: {echo(stripped.iloc[i])} "
               f"({spec.type} expected)")
        report(present & is_nan_text, "NaN is not allowed")
        infinite = present & np.isinf(number_array)
        report(infinite, "value is not finite")
        valid &= ~(unparsable | (present & is_nan_text) | infinite)
    finite = present & valid
    # Bounds before integrality: a 20-digit integer is out of range, not "not an integer".
    if spec.gt is not None:
        low = finite & ~(number_array > spec.gt)
        report(low, lambda i: f"{text(i)} must be > {bound_text(spec.gt)}{_unit(spec)}")
        valid &= ~low
        finite &= ~low
    if spec.ge is not None:
        low = finite & ~(number_array >= spec.ge)
        report(low, lambda i: f"{text(i)} must be >= {bound_text(spec.ge)}{_unit(spec)}")
        valid &= ~low
        finite &= ~low
    upper = spec.le if spec.le is not None else (_INT_LIMIT - 1 if spec.type == "int" else None)
    if upper is not None:
        high = finite & ~(number_array <= upper)
        report(high, lambda i: f"{text(i)} is out of range: must be <= "
               f"{bound_text(upper)}{_unit(spec)}")
        valid &= ~high
        finite &= ~high
    if spec.type == "int":
        not_integral = finite & (np.floor(number_array) != number_array)
        report(not_integral, lambda i: f"not an integer: '{text(i)}'")
        valid &= ~not_integral
    if spec.default is not None:
        numbers = numbers.where(~empty, float(spec.default))
    return numbers, valid


def _check_hardware(
    spec: ColumnSpec,
    values: pd.Series,
    valid: np.ndarray,
    frame: pd.DataFrame,
    hw: HardwareView,
    table: _Table,
    index: np.ndarray,
    name: str,
    problems: list[Problem],
) -> np.ndarray:
    """Rules that need the hardware catalogue: GPU types, whole nodes, pool size, DRAM."""

    def report(mask: np.ndarray, message: Any) -> None:
        """Record a problem for each masked row (message: row -> text)."""
        for i in np.flatnonzero(mask):
            row = index[i]
            problems.append(
                Problem(name, table.lines[row], table.row_numbers[row], spec.name, message(i))
            )

    if spec.gpu_type:
        unknown = valid & ~values.isin(hw.gpu_types).to_numpy()
        known = ", ".join(sorted(hw.gpu_types))
        report(unknown, lambda i: f"unknown GPU type {echo(values.iloc[i])} (known: {known})")
        valid = valid & ~unknown
    if spec.node_multiple:
        counts = values.to_numpy()
        per_node = hw.gpus_per_node
        partial = valid & (np.mod(counts, per_node) != 0)
        report(
            partial,
            lambda i: f"{int(counts[i])} GPUs is not a whole number of {per_node}-GPU nodes",
        )
        type_column = spec.name.replace("_gpus", "_gpu_type")
        pool = (
            frame[type_column].map(hw.pool_gpus).to_numpy(dtype=float)
            if (type_column in frame)
            else np.full(len(counts), np.nan)
        )
        over = valid & ~partial & (counts > pool)
        report(
            over,
            lambda i: (
                f"{int(counts[i])} GPUs exceed the {frame[type_column].iloc[i]} pool "
                f"of {int(pool[i])} GPUs"
            ),
        )
        valid = valid & ~partial & ~over
    if spec.host_mem:
        numbers = values.to_numpy()
        over = valid & (numbers > hw.host_mem_gb)
        report(
            over,
            lambda i: f"{numbers[i]:g} GB exceeds a node's host DRAM of {hw.host_mem_gb:g} GB",
        )
        valid = valid & ~over
    return valid


def _build_frame(
    table: _Table,
    schema: TraceSchema,
    hw: HardwareView | None,
    name: str,
    problems: list[Problem],
    columns: dict[str, pd.Series] | None = None,
) -> pd.DataFrame:
    """Validate every cell of a table and return the typed frame of its valid rows.

    `columns` (fast path) supplies pre-parsed columns instead of the table's text rows.
    """
    if columns is None:
        shape_ok = _shape_rows(table, name, problems)
        index = np.flatnonzero(shape_ok)
        kept = [table.rows[i] for i in index]
        columns = {
            column: pd.Series([r[pos] for r in kept], dtype=object)
            for pos, column in enumerate(table.header)
        }
        n_rows = len(kept)
    else:
        n_rows = len(table.lines)
        index = np.arange(n_rows)
    row_valid = np.ones(n_rows, dtype=bool)
    column_valid: dict[str, np.ndarray] = {}
    typed: dict[str, pd.Series] = {}
    for spec in schema.columns:
        if spec.name in columns:
            values, valid = _column_values(
                spec, columns[spec.name], table, index, name, problems, not table.clean_utf8
            )
        else:
            fill: Any = (
                spec.default if spec.default is not None else ("" if spec.type == "str" else np.nan)
            )
            values = pd.Series([fill] * n_rows, dtype=object if spec.type == "str" else float)
            valid = np.ones(n_rows, dtype=bool)
        typed[spec.name] = values
        column_valid[spec.name] = valid
        row_valid &= valid
    frame = pd.DataFrame(typed)
    if hw is not None:
        # Hardware rules run on every cell that is itself well-formed (not only on rows
        # without other problems), so one pass reports everything wrong with a row.
        for spec in schema.columns:
            if spec.gpu_type:
                column_valid[spec.name] = _check_hardware(
                    spec,
                    frame[spec.name],
                    column_valid[spec.name],
                    frame,
                    hw,
                    table,
                    index,
                    name,
                    problems,
                )
        for spec in schema.columns:
            if spec.node_multiple or spec.host_mem:
                usable = column_valid[spec.name].copy()
                if spec.node_multiple:
                    usable &= column_valid[spec.name.replace("_gpus", "_gpu_type")]
                column_valid[spec.name] = (
                    _check_hardware(
                        spec, frame[spec.name], usable, frame, hw, table, index, name, problems
                    )
                    | ~usable & column_valid[spec.name]
                )
        for valid in column_valid.values():
            row_valid &= valid
    _check_unique(schema, frame, table, index, name, problems)
    _check_pairs(frame, row_valid, table, index, name, problems)
    frame = frame.loc[row_valid].reset_index(drop=True)
    frame["_line"] = [table.lines[i] for i in index[row_valid]]
    frame["_row"] = [table.row_numbers[i] for i in index[row_valid]]
    return frame


def _check_unique(
    schema: TraceSchema,
    frame: pd.DataFrame,
    table: _Table,
    index: np.ndarray,
    name: str,
    problems: list[Problem],
) -> None:
    """Report every repeat of a value in a unique column, naming the first occurrence."""
    for spec in schema.columns:
        if not spec.unique:
            continue
        values = frame[spec.name]
        repeated = values.duplicated(keep="first") & (values != "")
        if not repeated.any():
            continue
        first_row: dict[Any, int] = {}
        for i, value in enumerate(values):
            first_row.setdefault(value, table.row_numbers[index[i]])
        for repeat in np.flatnonzero(repeated.to_numpy()).tolist():
            row = int(index[repeat])
            problems.append(
                Problem(
                    name,
                    table.lines[row],
                    table.row_numbers[row],
                    spec.name,
                    f"duplicate id {echo(values.iloc[repeat])} "
                    f"(first used in row {first_row[values.iloc[repeat]]})",
                )
            )


_PAIRS = (
    ("rollout_s", "rollout_max_s", "worst-case rollout time is below the expected one"),
    ("train_s", "train_max_s", "worst-case training time is below the expected one"),
    ("mean_response_tokens", "max_response_tokens", "mean response length exceeds the maximum"),
    ("warm_switch_s", "cold_switch_s", "cold-start switch is faster than the warm one"),
)


def _check_pairs(
    frame: pd.DataFrame,
    row_valid: np.ndarray,
    table: _Table,
    index: np.ndarray,
    name: str,
    problems: list[Problem],
) -> None:
    """Cross-column rules: expected <= worst case, mean length <= max length."""
    for low, high, message in _PAIRS:
        a = frame[low].to_numpy(dtype=float)
        b = frame[high].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            bad = row_valid & (a > b)
        for i in np.flatnonzero(bad):
            row = index[i]
            problems.append(
                Problem(
                    name,
                    table.lines[row],
                    table.row_numbers[row],
                    high,
                    f"{message} ({low}={a[i]:g}, {high}={b[i]:g})",
                )
            )
        row_valid &= ~bad


def _finalise_dtypes(frame: pd.DataFrame, schema: TraceSchema) -> pd.DataFrame:
    """Give int columns an integer dtype (nullable where empty cells remain)."""
    for spec in schema.columns:
        if spec.type == "int":
            column = frame[spec.name]
            frame[spec.name] = column.astype("int64" if column.notna().all() else "Int64")
        elif spec.type == "str":
            frame[spec.name] = frame[spec.name].astype(object)
    return frame


def _fast_table(raw: bytes, schema: TraceSchema) -> tuple[_Table, dict[str, pd.Series]] | None:
    """Parse a plain CSV with pandas' C parser, or None when the exact path is needed.

    Only files with strict UTF-8, no quotes or carriage returns, no NaN/inf literals,
    a clean header and the same field count on every line qualify; anything else (and
    any problem found later) goes through the exact csv-module path, which locates
    every problem by line, row and column.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b'"' in raw or b"\r" in raw or b"\x00" in raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    first = 0
    version = max(SUPPORTED_VERSIONS)
    while first < len(lines) and lines[first].startswith("#"):
        match = _VERSION_RE.match(lines[first].strip())
        if match:
            if not match.group(1).isdigit() or int(match.group(1)) not in SUPPORTED_VERSIONS:
                return None
            version = int(match.group(1))
        first += 1
    body = [line for line in lines[first:] if line.strip()]
    if len(body) < 2:
        return None
    header = [h.strip() for h in body[0].split(",")]
    if (
        len(set(header)) != len(header)
        or not set(header) <= set(schema.names)
        or not set(schema.required) <= set(header)
    ):
        return None
    width = len(header) - 1
    if any(line.count(",") != width for line in body):
        return None
    joined = "\n".join(body[1:])
    lowered = joined.lower()
    if ("nan" in lowered or "inf" in lowered) and _NAN_INF_RE.search(joined):
        return None
    numeric = [c for c in header if schema.column(c).numeric]
    try:
        frame = pd.read_csv(
            io.StringIO(joined),
            header=None,
            names=header,
            dtype={c: (float if c in numeric else str) for c in header},
            keep_default_na=False,
            na_values={c: [""] for c in numeric},
            skip_blank_lines=False,
            engine="c",
        )
    except Exception:  # any parser complaint: the exact path will locate it
        return None
    if len(frame) != len(body) - 1:
        return None
    columns = {c: frame[c] if c in numeric else frame[c].astype(object) for c in header}
    numbers = list(range(1, len(frame) + 1))
    table = _Table(header, [], numbers, numbers, version, first + 1, True)
    return table, columns


def _validate_table(
    table: _Table,
    schema: TraceSchema,
    view: HardwareView | None,
    name: str,
    problems: list[Problem],
    columns: dict[str, pd.Series] | None = None,
) -> tuple[pd.DataFrame, list[Any]] | None:
    """Header, cells, hardware and RLJob checks of one table; None if problems were found."""
    if not _check_header(table, schema, name, problems):
        return None
    frame = _build_frame(table, schema, view, name, problems, columns)
    if problems:
        return None
    frame = _finalise_dtypes(frame, schema)
    jobs = _construct_jobs(frame, view, name, problems)
    if problems:
        return None
    frame = frame.drop(columns=["_line", "_row"])
    frame.attrs["schema_version"] = table.version
    frame.attrs["source"] = name
    return frame, jobs


def _validated(path: str | os.PathLike[str], hw: Any = None) -> tuple[pd.DataFrame, list[Any]]:
    """Shared body of read_trace_frame and load_trace: the typed frame and its jobs."""
    path = Path(path)
    name = str(path)
    schema = load_schema()
    problems: list[Problem] = []
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        table = _read_parquet(path, problems) if path.exists() else None
        if table is None and not problems:
            problems.append(Problem(name, 0, HEADER_ROW, ANY_COLUMN, "file not found"))
    else:
        raw = _read_bytes(path, problems)
        table = None
        if raw is not None:
            fast = _fast_table(raw, schema)
            if fast is not None:
                done = _validate_table(fast[0], schema, hardware_view(hw), name, [], fast[1])
                if done is not None:
                    return done
            table = _parse_csv(raw, name, problems)
    if table is None:
        raise TraceError(problems)
    done = _validate_table(table, schema, hardware_view(hw), name, problems)
    if done is None:
        problems.sort(key=lambda p: (p.line, p.row, _column_order(schema, p.column)))
        raise TraceError(problems)
    return done


def _column_order(schema: TraceSchema, column: str) -> int:
    """Sort key putting problems of one row in schema column order."""
    try:
        return schema.names.index(column)
    except ValueError:
        return -1


def read_trace_frame(path: str | os.PathLike[str], hw: Any = None) -> pd.DataFrame:
    """Validate a trace and return it as a typed DataFrame (raises only TraceError)."""
    return _validated(path, hw)[0]


def load_trace(path: str | os.PathLike[str], hw: Any = None) -> list[Any]:
    """Validate a trace and return its jobs as RLJob objects (raises only TraceError)."""
    return _validated(path, hw)[1]


def _record_kwargs(frame: pd.DataFrame, schema: TraceSchema) -> list[dict[str, Any]]:
    """Per-row keyword arguments for RLJob; empty cells are left out (RLJob's defaults)."""
    names = list(schema.names)
    columns = []
    for spec in schema.columns:
        values = frame[spec.name].astype(object).tolist()
        if spec.type == "int":
            values = [None if v is None or v is pd.NA or v != v else int(v) for v in values]
        elif spec.type == "float":
            values = [None if v is None or v != v else float(v) for v in values]
        else:
            values = ["" if v is None or v is pd.NA else str(v) for v in values]
        columns.append(values)
    return [
        {key: value for key, value in zip(names, row, strict=True) if value is not None}
        for row in zip(*columns, strict=True)
    ]


def _blame_column(message: str, names: Sequence[str]) -> str:
    """The schema column an RLJob validation message names first, else '*'."""
    hits = []
    for n in names:
        match = re.search(rf"\b{re.escape(n)}\b", message)
        if match:
            hits.append((match.start(), -len(n), n))
    return min(hits)[2] if hits else ANY_COLUMN


#: Fields that differ between otherwise identical jobs. The schema checks them with the
#: same rules as RLJob (non-empty id, finite arrival >= 0, SLO >= 1, iterations >= 1), so
#: RLJob validation and the host-memory check run once per distinct configuration.
_IDENTITY_FIELDS = ("job_id", "arrival_s", "slo", "iterations", "workload")
#: Direct phase times: the schema checks every RLJob rule on them (> 0 or >= 0, worst case
#: >= expected, cold >= warm), and host memory cannot depend on them, so they too vary
#: freely between jobs that share one validated template.
_PHASE_FIELDS = PHASE_TIME_FIELDS
_PER_JOB_FIELDS = _IDENTITY_FIELDS + _PHASE_FIELDS


def _construct_jobs(
    frame: pd.DataFrame, hw: HardwareView | None, name: str, problems: list[Problem]
) -> list[Any]:
    """Build RLJob objects (their own validation included) and check derived host memory."""
    from rollmux.jobs import RLJob  # imported late: the job model is a sibling module

    schema = load_schema()
    config_columns = [n for n in schema.names if n not in _PER_JOB_FIELDS]
    group = frame.groupby(config_columns, dropna=False, sort=False).ngroup().to_numpy()
    first_rows = np.unique(group, return_index=True)[1]
    templates: dict[int, Any] = {}
    failures: dict[int, list[tuple[str, str]]] = {}
    for g, record in zip(
        group[first_rows], _record_kwargs(frame.iloc[first_rows], schema), strict=True
    ):
        try:
            job = RLJob(**record)
        except (ValueError, TypeError) as exc:
            failures[int(g)] = [(_blame_column(str(exc), schema.names), str(exc))]
            continue
        found = hw.memory_problems(job) if hw is not None else []
        if found:
            failures[int(g)] = found
        else:
            templates[int(g)] = job
    if failures:
        lines = frame["_line"].tolist()
        rows = frame["_row"].tolist()
        for i, g in enumerate(group.tolist()):
            for column, message in failures.get(g, ()):
                problems.append(Problem(name, lines[i], rows[i], column, message))
        return []
    return _clone_all(frame, group, templates, RLJob)


def _clone_all(
    frame: pd.DataFrame, group: np.ndarray, templates: dict[int, Any], job_class: type
) -> list[Any]:
    """One job per row: a copy of its configuration's validated template plus its identity."""
    ids = [str(v) for v in frame["job_id"].tolist()]
    arrivals = [float(v) for v in frame["arrival_s"].tolist()]
    slos = [float(v) for v in frame["slo"].tolist()]
    iterations = [int(v) for v in frame["iterations"].tolist()]
    workloads = [str(v) for v in frame["workload"].tolist()]
    phases = {
        name: [None if v != v else float(v) for v in frame[name].tolist()] for name in _PHASE_FIELDS
    }
    sample = next(iter(templates.values()), None)
    jobs = []
    if sample is not None and not hasattr(sample, "__dict__"):
        # A slotted RLJob has no __dict__ to copy: build each job with its constructor.
        for i, g in enumerate(group.tolist()):
            jobs.append(
                dataclasses.replace(
                    templates[g],
                    job_id=ids[i],
                    arrival_s=arrivals[i],
                    slo=slos[i],
                    iterations=iterations[i],
                    workload=workloads[i],
                    **{name: values[i] for name, values in phases.items()},
                )
            )
        return jobs
    base = {g: job.__dict__ for g, job in templates.items()}
    new = object.__new__
    set_dict = object.__setattr__
    for i, g in enumerate(group.tolist()):
        job: Any = new(job_class)
        set_dict(
            job,
            "__dict__",
            {
                **base[g],
                "job_id": ids[i],
                "arrival_s": arrivals[i],
                "slo": slos[i],
                "iterations": iterations[i],
                "workload": workloads[i],
                "rollout_s": phases["rollout_s"][i],
                "train_s": phases["train_s"][i],
                "rollout_max_s": phases["rollout_max_s"][i],
                "train_max_s": phases["train_max_s"][i],
                "sync_s": phases["sync_s"][i],
                "warm_switch_s": phases["warm_switch_s"][i],
                "cold_switch_s": phases["cold_switch_s"][i],
            },
        )
        jobs.append(job)
    return jobs
