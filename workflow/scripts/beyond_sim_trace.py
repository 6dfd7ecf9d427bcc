"""Snakemake adapter: a shipped generated trace drawn again with another seed (and windowed).

The repeat comparison's further seeds on the simulation trace (sim.beyond.simulation_traces:
generated): the trace's own generator command (its header) with seed ``gseed``
(rollmux.experiments.beyond.regenerated_trace_text), cut to its first N arrivals when the
name asks for a window.
"""

import logging
from pathlib import Path

from rollmux.experiments.beyond import regenerated_trace_text
from rollmux.io import write_text
from rollmux.sim.sweeps import window_trace_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
source = Path(snakemake.input.trace)
seed = int(snakemake.wildcards.gseed)
text = regenerated_trace_text(source.read_text(encoding="utf-8"), seed, str(source))
window = snakemake.wildcards.window
if window:
    text = window_trace_text(text, int(window.removeprefix("-first")), source=source.name)
write_text(snakemake.output.trace, text)
logging.info("wrote %s: %s drawn again with seed %d%s", snakemake.output.trace, source, seed,
             f", first {window.removeprefix('-first')} arrivals" if window else "")
