"""Snakemake adapter: simulated micro-benchmarks (Table 4, Fig. 10 and Fig. 12 tables)."""

import logging

from rollmux.experiments.microbench_sim import migration_table, table4, throughput_table
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
seed, iterations = int(snakemake.params.seed), int(snakemake.params.iterations)
names = list(snakemake.params.scenarios)
outputs = {
    "table4": table4(seed, iterations, hw, names=names),
    "throughput": throughput_table(seed, iterations, hw, names=names),
    "migration": migration_table(hw=hw, seed=seed, iterations=iterations),
}
for name, frame in outputs.items():
    write_csv(frame, snakemake.output[name])
    logging.info("wrote %d rows to %s", len(frame), snakemake.output[name])
