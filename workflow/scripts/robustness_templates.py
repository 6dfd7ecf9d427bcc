"""Snakemake adapter: per-iteration draws under each drift template (Fig. 16)."""

import logging

from rollmux.experiments.robustness import template_curves
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
curves = template_curves(snakemake.input.trace,
                         [float(size) for size in snakemake.params.model_sizes_b],
                         int(snakemake.params.iterations), int(snakemake.params.seed), hw,
                         str(snakemake.params.drift_reach))
write_csv(curves, snakemake.output.curves, "%.10g")
logging.info("wrote %d rows to %s", len(curves), snakemake.output.curves)
