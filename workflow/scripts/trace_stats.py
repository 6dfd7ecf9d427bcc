"""Snakemake adapter: validate a trace; write its per-job phases and paper-vs-achieved stats."""

import logging

from rollmux.hardware import load_hardware
from rollmux.io import write_csv
from rollmux.traces import load_trace
from rollmux.traces.stats import job_frame, stats_table

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
jobs = load_trace(snakemake.input.trace, hw)
write_csv(job_frame(jobs, hw), snakemake.output.phases)
write_csv(stats_table(jobs, snakemake.params.kind, hw), snakemake.output.stats)
logging.info(
    "%s: %d jobs valid; wrote %s and %s",
    snakemake.input.trace,
    len(jobs),
    snakemake.output.phases,
    snakemake.output.stats,
)
