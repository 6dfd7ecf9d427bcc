"""Ours: round-robin's worst case, best schedule / round-robin against group size.

Reads rule theorem1_worst_case's table (results/theorem1/worst_case.csv,
``rollmux.theorem1.worst_case``: per family of the boundary map, objective and group
size, the largest ratio with multiplicities up to the cap M, enumerated exhaustively
(filled markers) or found by the adversarial search (open markers), with the proven bound
on that instance's ratio under the same cap) and rule theorem1_readings' supremum over
all multiplicities on one rollout and one training node (results/theorem1/supremum.csv,
proven in docs/theorem1.md), and draws one panel per objective: the ratio against the
number of jobs, one line per family, a bar from each point up to its instance's bound,
and the supremum as a dashed line of crosses.

    python analysis/fig_theorem1_worst_case.py --table results/theorem1/worst_case.csv \
        --supremum results/theorem1/supremum.csv \
        --png figures/fig_theorem1_worst_case.png --pdf figures/fig_theorem1_worst_case.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, legend_below, mark_colour

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

OBJECTIVES = (("aggregate", "aggregate utilisation"),
              ("cost_weighted", "cost-weighted utilisation"))
FAMILY_ORDER = ("a_one_rollout_one_train", "b_shared_train", "c_crossing", "d_cost_weighted",
                "e_saturated")


def _label(family: str) -> str:
    """``a_one_rollout_one_train`` -> ``(a) one rollout one train``."""
    key, _, rest = family.partition("_")
    return f"({key}) {rest.replace('_', ' ')}"


def draw(table: pd.DataFrame, supremum: pd.DataFrame) -> plt.Figure:
    """One panel per objective: worst ratio against group size, per family, and the supremum."""
    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), sharey=True)
    sup = supremum[pd.to_numeric(supremum["supremum"], errors="coerce").notna()]
    sup = sup.assign(supremum=sup["supremum"].astype(float))
    sup = sup.drop_duplicates(["family", "objective", "n_jobs"])
    sup = sup[sup["n_jobs"].isin(table["n_jobs"].unique())]
    top = max(float(table["instance_bound_ratio"].max()),
              float(sup["supremum"].max()) if len(sup) else 0.0)
    caps = ", ".join(f"M = {m}" for m in sorted(table["max_multiplicity"].unique()))
    for ax, (objective, title) in zip(axes, OBJECTIVES, strict=True):
        part = table[table["objective"] == objective]
        for family in FAMILY_ORDER:
            rows = part[part["family"] == family].sort_values("n_jobs")
            if rows.empty:
                continue
            colour = mark_colour(FAMILY_ORDER.index(family))
            ax.plot(rows["n_jobs"], rows["ratio"], color=colour, label=_label(family))
            exhaustive = rows["method"] == "exhaustive"
            ax.scatter(rows.loc[exhaustive, "n_jobs"], rows.loc[exhaustive, "ratio"],
                       color=colour, zorder=3, s=18)
            ax.scatter(rows.loc[~exhaustive, "n_jobs"], rows.loc[~exhaustive, "ratio"],
                       facecolors="white", edgecolors=colour, zorder=3, s=18)
            ax.vlines(rows["n_jobs"], rows["ratio"], rows["instance_bound_ratio"],
                      color=colour, alpha=0.35, linewidth=3)
            limit = sup[(sup["family"] == family) & (sup["objective"] == objective)]
            if len(limit):
                limit = limit.sort_values("n_jobs")
                ax.plot(limit["n_jobs"], limit["supremum"], color=colour, linestyle="--",
                        marker="x", linewidth=0.9, label=f"{_label(family)}: any m")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_title(f"{title} ({caps})", loc="left")
        ax.set_xlabel("jobs in the group")
        ax.set_xticks(sorted(table["n_jobs"].unique()))
        ax.set_ylim(0.98, max(1.05, top * 1.03))
    axes[0].set_ylabel("best schedule / round-robin")
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    legend_below(fig, handles, labels, ncol=4, fontsize=7)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the worst-case table, write PNG and PDF."""
    return figure_main(
        __doc__, {"table": "worst-case CSV", "supremum": "supremum CSV"}, draw, argv,
        note=lambda table, supremum: f"worst ratio {table['ratio'].max():.4f}",
    )


if __name__ == "__main__":
    raise SystemExit(main())
