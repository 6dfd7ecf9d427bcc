"""Fig. 19: failure and re-admission of one job of a co-execution group.

Reads the failure replay's named per-phase timeline (results/robustness/failure/
timeline.csv, ``rollmux.experiments.robustness.failure_timeline``) and its events.csv, and draws
one row per node, one colour per job, hatched for training, with the work the kill threw
away shaded out, the kill and resubmission times marked, and the iteration number on
each phase of the killed job: the other members keep interleaving, and the resubmitted
job, re-admitted by Algorithm 1 as a new arrival, resumes from its last completed
iteration.

    R=results/sim/trace=robustness-failure/slo=trace/maxgroup=default/drift=none
    python analysis/fig19_failure_timeline.py \
        --timeline results/robustness/failure/timeline.csv \
        --events "$R/failures=robustness-failure/policy=rollmux/seed=0/events.csv" \
        --png figures/fig19_failure_timeline.png --pdf figures/fig19_failure_timeline.pdf
"""

from __future__ import annotations

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from rollmux.plotstyle import (
    EVENT_COLOURS,
    TRAIN_HATCH,
    apply_style,
    figure_main,
    job_colour,
    legend_below,
    node_label,
    text_colour_on,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

MARKS = {"kill": (EVENT_COLOURS["kill"], "killed"),
         "resubmit": (EVENT_COLOURS["resubmit"], "resubmitted")}


def _node_key(node: str) -> tuple[bool, int]:
    """Rollout nodes first, then training nodes, each by serial."""
    return node[0] != "R", int(node[1:])


def draw(timeline: pd.DataFrame, events: pd.DataFrame) -> plt.Figure:
    """The Gantt chart of the failure replay."""
    apply_style()
    jobs = sorted(timeline["job_id"].unique())
    colour = {job: job_colour(i) for i, job in enumerate(jobs)}
    nodes = sorted(timeline["node"].unique(), key=_node_key)
    marks = events[events["kind"].isin(list(MARKS))].sort_values("time_s", kind="stable")
    failed = set(marks["job_id"])
    fig, ax = plt.subplots(figsize=(7.6, 0.42 * len(nodes) + 1.5))
    for row, node in enumerate(nodes):
        for rec in timeline[timeline["node"] == node].itertuples(index=False):
            width = rec.end_s - rec.start_s
            if rec.phase == "tail":
                # A migrated tail holds a few GPUs of the node while the next rollout
                # runs on the others: a thin bar under the row's phases.
                ax.barh(row + 0.4, width, left=rec.start_s, height=0.14,
                        color=colour[rec.job_id], alpha=0.3 if rec.lost else 1.0)
                continue
            ax.barh(row, width, left=rec.start_s, height=0.62, color=colour[rec.job_id],
                    alpha=0.3 if rec.lost else 1.0,
                    hatch=TRAIN_HATCH if rec.phase == "train" else "",
                    edgecolor="white", linewidth=0.4)
            if rec.job_id in failed and rec.pool == "rollout":
                ax.text(rec.start_s + width / 2, row, str(rec.iteration), ha="center",
                        va="center", fontsize=6,
                        color="black" if rec.lost else text_colour_on(colour[rec.job_id]))
    # the events are named in the legend: a label beside its line would run across the
    # axis or into the other event's label when the two are close
    events = []
    for rec in marks.itertuples(index=False):
        col, verb = MARKS[rec.kind]
        ax.axvline(rec.time_s, color=col, linestyle="--", linewidth=1)
        detail = rec.detail if isinstance(rec.detail, str) else ""
        done = f" ({detail.replace('_', ' ').replace('=', ': ')})" if detail else ""
        events.append(Line2D([], [], color=col, linestyle="--", linewidth=1,
                             label=f"{rec.job_id} {verb} at {rec.time_s:,.0f} s{done}"))
    ax.set_yticks(range(len(nodes)), [node_label(n) for n in nodes])
    ax.set_ylim(len(nodes) - 0.4, -0.6)
    ax.set_xlabel("time (s)")
    ax.set_xlim(0, float(timeline["end_s"].max()) * 1.01)
    handles = [Patch(color=colour[j], label=f"job {j}") for j in jobs]
    handles += [
        Patch(facecolor="white", edgecolor="grey", label="rollout (iteration no.)"),
        Patch(facecolor="white", edgecolor="grey", hatch=TRAIN_HATCH, label="training"),
        Patch(facecolor="grey", label="migrated tail (thin: a few GPUs)"),
        Patch(facecolor="grey", alpha=0.3, label="work lost to the kill"),
        *events,
    ]
    legend_below(fig, handles, ncol=len(handles), fontsize=7)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the timeline and events, write PNG and PDF."""
    return figure_main(
        __doc__, {"timeline": "timeline.csv", "events": "events.csv of the replay"}, draw,
        argv, read={"events": lambda path: pd.read_csv(
            path, dtype={"detail": str, "job_id": str}, keep_default_na=False)},
    )


if __name__ == "__main__":
    raise SystemExit(main())
