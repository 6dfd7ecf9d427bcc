"""Fig. 10a-c: micro-benchmark scenarios, Gantt chart and throughput at equal cost.

Reads the scenarios' simulated timelines (``rollmux.experiments.model_figures.scenario_gantt``) and
the throughput table of rule microbench_sim (results/microbench/throughput.csv) and draws,
per scenario (temporal, train, spatial mux), the woven group's first iterations and the
throughput per hourly dollar of RollMux, Solo-D, Gavel+ and veRL, each bar labelled with
RollMux's gain over it (and the paper's). With ``--seed-tables`` (the throughput table of
each seed, results/microbench/seeds/seed=<s>/throughput.csv) the bars are the means over
seeds with whiskers and the gains with brackets at their 95% Student-t interval
(rollmux.experiments.intervals; the claims C14-C22 read the same values).

    python analysis/fig10_microbench.py --phases results/paperfigs/fig10_phases.csv \
        --throughput results/microbench/throughput.csv \
        --seed-tables results/microbench/seeds/seed=*/throughput.csv \
        --png figures/fig10_microbench.png --pdf figures/fig10_microbench.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.experiments.intervals import t_interval
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


def _seed_frame(throughput: pd.DataFrame, seed_tables: list[str] | None) -> pd.DataFrame:
    """The throughput rows of every seed (``seed_tables``), or of ``throughput`` alone."""
    if not seed_tables:
        return throughput
    return pd.concat([pd.read_csv(path) for path in seed_tables], ignore_index=True)


def draw(phases: pd.DataFrame, throughput: pd.DataFrame,
         seed_tables: list[str] | None = None) -> plt.Figure:
    """One row per scenario: Gantt (left) and throughput bars (right), means over the
    seeds of ``seed_tables`` with 95% intervals when there are several."""
    apply_style()
    seeded = _seed_frame(throughput, seed_tables)
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
        per_seed = seeded[seeded["scenario"] == name]

        def interval(system: str, column: str, frame: pd.DataFrame = per_seed
                     ) -> tuple[float, float, float]:
            ci = t_interval(frame.loc[frame["system"] == system, column].to_numpy(dtype=float))
            return ci.mean, ci.low, ci.high

        spans = [interval(s, "throughput_per_kusd_h") for s in shown]
        values = [m for m, _, _ in spans]
        err = np.array([[m - lo for m, lo, _ in spans], [hi - m for m, _, hi in spans]])
        x = np.arange(len(shown))
        bars = ax_b.bar(x, values, color=[policy_colour(s) for s in shown],
                        yerr=err if np.any(err > 1e-12) else None, capsize=2,
                        error_kw={"linewidth": 0.8})
        for bar, system in zip(bars, shown, strict=True):
            if system == "rollmux":
                continue
            gain, low, high = interval(system, "rollmux_gain")
            paper = rows.loc[system, "paper_gain"]
            # one item a line: the labels of neighbouring bars stay apart
            text = (f"{gain:.2f}x" + (f"\n[{low:.2f}, {high:.2f}]" if high > low else "")
                    + ("" if pd.isna(paper) else f"\n({float(paper):.2f}x)"))
            ax_b.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=6)
        ax_b.set_xticks(x, [policy_label(s) for s in shown], fontsize=7)
        ax_b.set_ylabel("jobs / kUSD-h")
        ax_b.set_ylim(0, max(m + e for m, e in zip(values, err[1], strict=True)) * 1.6)
        ax_b.set_title("throughput at equal cost\nlabels: RollMux gain [95% interval] "
                       "(paper's)", loc="left", fontsize=7)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the timelines and the throughput table, write PNG and PDF."""
    seeds = {"nargs": "*", "default": None,
             "help": "throughput CSV of each seed (means and 95%% intervals over them)"}
    return figure_main(
        __doc__, {"phases": "per-phase CSV", "throughput": "throughput CSV"}, draw, argv,
        options={"seed-tables": seeds},
    )


if __name__ == "__main__":
    raise SystemExit(main())
