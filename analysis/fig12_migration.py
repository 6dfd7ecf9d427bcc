"""Fig. 12: rollout length distribution (long tail) and the long-tail migration speed-up.

Reads the exact length distributions of the job model (``rollmux.experiments.model_figures.
length_distribution``: truncated lognormal per job type, with mean, p99 and the expected
longest response of one iteration's batch) and the migration table of rule
microbench_sim (results/microbench/migration.csv: throughput with over without
migration per pair of job types, same draws).

    python analysis/fig12_migration.py --lengths results/paperfigs/fig12_lengths.csv \
        --stats results/paperfigs/fig12_stats.csv \
        --migration results/microbench/migration.csv \
        --png figures/fig12_migration.png --pdf figures/fig12_migration.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, legend_below, mark_colour, policy_colour

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(lengths: pd.DataFrame, stats: pd.DataFrame, migration: pd.DataFrame) -> plt.Figure:
    """Left: length densities with mean / p99 / expected batch maximum; right: speed-ups."""
    apply_style()
    fig, (ax_l, ax_m) = plt.subplots(1, 2, figsize=(8.5, 3.2),
                                     gridspec_kw={"width_ratios": [1.3, 1.0]})
    for k, rec in enumerate(stats.itertuples(index=False)):
        part = lengths[lengths["job_type"] == rec.job_type]
        mids = (part["bin_lo"] + part["bin_hi"]) / 2000.0
        colour = mark_colour(k)  # job types of a distribution, not jobs of a timeline
        ax_l.plot(mids, part["density"], color=colour,
                  label=f"Type-{rec.job_type}: max {rec.max_tokens / 1000:.1f}k, "
                  f"batch max {rec.expected_longest_tokens / 1000:.1f}k")
        ax_l.axvline(rec.mean_tokens / 1000.0, color=colour, linestyle="--", linewidth=0.8)
        ax_l.axvline(rec.p99_tokens / 1000.0, color=colour, linestyle=":", linewidth=0.8)
        # the expected longest response of a batch: a marker on the axis, not a text label
        # that would sit on the curves
        ax_l.plot(rec.expected_longest_tokens / 1000.0, 0.0, marker="^", markersize=6,
                  color=colour, clip_on=False, zorder=3)
    ax_l.set_ylim(bottom=0)
    ax_l.set_xlabel("response length (k tokens)")
    ax_l.set_ylabel("probability per 1k tokens")
    ax_l.set_title("Response lengths are long-tailed", loc="left")
    x = np.arange(len(migration))
    bars = ax_m.bar(x, migration["speedup"], color=policy_colour("rollmux"))
    ax_m.bar_label(bars, labels=[f"{v:.2f}x" for v in migration["speedup"]], fontsize=7,
                   padding=1)
    ax_m.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax_m.set_xticks(x, migration["pair"], fontsize=7)
    # bars start at 0, so their lengths compare; the dashed line is "no speed-up"
    ax_m.set_ylim(0, float(migration["speedup"].max()) * 1.15)
    ax_m.set_ylabel("throughput with / without migration")
    ax_m.set_xlabel("pair of job types (one node per pool)")
    ax_m.set_title("Long-tail migration speed-up", loc="left")
    # under both panels: the mean and p99 lines run the whole height of the left one
    handles, labels = ax_l.get_legend_handles_labels()
    legend_below(fig, handles, labels, fontsize=7, title_fontsize=7,
                 title="dashed: mean, dotted: p99, triangle: expected longest of a batch")
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the three tables, write PNG and PDF."""
    inputs = {"lengths": "length histogram CSV", "stats": "length statistics CSV",
              "migration": "migration CSV"}
    return figure_main(
        __doc__, inputs, draw, argv,
        note=lambda migration, **_: f"speed-ups {migration['speedup'].min():.2f} to "
        f"{migration['speedup'].max():.2f}x",
    )


if __name__ == "__main__":
    raise SystemExit(main())
