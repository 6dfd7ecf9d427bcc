"""Stand-in inputs of every figure script of ``analysis/``: small copies of a pipeline run's
results, kept in tests/data/figure_inputs/ (the same paths as under ``results/``).

Each figure script's entry says which of its ``--options`` read which results file and
which other options the pipeline's rule passes (workflow/rules/*.smk). The files are a
quick-profile run's outputs, trimmed so the tests stay small: long time series keep one
replay seed and every third point, the drift templates every fifth iteration. Refresh them
after a change of an input's columns, from a run of ``make reproduce``:

    python tests/figure_inputs.py results

tests/test_figures.py renders every script on them and checks its text layout.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
#: Where the stand-ins live.
DATA = ROOT / "tests" / "data" / "figure_inputs"
PF = "paperfigs"


@dataclass(frozen=True)
class FigureInputs:
    """The results files (option -> path under results/) and other options of one script."""

    files: dict[str, str | list[str]]
    options: list[str] = field(default_factory=list)

    def argv(self, data: Path = DATA) -> list[str]:
        """The script's command line without ``--png`` and ``--pdf``."""
        args: list[str] = []
        for option, paths in self.files.items():
            args.append(f"--{option}")
            args += [str(data / p) for p in ([paths] if isinstance(paths, str) else paths)]
        return args + self.options


#: The failure replay's run folder (workflow/rules/robustness.smk, RB_FAIL_DIR).
FAILURE_RUN = ("sim/trace=robustness-failure/slo=trace/maxgroup=default/drift=none/"
               "failures=robustness-failure/policy=rollmux/seed=0")
SEED_THROUGHPUT = [f"microbench/seeds/seed={s}/throughput.csv" for s in range(3)]

#: Every figure script, by file name: its inputs as the pipeline's rule passes them.
FIGURES: dict[str, FigureInputs] = {
    "fig01_gantt.py": FigureInputs({"phases": "gantt/phases.csv"}),
    "fig02_phase_durations.py": FigureInputs(
        {"phases": "traces/trace=production-default/phases.csv"}),
    "fig03_bad_case.py": FigureInputs({"phases": f"{PF}/fig03_phases.csv",
                                       "slowdowns": f"{PF}/fig03_slowdowns.csv"}),
    "fig04_switch.py": FigureInputs({"switch": f"{PF}/fig04_switch.csv"}),
    "fig06_group_status.py": FigureInputs({"phases": f"{PF}/fig06_phases.csv",
                                           "status": f"{PF}/fig06_status.csv"}),
    "fig07_migration.py": FigureInputs({"phases": f"{PF}/fig07_phases.csv"}),
    "fig10_microbench.py": FigureInputs({"phases": f"{PF}/fig10_phases.csv",
                                         "throughput": "microbench/throughput.csv",
                                         "seed-tables": SEED_THROUGHPUT}),
    "fig12_migration.py": FigureInputs({"lengths": f"{PF}/fig12_lengths.csv",
                                        "stats": f"{PF}/fig12_stats.csv",
                                        "migration": "microbench/migration.csv"}),
    "fig13_sync.py": FigureInputs({"sync": f"{PF}/fig13_sync.csv"}),
    "fig14_trace_replay.py": FigureInputs(
        {"table": "sim/production.csv", "timeseries": "sim/production_timeseries.csv"},
        ["--policies", "rollmux,solo-d,verl"]),
    "fig15_sensitivity.py": FigureInputs({"table": "sim/sensitivity.csv"},
                                         ["--policies", "rollmux,random,greedy"]),
    "fig16_drift_templates.py": FigureInputs({"curves": "robustness/templates.csv"},
                                             ["--window", "10"]),
    "fig17_drift_cost.py": FigureInputs(
        {"drift": "robustness/drift.csv"},
        ["--policies", "rollmux", "random", "greedy", "regroup", "--reference", "regroup"]),
    "fig18_drift_utilisation.py": FigureInputs(
        {"utilisation": "robustness/utilisation.csv", "migration": "robustness/migration.csv"},
        ["--reference", "regroup"]),
    "fig19_failure_timeline.py": FigureInputs(
        {"timeline": "robustness/failure/timeline.csv",
         "events": f"{FAILURE_RUN}/events.csv"}),
    "fig20_mixed.py": FigureInputs({"table": "sim/mixed.csv",
                                    "timeseries": "sim/mixed_timeseries.csv"}),
    "fig_beyond_repeat.py": FigureInputs({"table": "beyond/repeat.csv"}),
    "fig_designs_cost_slo.py": FigureInputs({"table": "designs/comparison.csv"}),
    "fig_designs_crossover.py": FigureInputs({"crossover": "designs/crossover.csv",
                                              "ratios": "designs/crossover_ratios.csv"}),
    "fig_fluid_bound.py": FigureInputs(
        {"table": "sim/fluid.csv", "fluid": "sim/fluid_timeseries.csv",
         "timeseries": "sim/production_timeseries.csv"},
        ["--trace-labels", "production-default=production trace;simulation-mixed-first60="
         "simulation trace, mixed workload, first 60 arrivals"]),
    "fig_production_gap.py": FigureInputs({"table": "evidence/production_gap.csv"}),
    "fig_theorem1_boundary.py": FigureInputs({"summary": "theorem1/summary.csv"}),
    "fig_theorem1_slo_optimum.py": FigureInputs({"table": "theorem1/slo_optimum.csv"}),
    "fig_theorem1_worst_case.py": FigureInputs({"table": "theorem1/worst_case.csv",
                                                "supremum": "theorem1/supremum.csv"}),
}


def _every(step: int, by: list[str], order: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Keep every ``step``-th row (and the last) of each group, in ``order``."""

    def trim(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values([*by, order], kind="stable")
        position = frame.groupby(by, sort=False).cumcount()
        size = frame.groupby(by, sort=False)[order].transform("size")
        return frame[(position % step == 0) | (position == size - 1)]

    return trim


def _first_seed(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the smallest replay seed."""
    return frame[frame["seed"] == frame["seed"].min()]


#: How a results file is made smaller (files not named are copied whole).
TRIM: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "sim/production_timeseries.csv": lambda f: _every(3, ["trace", "policy"], "time_h")(
        _first_seed(f)),
    "sim/mixed_timeseries.csv": lambda f: _every(3, ["trace", "policy"], "time_h")(
        _first_seed(f)),
    "robustness/templates.csv": lambda f: f[f["iteration"] % 5 == 0],
}


def refresh(results: Path, data: Path = DATA) -> list[Path]:
    """Copy (and trim) every figure input from a run's ``results`` folder into ``data``."""
    written = []
    for inputs in FIGURES.values():
        for paths in inputs.files.values():
            for path in [paths] if isinstance(paths, str) else paths:
                source, target = results / path, data / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if path in TRIM:
                    TRIM[path](pd.read_csv(source, keep_default_na=False)).to_csv(
                        target, index=False)
                else:
                    shutil.copyfile(source, target)
                written.append(target)
    return written


if __name__ == "__main__":
    for written_path in refresh(Path(sys.argv[1])):
        print(written_path.relative_to(ROOT))
