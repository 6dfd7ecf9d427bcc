"""One shared figure style for every analysis script (Agg backend, fixed palette).

Also the shared command line of the figure scripts (:func:`figure_main`) and the node
labels of their timelines (:func:`node_label`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # the backend is chosen above, before pyplot loads
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from rollmux.io import atomic_write

# Colour-blind-safe palette (Okabe-Ito), one colour per job.
JOB_COLOURS: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)
ROLLOUT_HATCH = ""
TRAIN_HATCH = "///"

STYLE: dict[RcKeyType, Any] = {
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


Reader = Callable[[Path], Any]
"""Reads one input file of a figure script (default :func:`pandas.read_csv`)."""


def figure_main(
    doc: str,
    inputs: Mapping[str, str],
    draw: Callable[..., Figure],
    argv: Sequence[str] | None = None,
    read: Reader | Mapping[str, Reader] = pd.read_csv,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    note: Callable[..., str] | None = None,
) -> int:
    """Command-line entry of a figure script: read the inputs, draw, write PNG and PDF.

    The parser is described by the first line of ``doc`` (the script's ``__doc__``) and
    has one required ``--<name>`` path option per entry of ``inputs`` (name -> help text),
    the extra ``options`` (name -> keywords of
    :meth:`argparse.ArgumentParser.add_argument`, e.g. ``{"top": {"type": int,
    "default": 10, "help": ...}}``), and the required ``--png`` and ``--pdf``.

    Each input is read with ``read`` (a mapping gives per-input readers; inputs it does
    not name use :func:`pandas.read_csv`). ``draw`` is called with one keyword per input
    and option (dashes -> underscores); the figure is saved with :func:`save_figure` and
    ``wrote PNG and PDF`` printed, followed by `` (<note>)`` when ``note`` is given (it is
    called with the same keywords as ``draw``). Returns the exit status, 0.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, help_text in inputs.items():
        parser.add_argument(f"--{name}", type=Path, required=True, help=help_text)
    for name, spec in (options or {}).items():
        parser.add_argument(f"--{name}", **spec)
    parser.add_argument("--png", type=Path, required=True, help="output PNG")
    parser.add_argument("--pdf", type=Path, required=True, help="output PDF")
    args = vars(parser.parse_args(argv))
    kwargs: dict[str, Any] = {}
    for name in inputs:
        key = name.replace("-", "_")
        reader = read.get(name, pd.read_csv) if isinstance(read, Mapping) else read
        kwargs[key] = reader(args[key])
    for name in options or {}:
        key = name.replace("-", "_")
        kwargs[key] = args[key]
    save_figure(draw(**kwargs), [args["png"], args["pdf"]])
    suffix = f" ({note(**kwargs)})" if note is not None else ""
    print(f"wrote {args['png']} and {args['pdf']}{suffix}")
    return 0


def node_label(node: str) -> str:
    """``R0`` -> ``H20 node 0``, ``T1`` -> ``H800 node 1`` (other labels unchanged)."""
    if node[:1] == "R" and node[1:].isdigit():
        return f"H20 node {node[1:]}"
    if node[:1] == "T" and node[1:].isdigit():
        return f"H800 node {node[1:]}"
    return node
