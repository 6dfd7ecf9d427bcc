"""Job traces: versioned schema, validating loader, seeded generators and public adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rollmux.lazy import lazy_getattr

if TYPE_CHECKING:
    from rollmux.traces.errors import Problem, TraceError
    from rollmux.traces.loader import load_trace, read_trace_frame
    from rollmux.traces.schema import TraceSchema, load_schema
    from rollmux.traces.writer import trace_text, write_trace

# Public names load their module on first use (PEP 562): importing a light submodule, such
# as a command's argument parser, does not load numpy, pandas or the engine (README, "The
# command line": start-up).
_LAZY: dict[str, str] = {
    "Problem": "rollmux.traces.errors",
    "TraceError": "rollmux.traces.errors",
    "load_trace": "rollmux.traces.loader",
    "read_trace_frame": "rollmux.traces.loader",
    "trace_text": "rollmux.traces.writer",
    "write_trace": "rollmux.traces.writer",
    "TraceSchema": "rollmux.traces.schema",
    "load_schema": "rollmux.traces.schema",
}

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


__getattr__ = lazy_getattr(__name__, _LAZY)
