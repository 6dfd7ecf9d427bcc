"""One shared figure style for every analysis script (Agg backend, fixed palette)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # the backend is chosen above, before pyplot loads
from matplotlib.figure import Figure

# Colour-blind-safe palette (Okabe-Ito), one colour per job.
JOB_COLOURS: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)
ROLLOUT_HATCH = ""
TRAIN_HATCH = "///"

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # Deterministic PDFs: no creation date, fixed hash salt for SVG ids.
    "pdf.compression": 6,
    "svg.hashsalt": "rollmux",
}


def apply_style() -> None:
    """Apply the project-wide matplotlib style."""
    plt.rcParams.update(STYLE)


def save_figure(fig: Figure, paths: Iterable[str | Path]) -> None:
    """Save ``fig`` to every path atomically (temp file, then rename), without dates."""
    for path in paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=path.suffix)
        os.close(fd)
        try:
            metadata = {"CreationDate": None} if path.suffix == ".pdf" else {"Software": None}
            fig.savefig(tmp, metadata=metadata, bbox_inches="tight")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    plt.close(fig)
