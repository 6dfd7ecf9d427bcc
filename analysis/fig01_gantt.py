"""Fig. 1: Solo-D (disaggregated, bubbles) versus woven co-execution of two jobs.

Reads the per-phase table of the event simulation (columns of
``rollmux.schedule.eventsim.PHASE_COLUMNS`` plus ``layout``) and draws one timeline
per layout, one row per node, one colour per job, hatched for training.

    python analysis/fig01_gantt.py --phases results/gantt/phases.csv \
        --png figures/fig01_gantt.png --pdf figures/fig01_gantt.pdf
"""

from __future__ import annotations

import pandas as pd
from matplotlib.patches import Patch

from rollmux.plotstyle import JOB_COLOURS, TRAIN_HATCH, apply_style, figure_main, node_label

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
        nodes = sorted(part["node"].unique(), key=lambda n: (n[0] != "R", n))
        for row, node in enumerate(nodes):
            on_node = part[part["node"] == node]
            for rec in on_node.itertuples(index=False):
                ax.barh(
                    row, rec.end_s - rec.start_s, left=rec.start_s, height=0.6,
                    color=JOB_COLOURS[int(rec.job) % len(JOB_COLOURS)],
                    hatch=TRAIN_HATCH if rec.phase == "train" else "",
                    edgecolor="white", linewidth=0.5,
                )
        ax.set_yticks(range(len(nodes)), [node_label(n) for n in nodes])
        ax.invert_yaxis()
        busy = part["end_s"].max()
        ax.set_title(
            f"{LAYOUT_TITLES[layout]}  ({len(nodes)} nodes, makespan {busy:,.0f} s)", loc="left"
        )
    axes[-1, 0].set_xlabel("time (s)")
    jobs = sorted(phases["job"].unique())
    handles = [Patch(color=JOB_COLOURS[int(j) % len(JOB_COLOURS)], label=f"job {j}") for j in jobs]
    handles += [
        Patch(facecolor="white", edgecolor="grey", label="rollout"),
        Patch(facecolor="white", edgecolor="grey", hatch=TRAIN_HATCH, label="training"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the phase table, write PNG and PDF."""
    return figure_main(__doc__, {"phases": "per-phase CSV"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
