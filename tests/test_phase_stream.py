"""Per-phase rows streamed to disk during a replay: the bytes of the whole table, one unit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rollmux.hardware import load_hardware
from rollmux.sim import ReplaySpec, SimConfig, eventmodel, phaserows, run_replay
from rollmux.sim import engine as engine_module
from rollmux.sim.engine import simulate_trace
from rollmux.sim.phasesink import CsvPhaseSink
from rollmux.sim.replay import FLOAT_FORMAT, write_result
from rollmux.traces import load_trace

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "golden" / "traces" / "tiny-sim.csv"


def _files(folder: Path) -> dict[str, bytes]:
    """Every result file of a folder by name, with its bytes (rollmux's output marker, which
    names the run that wrote the folder, is checked to be there and left out)."""
    from rollmux.io import OUTPUT_MARKER

    assert (folder / OUTPUT_MARKER).is_file()
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != OUTPUT_MARKER}


class CountingSink(CsvPhaseSink):
    """A CSV sink that also counts the blocks it was handed."""

    def __init__(self, path: Path) -> None:
        """A sink writing ``path`` with the replay's float format."""
        super().__init__(path, FLOAT_FORMAT)
        self.blocks = 0

    def write(self, block: np.ndarray) -> None:
        """Count, then append."""
        self.blocks += 1
        super().write(block)


@pytest.mark.parametrize("policy", ["rollmux", "solo-d", "verl"])
def test_streamed_folder_is_the_in_memory_folder(tmp_path: Path, policy: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """run_replay (phases streamed in many small blocks) writes the bytes that the whole
    in-memory table written at the end gives, for co-located and disaggregated jobs."""
    monkeypatch.setattr(eventmodel, "_BATCH_ROWS", 5)  # a flush every 5 phases
    hw = load_hardware()
    jobs = load_trace(TINY, hw)
    in_memory = simulate_trace(jobs, policy, hw, 3, SimConfig())
    assert len(in_memory.phases) > 50
    spec = ReplaySpec(trace=str(TINY), policy=policy, seed=3)
    streamed = run_replay(spec, out=tmp_path / "streamed")
    assert len(streamed.phases) == 0
    assert streamed.summary == in_memory.summary
    in_memory.config.update(streamed.config)  # the spec's additions (trace, sha256, ...)
    write_result(in_memory, tmp_path / "whole")
    assert _files(tmp_path / "streamed") == _files(tmp_path / "whole")


def test_sink_takes_rows_while_the_replay_runs(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The event model hands blocks to the sink as it goes; the table it keeps is empty."""
    monkeypatch.setattr(eventmodel, "_BATCH_ROWS", 8)
    hw = load_hardware()
    sink = CountingSink(tmp_path / "phases.csv")
    result = simulate_trace(load_trace(TINY, hw), "rollmux", hw, 0, SimConfig(),
                            phase_sink=sink)
    sink.close()
    assert sink.blocks > 5
    assert len(result.phases) == 0
    assert result.summary["phase_rows"] == sink.rows
    lines = (tmp_path / "phases.csv").read_text().splitlines()
    assert len(lines) == sink.rows + 1 and lines[0].startswith("job,phase,iteration")


def test_no_rows_no_file(tmp_path: Path) -> None:
    """A sink that got no rows leaves no file (as a result without phases writes none)."""
    sink = CsvPhaseSink(tmp_path / "phases.csv", FLOAT_FORMAT)
    sink.write(np.empty(0, dtype=phaserows.PHASE_DTYPE))
    sink.close()
    assert not (tmp_path / "phases.csv").exists()
    with pytest.raises(ValueError, match="closed"):
        sink.write(np.empty(1, dtype=phaserows.PHASE_DTYPE))


def test_replay_failing_after_streaming_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay that fails after rows were streamed leaves the earlier folder as it was and
    no temporary folder beside it."""
    out = tmp_path / "run"
    run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=0), out=out)
    before = _files(out)
    real = engine_module.simulate_trace

    def failing(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)  # streams every row into the temporary folder
        raise RuntimeError("replay failed (injected)")

    monkeypatch.setattr(engine_module, "simulate_trace", failing)
    with pytest.raises(RuntimeError, match="injected"):
        run_replay(ReplaySpec(trace=str(TINY), policy="rollmux", seed=1), out=out)
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
