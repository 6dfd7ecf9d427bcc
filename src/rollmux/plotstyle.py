"""The plotting module: one figure style, one policy -> label -> colour mapping, shared drawing.

Every analysis script draws through this module: :func:`apply_style` (Agg backend, the
seaborn theme with the project's rc settings), :data:`POLICY_STYLES` (each placement
policy's label and colour, the same in every figure), the palettes of everything that is
not a policy (:data:`PALETTES`), the Gantt helpers (:func:`draw_gantt`,
:func:`legend_handles`), the shared command line (:func:`figure_main`) and the node labels
of the timelines (:func:`node_label`).

Colours (docs/figures.md): a policy's colour means that policy in every figure, so the
policy colours (:data:`POLICY_STYLES`, and :data:`PLUGIN_COLOURS` for policies without an
entry) are used for policies only. Jobs (:data:`JOB_COLOURS`), phases
(:data:`PHASE_COLOURS`), warm/cold switches (:data:`SWITCH_COLOURS`), drift directions
(:data:`DRIFT_DIRECTION_COLOURS`), timeline events (:data:`EVENT_COLOURS`) and any other
category a figure tells apart (:data:`MARK_COLOURS`, by :func:`mark_colour`) have palettes of
their own, each at least :data:`MIN_POLICY_DISTANCE` (CIELAB delta E) away from every policy
colour; tests/test_plotstyle.py checks this. Black and grey stay neutral: reference lines
and bounds, drawn dashed or dotted (Optimal and Regroup are the only policies in them).
"""

from __future__ import annotations

import argparse
import textwrap
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # the backend is chosen above, before pyplot loads
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Patch
from matplotlib.rcsetup import cycler
from matplotlib.text import Text
from matplotlib.typing import RcKeyType

from rollmux.io import atomic_write

#: Smallest CIELAB distance (delta E 1976) between a colour of a non-policy palette and any
#: policy colour: about the distance at which two bar colours stop being confused.
MIN_POLICY_DISTANCE = 20.0

#: One colour per job of a timeline (jobs cycle through it): indigo, grass, wine, sand,
#: purple, deep green, magenta, dark brown (Paul Tol's muted and ColorBrewer hues that no
#: policy uses).
JOB_COLOURS: tuple[str, ...] = (
    "#332288", "#66A61E", "#882255", "#DDCC77", "#984EA3", "#00441B", "#F0027F", "#661100",
)
ROLLOUT_HATCH = ""
TRAIN_HATCH = "///"

@dataclass(frozen=True)
class PolicyStyle:
    """How a placement policy appears in every figure: its name in the paper, its colour."""

    label: str
    colour: str


#: Every built-in placement policy's label and colour, fixed across figures (Okabe-Ito
#: colours plus greys; RollMux is always blue, the optimum black, Solo-D vermillion).
POLICY_STYLES: dict[str, PolicyStyle] = {
    "rollmux": PolicyStyle("RollMux", "#0072B2"),
    "solo-d": PolicyStyle("Solo-D", "#D55E00"),
    "verl": PolicyStyle("veRL", "#CC79A7"),
    "gavel-plus": PolicyStyle("Gavel+", "#E69F00"),
    "random": PolicyStyle("Random", "#009E73"),
    "greedy": PolicyStyle("Greedy (Most-Idle)", "#56B4E9"),
    "optimal": PolicyStyle("Optimal", "#000000"),
    "regroup": PolicyStyle("Regroup (hourly optimal)", "#999999"),
    "rollmux-repeat": PolicyStyle("RollMux (repeat orders)", "#004C7A"),
    "rollmux-repeat-strict": PolicyStyle("RollMux (repeat, per-iteration SLO)", "#5D8AA8"),
    "rollmux-noprune": PolicyStyle("RollMux (no pruning)", "#3A8FC7"),
    "rollmux-expected": PolicyStyle("RollMux (expected)", "#6FA8D6"),
    "rollmux-ordersearch": PolicyStyle("RollMux (order search)", "#1B5E8C"),
    "rollmux-costweighted": PolicyStyle("RollMux (cost-weighted)", "#8DB9E0"),
    "rollmux-join": PolicyStyle("RollMux (join-aware)", "#2E6E9E"),
    "timeslice": PolicyStyle("Time-slicing (one pool)", "#B8A000"),
    "async-solo-d": PolicyStyle("Solo-D asynchronous", "#8C3A00"),
}

