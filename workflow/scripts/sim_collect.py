"""Snakemake adapter: collect replay folders into a tidy table (and their time series).

With ``params.settings`` the rows are the sensitivity settings' replays normalised by
``params.reference`` (rollmux.sim.sweeps.sensitivity_table); otherwise one row per replay.
"""

import logging
from pathlib import Path

from rollmux.io import write_csv
from rollmux.sim.sweeps import Setting, collect_runs, collect_timeseries, sensitivity_table

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
folders = sorted({str(Path(p).parent) for p in snakemake.input.summaries})
# a replay the seed does not change ran once: copied to every seed of the plan
seeds = [int(x) for x in snakemake.params.seeds] if hasattr(snakemake.params, "seeds") else None
runs = collect_runs(folders, seeds)
if hasattr(snakemake.params, "settings"):
    settings = [Setting(**dict(s)) for s in snakemake.params.settings]
    table = sensitivity_table(runs, settings, str(snakemake.params.reference))
else:
    table = runs
write_csv(table, snakemake.output.table, "%.10g")
logging.info("wrote %d rows from %d replays to %s", len(table), len(folders),
             snakemake.output.table)
if hasattr(snakemake.output, "timeseries"):
    series = collect_timeseries(folders)
    write_csv(series, snakemake.output.timeseries, "%.10g")
    logging.info("wrote %d time-series rows to %s", len(series), snakemake.output.timeseries)
