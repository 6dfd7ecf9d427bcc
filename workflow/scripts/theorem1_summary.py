"""Snakemake adapter: Theorem 1 boundary map (results/theorem1/summary.csv)."""

import logging

from rollmux.io import write_csv
from rollmux.theorem1 import boundary_map

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
summary = boundary_map(int(snakemake.params.instances), int(snakemake.params.seed))
write_csv(summary, snakemake.output.summary)
logging.info("wrote %d families to %s", len(summary), snakemake.output.summary)
