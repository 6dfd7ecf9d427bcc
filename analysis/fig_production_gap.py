"""Ours: the production cost gap decomposed, one documented factor at a time.

Reads results/evidence/production_gap.csv (one row per step and claim: ours, the paper's,
ours / paper; rollmux.experiments.production_gap) and draws (a) ours / the paper's value
of each production claim (C01, C02, C04, C10-C13) after each step, 1 meaning the paper's
number, and (b) RollMux's SLO attainment after each step, realised (over solo on the same
draws) and against the worst-case solo estimate. Definitions: docs/findings.md section 5.

    python analysis/fig_production_gap.py --table results/evidence/production_gap.csv \
        --png figures/fig_production_gap.png --pdf figures/fig_production_gap.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, mark_colour

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

#: The claims of panel (a), with a short label each.
CLAIM_LABELS = {
    "C01": "C01 cost ratio over Solo-D", "C02": "C02 cost ratio over veRL",
    "C04": "C04 RollMux USD/h", "C10": "C10 rollout bubble drop",
    "C11": "C11 training bubble drop", "C12": "C12 peak H800 ratio",
    "C13": "C13 peak H20 ratio",
}


def draw(table: pd.DataFrame) -> plt.Figure:
    """Ours / paper per claim and step (left); RollMux's SLO attainment per step (right)."""
    apply_style()
    steps = list(dict.fromkeys(table["step"].astype(str)))
    setups = dict(zip(table["step"].astype(str), table["setup"], strict=False))
    labels = [f"{s}\n{setups[s]}" for s in steps]
    fig, (ratio, slo) = plt.subplots(1, 2, figsize=(10.0, 3.6),
                                     gridspec_kw={"width_ratios": (1.6, 1.0)})
    x = range(len(steps))
    claims = table[table["claim"].isin(CLAIM_LABELS) & ~table["metric"].str.startswith("slo_")]
    for k, (claim, label) in enumerate(CLAIM_LABELS.items()):
        part = claims[claims["claim"] == claim].set_index("step")
        if part.empty:
            continue
        ys = [float(part.loc[s, "ours_over_paper"]) for s in steps]
        ratio.plot(list(x), ys, marker="o", lw=1.0, ms=3.5, color=mark_colour(k),
                   label=label)
    ratio.axhline(1.0, color="black", lw=0.8, ls="--")
    ratio.set_xticks(list(x), labels, fontsize=7)
    ratio.set_ylabel("ours / paper")
    ratio.set_title("(a) production claims after each step (1 = the paper's)", loc="left")
    ratio.legend(frameon=False, fontsize=6.5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    rows = table[table["metric"].str.startswith("slo_attainment_")]
    for metric, colour, name in (("slo_attainment_realised_rollmux", mark_colour(0),
                                  "realised (over solo, same draws)"),
                                 ("slo_attainment_reference_rollmux", mark_colour(1),
                                  "over the worst-case solo estimate")):
        part = rows[rows["metric"] == metric].set_index("step")
        slo.plot(list(x), [float(part.loc[s, "ours"]) for s in steps], marker="o", lw=1.0,
                 ms=3.5, color=colour, label=name)
    slo.set_xticks(list(x), labels, fontsize=7)
    slo.set_ylabel("RollMux SLO attainment (%)")
    slo.set_ylim(0, 105)
    slo.set_title("(b) RollMux's SLO attainment", loc="left")
    slo.legend(frameon=False, fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the table, write PNG and PDF."""
    return figure_main(__doc__, {"table": "production_gap.csv"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
