"""Snakemake adapter: one table of every trace's statistics beside the paper's."""

import logging

import pandas as pd

from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
tables = [
    pd.read_csv(path, keep_default_na=False).assign(trace=name)
    for name, path in zip(snakemake.params.traces, snakemake.input.stats, strict=True)
]
table = pd.concat(tables, ignore_index=True)[["trace", "statistic", "unit", "paper", "achieved"]]
write_csv(table, snakemake.output.table)
logging.info("wrote %d rows for %d traces to %s", len(table), len(tables), snakemake.output.table)
