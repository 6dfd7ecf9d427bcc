"""Fig. 14: trace replay of the production trace: cost, H20 and H800 counts over time.

Reads the pipeline's tidy tables of the production replays (results/sim/production.csv:
one row per policy and seed; results/sim/production_timeseries.csv: each replay's
provisioned cluster as a step function of time) and draws three panels, like the paper's
Fig. 14a-c: (a) hourly cost, (b) provisioned H20 GPUs, (c) provisioned H800 GPUs, one line
per policy (first seed), with each policy's time-average cost in the legend (mean over
seeds and its 95% Student-t interval, rollmux.experiments.intervals).

    python analysis/fig14_trace_replay.py --table results/sim/production.csv \
        --timeseries results/sim/production_timeseries.csv --policies rollmux,solo-d,verl \
        --png figures/fig14_trace_replay.png --pdf figures/fig14_trace_replay.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.experiments.intervals import t_errorbar
from rollmux.plotstyle import apply_style, figure_main, policy_colour, policy_label

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

PANELS = (("cost_usd_per_h", "cost (USD/h)", "(a) provisioning cost"),
          ("gpus_H20", "H20 GPUs", "(b) rollout cluster: H20 GPUs"),
          ("gpus_H800", "H800 GPUs", "(c) training cluster: H800 GPUs"))


def _policy_list(text: str) -> list[str]:
    """``a,b,`` -> ``["a", "b"]``."""
    return [p for p in text.split(",") if p]


def draw(table: pd.DataFrame, timeseries: pd.DataFrame, policies: list[str]) -> plt.Figure:
    """Three stacked panels over time, one step line per policy (first seed)."""
    apply_style()
    fig, axes = plt.subplots(3, 1, figsize=(7.0, 6.4), sharex=True)
    seed = int(timeseries["seed"].min())
    means = table.groupby("policy")["cost_usd_per_h"].mean()
    for policy in policies:
        part = timeseries[(timeseries["policy"] == policy) & (timeseries["seed"] == seed)]
        if not len(part):
            raise ValueError(f"no time series for policy {policy!r}")
        # the time-average cost's mean over seeds and its 95% Student-t interval
        low, high = t_errorbar(table.loc[table["policy"] == policy, "cost_usd_per_h"])
        # "\$": a second plain "$" in one label would start matplotlib's mathtext
        spread = (f", 95% \\${low:,.0f} to {high:,.0f}"
                  if f"{low:,.0f}" != f"{high:,.0f}" else "")
        label = f"{policy_label(policy)} (avg \\${means[policy]:,.0f}/h{spread})"
        for ax, (column, _, _) in zip(axes, PANELS, strict=True):
            values = part[column] if column in part else 0 * part["time_h"]
            ax.step(part["time_h"], values, where="post", lw=1.0,
                    color=policy_colour(policy), label=label)
    for ax, (_, ylabel, title) in zip(axes, PANELS, strict=True):
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        ax.set_ylim(bottom=0)
    # above panel (a), right of its title: inside the panel it would cover the curves
    axes[0].legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(policies),
                   frameon=False, fontsize=7, handlelength=1.2, columnspacing=1.0)
    axes[-1].set_xlabel("time since the first arrival (h)")
    fig.suptitle(f"Replay of the production trace (replay seed {seed})", x=0.01, ha="left")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tables, write PNG and PDF."""
    policies = {"default": "rollmux,solo-d,verl", "type": _policy_list,
                "help": "comma-separated policies to draw"}
    return figure_main(
        __doc__, {"table": "production.csv", "timeseries": "production_timeseries.csv"},
        draw, argv, options={"policies": policies},
    )


if __name__ == "__main__":
    raise SystemExit(main())
