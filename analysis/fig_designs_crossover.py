"""Where each design wins: two fixed pools over one shared pool against the price ratio.

Reads rule designs_comparison's re-priced replays (results/designs/crossover.csv) and
crossover ratios (results/designs/crossover_ratios.csv, ``rollmux.experiments.designs``)
and draws, per trace (its rollout share of the work in the legend), the cost of RollMux's
two fixed pools (H20 rollout + H800 training) over the cost of veRL's one pool of H800s
as the H800/H20 price ratio grows: below 1 two pools are cheaper. Circles: the crossover
ratios; the dotted line: the paper's prices (2.85).

    python analysis/fig_designs_crossover.py --crossover results/designs/crossover.csv \
        --ratios results/designs/crossover_ratios.csv --png figures/designs_crossover.png \
        --pdf figures/designs_crossover.pdf
"""

from __future__ import annotations

import math

import pandas as pd

from rollmux.plotstyle import apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def draw(crossover: pd.DataFrame, ratios: pd.DataFrame) -> plt.Figure:
    """One line per trace (synthetic lengths): cost ratio against price ratio."""
    apply_style()
    crossover = crossover.fillna({"lengths": ""})
    ratios = ratios.fillna({"lengths": ""})
    crossover = crossover[crossover["lengths"] == ""]
    ratios = ratios[ratios["lengths"] == ""]
    fig, ax = plt.subplots(figsize=(9.0, 4.0))
    paper = float(ratios["paper_price_ratio"].iloc[0]) if len(ratios) else math.nan
    two = str(ratios["two_pools"].iloc[0]) if len(ratios) else "rollmux"
    one = str(ratios["one_pool"].iloc[0]) if len(ratios) else "verl"
    for k, rec in enumerate(ratios.itertuples(index=False)):
        part = crossover[crossover["trace"] == rec.trace]
        a = part[part["policy"] == two].set_index("price_ratio")["total_cost_usd"]
        b = part[part["policy"] == one].set_index("price_ratio")["total_cost_usd"]
        ratio = (a / b).sort_index()
        label = f"{rec.trace} (rollout {100 * rec.rollout_share:.0f}% of work)"
        ax.plot(ratio.index, ratio.to_numpy(), color="black", linestyle=STYLES[k % 4],
                marker=MARKERS[k % len(MARKERS)], markersize=4, label=label)
        if math.isfinite(rec.crossover_price_ratio) and \
                ratio.index.min() <= rec.crossover_price_ratio <= ratio.index.max():
            ax.scatter([rec.crossover_price_ratio], [1.0], s=60, facecolor="none",
                       edgecolor="black", zorder=4)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    if math.isfinite(paper):
        ax.axvline(paper, color="grey", linestyle=":", linewidth=1.0)
        ax.annotate(f"paper's prices ({paper:.2f})", (paper, ax.get_ylim()[1]),
                    xytext=(3, -10), textcoords="offset points", fontsize=7, color="grey",
                    ha="left")
    ax.set_xlabel("price ratio H800 / H20")
    ax.set_ylabel(f"cost: two pools ({two})\nover one pool ({one})")
    fig.legend(*ax.get_legend_handles_labels(), loc="center right", frameon=False,
               fontsize=7)
    fig.tight_layout(rect=(0, 0, 0.64, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the re-priced replays and the crossover ratios, write PNG and PDF."""
    return figure_main(__doc__, {"crossover": "re-priced replays (results/designs/crossover.csv)",
                                 "ratios": "crossover ratios (results/designs/"
                                           "crossover_ratios.csv)"},
                       draw, argv,
                       read=lambda p: pd.read_csv(p, keep_default_na=False,
                                                  na_values=["nan", "NaN"]),
                       note=lambda crossover, ratios: f"{len(ratios)} traces")


if __name__ == "__main__":
    raise SystemExit(main())
