"""Ours: each policy's total cost relative to the fluid lower bound of its trace.

Reads results/sim/fluid.csv (one row per replay: trace, policy, seed, total_cost_usd,
fluid_cost_usd, cost_over_fluid, ...), results/sim/fluid_timeseries.csv (the bound's
hourly cost over time per trace: every active job at its solo speed, no bubble at all)
and results/sim/production_timeseries.csv, and draws (a) total cost / fluid bound per
policy for each trace (means over seeds) and (b) the production replays' hourly cost
over time against the bound's (first seed). Definition: docs/metrics.md, "Fluid bound".

    python analysis/fig_fluid_bound.py --table results/sim/fluid.csv \
        --fluid results/sim/fluid_timeseries.csv \
        --timeseries results/sim/production_timeseries.csv \
        --png figures/fig_fluid_bound.png --pdf figures/fig_fluid_bound.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import JOB_COLOURS, apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

POLICY_LABELS = {"rollmux": "RollMux", "solo-d": "Solo-D", "verl": "veRL",
                 "gavel-plus": "Gavel+", "random": "Random", "greedy": "Greedy",
                 "optimal": "Optimal", "regroup": "Regroup"}
ORDER = ("rollmux", "optimal", "greedy", "random", "gavel-plus", "verl", "solo-d")


def _ordered(policies: list[str]) -> list[str]:
    """Policies in a fixed order (known ones first), each once."""
    known = [p for p in ORDER if p in policies]
    return known + sorted(p for p in set(policies) if p not in ORDER)


def draw(table: pd.DataFrame, fluid: pd.DataFrame, timeseries: pd.DataFrame) -> plt.Figure:
    """Grouped bars of cost over the bound (left), production cost vs bound over time."""
    apply_style()
    policies = _ordered(list(table["policy"]))
    colours = {p: JOB_COLOURS[k % len(JOB_COLOURS)] for k, p in enumerate(policies)}
    traces = list(dict.fromkeys(table.sort_values("trace")["trace"]))
    means = table.groupby(["trace", "policy"])["cost_over_fluid"].mean()
    fig, (bars, line) = plt.subplots(1, 2, figsize=(9.0, 3.4),
                                     gridspec_kw={"width_ratios": (1, 1.5)})
    width = 0.8 / len(policies)
    x = np.arange(len(traces))
    for k, policy in enumerate(policies):
        values = [means.get((t, policy), np.nan) for t in traces]
        bars.bar(x + (k - (len(policies) - 1) / 2) * width, values, width,
                 color=colours[policy], label=POLICY_LABELS.get(policy, policy))
    bars.axhline(1.0, color="grey", lw=0.8, ls="--")
    bars.set_xticks(x, traces, fontsize=7)
    bars.set_ylabel("total cost / fluid bound")
    bars.set_title("(a) cost over the fluid lower bound", loc="left")
    bars.legend(frameon=False, fontsize=7, ncol=2)
    trace = str(timeseries["trace"].iloc[0])
    seed = int(timeseries["seed"].min())
    for policy in _ordered(list(timeseries["policy"].unique())):
        part = timeseries[(timeseries["policy"] == policy) & (timeseries["seed"] == seed)]
        line.step(part["time_h"], part["cost_usd_per_h"], where="post", lw=0.9,
                  color=colours.get(policy, "black"), label=POLICY_LABELS.get(policy, policy))
    bound = fluid[fluid["trace"] == trace]
    line.step(bound["time_h"], bound["fluid_cost_usd_per_h"], where="post", lw=1.2,
              color="black", ls="--", label="fluid bound")
    line.set_xlabel("time since the first arrival (h)")
    line.set_ylabel("cost (USD/h)")
    line.set_ylim(bottom=0)
    line.set_title(f"(b) {trace}: cost over time vs the bound", loc="left")
    line.legend(frameon=False, fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tables, write PNG and PDF."""
    inputs = {"table": "fluid.csv", "fluid": "fluid_timeseries.csv",
              "timeseries": "production_timeseries.csv"}
    return figure_main(__doc__, inputs, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
