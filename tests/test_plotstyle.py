"""The plotting module: one policy -> label -> colour mapping, used by every figure script."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest

from rollmux.placement import builtin_policy_names
from rollmux.plotstyle import (
    EVENT_COLOURS,
    JOB_COLOURS,
    MIN_POLICY_DISTANCE,
    PALETTES,
    PLUGIN_COLOURS,
    POLICY_STYLES,
    ordered_policies,
    policy_colour,
    policy_label,
    policy_palette,
    text_colour_on,
)

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "analysis").glob("fig*.py"))
#: Colours a script may name itself: neutral marks (reference lines, bounds, text).
NEUTRAL = {"grey", "gray", "black", "white"}
HEX = re.compile(r"#[0-9A-Fa-f]{6}\b")


def _load(path: Path) -> ModuleType:
    """Import an analysis script as a module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_registered_policy_has_one_distinct_style() -> None:
    """Each built-in policy has a label and a colour, and no two policies share a colour."""
    assert set(builtin_policy_names()) <= set(POLICY_STYLES)
    colours = [style.colour for style in POLICY_STYLES.values()]
    assert len(set(colours)) == len(colours)
    assert all(mcolors.is_color_like(c) for c in colours)


def test_unknown_policy_keeps_its_colour_whatever_is_drawn_beside_it() -> None:
    """A plug-in's colour depends on its name only; its label is its name."""
    alone = policy_palette(["my-policy"])
    beside = policy_palette(["rollmux", "verl", "my-policy"])
    assert alone["my-policy"] == beside["my-policy"] == policy_colour("my-policy")
    assert policy_label("my-policy") == "my-policy"
    assert policy_palette(["verl"], by="label") == {"veRL": POLICY_STYLES["verl"].colour}
    with pytest.raises(ValueError, match="by must be"):
        policy_palette(["verl"], by="colour")


