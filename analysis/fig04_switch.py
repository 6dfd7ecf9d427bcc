"""Fig. 4: cold vs warm start latency vs model size, rollout (H20) and training (H800).

Reads the switch table of the pipeline (``rollmux.experiments.model_figures.switch_table``: the
switch model of docs/model.md sec. 7, one row per model size and phase) and draws warm and cold
start per phase on a log scale, labelled with the cold/warm speed-up.

    python analysis/fig04_switch.py --switch results/paperfigs/fig04_switch.csv \
        --png figures/fig04_switch.png --pdf figures/fig04_switch.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import SWITCH_COLOURS, apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

PANELS = (("rollout", "Rollout phase"), ("train", "Training phase"))


def draw(switch: pd.DataFrame) -> plt.Figure:
    """One panel per phase: warm and cold bars per model size, speed-ups annotated."""
    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.0), sharey=True)
    for ax, (phase, title) in zip(axes, PANELS, strict=True):
        part = switch[switch["phase"] == phase].sort_values("model_size_b")
        x = np.arange(len(part))
        width = 0.38
        ax.bar(x - width / 2, part["warm_s"], width, color=SWITCH_COLOURS["warm"],
               label="warm start")
        cold = ax.bar(x + width / 2, part["cold_s"], width, color=SWITCH_COLOURS["cold"],
                      label="cold start")
        for bar, speedup in zip(cold, part["speedup"], strict=True):
            ax.annotate(f"{speedup:.0f}x", (bar.get_x() + bar.get_width() / 2,
                                            bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x, [f"{s:g}B" for s in part["model_size_b"]])
        ax.set_yscale("log")
        gpu = part["gpu_type"].iloc[0]
        gpus = int(part["gpus"].iloc[0])
        ax.set_title(f"{title} ({gpus} x {gpu})", loc="left")
        ax.set_xlabel("model size")
    axes[0].set_ylabel("switch latency (s)")
    axes[0].legend(frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the switch table, write PNG and PDF."""
    return figure_main(
        __doc__, {"switch": "switch-latency CSV"}, draw, argv,
        note=lambda switch: f"max cold {switch['cold_s'].max():.0f} s, "
        f"max speed-up {switch['speedup'].max():.1f}x",
    )


if __name__ == "__main__":
    raise SystemExit(main())
