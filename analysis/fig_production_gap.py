"""Ours: the production cost gap decomposed, one documented factor at a time.

Reads results/evidence/production_gap.csv (one row per step and claim: ours, the paper's,
ours / paper; rollmux.experiments.production_gap) and draws (a) ours / the paper's value
of each production claim (C01, C02, C04, C10-C13) after each step, 1 meaning the paper's
number, and (b) RollMux's SLO attainment after each step, realised (over solo on the same
draws) and against the worst-case solo estimate. Each mark is the mean over the step's
seeds, its whisker the 95% Student-t interval (columns ci_low, ci_high; none with one
seed). Numbered steps are cumulative (joined);
a step such as "lengths alone" applies one factor to step 0 (an open mark). Definitions:
docs/findings.md section 5.

    python analysis/fig_production_gap.py --table results/evidence/production_gap.csv \
        --png figures/fig_production_gap.png --pdf figures/fig_production_gap.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.experiments.production_gap import CLAIMS
from rollmux.plotstyle import apply_style, figure_main, mark_colour

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

#: Markers of the series, in order, beside their mark colours.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def draw(table: pd.DataFrame) -> plt.Figure:
    """Ours / paper per claim and step (left); RollMux's SLO attainment per step (right)."""
    apply_style()
    steps = list(dict.fromkeys(table["step"].astype(str)))
    setups = dict(zip(table["step"].astype(str), table["setup"], strict=False))
    # one factor a line, so the labels of neighbouring steps stay apart
    labels = [f"{s}\n" + str(setups[s]).replace(" + ", "\n+ ") for s in steps]
    fig, (ratio, slo) = plt.subplots(1, 2, figsize=(10.0, 3.6),
                                     gridspec_kw={"width_ratios": (1.6, 1.0)})
    x = range(len(steps))
    # Numbered steps are cumulative (joined by a line); the others stand alone.
    joined = [i for i, s in enumerate(steps) if s.isdigit()]
    alone = [i for i, s in enumerate(steps) if not s.isdigit()]

    def series(ax: plt.Axes, ys: list[float], k: int, label: str,
               whiskers: list[tuple[float, float]] | None = None) -> None:
        """One series: the cumulative steps joined, the stand-alone ones as open marks;
        ``whiskers``: each step's 95% interval over seeds."""
        # the k-th series' colour and marker: more series than mark colours stay apart
        colour, marker = mark_colour(k), MARKERS[k % len(MARKERS)]
        ax.plot(joined, [ys[i] for i in joined], marker=marker, lw=1.0, ms=3.5,
                color=colour, label=label)
        ax.plot(alone, [ys[i] for i in alone], marker=marker, lw=0, ms=4.5, color=colour,
                markerfacecolor="white")
        if whiskers:
            ax.vlines(list(x), [w[0] for w in whiskers], [w[1] for w in whiskers],
                      color=colour, lw=0.9)

    def interval(part: pd.DataFrame, scale: float = 1.0) -> list[tuple[float, float]] | None:
        """Each step's interval over seeds (divided by ``scale``), None with one seed."""
        if "ci_low" not in part.columns or int(part["seeds"].max()) < 2:
            return None
        return [(float(part.loc[s, "ci_low"]) / scale, float(part.loc[s, "ci_high"]) / scale)
                for s in steps]

    claims = table[table["claim"].isin(CLAIMS) & ~table["metric"].str.startswith("slo_")]
    for k, claim in enumerate(CLAIMS):
        part = claims[claims["claim"] == claim].set_index("step")
        if part.empty:
            continue
        label = f"{claim} {str(part['metric'].iloc[0]).replace('_', ' ')}"
        series(ratio, [float(part.loc[s, "ours_over_paper"]) for s in steps],
               k, label, interval(part, float(part["paper"].iloc[0])))
    ratio.axhline(1.0, color="black", lw=0.8, ls="--")
    ratio.set_xticks(list(x), labels, fontsize=7)
    ratio.set_ylabel("ours / paper")
    ratio.set_title("(a) production claims after each step (1 = the paper's)", loc="left")
    ratio.legend(frameon=False, fontsize=6.5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    rows = table[table["metric"].str.startswith("slo_attainment_")]
    for k, (metric, name) in enumerate((
            ("slo_attainment_realised_rollmux", "realised (over solo, same draws)"),
            ("slo_attainment_reference_rollmux", "over the worst-case solo estimate"))):
        part = rows[rows["metric"] == metric].set_index("step")
        series(slo, [float(part.loc[s, "ours"]) for s in steps], k, name, interval(part))
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
