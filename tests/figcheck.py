"""Text layout check of a drawn matplotlib figure: text that collides, leaves the canvas or is
crossed by data.

:func:`text_problems` draws the figure once and measures every visible text artist with the
renderer (``fig.canvas.draw()``, ``artist.get_window_extent(renderer)``): titles, axis
labels, tick labels, offset texts, texts and annotations, suptitles and figure texts, and
legends (as one box each; the texts inside a legend are laid out by the legend itself).
Rotated texts are measured as rotated rectangles, not as their axis-aligned boxes, so two
neighbouring 45-degree tick labels do not count as touching. It reports

- two text artists (or legends) that overlap by more than :data:`TOLERANCE_PX`;
- a text artist or legend that leaves the figure canvas;
- a text or annotation drawn in an axes (``ax.text``, ``ax.annotate``, bar labels) that
  straddles that axes' frame: partly inside, partly outside (a label across the axis);
- data (lines, bars, markers) drawn through a legend's text: a legend over data is fine
  when its opaque frame hides the data (and the data is drawn below it), a frameless
  legend over data is not.

:func:`shaded_policy_colours` finds fills and lines drawn in a shade of a policy's colour
(seaborn's desaturated bars, say) rather than the colour itself.

Used by tests/test_figures.py on every figure script of ``analysis/`` (docs/figures.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_hex, to_rgb, to_rgba
from matplotlib.figure import Figure, SubFigure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

#: Overlap (in pixels at the figure's dpi) below which two boxes only touch.
TOLERANCE_PX = 1.0


@dataclass(frozen=True)
class Item:
    """One measured text artist or legend: its name, corners in pixels, and the artist."""

    name: str
    corners: np.ndarray  # 4 x 2, a (possibly rotated) rectangle in display pixels
    artist: Text | Legend
    axes: Axes | None
    group: str  # texts of one group (a legend's own texts) are not compared with each other

    @property
    def bbox(self) -> Bbox:
        """The axis-aligned box around the corners."""
        return Bbox([self.corners.min(axis=0), self.corners.max(axis=0)])


def _label(text: Text) -> str:
    """A short, readable name of a text artist's content."""
    content = text.get_text().replace("\n", " ")
    return repr(content if len(content) <= 40 else content[:37] + "...")


def _text_corners(text: Text, renderer: RendererBase) -> np.ndarray:
    """The rotated rectangle a text occupies, as 4 corners in display pixels."""
    box = text.get_window_extent(renderer)
    angle = text.get_rotation() % 180.0
    if angle in (0.0, 90.0) or box.width == 0 or box.height == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    # The unrotated size, measured with the rotation taken away for a moment.
    rotation = text.get_rotation()
    text.set_rotation(0.0)
    flat = text.get_window_extent(renderer)
    text.set_rotation(rotation)
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [flat.width / 2, flat.height / 2]
    theta = np.deg2rad(rotation)
    turn = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    # A rotated rectangle's axis-aligned box has the rectangle's centre.
    centre = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
    corners: np.ndarray = half @ turn.T + centre
    return corners


def _shown(text: Text) -> bool:
    """Whether a text artist is drawn and has content."""
    return bool(text.get_visible() and text.get_text().strip())


def _axis_texts(ax: Axes) -> Iterator[tuple[str, Text]]:
    """Titles, axis labels, drawn tick labels and offset texts of one axes."""
    titles = {"title": ax.title, "left title": ax._left_title, "right title": ax._right_title}
    yield from titles.items()
    if not ax.axison:
        return
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if not axis.get_visible():
            continue
        yield f"{name} label", axis.label
        yield f"{name} offset", axis.get_offset_text()
        for tick in axis._update_ticks():  # the ticks drawn: those inside the view
            for label in (tick.label1, tick.label2):
                yield f"{name} tick label", label


def _figures(fig: Figure | SubFigure) -> Iterator[Figure | SubFigure]:
    """The figure and its subfigures, depth first."""
    yield fig
    for sub in fig.subfigs:
        yield from _figures(sub)