#: Colours of policies without an entry (plug-ins): picked by a hash of the name, so a
#: policy keeps its colour from figure to figure whatever else is drawn beside it.
PLUGIN_COLOURS: tuple[str, ...] = ("#F0E442", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF")

#: Colours of the two phases where a figure compares phases rather than jobs (Fig. 2).
PHASE_COLOURS: dict[str, str] = {"rollout": "#8073AC", "training": "#A6761D"}

#: Colours of warm and cold starts (Fig. 4): a node switching between jobs.
SWITCH_COLOURS: dict[str, str] = {"warm": "#C51B7D", "cold": "#4D9221"}

#: Colours of the drift templates' directions (Fig. 16).
DRIFT_DIRECTION_COLOURS: dict[str, str] = {
    "none": "#2D004B", "increasing": "#C51B7D", "decreasing": "#4D9221",
}

#: Colours of a timeline's event marks (Fig. 19), distinct from every job colour too.
EVENT_COLOURS: dict[str, str] = {"kill": "#E41A1C", "resubmit": "#276419"}

#: Colours of any other categories a figure tells apart (theorem families, the quantities
#: of a two-metric panel), in order: :func:`mark_colour` ``(i)``.
MARK_COLOURS: tuple[str, ...] = ("#332288", "#66A61E", "#882255", "#A6761D", "#984EA3",
                                 "#F0027F")

#: Every palette that is not a policy's, by name (documented in docs/figures.md).
PALETTES: dict[str, Sequence[str]] = {
    "jobs": JOB_COLOURS,
    "phases": tuple(PHASE_COLOURS.values()),
    "switches": tuple(SWITCH_COLOURS.values()),
    "drift directions": tuple(DRIFT_DIRECTION_COLOURS.values()),
    "events": tuple(EVENT_COLOURS.values()),
    "marks": MARK_COLOURS,
}


def policy_label(policy: str) -> str:
    """The paper's name of a placement policy (the registry name for a plug-in)."""
    style = POLICY_STYLES.get(policy)
    return style.label if style is not None else policy


def policy_colour(policy: str) -> str:
    """The one colour of a placement policy in every figure."""
    style = POLICY_STYLES.get(policy)
    if style is not None:
        return style.colour
    return PLUGIN_COLOURS[zlib.crc32(policy.encode()) % len(PLUGIN_COLOURS)]


def policy_palette(policies: Iterable[str], by: str = "policy") -> dict[str, str]:
    """A seaborn ``palette`` for ``policies``, keyed by registry name or (``by="label"``) label."""
    if by not in ("policy", "label"):
        raise ValueError(f"by must be 'policy' or 'label', got {by!r}")
    return {(policy if by == "policy" else policy_label(policy)): policy_colour(policy)
            for policy in policies}


def ordered_policies(policies: Iterable[str]) -> list[str]:
    """Policies once each, known ones in :data:`POLICY_STYLES` order, then the rest sorted."""
    present = set(policies)
    known = [p for p in POLICY_STYLES if p in present]
    return known + sorted(present - set(known))


STYLE: dict[RcKeyType, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # Deterministic PDFs: no creation date, fixed hash salt for SVG ids.
    "pdf.compression": 6,
    "svg.hashsalt": "rollmux",
}


#: What ``seaborn.set_theme(context="paper", style="ticks")`` writes into matplotlib's
#: rcParams (seaborn 0.13: its ``plotting_context("paper")`` and ``axes_style("ticks")`` with
#: the ``sans-serif`` font family), written out so a figure job need not import seaborn:
#: that import costs about 1.2 s of CPU (scipy.stats, pandas), in every one of the
#: pipeline's figure jobs, and most figures draw with matplotlib alone.
#: tests/test_plotstyle.py checks that :func:`apply_style` gives the rcParams of seaborn's
#: own ``set_theme`` call, so a seaborn release that changes its theme fails that test.
SEABORN_THEME_RC: dict[RcKeyType, Any] = {
    "axes.linewidth": 1.0,
    "grid.linewidth": 0.8,
    "lines.linewidth": 1.2000000000000002,
    "lines.markersize": 4.800000000000001,
    "patch.linewidth": 0.8,
    "xtick.major.width": 1.0,
    "ytick.major.width": 1.0,
    "xtick.minor.width": 0.8,
    "ytick.minor.width": 0.8,
    "xtick.major.size": 4.800000000000001,
    "ytick.major.size": 4.800000000000001,
    "xtick.minor.size": 3.2,
    "ytick.minor.size": 3.2,
    "font.size": 9.600000000000001,
    "axes.labelsize": 9.600000000000001,
    "axes.titlesize": 9.600000000000001,
    "xtick.labelsize": 8.8,
    "ytick.labelsize": 8.8,
    "legend.fontsize": 8.8,
    "legend.title_fontsize": 9.600000000000001,
    "figure.facecolor": "white",
    "axes.labelcolor": ".15",
    "xtick.direction": "out",
    "ytick.direction": "out",
    "xtick.color": ".15",
    "ytick.color": ".15",
    "axes.axisbelow": True,
    "grid.linestyle": "-",
    "text.color": ".15",
    "font.family": "sans-serif",
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans",
                        "sans-serif"],
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "image.cmap": "rocket",
    "xtick.top": False,
    "ytick.right": False,
    "axes.grid": False,
    "axes.facecolor": "white",
    "axes.edgecolor": ".15",
    "grid.color": ".8",
    "axes.spines.left": True,
    "axes.spines.bottom": True,
    "axes.spines.right": True,
    "axes.spines.top": True,
    "xtick.bottom": True,
    "ytick.left": True,
}


