"""Per-phase rows streamed to disk as the replay releases them, not held until the end.

The event model hands each block of rows it packs (a numpy structured array with the
fields of :data:`rollmux.sim.records.PHASE_RECORD_COLUMNS`) to a sink instead of keeping it.
:class:`CsvPhaseSink` appends each block to a CSV file with the formatting of
:func:`rollmux.io.write_csv`, so the streamed file has the bytes the whole table written
at once would have (the tables of a replay are one unit: the sink writes into the
temporary folder that :func:`rollmux.io.replace_folder` moves into place).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Protocol

import numpy as np
import pandas as pd

from rollmux.sim.records import PHASE_RECORD_COLUMNS

__all__ = ["CsvPhaseSink", "PhaseSink"]


class PhaseSink(Protocol):
    """Where the event model puts per-phase rows: blocks in release order, then close."""

    rows: int

    def write(self, block: np.ndarray) -> None:
        """Take one block of rows (fields :data:`PHASE_RECORD_COLUMNS`)."""

    def close(self) -> None:
        """Finish the output (called once, also after a failed replay)."""


class CsvPhaseSink:
    """Blocks of per-phase rows appended to one CSV file (header with the first block).

    The file holds exactly what ``write_csv(table, path, float_format)`` writes for the
    whole table; a replay without rows leaves no file (as a result without phases writes
    none).
    """

    def __init__(self, path: str | Path, float_format: str) -> None:
        """Create (truncate) ``path``; rows use ``float_format`` for floats."""
        self.path = Path(path)
        self.float_format = float_format
        self.rows = 0
        # Open across write() calls, one per block; close() (run_replay's finally) ends it.
        self._stream: IO[str] | None = open(  # noqa: SIM115
            self.path, "w", encoding="utf-8", newline="")

    def write(self, block: np.ndarray) -> None:
        """Append ``block``'s rows (the header first, with the first rows)."""
        if self._stream is None:
            raise ValueError(f"{self.path}: the phase sink is closed")
        if len(block) == 0:
            return
        frame = pd.DataFrame({name: block[name] for name in PHASE_RECORD_COLUMNS},
                             columns=list(PHASE_RECORD_COLUMNS), copy=False)
        self._stream.write(frame.to_csv(index=False, header=self.rows == 0,
                                        float_format=self.float_format, lineterminator="\n"))
        self.rows += len(block)

    def close(self) -> None:
        """Close the file; remove it when no row was written."""
        if self._stream is None:
            return
        self._stream.close()
        self._stream = None
        if self.rows == 0:
            self.path.unlink(missing_ok=True)
