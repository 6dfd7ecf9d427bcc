"""Snakemake adapter: Table 5, decision latency or exact optimum vs brute force."""

import logging

from rollmux.experiments import tables
from rollmux.hardware import load_hardware
from rollmux.io import write_csv, write_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
seed = int(snakemake.params.seed)
if not snakemake.params.measure:
    # Recorded by benchmarks/record_table5.py: timings vary from run to run, so the
    # pipeline reads them (byte-identical reruns) unless paperfigs.table5_measure is on.
    frame = tables.recorded_table5(snakemake.input.recorded[0], snakemake.params.part)
    machine = tables.recorded_machine(snakemake.input.recorded[1])
    source = (f"Recorded by `benchmarks/record_table5.py` ({machine}); "
              "set `paperfigs.table5_measure: true` to time it in the pipeline instead.")
else:
    source = "Timed during this pipeline run; timings vary between runs."
if snakemake.params.part == "latency":
    if snakemake.params.measure:
        frame = tables.table5_latency(list(snakemake.params.jobs), seed,
                                      int(snakemake.params.decisions), hw)
    title = "Table 5: RollMux placement decision latency vs concurrent jobs"
    note = ("Wall-clock medians of `rollmux.experiments.placement_bench.bench_placement` "
            "(Python; the paper's search is C++). " + source)
else:
    if snakemake.params.measure:
        frame = tables.table5_optimum(list(snakemake.params.jobs), seed,
                                      float(snakemake.params.time_limit_s), hw)
    title = "Table 5: exact optimum vs brute force (production mixes)"
    note = ("`rollmux.placement.optimum.compare_solvers` with brute force on; wall-clock "
            "seconds. " + source)
write_csv(frame, snakemake.output.csv)
write_text(snakemake.output.md, tables.markdown(frame, title, [note]))
logging.info("wrote %d rows to %s", len(frame), snakemake.output.csv)
