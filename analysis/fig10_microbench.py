"""Fig. 10a-c: micro-benchmark scenarios, Gantt chart and throughput at equal cost.

Reads the scenarios' simulated timelines (``rollmux.experiments.model_figures.scenario_gantt``) and
the throughput table of rule microbench_sim (results/microbench/throughput.csv) and draws,
per scenario (temporal, train, spatial mux), the woven group's first iterations and the
throughput per hourly dollar of RollMux, Solo-D, Gavel+ and veRL, each bar labelled with
RollMux's gain over it (and the paper's).

    python analysis/fig10_microbench.py --phases results/paperfigs/fig10_phases.csv \
        --throughput results/microbench/throughput.csv \
        --png figures/fig10_microbench.png --pdf figures/fig10_microbench.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import (
    apply_style,
    draw_gantt,
    figure_main,
    legend_handles,
    policy_colour,
    policy_label,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

SYSTEMS = ("rollmux", "solo-d", "gavel-plus", "verl")
TITLES = {"temporal": "(a) temporal mux", "train": "(b) train mux", "spatial": "(c) spatial mux"}


def draw(phases: pd.DataFrame, throughput: pd.DataFrame) -> plt.Figure:
    """One row per scenario: Gantt (left) and throughput bars (right)."""
    apply_style()
    names = list(dict.fromkeys(phases["scenario"]))
    heights = [max(2, phases.loc[phases["scenario"] == n, "node"].nunique()) for n in names]
    fig, axes = plt.subplots(len(names), 2, figsize=(8.5, 0.5 * sum(heights) + 1.4 * len(names)),
                             gridspec_kw={"width_ratios": [3.0, 1.5], "height_ratios": heights},
                             squeeze=False)
    for (ax_g, ax_b), name in zip(axes, names, strict=True):
        part = phases[phases["scenario"] == name]
        draw_gantt(ax_g, part)
        ids = part.drop_duplicates("job").sort_values("job")["job_id"]
        ax_g.set_title(TITLES.get(name, name), loc="left")
        ax_g.legend(handles=legend_handles(list(ids), tail=True), fontsize=6,
                    ncol=len(ids) + 3, frameon=False, loc="lower right",
                    bbox_to_anchor=(1.0, 1.0), handlelength=1.2, columnspacing=0.8)
        ax_g.set_xlabel("time (s)")
        rows = throughput[throughput["scenario"] == name].set_index("system")
        shown = [s for s in SYSTEMS if s in rows.index and bool(rows.loc[s, "available"])]
        values = [float(rows.loc[s, "throughput_per_kusd_h"]) for s in shown]
        x = np.arange(len(shown))
        bars = ax_b.bar(x, values, color=[policy_colour(s) for s in shown])
        for bar, system in zip(bars, shown, strict=True):
            if system == "rollmux":
                continue
            gain = float(rows.loc[system, "rollmux_gain"])
            paper = rows.loc[system, "paper_gain"]
            text = f"{gain:.2f}x" + ("" if pd.isna(paper) else f"\n({float(paper):.2f}x)")
            ax_b.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=6)
        ax_b.set_xticks(x, [policy_label(s) for s in shown], fontsize=7)
        ax_b.set_ylabel("jobs / kUSD-h")
        ax_b.set_ylim(0, max(values) * 1.35)
        ax_b.set_title("throughput at equal cost\nlabels: RollMux gain (paper's)", loc="left",
                       fontsize=7)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the timelines and the throughput table, write PNG and PDF."""
    return figure_main(
        __doc__, {"phases": "per-phase CSV", "throughput": "throughput CSV"}, draw, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
