"""Fig. 2: rollout and training phase durations per workload class of a trace.

Reads the per-job phase table written by the pipeline (results/traces/trace=<name>/
phases.csv: one row per job with workload, model size, rollout_s, train_s) and draws,
for the most frequent workload classes (task x model size), the spread of rollout and
training durations, like the paper's top-10 production workloads.

    python analysis/fig02_phase_durations.py \
        --phases results/traces/trace=production-default/phases.csv \
        --png figures/fig02_phase_durations.png --pdf figures/fig02_phase_durations.pdf
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rollmux.plotstyle import JOB_COLOURS, TRAIN_HATCH, apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

PHASES = (("rollout_s", "rollout", ""), ("train_s", "training", TRAIN_HATCH))


def workload_classes(phases: pd.DataFrame, top: int) -> pd.DataFrame:
    """Per-class medians and ranges of both phases for the `top` most frequent classes."""
    label = phases["workload"].where(phases["workload"] != "", "unlabelled")
    size = phases["model_size_b"].map(lambda b: f"{b:g}B")
    frame = phases.assign(workload_class=label + " " + size)
    counts = frame["workload_class"].value_counts()
    # Most frequent first; ties broken by name so the order is deterministic.
    order = sorted(counts.index, key=lambda name: (-counts[name], name))[:top]
    rows = []
    for name in order:
        part = frame[frame["workload_class"] == name]
        row: dict[str, object] = {"workload_class": name, "jobs": len(part)}
        for column, _, _ in PHASES:
            row[f"{column}_median"] = float(part[column].median())
            row[f"{column}_min"] = float(part[column].min())
            row[f"{column}_max"] = float(part[column].max())
        rows.append(row)
    return pd.DataFrame(rows)


def draw(classes: pd.DataFrame, title: str) -> plt.Figure:
    """Grouped bars (median) with min-max whiskers of rollout and training per class."""
    apply_style()
    fig, ax = plt.subplots(figsize=(7.0, 3.2))
    x = np.arange(len(classes))
    width = 0.38
    for k, (column, name, hatch) in enumerate(PHASES):
        median = classes[f"{column}_median"].to_numpy()
        low = median - classes[f"{column}_min"].to_numpy()
        high = classes[f"{column}_max"].to_numpy() - median
        ax.bar(
            x + (k - 0.5) * width,
            median,
            width,
            label=name,
            color=JOB_COLOURS[k],
            hatch=hatch,
            edgecolor="white",
            linewidth=0.5,
            yerr=np.vstack([low, high]),
            capsize=2,
            error_kw={"linewidth": 0.8},
        )
    ax.set_xticks(
        x,
        [f"{c}\n({n})" for c, n in zip(classes["workload_class"], classes["jobs"], strict=True)],
        rotation=45,
        ha="right",
    )
    ax.set_ylabel("phase duration (s)")
    ax.set_title(title, loc="left")
    ax.legend(frameon=False)
    return fig


def title_of(classes: pd.DataFrame) -> str:
    """The figure title: how many classes are shown and their duration range."""
    low = min(classes["rollout_s_min"].min(), classes["train_s_min"].min())
    high = max(classes["rollout_s_max"].max(), classes["train_s_max"].max())
    return (
        f"Phase durations of the {len(classes)} most frequent workload classes "
        f"({low:.0f}-{high:.0f} s)"
    )


def draw_phases(phases: pd.DataFrame, top: int) -> plt.Figure:
    """:func:`draw` of the `top` most frequent workload classes of a per-job phase table."""
    classes = workload_classes(phases, top)
    return draw(classes, title_of(classes))


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
