"""Ours: the Theorem 1 boundary map, where round-robin is (and is not) optimal.

Reads the boundary map of rule theorem1_summary (results/theorem1/summary.csv,
``rollmux.theorem1.boundary_map``: seeded random small groups per family, round-robin
compared with the exhaustive optimum) and draws per family the share of instances where
round-robin is optimal and the worst utilisation ratio optimum / round-robin, with the
number of counterexamples.

    python analysis/fig_theorem1_boundary.py --summary results/theorem1/summary.csv \
        --png figures/fig_theorem1_boundary.png --pdf figures/fig_theorem1_boundary.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, mark_colour, text_colour_on

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def _label(family: str) -> str:
    """``a_one_rollout_one_train`` -> ``(a) one rollout one train``."""
    key, _, rest = family.partition("_")
    return f"({key}) {rest.replace('_', ' ')}"


def draw(summary: pd.DataFrame) -> plt.Figure:
    """Two panels: round-robin optimal share, worst optimum / round-robin ratio."""
    apply_style()
    fig, (ax_f, ax_r) = plt.subplots(1, 2, figsize=(8.0, 3.2), sharey=True)
    y = np.arange(len(summary))
    labels = [f"{_label(f)}\n[{o}]" for f, o in zip(summary["family"], summary["objective"],
                                                   strict=True)]
    ax_f.barh(y, summary["rr_optimal_fraction"], color=mark_colour(0))
    for yi, rec in zip(y, summary.itertuples(index=False), strict=True):
        ax_f.annotate(f"{rec.n_counterexamples} / {rec.n_instances} counterexamples",
                      (0.02, yi), va="center", fontsize=7, color=text_colour_on(mark_colour(0)))
    ax_f.set_yticks(y, labels, fontsize=7)
    ax_f.set_ylim(len(summary) - 0.5, -0.5)
    ax_f.set_xlim(0, 1)
    ax_f.set_xlabel("share of instances where round-robin is optimal")
    ax_f.set_title("Theorem 1 boundary map", loc="left")
    ax_r.barh(y, summary["worst_util_ratio"] - 1.0, left=1.0, color=mark_colour(1))
    for yi, value in zip(y, summary["worst_util_ratio"], strict=True):
        ax_r.annotate(f"{value:.3f}", (value, yi), va="center", ha="left", fontsize=7)
    ax_r.axvline(1.0, color="grey", linewidth=0.8)
    ax_r.set_xlim(1.0, float(summary["worst_util_ratio"].max()) * 1.08)
    ax_r.set_xlabel("worst utilisation ratio, optimum / round-robin")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the boundary map, write PNG and PDF."""
    return figure_main(
        __doc__, {"summary": "boundary-map CSV"}, draw, argv,
        note=lambda summary: f"{int(summary['n_counterexamples'].sum())} counterexamples",
    )


if __name__ == "__main__":
    raise SystemExit(main())
