"""Snakemake adapter: closed-form micro-benchmark table (results/models/microbench.csv)."""

import logging

from rollmux.experiments.microbench import scenario_table
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
table = scenario_table(list(snakemake.params.scenarios), hw)
write_csv(table, snakemake.output.table)
logging.info("wrote %d rows to %s", len(table), snakemake.output.table)
