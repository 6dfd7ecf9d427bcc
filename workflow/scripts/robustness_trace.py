"""Snakemake adapter: the drift replays' trace, the first N arrivals of a shipped trace."""

import logging

from rollmux.hardware import load_hardware
from rollmux.sim.robustness import first_arrivals_text, write_validated_trace

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
text = first_arrivals_text(snakemake.input.trace, int(snakemake.params.first_arrivals), hw)
write_validated_trace(text, snakemake.output.trace, hw)
logging.info("wrote %s (%s)", snakemake.output.trace, text.splitlines()[1])
