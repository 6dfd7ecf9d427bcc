"""Snakemake adapter: rollmux-repeat next to rollmux (results/beyond/repeat.csv, metrics).

One row per replay (rollmux.sim.policy_compare.comparison_row: cost, SLO attainment,
slowdown, decision latency re-timed here) and the beyond ledger's metrics
(results/metrics/beyond.csv). The latency columns are timings: they vary between runs.
"""

import logging
from pathlib import Path

import pandas as pd

from rollmux.io import write_csv
from rollmux.sim.policy_compare import COMPARISON_COLUMNS, comparison_metrics, comparison_row

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
overrides = dict(snakemake.params.overrides)
rows = []
for summary, trace in zip(snakemake.input.summaries, snakemake.input.traces, strict=True):
    row = comparison_row(Path(summary).parent, trace, overrides)
    logging.info("%s on %s: %d decisions, median %.2f ms", row["policy"], row["trace"],
                 row["decisions"], row["decision_median_ms"])
    rows.append(row)
table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
table = table.sort_values(["trace", "policy", "seed"], kind="stable")
write_csv(table, snakemake.output.table, float_format="%.6g")
baseline, *others = snakemake.params.policies
metrics = pd.concat([comparison_metrics(table, baseline, candidate,
                                        dict(snakemake.params.labels),
                                        candidate.replace("-", "_"),
                                        str(snakemake.output.table))
                     for candidate in others], ignore_index=True)
write_csv(metrics, snakemake.output.metrics)
logging.info("wrote %d replays and %d metrics", len(table), len(metrics))
