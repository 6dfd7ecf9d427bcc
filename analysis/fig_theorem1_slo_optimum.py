"""Ours: rollmux-repeat's planner against the certified SLO-constrained optimum.

Reads rule theorem1_slo_optimum's table (results/theorem1/slo_optimum.csv,
``rollmux.theorem1.slo_optimum``: one row per seeded random group of 3-5 jobs, the
certified optimum's and the heuristic's cost-weighted utilisation under every job's SLO)
and draws, per group size, the empirical distribution of the heuristic's gap
``1 - U_heuristic / U_optimum`` (left) and the optimum over round-robin where round-robin
meets every SLO (right).

    python analysis/fig_theorem1_slo_optimum.py --table results/theorem1/slo_optimum.csv \
        --png figures/fig_theorem1_slo_optimum.png --pdf figures/fig_theorem1_slo_optimum.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, mark_colour

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(table: pd.DataFrame) -> plt.Figure:
    """Per group size: the gap's empirical distribution, and optimum / round-robin."""
    apply_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.2))
    sizes = sorted(int(n) for n in table["n_jobs"].unique())
    for i, n in enumerate(sizes):
        part = table[table["n_jobs"] == n]
        gaps = np.sort(100.0 * part["gap"].to_numpy(dtype=float))
        share = np.arange(1, len(gaps) + 1) / max(len(gaps), 1)
        colour = mark_colour(i)  # group sizes are categories, not jobs
        left.step(np.concatenate([[0.0], gaps]), np.concatenate([[0.0], share]),
                  where="post", color=colour, label=f"{n} jobs ({len(gaps)} groups)")
        rr = part[part["rr_feasible"].astype(bool)]
        ratio = (rr["optimum_utilisation"] / rr["rr_utilisation"]).to_numpy(dtype=float)
        right.scatter(np.full(len(ratio), n) + np.linspace(-0.15, 0.15, len(ratio)), ratio,
                      color=colour, s=12)
    left.set_xlabel("heuristic's gap to the certified optimum (%)")
    left.set_ylabel("share of groups")
    left.set_ylim(0.0, 1.02)
    left.set_title("rollmux-repeat's planner", loc="left")
    left.legend(fontsize=7, frameon=False, loc="lower right")
    right.axhline(1.0, color="grey", linewidth=0.8)
    right.set_xticks(sizes)
    right.set_xlabel("jobs in the group")
    right.set_ylabel("optimum / round-robin")
    right.set_title("where round-robin meets every SLO", loc="left")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the table, write PNG and PDF."""
    return figure_main(
        __doc__, {"table": "SLO-optimum CSV"}, draw, argv,
        note=lambda table: f"mean gap {100.0 * table['gap'].mean():.2f} %",
    )


if __name__ == "__main__":
    raise SystemExit(main())
