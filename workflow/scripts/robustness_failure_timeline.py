"""Snakemake adapter: the failure replay's named per-phase timeline (Fig. 19)."""

import logging

import pandas as pd

from rollmux.experiments.robustness import failure_timeline
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
timeline = failure_timeline(pd.read_csv(snakemake.input.phases),
                            pd.read_csv(snakemake.input.jobs),
                            pd.read_csv(snakemake.input.events))
write_csv(timeline, snakemake.output.timeline, "%.10g")
logging.info("wrote %d rows to %s", len(timeline), snakemake.output.timeline)
