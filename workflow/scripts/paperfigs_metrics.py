"""Snakemake adapter: claims metrics C14-C27, C45-C46, C53-C55 (results/metrics/models.csv)."""

import logging

from rollmux.experiments.model_figures import models_metrics
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
paths = {key: str(snakemake.input[key]) for key in (
    "throughput", "table4", "migration", "sync", "switch", "latency", "optimum", "theorem1")}
frame = models_metrics(paths, list(snakemake.params.theorem1_scope))
write_csv(frame, snakemake.output.metrics)
logging.info("wrote %d metrics to %s", len(frame), snakemake.output.metrics)
