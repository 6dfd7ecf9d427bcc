"""Fig. 12: rollout length distribution (long tail) and the long-tail migration speed-up.

Reads the exact length distributions of the job model (``rollmux.paperfigs.
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

from rollmux.plotstyle import JOB_COLOURS, apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(lengths: pd.DataFrame, stats: pd.DataFrame, migration: pd.DataFrame) -> plt.Figure:
    """Left: length densities with mean / p99 / expected batch maximum; right: speed-ups."""
    apply_style()
    fig, (ax_l, ax_m) = plt.subplots(1, 2, figsize=(8.0, 3.0),
                                     gridspec_kw={"width_ratios": [1.3, 1.0]})
    for k, rec in enumerate(stats.itertuples(index=False)):
        part = lengths[lengths["job_type"] == rec.job_type]
        mids = (part["bin_lo"] + part["bin_hi"]) / 2000.0
        colour = JOB_COLOURS[k % len(JOB_COLOURS)]
        ax_l.plot(mids, part["density"], color=colour,
                  label=f"Type-{rec.job_type} (max {rec.max_tokens / 1024:.0f}k)")
        ax_l.axvline(rec.mean_tokens / 1000.0, color=colour, linestyle="--", linewidth=0.8)
        ax_l.axvline(rec.p99_tokens / 1000.0, color=colour, linestyle=":", linewidth=0.8)
        ax_l.annotate(f"batch max\n{rec.expected_longest_tokens / 1000:.1f}k",
                      (rec.expected_longest_tokens / 1000.0, 0), xytext=(0, 18),
                      textcoords="offset points", ha="right", fontsize=6, color=colour)
    ax_l.set_xlabel("response length (k tokens); dashed: mean, dotted: p99")
    ax_l.set_ylabel("probability per 1k tokens")
    ax_l.set_title("Response lengths are long-tailed", loc="left")
    ax_l.legend(frameon=False)
    x = np.arange(len(migration))
    ax_m.bar(x, migration["speedup"], color=JOB_COLOURS[2])
    for xi, value in zip(x, migration["speedup"], strict=True):
        ax_m.annotate(f"{value:.2f}x", (xi, value), ha="center", va="bottom", fontsize=7)
    ax_m.axhline(1.0, color="grey", linewidth=0.8)
    ax_m.set_xticks(x, migration["pair"], fontsize=7)
    low = min(0.95, float(migration["speedup"].min()) - 0.02)
    ax_m.set_ylim(low, float(migration["speedup"].max()) * 1.06)
    ax_m.set_ylabel("throughput with / without migration")
    ax_m.set_xlabel("pair of job types (one node per pool)")
    ax_m.set_title("Long-tail migration speed-up", loc="left")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the three tables, write PNG and PDF."""
    inputs = {"lengths": "length histogram CSV", "stats": "length statistics CSV",
              "migration": "migration CSV"}
    return figure_main(
        __doc__, inputs, draw, argv,
        note=lambda migration, **_: f"speed-ups {migration['speedup'].min():.2f}-"
        f"{migration['speedup'].max():.2f}x",
    )


if __name__ == "__main__":
    raise SystemExit(main())
