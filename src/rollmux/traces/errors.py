"""Trace problems and the single exception type the trace loader raises."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Row number used for problems of the header or of the file as a whole.
HEADER_ROW = 0
#: Column name used when a problem concerns a whole row or the whole file.
ANY_COLUMN = "*"
#: How many problems the exception message lists before summarising the rest.
MESSAGE_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect of a trace file, located by file, physical line, data row and column."""

    file: str
    line: int
    row: int
    column: str
    message: str

    def __str__(self) -> str:
        """Render as `file:line: row R, column C: message` (one line)."""
        return f"{self.file}:{self.line}: row {self.row}, column {self.column}: {self.message}"


class TraceError(ValueError):
    """A trace failed validation; `problems` holds every defect found, each located."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        """Keep all problems; the message lists the first MESSAGE_LIMIT of them."""
        if not problems:
            raise ValueError("TraceError needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        lines = [str(p) for p in self.problems[:MESSAGE_LIMIT]]
        hidden = len(self.problems) - MESSAGE_LIMIT
        if hidden > 0:
            lines.append(f"... and {hidden} more problem(s)")
        super().__init__("\n".join(lines))
