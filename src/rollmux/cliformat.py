"""What the commands print: tables and records as ``--format table`` (the default), ``csv``
or ``json``.

* ``table``: aligned text no wider than :data:`WIDTH` (100) characters. A table too wide
  for one block is split into blocks of columns, each block repeating the table's key
  columns (its leading text columns, e.g. ``scenario system jobs``) so every line still
  says which row it is; a cell longer than :data:`CELL_MAX` characters is cut (``...``).
  A record (one result: ``bench``, ``meta-iteration``) is a ``field value`` list, nested
  fields dotted (``admission_mix.new-group``), long values wrapped.
* ``csv``: the whole table, every cell in full (a record: a header and one row).
* ``json``: the whole table as a list of objects, one per row, or the record as one
  object (two-space indent, keys as the command gives them; NaN as null).

pandas renders each block (:meth:`pandas.DataFrame.to_string`) and writes CSV and JSON;
it is imported inside the functions, so ``rollmux --help`` never loads it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rollmux.errors import printable

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CELL_MAX",
    "FORMATS",
    "WIDTH",
    "add_format",
    "flatten",
    "print_json",
    "print_record",
    "print_table",
    "record_text",
    "table_text",
    "wrap_line",
]

#: The output formats of every command that prints a table or a record.
FORMATS = ("table", "csv", "json")
#: Widest line of the ``table`` format (characters).
WIDTH = 100
#: Longest cell the ``table`` format shows in full (csv and json never cut).
CELL_MAX = 48
#: Gap between two columns of the ``table`` format.
_GAP = 2
#: The ``table`` format's text for a missing value (NaN, None).
MISSING = "-"


def add_format(parser: argparse.ArgumentParser, what: str = "the table") -> None:
    """The ``--format {table,csv,json}`` option (default ``table``)."""
    parser.add_argument(
        "--format", choices=FORMATS, default="table",
        help=f"how {what} is printed: table (aligned, at most {WIDTH} characters wide; "
             f"wide tables split into blocks of columns), csv, or json (default: table)")


def _cell(value: Any, float_format: Callable[[float], str]) -> str:
    """One value as the ``table`` format shows it (escaped, cut to CELL_MAX)."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return float_format(value)
    if hasattr(value, "item") and not isinstance(value, str):  # a numpy scalar
        return _cell(value.item(), float_format)
    text = printable(value)
    return text if len(text) <= CELL_MAX else text[: CELL_MAX - 3] + "..."


def _formatter(float_format: str | Callable[[float], str]) -> Callable[[float], str]:
    """A float formatter from a %-format or a callable."""
    if callable(float_format):
        return float_format
    return lambda x: float_format % x


def table_text(frame: pd.DataFrame, float_format: str | Callable[[float], str] = "%.6g",
               width: int = WIDTH) -> str:
    """``frame`` as aligned text no wider than ``width``, in blocks of columns if needed."""
    import pandas as pd

    fmt = _formatter(float_format)
    cells = pd.DataFrame({str(c): [_cell(v, fmt) for v in frame[c].tolist()]
                          for c in frame.columns}, dtype=object)
    if cells.empty:
        return " ".join(cells.columns) + "\n"
    keys = _key_columns(cells, frame)
    widths = {c: max([len(c), *(len(v) for v in cells[c])]) + _GAP for c in cells.columns}
    key_width = sum(widths[c] for c in keys)
    blocks: list[list[str]] = []
    current: list[str] = []
    used = key_width
    for column in cells.columns:
        if column in keys:
            continue
        if current and used + widths[column] > width:
            blocks.append(current)
            current, used = [], key_width
        current.append(column)
        used += widths[column]
    if current or not blocks:
        blocks.append(current)
    # Text columns left-aligned, numbers right-aligned, each header like its cells.
    numeric = {str(c): pd.api.types.is_numeric_dtype(frame[c].dtype) for c in frame.columns}

    def pad(column: str, text: str) -> str:
        """``text`` aligned in ``column``'s width."""
        size = widths[column] - _GAP
        return text.rjust(size) if numeric[column] else text.ljust(size)

    texts = []
    for block in blocks:
        columns = [*keys, *block]
        rows = [[pad(c, c) for c in columns]]
        rows += [[pad(c, cells.at[i, c]) for c in columns] for i in cells.index]
        texts.append("\n".join((" " * _GAP).join(row).rstrip() for row in rows))
    return "\n\n".join(texts) + "\n"


