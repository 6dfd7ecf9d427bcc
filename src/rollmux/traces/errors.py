"""Trace problems and the single exception type the trace loader raises.

A trace's defects are :class:`rollmux.errors.Problem` s (file, line, row, column); the
loader raises them all at once as a :class:`TraceError`.
"""

from __future__ import annotations

from rollmux.errors import ANY_COLUMN, HEADER_ROW, MESSAGE_LIMIT, InputFileError, Problem

__all__ = ["ANY_COLUMN", "HEADER_ROW", "MESSAGE_LIMIT", "Problem", "TraceError"]


class TraceError(InputFileError):
    """A trace failed validation; `problems` holds every defect found, each located."""
