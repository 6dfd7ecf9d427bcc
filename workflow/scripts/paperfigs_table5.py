"""Snakemake adapter: Table 5, decision latency or exact optimum vs brute force."""

import logging

from rollmux import tables
from rollmux.hardware import load_hardware
from rollmux.io import write_csv, write_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
seed = int(snakemake.params.seed)
if snakemake.params.part == "latency":
    frame = tables.table5_latency(list(snakemake.params.jobs), seed,
                                  int(snakemake.params.decisions), hw)
    title = "Table 5: RollMux placement decision latency vs concurrent jobs"
    note = ("Wall-clock medians of `rollmux.placement.bench.bench_placement` on this machine "
            "(Python; the paper's search is C++). Timings vary between runs.")
else:
    frame = tables.table5_optimum(list(snakemake.params.jobs), seed,
                                  float(snakemake.params.time_limit_s), hw)
    title = "Table 5: exact optimum vs brute force (production mixes)"
    note = ("`rollmux.placement.optimum.bench_optimum` with brute force on; wall-clock "
            "seconds on this machine, they vary between runs.")
write_csv(frame, snakemake.output.csv)
write_text(snakemake.output.md, tables.markdown(frame, title, [note]))
logging.info("wrote %d rows to %s", len(frame), snakemake.output.csv)
