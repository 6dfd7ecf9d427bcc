"""Snakemake adapter: the hardware file of the robustness replays (defaults + overrides)."""

import logging

from rollmux.io import write_text
from rollmux.sim.robustness import hardware_yaml_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
overrides = dict(snakemake.params.overrides)
write_text(snakemake.output.hardware, hardware_yaml_text(overrides))
logging.info("wrote %s (%d overrides)", snakemake.output.hardware, len(overrides))
