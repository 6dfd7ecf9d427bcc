"""Fig. 1: Solo-D (disaggregated, bubbles) versus woven co-execution of two jobs.

Reads the per-phase table of the event simulation (columns of
``rollmux.schedule.eventsim.TIMELINE_COLUMNS`` plus ``layout``) and draws one timeline
per layout, one row per node, one colour per job, hatched for training.

    python analysis/fig01_gantt.py --phases results/gantt/phases.csv \
        --png figures/fig01_gantt.png --pdf figures/fig01_gantt.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import (
    apply_style,
    draw_gantt,
    figure_main,
    legend_below,
    legend_handles,
    wrapped_title,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

LAYOUT_TITLES = {
    "solo-d": "Solo-D: each job on its own rollout and training GPUs",
    "woven": "RollMux: both jobs woven on one rollout and one training node",
}


def draw(phases: pd.DataFrame) -> plt.Figure:
    """Draw the Gantt panels of every layout in ``phases``."""
    apply_style()
    layouts = [name for name in LAYOUT_TITLES if name in set(phases["layout"])]
    heights = [phases[phases["layout"] == name]["node"].nunique() for name in layouts]
    fig, axes = plt.subplots(
        len(layouts), 1, figsize=(7.0, 0.55 * sum(heights) + 1.4 * len(layouts)),
        sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False,
    )
    for ax, layout in zip(axes[:, 0], layouts, strict=True):
        part = phases[phases["layout"] == layout]
        nodes = draw_gantt(ax, part)
        busy = part["end_s"].max()
        wrapped_title(
            ax, f"{LAYOUT_TITLES[layout]}  ({len(nodes)} nodes, makespan {busy:,.0f} s)"
        )
    axes[-1, 0].set_xlabel("time (s)")
    jobs = sorted(phases["job"].unique())
    handles = legend_handles([f"job {j}" for j in range(int(max(jobs)) + 1)])
    legend_below(fig, handles)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the phase table, write PNG and PDF."""
    return figure_main(__doc__, {"phases": "per-phase CSV"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
