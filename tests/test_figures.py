"""The figure check: every figure script's text reads (docs/figures.md, "The figure check").

Each script of ``analysis/`` is run on its stand-in inputs (tests/figure_inputs.py: small
copies of a pipeline run's results) in process; the figure it hands to ``save_figure`` is
measured with matplotlib's renderer (tests/figcheck.py) and fails on text that overlaps
other text, leaves the canvas, straddles its axes' frame, or has data drawn through a
legend's text.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
import seaborn as sns
from figcheck import overlap_depth, shaded_policy_colours, text_problems
from figure_inputs import FIGURES
from matplotlib.colors import to_hex

import rollmux.plotstyle as plotstyle

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (REPO / "analysis").glob("fig*.py"))
#: Every policy colour: built-in policies and plug-ins.
POLICY_COLOURS = [s.colour for s in plotstyle.POLICY_STYLES.values()] + list(
    plotstyle.PLUGIN_COLOURS)


def _load(script: str) -> ModuleType:
    """Import an analysis script as a module."""
    spec = importlib.util.spec_from_file_location(Path(script).stem, REPO / "analysis" / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _drawn_figure(script: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The figure a script draws from its stand-in inputs (caught before it is saved)."""
    caught: list[Any] = []
    monkeypatch.setattr(plotstyle, "save_figure", lambda fig, paths: caught.append(fig))
    argv = [*FIGURES[script].argv(), "--png", str(tmp_path / "f.png"),
            "--pdf", str(tmp_path / "f.pdf")]
    assert _load(script).main(argv) == 0
    assert len(caught) == 1, script
    return caught[0]


def test_every_figure_script_has_stand_in_inputs() -> None:
    """The check knows every script of analysis/ (a new one must be added to its table)."""
    assert sorted(FIGURES) == SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_figure_text_reads(script: str, monkeypatch: pytest.MonkeyPatch,
                           tmp_path: Path) -> None:
    """No text of the figure overlaps other text, leaves the canvas or has data through it."""
    fig = _drawn_figure(script, monkeypatch, tmp_path)
    try:
        assert text_problems(fig) == []
    finally:
        plt.close(fig)


# ------------------------------------------------------------------ the check can fail


def _clean() -> Any:
    """A small figure whose text reads: title, labels, a legend in a free corner."""
    plotstyle.apply_style()
    fig, ax = plt.subplots(figsize=(4.0, 3.0))
    ax.plot([0, 1], [0, 1], label="rising")
    ax.set_title("a title")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


def test_a_clean_figure_passes() -> None:
    """The check's baseline: a plain, well laid-out figure gives no problem."""
    fig = _clean()
    assert text_problems(fig) == []
    plt.close(fig)


def test_planted_overlaps_are_caught() -> None:
    """Each kind of defect planted in the clean figure is reported, naming the artists."""
    fig = _clean()
    ax = fig.axes[0]
    # a legend above the axes, over the title (Fig. 2's defect)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.98), frameon=False)
    assert any("title 'a title' overlaps" in p and "legend" in p for p in text_problems(fig))
    plt.close(fig)

    fig = _clean()
    fig.axes[0].annotate("a note", (0.5, 0.5))
    fig.axes[0].annotate("another note", (0.52, 0.51))
    assert any("'a note' overlaps" in p for p in text_problems(fig))
    plt.close(fig)

    fig = _clean()
    fig.axes[0].text(-0.2, 0.5, "across the axis")  # a label across the y axis (Fig. 19)
    problems = text_problems(fig)
    assert any("'across the axis' crosses the frame" in p for p in problems)
    plt.close(fig)

    fig = _clean()
    fig.text(0.8, 0.5, "off the edge of the canvas")
    assert any("leaves the canvas" in p for p in text_problems(fig))
    plt.close(fig)

    fig = _clean()
    ax = fig.axes[0]
    ax.legend(loc="center", frameon=False)
    ax.axvline(0.5, color="grey", linestyle="--")  # a line through the legend (Fig. 12)
    assert any("drawn through its text" in p for p in text_problems(fig))
    plt.close(fig)


def test_a_framed_legend_over_data_is_fine() -> None:
    """An opaque legend frame drawn above the data hides it: not a problem."""
    fig = _clean()
    ax = fig.axes[0]
    ax.axvline(0.5, color="grey", linestyle="--")
    ax.legend(loc="center", frameon=True, framealpha=1.0)
    assert text_problems(fig) == []
    plt.close(fig)


def test_rotated_labels_are_measured_as_rotated_boxes() -> None:
    """Neighbouring 45-degree tick labels do not collide; a crowded axis does."""
    plotstyle.apply_style()
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    names = [f"workload class {i}" for i in range(8)]
    ax.bar(range(8), np.ones(8))
    ax.set_xticks(range(8), names, rotation=45, ha="right", rotation_mode="anchor")
    fig.tight_layout()
    assert text_problems(fig) == []
    ax.set_xticks(range(8), names, rotation=0, ha="center")
    assert any("x tick label" in p and "overlaps" in p for p in text_problems(fig))
    plt.close(fig)


def test_overlap_depth_of_rotated_squares() -> None:
    """Separating-axis overlap: apart, touching and overlapping squares, rotated or not."""
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    right = np.array([1.0, 0.0])
    assert overlap_depth(square, square + 2 * right) < 0
    assert overlap_depth(square, square + right) == pytest.approx(0.0)
    assert overlap_depth(square, square + 0.5 * right) == pytest.approx(0.5)
    turn = np.array([[1.0, -1.0], [1.0, 1.0]]) / np.sqrt(2)
    diamond = (square - 0.5) @ turn.T + np.array([1.6, 0.5])
    assert overlap_depth(square, diamond) > 0  # its left corner reaches x = 0.89
    assert overlap_depth(square, diamond + 0.2 * right) < 0


@pytest.mark.parametrize("script", SCRIPTS)
def test_policy_colours_are_drawn_unshaded(script: str, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """No fill or line of the figure is a shade of a policy's colour (Fig. 15's bars were
    seaborn-desaturated while their legend was not)."""
    fig = _drawn_figure(script, monkeypatch, tmp_path)
    try:
        assert shaded_policy_colours(fig, POLICY_COLOURS) == []
    finally:
        plt.close(fig)


def test_a_desaturated_policy_bar_is_caught() -> None:
    """seaborn's default saturation (0.75) turns RollMux's blue into a shade: reported."""
    plotstyle.apply_style()
    fig, ax = plt.subplots()
    frame = {"policy": ["RollMux", "Solo-D"], "cost": [1.0, 2.0]}
    palette = plotstyle.policy_palette(["rollmux", "solo-d"], by="label")
    sns.barplot(frame, x="policy", y="cost", hue="policy", palette=palette, ax=ax)
    shaded = to_hex(sns.desaturate(plotstyle.policy_colour("rollmux"), 0.75))
    assert any(f"Rectangle: {shaded} is a shade" in p
               for p in shaded_policy_colours(fig, POLICY_COLOURS))
    ax.clear()
    sns.barplot(frame, x="policy", y="cost", hue="policy", palette=palette, saturation=1.0,
                ax=ax)
    assert shaded_policy_colours(fig, POLICY_COLOURS) == []
    plt.close(fig)