def test_ordered_policies_fixed_order() -> None:
    """Known policies in the mapping's order, each once, then unknown ones sorted."""
    assert ordered_policies(["zeta", "verl", "rollmux", "verl", "alpha"]) == [
        "rollmux", "verl", "alpha", "zeta"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_figure_script_uses_the_one_palette(script: Path) -> None:
    """No script defines colours or policy labels of its own: no hex colours, no colour
    maps, no maps keyed by policy names, no indexing of the palettes.

    Colours come from rollmux.plotstyle (policy_colour, job_colour, mark_colour, the named
    maps); a ``color=`` literal may only be a neutral mark (grey, black, white).
    """
    text = script.read_text(encoding="utf-8")
    assert "rollmux.plotstyle" in text, "draws without the plotting module"
    assert not HEX.search(text), f"hex colour literal {HEX.search(text)}"
    tree = ast.parse(text)
    policies = set(builtin_policy_names())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = ", ".join(getattr(target, "id", "") for target in targets)
            assert not re.search(r"COLOU?RS", name), f"own colour map {name}"
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if not (isinstance(key, ast.Constant) and key.value in policies
                        and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    continue
                # A policy's label or colour written again: a second label or colour map.
                assert value.value != policy_label(key.value), f"own label map {name}"
                assert not mcolors.is_color_like(value.value), f"own colour map {name}"
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id in ("JOB_COLOURS", "MARK_COLOURS")):
            raise AssertionError(f"line {node.lineno}: {node.value.id}[...]: use "
                                 "job_colour(job index) or mark_colour(i)")
        if (isinstance(node, ast.keyword) and node.arg in ("color", "colour", "c")
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            assert node.value.value in NEUTRAL, f"colour literal {node.value.value!r}"


def _lab(colour: str) -> np.ndarray:
    """CIELAB (D65) coordinates of a matplotlib colour (sRGB companding, CIE formulas)."""
    rgb = np.array(mcolors.to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str) -> float:
    """CIE 1976 colour difference of two colours."""
    return float(np.linalg.norm(_lab(a) - _lab(b)))


def test_delta_e_tells_near_from_far_colours() -> None:
    """The distance used below: 0 for one colour, small for near shades, large for hues."""
    assert delta_e("#0072B2", "#0072B2") == 0.0
    assert delta_e("#0072B2", "#0075B5") < 3
    assert delta_e("#0072B2", "#D55E00") > 60
    assert abs(delta_e("white", "black") - 100.0) < 0.1


def test_policy_colours_mean_policies_only() -> None:
    """No colour of a job, phase, switch, drift, event or mark palette is near a policy's."""
    policy = [style.colour for style in POLICY_STYLES.values()] + list(PLUGIN_COLOURS)
    near = [(name, colour, other, round(delta_e(colour, other), 1))
            for name, palette in PALETTES.items() for colour in palette for other in policy
            if delta_e(colour, other) < MIN_POLICY_DISTANCE]
    assert near == []


@pytest.mark.parametrize("name", sorted(PALETTES))
def test_each_palette_tells_its_entries_apart(name: str) -> None:
    """Within one palette, every two colours are far apart (delta E >= 25)."""
    palette = list(PALETTES[name])
    near = [(a, b) for i, a in enumerate(palette) for b in palette[i + 1:]
            if delta_e(a, b) < 25]
    assert near == []


def test_timeline_events_differ_from_every_job() -> None:
    """Fig. 19 draws jobs and events together: no event colour is near a job colour."""
    assert min(delta_e(e, j) for e in EVENT_COLOURS.values() for j in JOB_COLOURS) >= 20


def test_text_on_a_fill_reads() -> None:
    """Dark fills get white text, light fills black."""
    assert text_colour_on("#332288") == "white"
    assert text_colour_on("#DDCC77") == "black"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_job_colours_colour_jobs_only(script: Path) -> None:
    """``job_colour`` takes a job's index, never a literal (a fixed colour of another mark)."""
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "job_colour"
                and node.args and isinstance(node.args[0], ast.Constant)):
            raise AssertionError(f"line {node.lineno}: job_colour({node.args[0].value!r})")


def _enclosing_loops(tree: ast.AST) -> dict[ast.AST, list[ast.AST]]:
    """Each node -> the for-loops and comprehensions it lies in (outermost first)."""
    out: dict[ast.AST, list[ast.AST]] = {}

    def visit(node: ast.AST, loops: list[ast.AST]) -> None:
        out[node] = loops
        inner = [*loops, node] if isinstance(node, ast.For | ast.comprehension) else loops
        for child in ast.iter_child_nodes(node):
            visit(child, inner)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            for child in ast.iter_child_nodes(node):
                out[child] = [*loops, *node.generators]

    visit(tree, [])
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_job_colours_colour_the_jobs_of_a_timeline(script: Path) -> None:
    """``job_colour(i)`` is called with a job's index: its argument, or the loop it runs
    in, names a job; other categories (group sizes, job types, families) use mark_colour."""
    text = script.read_text(encoding="utf-8")
    tree = ast.parse(text)
    loops = _enclosing_loops(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "job_colour"):
            continue
        sources = [ast.get_source_segment(text, node.args[0]) or ""]
        for loop in loops.get(node, []):
            target, over = (loop.target, loop.iter)
            sources += [ast.get_source_segment(text, target) or "",
                        ast.get_source_segment(text, over) or ""]
        assert any("job" in s for s in sources), (
            f"line {node.lineno}: job_colour({sources[0]}) colours no job: use mark_colour")


def _replay_frames(policies: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A tiny replay table and time series of ``policies`` (one seed)."""
    table = pd.DataFrame({
        "trace": "t", "policy": policies, "seed": 0, "jobs": 3,
        "cost_usd_per_h": np.arange(1.0, len(policies) + 1) * 100,
        "total_cost_over_optimal": np.linspace(1.0, 2.0, len(policies)),
        "slo_attainment_realised": np.linspace(1.0, 0.5, len(policies)),
        "peak_gpus_total": 16})
    ts = pd.DataFrame([{"policy": p, "seed": 0, "time_h": t, "cost_usd_per_h": 10.0 * t,
                        "gpus_H20": 8, "gpus_H800": 8} for p in policies for t in (0.0, 1.0)])
    return table, ts


def _line_colours(fig: object) -> dict[str, str]:
    """Label -> colour (hex) of every labelled line of a figure."""
    out = {}
    for ax in fig.axes:  # type: ignore[attr-defined]
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out[line.get_label()] = mcolors.to_hex(line.get_color())
    return out


def test_replay_figures_draw_each_policy_in_its_colour() -> None:
    """Fig. 14 and Fig. 20 draw every policy in its one colour, whatever the policy list."""
    fig14 = _load(REPO / "analysis" / "fig14_trace_replay.py")
    fig20 = _load(REPO / "analysis" / "fig20_mixed.py")
    for policies in (["rollmux", "solo-d", "verl"], ["verl", "greedy"]):
        table, ts = _replay_frames(policies)
        for fig in (fig14.draw(table, ts, policies), fig20.draw(table, ts)):
            colours = _line_colours(fig)
            for policy in policies:
                drawn = [c for label, c in colours.items()
                         if label.startswith(policy_label(policy) + " (")]
                assert drawn == [policy_colour(policy).lower()], (policy, colours)


@pytest.mark.slow
def test_statistical_figures_are_byte_identical_across_reruns(tmp_path: Path) -> None:
    """Fig. 15 (seaborn facets) and the fluid-bound heatmap give the same PDF bytes twice."""
    fig15 = _load(REPO / "analysis" / "fig15_sensitivity.py")
    fluid = _load(REPO / "analysis" / "fig_fluid_bound.py")
    rows = [{"kind": kind, "value": value, "policy": p, "seed": seed,
             "total_cost_over_optimal": 1.0 + 0.1 * k + 0.01 * seed,
             "slo_attainment_realised": 1.0 - 0.1 * k}
            for kind, values in (("workload", ["BL", "Mixed"]), ("slo", ["1.2", "1,2"]),
                                 ("maxgroup", ["2", "5"]))
            for value in values
            for k, p in enumerate(["rollmux", "random", "greedy"]) for seed in (0, 1)]
    sens = tmp_path / "sens.csv"
    pd.DataFrame(rows).to_csv(sens, index=False)
    table = pd.DataFrame({"trace": ["a", "a", "b"], "policy": ["rollmux", "verl", "rollmux"],
                          "seed": 0, "cost_over_fluid": [1.2, 1.5, 1.1]})
    _, ts = _replay_frames(["rollmux", "verl"])
    ts = ts.assign(trace="a")
    bound = pd.DataFrame({"trace": "a", "time_h": [0.0, 1.0],
                          "fluid_cost_usd_per_h": [5.0, 5.0]})
    paths = {name: tmp_path / f"{name}.csv" for name in ("table", "fluid", "ts")}
    table.to_csv(paths["table"], index=False)
    bound.to_csv(paths["fluid"], index=False)
    ts.to_csv(paths["ts"], index=False)
    jobs = {
        fig15: ["--table", str(sens), "--policies", "rollmux,random,greedy"],
        fluid: ["--table", str(paths["table"]), "--fluid", str(paths["fluid"]),
                "--timeseries", str(paths["ts"]), "--trace-labels", "a=trace A, first 5"],
    }
    for module, args in jobs.items():
        pdfs = []
        for run in ("1", "2"):
            png, pdf = tmp_path / f"{module.__name__}{run}.png", tmp_path / f"x{run}.pdf"
            assert module.main([*args, "--png", str(png), "--pdf", str(pdf)]) == 0
            pdfs.append(pdf.read_bytes())
        assert pdfs[0] == pdfs[1] and pdfs[0].startswith(b"%PDF"), module.__name__


#: Prints matplotlib's rcParams as JSON (each value's repr) after a style is applied.
_RC_DUMP = """
import json, sys
import matplotlib
matplotlib.use("Agg")
{setup}
print(json.dumps({{k: repr(v) for k, v in matplotlib.rcParams.items()}}))
print(json.dumps("seaborn" in sys.modules))
"""


def _rc_after(setup: str) -> tuple[dict[str, str], bool]:
    """rcParams (reprs) in a fresh interpreter after ``setup``, and whether seaborn loaded."""
    out = subprocess.run([sys.executable, "-c", _RC_DUMP.format(setup=setup)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    rc, seaborn_loaded = out.splitlines()
    return json.loads(rc), json.loads(seaborn_loaded)


def test_apply_style_is_seaborns_theme_without_seaborn() -> None:
    """apply_style sets exactly the rcParams of seaborn's set_theme call (so a seaborn
    release that changes its theme fails here), and without importing seaborn, where only
    the default colormap differs (seaborn's 'rocket' does not exist before its import)."""
    seaborns, _ = _rc_after(
        "import seaborn as sns\nfrom rollmux.plotstyle import MARK_COLOURS, STYLE\n"
        "sns.set_theme(context='paper', style='ticks', palette=list(MARK_COLOURS), rc=STYLE)")
    with_seaborn, _ = _rc_after("import seaborn\nfrom rollmux.plotstyle import apply_style\n"
                                "apply_style()")
    alone, loaded = _rc_after("from rollmux.plotstyle import apply_style\napply_style()")
    assert with_seaborn == seaborns
    assert not loaded
    assert {k for k in seaborns if alone[k] != seaborns[k]} == {"image.cmap"}
