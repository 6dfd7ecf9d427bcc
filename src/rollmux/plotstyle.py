"""One shared figure style for every analysis script (Agg backend, fixed palette)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # the backend is chosen above, before pyplot loads
from matplotlib.figure import Figure

from rollmux.io import atomic_write

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
    """Save ``fig`` to every path atomically (:func:`rollmux.io.atomic_write`), without dates."""

    def saver(fmt: str) -> Callable[[Path], None]:
        metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
        return lambda tmp: fig.savefig(tmp, format=fmt, metadata=metadata, bbox_inches="tight")

    for path in paths:
        atomic_write(path, saver(Path(path).suffix.lstrip(".")))
    plt.close(fig)
