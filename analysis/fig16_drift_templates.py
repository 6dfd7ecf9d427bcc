"""Fig. 16: iteration time under the seven drift templates, one panel per model size.

Reads results/robustness/templates.csv (``rollmux.experiments.robustness.template_curves``: one
representative job per model size drawn under none, increasing 0.5x/1.0x/1.5x and
decreasing 0.5x/1.0x/1.5x from the same raw draws) and draws iteration time (rollout +
training + sync, a centred rolling mean over ``--window`` iterations) against training
progress, with the job's admission profile (its worst-case solo iteration at its maximum
token limit, the SLO reference) as a grey line: drift that reaches the job's whole
profile can cross it.

    python analysis/fig16_drift_templates.py --curves results/robustness/templates.csv \
        --window 10 --png figures/fig16_drift_templates.png \
        --pdf figures/fig16_drift_templates.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import DRIFT_DIRECTION_COLOURS as DIRECTION_COLOURS
from rollmux.plotstyle import apply_style, figure_main, legend_below

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

DIRECTION_RANK = {"none": 0, "increasing": 1, "decreasing": 2}
STRENGTH_STYLES = {0.0: "-", 0.5: ":", 1.0: "--", 1.5: "-"}
STRENGTH_WIDTHS = {0.0: 1.2, 0.5: 1.3, 1.0: 1.3, 1.5: 1.6}


def smoothed(curves: pd.DataFrame, window: int) -> pd.DataFrame:
    """Per job and template, the centred rolling mean of ``iteration_s`` over ``window``."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    parts = []
    for _, part in curves.groupby(["job_id", "template"], sort=False):
        part = part.sort_values("iteration")
        rolled = part["iteration_s"].rolling(window, center=True, min_periods=1).mean()
        parts.append(part.assign(smoothed_s=rolled.to_numpy()))
    return pd.concat(parts, ignore_index=True)


def draw(curves: pd.DataFrame, window: int) -> plt.Figure:
    """One panel per model size, one line per template."""
    apply_style()
    data = smoothed(curves, window)
    jobs = (data[["model_size_b", "workload", "job_id"]].drop_duplicates()
            .sort_values(["model_size_b", "workload"]))
    fig, axes = plt.subplots(1, len(jobs), figsize=(2.6 * len(jobs) + 0.6, 2.9), squeeze=False)
    for ax, job in zip(axes[0], jobs.itertuples(index=False), strict=True):
        part = data[data["job_id"] == job.job_id]
        templates = part[["direction", "strength", "template"]].drop_duplicates()
        order = sorted(templates.itertuples(index=False),
                       key=lambda t: (DIRECTION_RANK[t.direction], float(t.strength)))
        for tpl in order:
            line = part[part["template"] == tpl.template]
            ax.plot(100.0 * line["progress"], line["smoothed_s"],
                    color=DIRECTION_COLOURS[tpl.direction],
                    linestyle=STRENGTH_STYLES.get(float(tpl.strength), "-"),
                    linewidth=STRENGTH_WIDTHS.get(float(tpl.strength), 1.2),
                    label=_label(tpl.direction, float(tpl.strength)))
        solo = float(part["solo_max_s"].iloc[0])
        ax.axhline(solo, color="grey", linewidth=0.8, linestyle="-.",
                   label="admission worst case")
        ax.set_title(f"{job.model_size_b:g}B ({job.workload}, job {job.job_id})", loc="left")
        ax.set_xlabel("training progress (%)")
        ax.set_xlim(0, 100)
    axes[0, 0].set_ylabel(f"iteration time (s)\nrolling mean of {window}")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=4)
    return fig


def _label(direction: str, strength: float) -> str:
    """Legend label of a template, e.g. ``increasing 1.0x``."""
    return "none" if direction == "none" else f"{direction} {strength:.1f}x"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the template curves, write PNG and PDF."""
    window = {"type": int, "default": 10, "help": "rolling-mean iterations"}
    return figure_main(__doc__, {"curves": "templates.csv"}, draw, argv,
                       options={"window": window})


if __name__ == "__main__":
    raise SystemExit(main())
