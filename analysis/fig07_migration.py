"""Fig. 7: long-tail migration timeline, per GPU of the shared rollout node.

Reads the pipeline's timeline of jobs woven on one H20 and one H800 node
(``rollmux.experiments.model_figures.migration_timeline``: the same stochastic draws simulated with
and without long-tail migration) and draws, per GPU of the rollout node and for the
training node, who holds it: with migration a job's tail is consolidated onto a few GPUs
and the next job's rollout starts on the freed ones.

    python analysis/fig07_migration.py --phases results/paperfigs/fig07_phases.csv \
        --png figures/fig07_migration.png --pdf figures/fig07_migration.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.experiments.model_figures import per_gpu_segments
from rollmux.plotstyle import apply_style, draw_gantt, figure_main, legend_handles

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def draw(phases: pd.DataFrame) -> plt.Figure:
    """Two per-GPU timelines (without, with migration), same time axis."""
    apply_style()
    gpn = int(phases["gpus"].max())
    train_nodes = sorted(phases.loc[phases["node"].str.startswith("T"), "node"].unique())
    rows = [str(g) for g in range(gpn)] + train_nodes
    labels = [f"H20 GPU {g}" for g in range(gpn)] + [f"H800 node {n[1:]}" for n in train_nodes]
    fig, axes = plt.subplots(2, 1, figsize=(7.0, 5.4), sharex=True)
    for ax, migration in zip(axes, (False, True), strict=True):
        part = phases[phases["migration"] == migration]
        draw_gantt(ax, per_gpu_segments(part, gpn), rows=rows, row_column="gpu", labels=labels)
        ends = part[part["phase"] == "train"].groupby("iteration")["end_s"].max()
        title = "with long-tail migration" if migration else "without migration"
        ax.set_title(f"{title}: iteration {len(ends)} ends at {ends.max():,.0f} s", loc="left")
    axes[-1].set_xlabel("time (s)")
    n_jobs = int(phases["job"].max()) + 1
    types = phases.drop_duplicates("job").sort_values("job")["job_type"]
    jobs = [f"job {j}: Type-{t}" for j, t in zip(range(n_jobs), types, strict=True)]
    fig.legend(handles=legend_handles(jobs, tail=True), loc="lower center", ncol=5,
               frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the timeline, write PNG and PDF."""
    return figure_main(__doc__, {"phases": "per-phase CSV"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
