"""Ours: each policy's total cost relative to the fluid lower bound of its trace.

Reads results/sim/fluid.csv (one row per replay: trace, policy, seed, total_cost_usd,
fluid_cost_usd, cost_over_fluid, ...), results/sim/fluid_timeseries.csv (the bound's
hourly cost over time per trace: every active job at its solo speed, no bubble at all)
and results/sim/production_timeseries.csv, and draws (a) a heatmap of total cost / fluid
bound per trace and policy (means over seeds; blank where a policy was not replayed on a
trace) and (b) the production replays' hourly cost over time against the bound's (first
seed). Definition: docs/metrics.md, "Fluid bound".

    python analysis/fig_fluid_bound.py --table results/sim/fluid.csv \
        --fluid results/sim/fluid_timeseries.csv \
        --timeseries results/sim/production_timeseries.csv \
        --trace-labels "production-default=production trace" \
        --png figures/fig_fluid_bound.png --pdf figures/fig_fluid_bound.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import (
    apply_style,
    figure_main,
    ordered_policies,
    policy_colour,
    policy_label,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)
import seaborn as sns  # isort: skip


def _trace_labels(text: str) -> dict[str, str]:
    """``name=label;name=label`` -> ``{name: label}`` (labels may hold commas)."""
    labels = {}
    for item in filter(None, text.split(";")):
        name, sep, label = item.partition("=")
        if not sep or not name or not label:
            raise ValueError(f"--trace-labels: expected NAME=LABEL, got {item!r}")
        labels[name] = label
    return labels


def draw(table: pd.DataFrame, fluid: pd.DataFrame, timeseries: pd.DataFrame,
         trace_labels: dict[str, str]) -> plt.Figure:
    """Heatmap of cost over the bound (trace x policy, left), production cost over time."""
    apply_style()
    policies = ordered_policies(table["policy"])
    traces = sorted(table["trace"].unique())
    means = (table.groupby(["trace", "policy"])["cost_over_fluid"].mean().unstack("policy")
             .reindex(index=traces, columns=policies))
    fig, (heat, line) = plt.subplots(1, 2, figsize=(9.5, 3.4),
                                     gridspec_kw={"width_ratios": (1.1, 1.5)})
    # Cells of policies not replayed on a trace stay blank (NaN), not a zero-height bar.
    # grey shades: a hue would look like a policy's colour (docs/figures.md)
    sns.heatmap(means, ax=heat, annot=True, fmt=".2f", cmap="Greys", vmin=1.0,
                cbar_kws={"label": "total cost / fluid bound"}, linewidths=0.5,
                annot_kws={"fontsize": 7}, square=False)
    heat.set_xticks([k + 0.5 for k in range(len(policies))],
                    [policy_label(p) for p in policies], rotation=35, ha="right",
                    rotation_mode="anchor", fontsize=7)
    heat.set_yticks([k + 0.5 for k in range(len(traces))],
                    [trace_labels.get(t, t).replace(", ", ",\n", 1) for t in traces],
                    rotation=0, fontsize=7)
    heat.set_xlabel("")
    heat.set_ylabel("")
    heat.set_title("(a) total cost over the fluid lower bound", loc="left")
    trace = str(timeseries["trace"].iloc[0])
    seed = int(timeseries["seed"].min())
    for policy in ordered_policies(timeseries["policy"]):
        part = timeseries[(timeseries["policy"] == policy) & (timeseries["seed"] == seed)]
        line.step(part["time_h"], part["cost_usd_per_h"], where="post", lw=0.9,
                  color=policy_colour(policy), label=policy_label(policy))
    bound = fluid[fluid["trace"] == trace]
    line.step(bound["time_h"], bound["fluid_cost_usd_per_h"], where="post", lw=1.2,
              color="black", ls="--", label="fluid bound")
    line.set_xlabel("time since the first arrival (h)")
    line.set_ylabel("cost (USD/h)")
    line.set_ylim(bottom=0)
    line.set_title(f"(b) {trace_labels.get(trace, trace)}: cost over time vs the bound",
                   loc="left")
    # right of the panel: inside it the legend would cover the peaks
    line.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tables, write PNG and PDF."""
    inputs = {"table": "fluid.csv", "fluid": "fluid_timeseries.csv",
              "timeseries": "production_timeseries.csv"}
    labels = {"type": _trace_labels, "default": {},
              "help": "readable trace names: NAME=LABEL;NAME=LABEL (default: the names)"}
    return figure_main(__doc__, inputs, draw, argv, options={"trace-labels": labels})


if __name__ == "__main__":
    raise SystemExit(main())
