"""Snakemake adapter: the first N arrivals of a shipped trace (a smaller replay window)."""

import logging
from pathlib import Path

from rollmux.io import write_text
from rollmux.sim.sweeps import window_trace_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
source = Path(snakemake.input.trace)
text = window_trace_text(source.read_text(encoding="utf-8"), int(snakemake.wildcards.n),
                         source=source.name)
write_text(snakemake.output.trace, text)
logging.info("wrote the first %s arrivals of %s to %s", snakemake.wildcards.n, source,
             snakemake.output.trace)
