"""Job traces: versioned schema, validating loader, seeded generators and public adapters."""

from __future__ import annotations

from rollmux.traces.errors import Problem, TraceError
from rollmux.traces.loader import load_trace, read_trace_frame
from rollmux.traces.schema import TraceSchema, load_schema
from rollmux.traces.writer import trace_text, write_trace

__all__ = [
    "Problem",
    "TraceError",
    "TraceSchema",
    "load_schema",
    "load_trace",
    "read_trace_frame",
    "trace_text",
    "write_trace",
]
