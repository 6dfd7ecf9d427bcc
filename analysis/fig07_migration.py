"""Fig. 7: long-tail migration timeline, per GPU of the shared rollout node.

Reads the pipeline's timeline of jobs woven on one H20 and one H800 node
(``rollmux.experiments.model_figures.migration_timeline``: the same stochastic draws simulated with
and without long-tail migration) and draws, per GPU of the rollout node and for the
training node, who holds it: with migration a job's tail is consolidated onto a few GPUs
and the next job's rollout starts on the freed ones.

Without migration the rollout holds the whole node until its last straggler is done: its
skewness bubble (paper sec. 4.3, "as the majority of responses finish early, most GPUs in
the rollout pool idle wait for the few stragglers to complete ... (Figure 7-top)"). The
same draws' migrated tail says how long only the stragglers run (from the 80% threshold
to the rollout's end) and on how many GPUs they fit; in that stretch the other GPUs of
the node are drawn as the bubble (hatched), and the title gives the bubble's share of the
rollout node's GPU time.

    python analysis/fig07_migration.py --phases results/paperfigs/fig07_phases.csv \
        --png figures/fig07_migration.png --pdf figures/fig07_migration.pdf
"""

from __future__ import annotations

import pandas as pd
from matplotlib.patches import Patch

from rollmux.experiments.model_figures import per_gpu_segments
from rollmux.plotstyle import (
    apply_style,
    draw_gantt,
    figure_main,
    legend_below,
    legend_handles,
    wrapped_title,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

#: Hatch of a skewness bubble: rollout GPUs held but idle, waiting for stragglers.
BUBBLE_HATCH = "xxxx"


def without_migration_segments(phases: pd.DataFrame, gpus_per_node: int) -> pd.DataFrame:
    """Per-GPU segments of the run without migration, its skewness bubbles marked.

    For each rollout whose draws migrate a tail in the run with migration (same job and
    iteration: tail duration ``d``, ``g`` GPUs), the rollout's last ``d`` seconds are
    ``tail`` on GPUs ``0..g-1`` (the stragglers) and ``bubble`` on the others (idle).
    Columns as :func:`rollmux.experiments.model_figures.per_gpu_segments`.
    """
    tails = phases[phases["migration"] & (phases["phase"] == "tail")]
    tail_of = {(int(t.job), int(t.iteration)): (float(t.end_s - t.start_s), int(t.gpus))
               for t in tails.itertuples(index=False)}
    segments = per_gpu_segments(phases[~phases["migration"]], gpus_per_node)
    rows = []
    for rec in segments.to_dict("records"):
        key = (int(rec["job"]), int(rec["iteration"]))
        if rec["phase"] != "rollout" or key not in tail_of:
            rows.append(rec)
            continue
        duration, gpus = tail_of[key]
        cut = max(float(rec["start_s"]), float(rec["end_s"]) - duration)
        rows.append({**rec, "end_s": cut})
        rows.append({**rec, "start_s": cut,
                     "phase": "tail" if int(rec["gpu"]) < gpus else "bubble"})
    return pd.DataFrame(rows, columns=segments.columns)


def bubble_share(segments: pd.DataFrame) -> float:
    """The bubble's share of the rollout GPUs' held time (rollout, tail and bubble)."""
    rollout = segments[segments["phase"].isin(["rollout", "tail", "bubble"])]
    held = float((rollout["end_s"] - rollout["start_s"]).sum())
    bubble = rollout[rollout["phase"] == "bubble"]
    return float((bubble["end_s"] - bubble["start_s"]).sum()) / held if held > 0 else 0.0


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
        ends = part[part["phase"] == "train"].groupby("iteration")["end_s"].max()
        title = f"iteration {len(ends)} ends at {ends.max():,.0f} s"
        if migration:
            segments = per_gpu_segments(part, gpn)
            title = f"with long-tail migration: {title}"
        else:
            segments = without_migration_segments(phases, gpn)
            title = (f"without migration: {title}; skewness bubbles (hatched) "
                     f"{bubble_share(segments):.0%} of the rollout GPU time")
        draw_gantt(ax, segments[segments["phase"] != "bubble"], rows=rows, row_column="gpu",
                   labels=labels)
        row_of = {r: i for i, r in enumerate(rows)}
        for rec in segments[segments["phase"] == "bubble"].itertuples(index=False):
            ax.barh(row_of[str(rec.gpu)], rec.end_s - rec.start_s, left=rec.start_s,
                    height=0.7, facecolor="white", edgecolor="grey", hatch=BUBBLE_HATCH,
                    linewidth=0.0)
        wrapped_title(ax, title)
    axes[-1].set_xlabel("time (s)")
    n_jobs = int(phases["job"].max()) + 1
    types = phases.drop_duplicates("job").sort_values("job")["job_type"]
    jobs = [f"job {j}: Type-{t}" for j, t in zip(range(n_jobs), types, strict=True)]
    handles = legend_handles(jobs, tail=True)
    handles[-1].set_label("tail: the last responses (stragglers)")
    handles.append(Patch(facecolor="white", edgecolor="grey", hatch=BUBBLE_HATCH,
                         linewidth=0.0, label="skewness bubble: GPU idle"))
    legend_below(fig, handles)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the timeline, write PNG and PDF."""
    return figure_main(__doc__, {"phases": "per-phase CSV"}, draw, argv)


if __name__ == "__main__":
    raise SystemExit(main())