def apply_style() -> None:
    """Apply the project-wide style: seaborn's ``ticks`` theme with :data:`STYLE` on top.

    The same rcParams as ``seaborn.set_theme(context="paper", style="ticks",
    palette=list(MARK_COLOURS), rc=STYLE)``, without importing seaborn
    (:data:`SEABORN_THEME_RC`). One exception: seaborn's default colormap ``rocket`` exists
    only once seaborn is imported, so without it the default colormap stays matplotlib's;
    a figure that draws with the default colormap imports seaborn first.
    """
    rc = dict(SEABORN_THEME_RC)
    if "rocket" not in matplotlib.colormaps:
        del rc["image.cmap"]
    matplotlib.rcParams.update(rc)
    matplotlib.rcParams["axes.prop_cycle"] = cycler("color", [to_rgb(c) for c in MARK_COLOURS])
    matplotlib.rcParams.update(STYLE)


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


def job_colour(job: int) -> str:
    """The colour of job number ``job`` in a timeline (cycling through :data:`JOB_COLOURS`)."""
    return JOB_COLOURS[job % len(JOB_COLOURS)]


def mark_colour(index: int) -> str:
    """The colour of the ``index``-th other category of a figure (:data:`MARK_COLOURS`)."""
    return MARK_COLOURS[index % len(MARK_COLOURS)]


def text_colour_on(colour: str) -> str:
    """``black`` or ``white``, whichever reads better on a fill of ``colour``."""
    red, green, blue = to_rgb(colour)
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.55 else "white"


def draw_gantt(
    ax: Axes,
    frame: pd.DataFrame,
    rows: Sequence[str] | None = None,
    row_column: str = "node",
    labels: Sequence[str] | None = None,
) -> list[str]:
    """Draw phase rows (``job, phase, start_s, end_s`` and ``row_column``) on ``ax``.

    One bar row per distinct ``row_column`` value (default order: rollout nodes, then
    training nodes), one colour per job (:func:`job_colour`), training hatched, migrated
    tails thin and translucent. Returns the row keys drawn.
    """
    keys = frame[row_column].astype(str)
    if rows is None:
        rows = sorted(keys.unique(), key=lambda n: (n[:1] != "R", len(n), n))
    index = {r: i for i, r in enumerate(rows)}
    for key, rec in zip(keys, frame.itertuples(index=False), strict=True):
        if key not in index:
            continue
        tail = rec.phase == "tail"
        ax.barh(
            index[key], rec.end_s - rec.start_s, left=rec.start_s,
            height=0.35 if tail else 0.7,
            color=job_colour(int(rec.job)),
            alpha=0.55 if tail else 1.0,
            hatch=TRAIN_HATCH if rec.phase == "train" else ROLLOUT_HATCH,
            edgecolor="white", linewidth=0.4,
        )
    ax.set_yticks(range(len(rows)), list(labels) if labels is not None else
                  [node_label(r) for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    return list(rows)


def legend_below(
    fig: Figure,
    handles: Sequence[Any],
    labels: Sequence[str] | None = None,
    *,
    top: float = 1.0,
    **kwargs: Any,
) -> Legend:
    """A frameless figure legend centred at the canvas's bottom, and the layout above it.

    The legend gets as many columns as fit the canvas's width (at most one per entry, or
    ``ncols``), sits inside the canvas, and :meth:`Figure.tight_layout` lays the axes out
    in the rest (up to ``top``, a fraction of the height). Extra keywords go to
    :meth:`Figure.legend`.
    """
    ncols = int(kwargs.pop("ncols", kwargs.pop("ncol", len(handles))))
    if labels is not None:
        kwargs["labels"] = labels
    while True:
        legend = fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                            ncols=ncols, frameon=False, **kwargs)
        box = legend.get_window_extent()
        if box.width <= fig.bbox.width or ncols == 1:
            break
        legend.remove()
        ncols -= 1
    fig.tight_layout(rect=(0.0, box.height / fig.bbox.height + 0.01, 1.0, top))
    return legend


def wrapped_title(ax: Axes, title: str, **kwargs: Any) -> Text:
    """Set a left-aligned axes title, broken into lines at spaces to fit the axes' width."""
    text = ax.set_title(title, loc="left", **kwargs)
    width = ax.get_window_extent().width
    drawn = text.get_window_extent().width
    if drawn > width:
        per_line = max(10, int(len(title) * width / drawn) - 1)
        text.set_text("\n".join(textwrap.wrap(title, per_line, break_long_words=False)))
    return text


def legend_handles(job_labels: Sequence[str], tail: bool = False) -> list[Patch]:
    """Legend patches: one per job colour, then rollout / training (/ migrated tail)."""
    handles = [Patch(color=job_colour(j), label=label) for j, label in enumerate(job_labels)]
    handles += [Patch(facecolor="white", edgecolor="grey", label="rollout"),
                Patch(facecolor="white", edgecolor="grey", hatch=TRAIN_HATCH, label="training")]
    if tail:
        handles.append(Patch(facecolor="grey", alpha=0.55, label="migrated tail"))
    return handles
