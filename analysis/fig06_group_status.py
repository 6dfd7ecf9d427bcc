"""Fig. 6: group status, under-utilised, full and over-saturated (T_load vs T_cycle).

Reads the example groups of the pipeline
(``rollmux.experiments.model_figures.group_status_examples``: jobs on one H20 and one H800 node,
round-robin meta-iterations executed by the event simulation) and draws each group's timeline with
its T_load, T_cycle and status.

    python analysis/fig06_group_status.py --phases results/paperfigs/fig06_phases.csv \
        --status results/paperfigs/fig06_status.csv \
        --png figures/fig06_group_status.png --pdf figures/fig06_group_status.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import (
    apply_style,
    draw_gantt,
    figure_main,
    legend_below,
    legend_handles,
    wrapped_title,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(phases: pd.DataFrame, status: pd.DataFrame) -> plt.Figure:
    """One timeline per group, the meta-iteration boundaries dashed."""
    apply_style()
    fig, axes = plt.subplots(len(status), 1, figsize=(7.0, 1.35 * len(status) + 0.8),
                             sharex=True, squeeze=False)
    for ax, rec in zip(axes[:, 0], status.itertuples(index=False), strict=True):
        part = phases[phases["group"] == rec.group]
        draw_gantt(ax, part)
        period = float(rec.meta_iteration_s)
        k = 1
        while k * period <= part["end_s"].max() + 1e-9:
            ax.axvline(k * period, color="grey", linewidth=0.7, linestyle="--")
            k += 1
        wrapped_title(
            ax,
            f"{rec.status}: T_load {rec.t_load_s:.0f} s vs T_cycle {rec.t_cycle_s:.0f} s "
            f"(jobs r/t {rec.jobs.replace(';', ', ')}; utilisation "
            f"{rec.rollout_utilisation:.0%} / {rec.train_utilisation:.0%})",
        )
    axes[-1, 0].set_xlabel("time (s); dashed: meta-iteration boundaries")
    n_jobs = int(phases["job"].max()) + 1
    legend_below(fig, legend_handles([f"job {j}" for j in range(n_jobs)]))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the phase and status tables, write PNG and PDF."""
    return figure_main(
        __doc__, {"phases": "per-phase CSV", "status": "per-group status CSV"}, draw, argv,
        note=lambda status, **_: ", ".join(status["status"]),
    )


if __name__ == "__main__":
    raise SystemExit(main())
