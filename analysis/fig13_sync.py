"""Fig. 13: model sync time, topology-aware vs flat (veRL), 8->8 and 16->16 GPUs.

Reads the sync table of the pipeline (``rollmux.experiments.model_figures.sync_table``: the sync
model of docs/model.md sec. 6 per model size and GPU count) and draws both sync times per
model size, labelled with the speed-up.

    python analysis/fig13_sync.py --sync results/paperfigs/fig13_sync.csv \
        --png figures/fig13_sync.png --pdf figures/fig13_sync.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, legend_below, policy_colour, policy_label

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(sync: pd.DataFrame) -> plt.Figure:
    """One panel per GPU count: flat and topology-aware bars per model size."""
    apply_style()
    counts = sorted(sync["gpus"].unique())
    fig, axes = plt.subplots(1, len(counts), figsize=(3.5 * len(counts), 3.0), squeeze=False)
    for ax, n in zip(axes[0], counts, strict=True):
        part = sync[sync["gpus"] == n].sort_values("model_size_b")
        x = np.arange(len(part))
        width = 0.38
        ax.bar(x - width / 2, part["flat_s"], width, color=policy_colour("verl"),
               label=f"{policy_label('verl')} (flat, every rollout GPU pulls a copy)")
        topo = ax.bar(x + width / 2, part["topology_s"], width, color=policy_colour("rollmux"),
                      label=f"{policy_label('rollmux')} (topology-aware)")
        for bar, flat, speedup in zip(topo, part["flat_s"], part["speedup"], strict=True):
            ax.annotate(f"{speedup:.2f}x", (bar.get_x(), flat), ha="center", va="bottom",
                        fontsize=7)
        ax.set_xticks(x, [f"{s:g}B\nTP{tp}" for s, tp in zip(part["model_size_b"],
                                                            part["tensor_parallel"],
                                                            strict=True)])
        ax.set_title(f"{n} H800 -> {n} H20", loc="left")
        ax.set_ylabel("sync time (s)")
        ax.set_ylim(0, float(part["flat_s"].max()) * 1.2)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    legend_below(fig, handles, labels, fontsize=7, ncol=2)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the sync table, write PNG and PDF."""
    return figure_main(__doc__, {"sync": "sync-time CSV"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
