"""Snakemake adapter: the designs compared (results/designs/*.csv, results/metrics/designs.csv).

One row per replay (rollmux.experiments.designs.design_row), every replay re-priced over
the price ratios, the crossover ratio per trace, every number of docs/designs.md
(results/designs/metrics.csv) and those the beyond ledger names (results/metrics/designs.csv).
"""

import logging
from pathlib import Path

import pandas as pd

from rollmux.experiments.claims import load_beyond_ledger
from rollmux.experiments.designs import (
    COMPARISON_COLUMNS,
    crossover_ratios,
    crossover_table,
    design_metrics,
    design_row,
    ledger_metrics,
)
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides))
rows = []
for summary, trace, lengths in zip(snakemake.input.summaries, snakemake.params.traces,
                                   snakemake.params.lengths, strict=True):
    rows.append(design_row(
        Path(summary).parent, trace, lengths, tuple(hw.gpus)))
everything = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
# The comparison: the designs' traces; the crossover: every trace (the balance axis too).
table = everything[everything["trace"].isin(snakemake.params.comparison_traces)]
h20 = hw.gpu("H20").price_usd_per_h
paper_ratio = hw.gpu("H800").price_usd_per_h / h20
pair = everything[everything["policy"].isin(["rollmux", "verl", "solo-d"])]
crossover = crossover_table(pair, snakemake.params.price_ratios, h20)
ratios = crossover_ratios(pair, "rollmux", "verl", paper_ratio)
metrics = design_metrics(everything, "results/designs/comparison.csv", paper_ratio)
beyond, missing = ledger_metrics(metrics, load_beyond_ledger(snakemake.input.beyond_ledger))
for metric in missing:  # the claims report fails on these, naming the ledger row
    logging.warning("beyond ledger metric %s: not computed from these replays", metric)
write_csv(table, snakemake.output.table)
write_csv(crossover, snakemake.output.crossover)
write_csv(ratios, snakemake.output.ratios)
write_csv(metrics, snakemake.output.all_metrics)
write_csv(beyond, snakemake.output.metrics)
logging.info("%d replays, %d traces; %d metrics, %d of them beyond ledger rows", len(table),
             table.trace.nunique(), len(metrics), len(beyond))
