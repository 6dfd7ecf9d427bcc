"""Fig. 2 script: draws PNG and PDF from a phase table, deterministically."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rollmux.traces import load_trace
from rollmux.traces.stats import job_frame

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.subprocess
def test_fig02_draws_from_the_production_trace(tmp_path: Path) -> None:
    """The script writes a PNG and a PDF, and the same input gives the same bytes."""
    phases = tmp_path / "phases.csv"
    frame = job_frame(load_trace(REPO / "traces" / "production-default.csv"))
    frame.to_csv(phases, index=False)
    outputs = []
    for run in ("a", "b"):
        png, pdf = tmp_path / f"{run}.png", tmp_path / f"{run}.pdf"
        done = subprocess.run(
            [
                sys.executable,
                str(REPO / "analysis" / "fig02_phase_durations.py"),
                "--phases",
                str(phases),
                "--png",
                str(png),
                "--pdf",
                str(pdf),
                "--top",
                "6",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "(6 classes)" in done.stdout
        assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")
        outputs.append((png.read_bytes(), pdf.read_bytes()))
    assert outputs[0] == outputs[1]
