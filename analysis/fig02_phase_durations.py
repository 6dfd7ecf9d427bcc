"""Fig. 2: rollout and training phase durations per workload class of a trace.

Reads the per-job phase table written by the pipeline (results/traces/trace=<name>/
phases.csv: one row per job with workload, model size, rollout_s, train_s) and draws,
for the most frequent workload classes (task x model size), the spread of rollout and
training durations, like the paper's top-10 production workloads: one box per class and
phase (box: quartiles over the class's jobs, line: median, whiskers: min-max).

    python analysis/fig02_phase_durations.py \
        --phases results/traces/trace=production-default/phases.csv \
        --png figures/fig02_phase_durations.png --pdf figures/fig02_phase_durations.pdf
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rollmux.plotstyle import PHASE_COLOURS, apply_style, figure_main, legend_below

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)
import seaborn as sns  # isort: skip

PHASES = (("rollout_s", "rollout"), ("train_s", "training"))


def _with_class(phases: pd.DataFrame) -> pd.DataFrame:
    """The phase table with a ``workload_class`` column: task (or 'unlabelled') and size."""
    label = phases["workload"].where(phases["workload"] != "", "unlabelled")
    size = phases["model_size_b"].map(lambda b: f"{b:g}B")
    return phases.assign(workload_class=label + " " + size)


def workload_classes(phases: pd.DataFrame, top: int) -> pd.DataFrame:
    """Per-class job count, medians and ranges of both phases for the `top` most frequent."""
    frame = _with_class(phases)
    counts = frame["workload_class"].value_counts()
    # Most frequent first; ties broken by name so the order is deterministic.
    order = sorted(counts.index, key=lambda name: (-counts[name], name))[:top]
    rows = []
    for name in order:
        part = frame[frame["workload_class"] == name]
        row: dict[str, object] = {"workload_class": name, "jobs": len(part)}
        for column, _ in PHASES:
            row[f"{column}_median"] = float(part[column].median())
            row[f"{column}_min"] = float(part[column].min())
            row[f"{column}_max"] = float(part[column].max())
        rows.append(row)
    return pd.DataFrame(rows)


def durations(phases: pd.DataFrame, classes: pd.DataFrame) -> pd.DataFrame:
    """Long form of the shown classes: one row per job and phase (``duration_s``)."""
    frame = _with_class(phases)
    frame = frame[frame["workload_class"].isin(classes["workload_class"])]
    parts = [pd.DataFrame({"workload_class": frame["workload_class"], "phase": name,
                           "duration_s": frame[column]}) for column, name in PHASES]
    return pd.concat(parts, ignore_index=True)


def draw(long: pd.DataFrame, classes: pd.DataFrame, title: str) -> plt.Figure:
    """Box plots per class and phase: box quartiles, line median, whiskers min-max."""
    apply_style()
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    sns.boxplot(data=long, x="workload_class", y="duration_s", hue="phase",
                order=list(classes["workload_class"]), hue_order=[n for _, n in PHASES],
                palette=PHASE_COLOURS, whis=(0, 100), width=0.7, linewidth=0.8,
                fliersize=0, ax=ax)
    ax.set_xticks(
        range(len(classes)),
        [f"{c}\n({n} jobs)" for c, n in zip(classes["workload_class"], classes["jobs"],
                                            strict=True)],
        rotation=45, ha="right", rotation_mode="anchor",
    )
    ax.set_xlabel("")
    ax.set_yscale("log")
    ax.set_ylabel("phase duration per iteration (s)")
    ax.set_title(title, loc="left")
    # under the plot, so no box hides behind it and the title keeps its line
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    legend_below(fig, handles, labels, title="box: quartiles, line: median, whiskers: min-max",
                 title_fontsize=7)
    return fig


def title_of(classes: pd.DataFrame) -> str:
    """The figure title: how many classes are shown and their duration range."""
    low = min(classes["rollout_s_min"].min(), classes["train_s_min"].min())
    high = max(classes["rollout_s_max"].max(), classes["train_s_max"].max())
    return (
        f"Phase durations of the {len(classes)} most frequent workload classes "
        f"({low:,.0f} to {high:,.0f} s)"
    )


def draw_phases(phases: pd.DataFrame, top: int) -> plt.Figure:
    """:func:`draw` of the `top` most frequent workload classes of a per-job phase table."""
    classes = workload_classes(phases, top)
    return draw(durations(phases, classes), classes, title_of(classes))


def read_phases(path: Path) -> pd.DataFrame:
    """The per-job phase table (empty workload labels stay empty strings)."""
    return pd.read_csv(path, keep_default_na=False, na_values={"rollout_s": [""]})


def main(argv: list[str] | None = None) -> int:
    """Read the phase table, draw the figure, save PNG and PDF."""
    return figure_main(
        __doc__, {"phases": "per-job phase CSV"}, draw_phases, argv, read=read_phases,
        options={"top": {"type": int, "default": 10, "help": "workload classes shown"}},
        note=lambda phases, top: f"{len(workload_classes(phases, top))} classes",
    )


if __name__ == "__main__":
    raise SystemExit(main())
