"""Snakemake adapter: Solo-D vs woven per-phase timelines (results/gantt/phases.csv)."""

import logging

from rollmux.experiments.microbench import gantt_phases
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
phases = gantt_phases(list(snakemake.params.job_types), int(snakemake.params.iterations), hw)
write_csv(phases, snakemake.output.phases)
logging.info("wrote %d phase rows to %s", len(phases), snakemake.output.phases)
