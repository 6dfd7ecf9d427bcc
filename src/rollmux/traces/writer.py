"""Write trace files: canonical cells, the versioned CSV text, atomic writes."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.traces.schema import ColumnSpec, TraceSchema, load_schema

__all__ = ["atomic_write_text", "trace_text", "write_trace"]


def _format_cell(spec: ColumnSpec, value: Any) -> str:
    """One cell as canonical text: empty for None/NaN, shortest round-trip repr for floats."""
    if value is None or value is pd.NA:
        return ""
    if spec.type == "str":
        return str(value)
    if isinstance(value, float | np.floating) and math.isnan(value):
        return ""
    if spec.type == "int":
        return str(int(value))
    return repr(round(float(value), 6))


def _rows_from(jobs: Iterable[Any] | pd.DataFrame, schema: TraceSchema) -> list[list[str]]:
    """Canonical text rows from RLJob objects or a frame with schema columns."""
    if isinstance(jobs, pd.DataFrame):
        records = jobs.to_dict("records")
    else:
        records = [dataclasses.asdict(job) for job in jobs]
    return [[_format_cell(spec, rec.get(spec.name)) for spec in schema.columns] for rec in records]


def trace_text(jobs: Iterable[Any] | pd.DataFrame, comments: Sequence[str] = ()) -> str:
    """The CSV text of a trace: version line, optional comment lines, header, rows."""
    schema = load_schema()
    buffer = io.StringIO(newline="")
    buffer.write(f"# schema_version: {schema.version}\n")
    for comment in comments:
        for line in str(comment).splitlines():
            buffer.write(f"# {line}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(schema.names)
    writer.writerows(_rows_from(jobs, schema))
    return buffer.getvalue()


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write text to path via a temporary file in the same folder and os.replace."""
    from rollmux.io import write_text

    return write_text(Path(path), text)


def write_trace(
    jobs: Iterable[Any] | pd.DataFrame,
    path: str | os.PathLike[str],
    comments: Sequence[str] = (),
) -> Path:
    """Write jobs (RLJob objects or a schema frame) as a versioned CSV, atomically."""
    return atomic_write_text(path, trace_text(jobs, comments))
