"""Snakemake adapter: rollmux-repeat next to rollmux (results/beyond/repeat.csv, metrics).

One row per replay: what it decided (rollmux.sim.policy_compare.outcome_row: cost, SLO
attainment, slowdown) and its decision latency, read from the recorded table
(benchmarks/record_beyond_latency.py; byte-identical reruns) or, with
sim.beyond.measure_latency, timed here (latency_row). Then the beyond ledger's metrics
(results/metrics/beyond.csv).
"""

import logging
from pathlib import Path

import pandas as pd

from rollmux.experiments.beyond import comparison_metrics, slo_optimum_metrics
from rollmux.io import write_csv
from rollmux.sim.policy_compare import (
    COMPARISON_COLUMNS,
    KEY_COLUMNS,
    latency_row,
    outcome_row,
    recorded_latency,
)

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
overrides = dict(snakemake.params.overrides)
measure = bool(snakemake.params.measure)
rows = []
for summary, trace in zip(snakemake.input.summaries, snakemake.input.traces, strict=True):
    folder = Path(summary).parent
    row = outcome_row(folder, trace)
    keys = {k: row[k] for k in KEY_COLUMNS}
    if measure:
        latency = latency_row(folder, trace, overrides)
    else:
        try:
            latency = recorded_latency(snakemake.input.recorded[0], keys)
        except ValueError as exc:
            # latencies are recorded for the first seed of the shipped profiles; others
            # (more seeds, other windows) stay empty rather than invented
            logging.warning("no recorded latency (%s): left empty", exc)
            latency = {**keys, "decisions": row["jobs"], "decision_median_ms": float("nan"),
                       "decision_p95_ms": float("nan"), "decision_max_ms": float("nan")}
    row.update(latency)
    logging.info("%s on %s: %d decisions, median %.2f ms (%s)", row["policy"], row["trace"],
                 row["decisions"], row["decision_median_ms"],
                 "timed" if measure else "recorded")
    rows.append(row)
table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
table = table.sort_values(["trace", "policy", "seed"], kind="stable")
write_csv(table, snakemake.output.table, float_format="%.6g")
baseline, *others = snakemake.params.policies
# The first candidate carries the baseline's readings and the decision latency ratio;
# the others (e.g. rollmux-repeat-strict) their own readings against the same baseline.
metrics = pd.concat([comparison_metrics(table, baseline, candidate,
                                        dict(snakemake.params.labels),
                                        candidate.replace("-", "_"),
                                        str(snakemake.output.table),
                                        with_baseline=i == 0, with_latency=i == 0)
                     for i, candidate in enumerate(others)]
                    + [slo_optimum_metrics(pd.read_csv(snakemake.input.slo_optimum),
                                           pd.read_csv(snakemake.input.slo_optimum_summary),
                                           str(snakemake.input.slo_optimum))],
                    ignore_index=True)
write_csv(metrics, snakemake.output.metrics)
logging.info("wrote %d replays and %d metrics", len(table), len(metrics))
