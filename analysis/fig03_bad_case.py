"""Fig. 3: the bad case, two rollout-heavy jobs sharing one rollout node.

Reads the per-phase table and the per-job slowdowns written by the pipeline
(``rollmux.experiments.model_figures.bad_case``: each job alone vs all jobs pinned to one H20 node,
each keeping its own H800 nodes, round-robin with warm switches) and draws both timelines and
the slowdown of each job (the paper reports 1.40x and 1.64x).

    python analysis/fig03_bad_case.py --phases results/paperfigs/fig03_phases.csv \
        --slowdowns results/paperfigs/fig03_slowdowns.csv \
        --png figures/fig03_bad_case.png --pdf figures/fig03_bad_case.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import (
    apply_style,
    draw_gantt,
    figure_main,
    job_colour,
    legend_below,
    legend_handles,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

TITLES = {"solo": "Each job alone on its own nodes",
          "shared": "Both jobs pinned to one H20 rollout node"}


def draw(phases: pd.DataFrame, slowdowns: pd.DataFrame) -> plt.Figure:
    """Two timelines (solo, shared) and the per-job slowdown bars."""
    apply_style()
    fig = plt.figure(figsize=(8.0, 4.2))
    grid = fig.add_gridspec(2, 2, width_ratios=[3.2, 1.0])
    end = float(phases["end_s"].max())
    for row, layout in enumerate(("solo", "shared")):
        ax = fig.add_subplot(grid[row, 0])
        part = phases[phases["layout"] == layout]
        draw_gantt(ax, part)
        ax.set_xlim(0, end * 1.01)
        ax.set_title(f"{TITLES[layout]} (makespan {part['end_s'].max():,.0f} s)", loc="left")
        if row == 1:
            ax.set_xlabel("time (s)")
    ax = fig.add_subplot(grid[:, 1])
    labels = [f"Type-{t}\n(job {j})" for j, t in zip(slowdowns["job"], slowdowns["job_type"],
                                                    strict=True)]
    colours = [job_colour(int(j)) for j in slowdowns["job"]]
    bars = ax.bar(labels, slowdowns["slowdown"], color=colours)
    for bar, value in zip(bars, slowdowns["slowdown"], strict=True):
        ax.annotate(f"{value:.2f}x", (bar.get_x() + bar.get_width() / 2, value),
                    ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_ylabel("iteration time shared / solo")
    status = slowdowns["status"].iloc[0]
    ax.set_title(f"slowdown ({status})", loc="left")
    jobs = [f"job {j}: Type-{t}" for j, t in zip(slowdowns["job"], slowdowns["job_type"],
                                                 strict=True)]
    legend_below(fig, legend_handles(jobs), ncol=4)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the two tables, write PNG and PDF."""
    return figure_main(
        __doc__, {"phases": "per-phase CSV", "slowdowns": "per-job slowdown CSV"}, draw, argv,
        note=lambda slowdowns, **_: "slowdowns "
        + ", ".join(f"{v:.2f}x" for v in slowdowns["slowdown"]),
    )


if __name__ == "__main__":
    raise SystemExit(main())