def measure(fig: Figure, renderer: RendererBase) -> list[Item]:
    """Every visible text artist and legend of a drawn figure."""
    items: list[Item] = []

    def add(where: str, text: Text, axes: Axes | None, group: str) -> None:
        if _shown(text):
            items.append(Item(f"{where} {_label(text)}", _text_corners(text, renderer), text,
                              axes, group))

    def add_legend(where: str, legend: Legend, axes: Axes | None) -> None:
        if not legend.get_visible():
            return
        box = legend.get_window_extent(renderer)
        corners = np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1],
                            [box.x0, box.y1]])
        title = legend.get_title().get_text()
        name = f"{where} legend" + (f" {title!r}" if title else "")
        items.append(Item(name, corners, legend, axes, f"legend {id(legend)}"))

    for k, sub in enumerate(_figures(fig)):
        where = "figure" if k == 0 else f"subfigure {k}"
        for attr in ("_suptitle", "_supxlabel", "_supylabel"):
            text = getattr(sub, attr, None)
            if text is not None:
                add(f"{where} {attr.strip('_')}", text, None, f"own {id(text)}")
        for text in sub.texts:
            add(f"{where} text", text, None, f"own {id(text)}")
        for legend in sub.legends:
            add_legend(where, legend, None)
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = f"axes {i}"
        for kind, text in _axis_texts(ax):
            add(f"{where} {kind}", text, ax, f"own {id(text)}")
        for text in ax.texts:
            add(f"{where} text", text, ax, f"own {id(text)}")
        if ax.legend_ is not None:
            add_legend(where, ax.legend_, ax)
    return items


def overlap_depth(a: np.ndarray, b: np.ndarray) -> float:
    """How deep two convex quadrilaterals overlap, in pixels (<= 0: apart or touching).

    The separating-axis test: the smallest overlap of the two shapes' projections on the
    normals of their edges.
    """
    depth = np.inf
    for shape in (a, b):
        edges = np.roll(shape, -1, axis=0) - shape
        for edge in edges:
            length = float(np.hypot(*edge))
            if length == 0.0:
                continue
            normal = np.array([-edge[1], edge[0]]) / length
            pa, pb = a @ normal, b @ normal
            depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return float(depth)


def _inside(corners: np.ndarray, box: Bbox, tolerance: float) -> bool:
    """Whether every corner lies in ``box`` (grown by ``tolerance``)."""
    return bool(np.all(corners[:, 0] >= box.x0 - tolerance)
                and np.all(corners[:, 0] <= box.x1 + tolerance)
                and np.all(corners[:, 1] >= box.y0 - tolerance)
                and np.all(corners[:, 1] <= box.y1 + tolerance))


def _legend_boxes(legend: Legend, renderer: RendererBase) -> list[Bbox]:
    """The boxes of a legend's texts (entries and title) in pixels."""
    texts = [*legend.get_texts(), legend.get_title()]
    return [t.get_window_extent(renderer) for t in texts if _shown(t)]


def _any_inside(points: np.ndarray, box: Bbox) -> bool:
    """Whether any of the points (n x 2, pixels) lies in ``box``."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    return bool(np.any((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                       & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)))


def _opaque(legend: Legend) -> bool:
    """Whether the legend's frame is drawn and hides what lies below it."""
    frame = legend.get_frame()
    return bool(legend.get_frame_on() and frame.get_visible() and frame.get_facecolor()[3] >= 0.8)


def _data_artists(ax: Axes) -> Iterator[Line2D | Patch | Collection]:
    """The visible data artists of an axes (lines, patches such as bars, collections)."""
    for artist in [*ax.lines, *ax.patches, *ax.collections]:
        if artist.get_visible():
            yield artist


def _crosses(artist: Line2D | Patch | Collection, box: Bbox, renderer: RendererBase) -> bool:
    """Whether a data artist draws ink inside ``box`` (display pixels)."""
    inner = box.expanded(1.0, 1.0)
    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        drawn = artist.get_linestyle() not in ("None", "", " ", "none")
        if drawn and len(path.vertices) > 1 and path.intersects_bbox(inner, filled=False):
            return True
        if artist.get_marker() not in (None, "None", "", " ", "none"):
            return _any_inside(path.vertices, inner)
        return False
    if isinstance(artist, Patch):
        if artist.get_facecolor()[3] == 0 and artist.get_edgecolor()[3] == 0:
            return False
        return bool(artist.get_window_extent(renderer).overlaps(inner))
    offsets = artist.get_offsets()
    if len(offsets) and _any_inside(artist.get_offset_transform().transform(offsets), inner):
        return True
    return bool(artist.get_paths() and not len(offsets)
                and artist.get_window_extent(renderer).overlaps(inner))


def _order(fig: Figure, ax: Axes | None) -> tuple[float, int]:
    """Drawing order of an axes (or the figure's own artists, drawn after its axes)."""
    if ax is None:
        return (np.inf, 0)
    return (ax.get_zorder(), fig.axes.index(ax))


