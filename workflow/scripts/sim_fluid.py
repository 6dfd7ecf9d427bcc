"""Snakemake adapter: each replay's total cost over the fluid lower bound of its trace."""

import logging
from pathlib import Path

import pandas as pd

from rollmux.closedform import SECONDS_PER_HOUR
from rollmux.hardware import load_hardware
from rollmux.io import write_csv
from rollmux.sim.sweeps import (
    KEY_COLUMNS,
    collect_runs,
    fluid_job_rates,
    fluid_table,
    fluid_timeseries,
    run_keys,
)
from rollmux.traces.loader import load_trace

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
folders = sorted({str(Path(p).parent) for p in snakemake.input.summaries})
runs = collect_runs(folders)
rates = {
    str(name): fluid_job_rates(load_trace(path, hw), hw)
    for name, path in zip(snakemake.params.trace_names, snakemake.input.traces, strict=True)
}
done = {}
for folder in folders:
    keys = run_keys(folder)
    jobs = pd.read_csv(Path(folder) / "jobs.csv")
    done[tuple(keys[k] for k in KEY_COLUMNS)] = dict(
        zip(jobs["job_id"].astype(str), jobs["iterations_done"].astype(float), strict=True))
table = fluid_table(runs, rates, done)
write_csv(table, snakemake.output.table, "%.10g")
series = []
for name in sorted(rates):
    steps = fluid_timeseries(rates[name])
    series.append(pd.DataFrame({
        "trace": name, "time_h": steps["time_s"] / SECONDS_PER_HOUR,
        "fluid_cost_usd_per_h": steps["fluid_cost_usd_per_h"]}))
write_csv(pd.concat(series, ignore_index=True), snakemake.output.timeseries, "%.10g")
logging.info("fluid bound of %d traces, %d replays", len(rates), len(table))