def _key_columns(cells: pd.DataFrame, frame: pd.DataFrame) -> list[str]:
    """The columns repeated in every block: ``frame``'s leading text columns (they name a
    row), together at most a third of the width (the first alone: half), by their names
    in ``cells``."""
    import pandas as pd

    keys: list[str] = []
    used = 0
    for original, column in zip(frame.columns, cells.columns, strict=True):
        dtype = frame[original].dtype
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            break
        width = max([len(column), *(len(v) for v in cells[column])]) + _GAP
        if used + width > (WIDTH // 3 if keys else WIDTH // 2):  # the first: up to half
            break
        keys.append(column)
        used += width
    return keys


def _jsonable(value: Any) -> Any:
    """A value JSON can hold: numpy scalars as Python ones, NaN and infinities as null."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def print_table(frame: pd.DataFrame, fmt: str = "table",
                float_format: str | Callable[[float], str] = "%.6g",
                csv_format: str | None = None) -> None:
    """Print ``frame`` on stdout as ``fmt`` (table, csv or json); ``float_format``: the
    table's numbers, ``csv_format``: the CSV's (default: float_format if a %-format)."""
    if fmt == "csv":
        if csv_format is None:
            csv_format = float_format if isinstance(float_format, str) else "%.6g"
        sys.stdout.write(frame.to_csv(index=False, lineterminator="\n",
                                      float_format=csv_format))
    elif fmt == "json":
        rows = [{str(k): _jsonable(v) for k, v in row.items()}
                for row in frame.to_dict(orient="records")]
        sys.stdout.write(json.dumps(rows, indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(table_text(frame, float_format))


def print_json(document: Mapping[str, Any]) -> None:
    """Print a JSON object whose values may be tables (each a list of row objects)."""
    import pandas as pd

    def rows(value: Any) -> Any:
        """A table as its rows, anything else as it is."""
        if isinstance(value, pd.DataFrame):
            return [{str(k): _jsonable(v) for k, v in row.items()}
                    for row in value.to_dict(orient="records")]
        return _jsonable(value)

    sys.stdout.write(json.dumps({k: rows(v) for k, v in document.items()}, indent=2,
                                allow_nan=False) + "\n")


def wrap_line(line: str, width: int = WIDTH) -> str:
    """A ``  label   text`` line wrapped to ``width``, continuation lines under the text."""
    if len(line) <= width:
        return line
    label = re.match(r"\s*\S+(?: \S+)*\s{2,}", line)
    indent = len(label.group()) if label and len(label.group()) < width // 2 else 4
    return "\n".join(textwrap.wrap(line, width=width, subsequent_indent=" " * indent,
                                    break_on_hyphens=False, drop_whitespace=True))


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested record as one level, nested keys dotted (``admission_mix.new-group``)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _record_value(value: Any, float_format: Callable[[float], str]) -> str:
    """One field of a record as the ``table`` format shows it (lists joined, not cut)."""
    if isinstance(value, list | tuple):
        if any(isinstance(v, list | tuple | Mapping) for v in value):
            return json.dumps(_jsonable(value), default=str)
        return ", ".join(_record_value(v, float_format) for v in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return float_format(value)
    return printable(value)


def record_text(record: Mapping[str, Any], float_format: str | Callable[[float], str] = "%.6g",
                width: int = WIDTH) -> str:
    """A record as ``field  value`` lines, fields aligned, long values wrapped to ``width``."""
    fmt = _formatter(float_format)
    flat = flatten(record)
    if not flat:
        return ""
    names = [printable(k) for k in flat]
    indent = max(len(n) for n in names) + _GAP
    lines = []
    for name, value in zip(names, flat.values(), strict=True):
        text = _record_value(value, fmt)
        wrapped = textwrap.wrap(text, width=max(width - indent, 20), break_long_words=True,
                                break_on_hyphens=False) or [""]
        lines.append(f"{name:<{indent}}{wrapped[0]}".rstrip())
        lines.extend(" " * indent + more for more in wrapped[1:])
    return "\n".join(lines) + "\n"


def print_record(record: Mapping[str, Any], fmt: str = "table",
                 float_format: str | Callable[[float], str] = "%.6g") -> None:
    """Print one result on stdout as ``fmt``: field/value lines, a CSV row, or JSON."""
    if fmt == "json":
        sys.stdout.write(json.dumps(_jsonable(record), indent=2, sort_keys=True,
                                    allow_nan=False, default=str) + "\n")
    elif fmt == "csv":
        import pandas as pd

        flat = {k: (json.dumps(_jsonable(v)) if isinstance(v, list | tuple) else v)
                for k, v in flatten(record).items()}
        print_table(pd.DataFrame([flat]), "csv",
                    float_format if isinstance(float_format, str) else "%.6g")
    else:
        sys.stdout.write(record_text(record, float_format))