def legend_over_data(fig: Figure, items: list[Item], renderer: RendererBase) -> list[str]:
    """Legends whose texts data is drawn through (frameless, or drawn below the data)."""
    problems = []
    for item in items:
        legend = item.artist
        if not isinstance(legend, Legend):
            continue
        boxes = _legend_boxes(legend, renderer)
        for ax in fig.axes:
            if not ax.get_visible() or not ax.bbox.overlaps(item.bbox):
                continue
            later = _order(fig, ax) > _order(fig, item.axes)
            own = ax is item.axes
            for artist in _data_artists(ax):
                drawn_over = later or (own and artist.get_zorder() > legend.get_zorder())
                if _opaque(legend) and not drawn_over:
                    continue
                if any(_crosses(artist, box, renderer) for box in boxes):
                    what = type(artist).__name__
                    label = artist.get_label()
                    if label and not label.startswith("_"):
                        what += f" {label!r}"
                    problems.append(f"{item.name}: {what} drawn through its text")
                    break
    return problems


def text_problems(fig: Figure) -> list[str]:
    """Every layout problem of the figure's text, one line each (empty: the text reads)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    items = measure(fig, renderer)
    problems = []
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if a.group == b.group or (isinstance(a.artist, Legend) and b.artist in
                                      (*a.artist.get_texts(), a.artist.get_title())):
                continue
            depth = overlap_depth(a.corners, b.corners)
            if depth > TOLERANCE_PX:
                problems.append(f"{a.name} overlaps {b.name} ({depth:.0f} px)")
    canvas = fig.bbox
    for item in items:
        if not _inside(item.corners, canvas, TOLERANCE_PX):
            problems.append(f"{item.name} leaves the canvas")
    for item in items:
        if item.axes is None or item.artist not in item.axes.texts:
            continue
        frame = item.axes.bbox
        inside = _inside(item.corners, frame, TOLERANCE_PX)
        apart = overlap_depth(item.corners, np.array(frame.corners())[[0, 2, 3, 1]]) <= 0
        if not inside and not apart:
            problems.append(f"{item.name} crosses the frame of its axes")
    problems += legend_over_data(fig, items, renderer)
    return problems


# ------------------------------------------------------------------ colours of policies


def _lab(colour: Any) -> np.ndarray:
    """CIELAB (D65) coordinates of a matplotlib colour (sRGB companding, CIE formulas)."""
    rgb = np.array(to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: Any, b: Any) -> float:
    """CIE 1976 colour difference of two colours."""
    return float(np.linalg.norm(_lab(a) - _lab(b)))


#: Lab chroma below which a colour is a neutral (black, grey, white).
NEUTRAL_CHROMA = 5.0


def _drawn_colours(fig: Figure) -> Iterator[tuple[str, Any]]:
    """(where, RGBA) of every filled or stroked mark: data artists and legend handles."""
    for i, ax in enumerate(fig.axes):
        for artist in _data_artists(ax):
            where = f"axes {i} {type(artist).__name__}"
            if isinstance(artist, Line2D):
                yield where, artist.get_color()
                yield where, artist.get_markerfacecolor()
            elif isinstance(artist, Patch):
                yield where, artist.get_facecolor()
            else:
                yield from ((where, c) for c in artist.get_facecolors())
    legends = [*fig.legends, *(ax.legend_ for ax in fig.axes if ax.legend_ is not None)]
    for legend in legends:
        for handle in legend.legend_handles:
            if isinstance(handle, Patch):
                yield "legend handle", handle.get_facecolor()
            elif isinstance(handle, Line2D):
                yield "legend handle", handle.get_color()


def shaded_policy_colours(fig: Figure, policy_colours: list[str]) -> list[str]:
    """Colours near a policy's colour but not one of them: a desaturated or shaded policy.

    Every coloured (not neutral) fill or line within ``MIN_POLICY_DISTANCE`` of a policy
    colour must be exactly a policy colour, so "blue is RollMux" holds in every figure
    (the non-policy palettes keep that distance by construction, tests/test_plotstyle.py).
    """
    from rollmux.plotstyle import MIN_POLICY_DISTANCE

    exact = {to_hex(c) for c in policy_colours}
    problems = set()
    for where, colour in _drawn_colours(fig):
        if isinstance(colour, str) and colour.lower() == "none":
            continue
        rgba = to_rgba(colour)
        if rgba[3] == 0 or to_hex(rgba) in exact:
            continue
        lab = _lab(rgba)
        if float(np.hypot(lab[1], lab[2])) < NEUTRAL_CHROMA:
            continue
        near = min(policy_colours, key=lambda p: delta_e(rgba, p))
        if delta_e(rgba, near) < MIN_POLICY_DISTANCE:
            problems.add(f"{where}: {to_hex(rgba)} is a shade of policy colour {near}, "
                         "not the colour itself")
    return sorted(problems)
