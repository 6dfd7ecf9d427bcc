"""The event model's per-phase rows: buffered flat as phases are released, packed in blocks.

The hot loop of :class:`rollmux.sim.eventmodel.EventModel` buffers five numbers per
released phase in a flat list (its layout id, iteration, start, end and work); a flush
expands them into one row per node (the layout gives job, phase, pool, nodes and GPUs)
and packs them into a block of :data:`BLOCK_ROWS` rows (about 40 MB), or hands them to a
:class:`rollmux.sim.phasesink.PhaseSink`. Blocks that large are memory-mapped by malloc,
so the memory of each block goes back to the system when the final table has copied it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rollmux.sim.phasesink import PhaseSink
from rollmux.sim.records import PHASE_RECORD_COLUMNS

__all__ = ["BLOCK_ROWS", "PHASE_DTYPE", "PHASE_FIELDS", "PhaseRows"]

PHASE_FIELDS = 5  # numbers buffered per released phase
BLOCK_ROWS = 1 << 20
PHASE_DTYPE = np.dtype([
    ("job", "<i4"), ("phase", "i1"), ("iteration", "<i4"), ("node", "<i4"), ("pool", "i1"),
    ("start_s", "<f8"), ("end_s", "<f8"), ("work_s", "<f8"), ("gpus", "<i2"),
])


class PhaseRows:
    """Released phases of one replay: the flat buffer, the phase layouts, the blocks."""

    def __init__(self, sink: PhaseSink | None = None) -> None:
        """Empty; with a ``sink``, flushed rows go to it instead of into blocks."""
        self.sink = sink
        # Flat: layout id, iteration, start, end, work of each released phase in turn.
        # (Extending by a short-lived tuple keeps no tuple alive: cheaper to build, to
        # convert and to free, and no work for the cyclic garbage collector.)
        self.rows: list[float] = []
        # Phase layouts, one per phase kind of each admission (see layout): job, phase
        # code, pool code, number of nodes, offset into the flat node/GPU lists; and
        # their numpy copies for flush (rebuilt when layouts were added since).
        self.lay_cols: tuple[list[int], ...] = ([], [], [], [], [])
        self.lay_nodes: list[int] = []
        self.lay_gpus: list[int] = []
        self.lay_np: tuple[np.ndarray, ...] = ()
        self.chunks: list[np.ndarray] = []
        self.block_used = 0

    def layout(self, i: int, phase: int, pool: int, nodes: Sequence[int],
                gpus: Sequence[int]) -> int:
        """Register the rows a phase of job ``i`` on ``nodes`` writes; returns its id.

        A released phase is buffered as its layout id plus its own times; flush turns
        it into one row per node, in the order of ``nodes``.
        """
        if len(nodes) != len(gpus):
            raise ValueError("one GPU count per node expected")
        jobs, phases, pools, counts, offsets = self.lay_cols
        jobs.append(i)
        phases.append(phase)
        pools.append(pool)
        counts.append(len(nodes))
        offsets.append(len(self.lay_nodes))
        self.lay_nodes.extend(nodes)
        self.lay_gpus.extend(gpus)
        return len(jobs) - 1

    def flush(self) -> None:
        """Expand the buffered phases into rows; pack them into the current block.

        Each buffered phase becomes one row per node of its layout, in the layout's node
        order, so the rows are those the loop would have written one by one. Iterations
        and layout ids are far below 2**53, so the float64 batch holds them exactly.
        """
        rows = self.rows
        if not rows:
            return
        batch = np.fromiter(rows, dtype=np.float64, count=len(rows))
        batch = batch.reshape(-1, PHASE_FIELDS)
        rows.clear()
        jobs, phases, pools, counts, offsets = self.lay_cols
        if not self.lay_np or len(self.lay_np[0]) != len(jobs):
            self.lay_np = (
                np.array(jobs, dtype=PHASE_DTYPE["job"]),
                np.array(phases, dtype=PHASE_DTYPE["phase"]),
                np.array(pools, dtype=PHASE_DTYPE["pool"]),
                np.array(counts, dtype=np.intp),
                np.array(offsets, dtype=np.intp),
                np.array(self.lay_nodes, dtype=PHASE_DTYPE["node"]),
                np.array(self.lay_gpus, dtype=PHASE_DTYPE["gpus"]),
            )
        l_job, l_phase, l_pool, l_count, l_off, l_nodes, l_gpus = self.lay_np
        lid = batch[:, 0].astype(np.intp)
        n_rows = l_count[lid]
        # The phase of each row, and the row's node: its layout's offset plus its rank
        # among the phase's rows.
        of_row = np.repeat(np.arange(len(lid)), n_rows)
        first = np.cumsum(n_rows) - n_rows
        at = l_off[lid][of_row] + (np.arange(len(of_row)) - first[of_row])
        lid = lid[of_row]
        flat = np.empty(len(of_row), dtype=PHASE_DTYPE)
        flat["job"] = l_job[lid]
        flat["phase"] = l_phase[lid]
        flat["iteration"] = batch[of_row, 1].astype(PHASE_DTYPE["iteration"])
        flat["node"] = l_nodes[at]
        flat["pool"] = l_pool[lid]
        flat["start_s"] = batch[of_row, 2]
        flat["end_s"] = batch[of_row, 3]
        flat["work_s"] = batch[of_row, 4]
        flat["gpus"] = l_gpus[at]
        del batch
        if self.sink is not None:
            self.sink.write(flat)
            return
        done = 0
        while done < len(flat):
            if not self.chunks or self.block_used == len(self.chunks[-1]):
                self.chunks.append(np.empty(BLOCK_ROWS, dtype=PHASE_DTYPE))
                self.block_used = 0
            block = self.chunks[-1]
            take = min(len(flat) - done, len(block) - self.block_used)
            block[self.block_used:self.block_used + take] = flat[done:done + take]
            self.block_used += take
            done += take

    def table(self) -> pd.DataFrame:
        """The per-phase table (columns :data:`PHASE_RECORD_COLUMNS`), rows in order of release.

        Chunks are copied column by column into preallocated arrays and dropped as they
        go, so the peak memory is one table plus one chunk. With a sink, the last rows
        go to it and the table is empty.
        """
        self.flush()
        chunks = self.chunks
        if chunks:
            chunks[-1] = chunks[-1][:self.block_used]
        self.chunks = []
        self.block_used = 0
        total = sum(len(c) for c in chunks)
        columns = {name: np.empty(total, dtype=PHASE_DTYPE[name]) for name in PHASE_RECORD_COLUMNS}
        at = 0
        chunks.reverse()
        while chunks:
            chunk = chunks.pop()
            for name in PHASE_RECORD_COLUMNS:
                columns[name][at:at + len(chunk)] = chunk[name]
            at += len(chunk)
            del chunk
        return pd.DataFrame(columns, columns=list(PHASE_RECORD_COLUMNS), copy=False)
