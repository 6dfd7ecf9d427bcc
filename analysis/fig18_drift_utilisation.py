"""Fig. 18: rollout and training utilisation under drift, static RollMux versus regrouping.

Reads results/robustness/utilisation.csv (``rollmux.experiments.robustness.utilisation_table``:
utilisation = 1 - bubble fraction per pool, docs/metrics.md) and
results/robustness/migration.csv (``migration_table``: the hours the reference pauses
jobs to migrate and restart them) and draws, per drift setting, each pool's utilisation
under static RollMux and the reference (config robustness.reference: ``regroup``; means
over seeds, whiskers their 95% Student-t interval), and the migration pause hours.

    python analysis/fig18_drift_utilisation.py \
        --utilisation results/robustness/utilisation.csv \
        --migration results/robustness/migration.csv --reference regroup \
        --png figures/fig18_drift_utilisation.png --pdf figures/fig18_drift_utilisation.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.experiments.intervals import t_errorbar, whisker_lengths
from rollmux.experiments.robustness import SETTINGS
from rollmux.plotstyle import (
    TRAIN_HATCH,
    apply_style,
    figure_main,
    legend_below,
    policy_colour,
    policy_label,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

POOL_TITLES = {"rollout": "(a) rollout pool (H20)", "train": "(b) training pool (H800)"}


def compared(reference: str) -> tuple[str, str]:
    """The two policies drawn: static RollMux and the reference."""
    return ("rollmux", reference)


def pool_means(utilisation: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Mean utilisation over seeds per setting, policy and pool (compared policies only)."""
    part = utilisation[utilisation["policy"].isin(compared(reference))]
    return (part.groupby(["setting", "policy", "pool"])["utilisation_pct"].mean()
            .reset_index())


def draw(utilisation: pd.DataFrame, migration: pd.DataFrame, reference: str) -> plt.Figure:
    """Two utilisation panels (rollout, training) and the reference's migration pause hours."""
    apply_style()
    means = pool_means(utilisation, reference)
    settings = [s for s in SETTINGS if s in set(means["setting"])]
    x = np.arange(len(settings))
    fig, axes = plt.subplots(1, 3, figsize=(9.0, 3.0))
    for ax, pool in zip(axes[:2], ("rollout", "train"), strict=True):
        for k, policy in enumerate(compared(reference)):
            part = means[(means["policy"] == policy) & (means["pool"] == pool)]
            values = part.set_index("setting").reindex(settings)["utilisation_pct"].to_numpy()
            # whiskers: the 95% Student-t interval over seeds (rollmux.experiments.intervals)
            runs = utilisation[(utilisation["policy"] == policy)
                               & (utilisation["pool"] == pool)]
            spans = [t_errorbar(runs.loc[runs["setting"] == s, "utilisation_pct"])
                     for s in settings]
            err = whisker_lengths(values, spans)
            bars = ax.bar(x + (k - 0.5) * 0.4, values, 0.37, color=policy_colour(policy),
                          hatch=TRAIN_HATCH if pool == "train" else "", edgecolor="white",
                          label=policy_label(policy),
                          yerr=err if np.any(err > 1e-12) else None, capsize=2,
                          error_kw={"linewidth": 0.8})
            ax.bar_label(bars, labels=[f"{v:.1f}" for v in values], fontsize=6.5, padding=1)
        ax.set_xticks(x, settings)
        ax.set_ylim(0, 105)
        ax.set_title(POOL_TITLES[pool], loc="left")
    axes[0].set_ylabel("utilisation (%)")
    mig = migration.groupby("setting")[["pause_h", "span_h"]].mean().reindex(settings)
    bars = axes[2].bar(x, mig["pause_h"].to_numpy(), 0.6, color=policy_colour(reference))
    axes[2].bar_label(bars, labels=[f"{p:.1f} h\nof {s:.0f} h" for p, s in
                                    zip(mig["pause_h"], mig["span_h"], strict=True)],
                      fontsize=6.5, padding=1)
    axes[2].set_xticks(x, settings)
    axes[2].set_ylabel("job-hours paused")
    axes[2].set_title("(c) regrouping: migration\n+ restart pauses", loc="left")
    axes[2].margins(y=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=2)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read utilisation.csv and migration.csv, write PNG and PDF."""
    options = {"reference": {"required": True, "help": "the policy static RollMux is compared "
                             "with (robustness.reference)"}}
    return figure_main(
        __doc__, {"utilisation": "utilisation.csv", "migration": "migration.csv"}, draw, argv,
        options=options,
    )


if __name__ == "__main__":
    raise SystemExit(main())
