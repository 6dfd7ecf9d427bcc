"""Snakemake adapter: claims metrics of the trace replays (results/metrics/<stage>.csv).

Production (C01-C13, C56) from results/sim/production.csv; simulation (C28-C44) from
results/sim/sensitivity.csv and results/sim/mixed.csv. Beside each metrics file, the same
metrics at each seed alone (results/metrics/seeds/<stage>.csv); the metrics file's value
is their mean (rollmux.experiments.intervals); for simulation, the certified gap of the
optimum behind each cost over optimal's (results/metrics/gaps/simulation.csv,
rollmux.experiments.optimum_gaps).
"""

import logging

import pandas as pd

from rollmux.experiments.intervals import mean_over_seeds, per_seed_metrics
from rollmux.experiments.production import production_metrics
from rollmux.experiments.sensitivity import (
    read_sweep_table,
    simulation_gaps,
    simulation_metrics_over_seeds,
)
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
if hasattr(snakemake.input, "sensitivity"):
    window = int(snakemake.params.window)
    note = f"; first {window} arrivals of each trace" if window else ""
    sens = read_sweep_table(snakemake.input.sensitivity)
    mixed = read_sweep_table(snakemake.input.mixed)
    sources = f"{snakemake.input.sensitivity};{snakemake.input.mixed}"
    endpoints = [str(v) for v in snakemake.params.slo_endpoints]

    # each claim's value at each seed alone (replays the seed does not change are copied
    # to every seed by the sweeps' tables), the metrics file's value the mean of those
    metrics, per_seed = simulation_metrics_over_seeds(sens, mixed, sources,
                                                      slo_endpoints=endpoints,
                                                      window_note=note)
    # the certified gap of the optimum each cost over optimal's divides by
    write_csv(simulation_gaps(sens, mixed, sources, str(snakemake.params.reference)),
              snakemake.output.gap_metrics)
else:
    prod = pd.read_csv(snakemake.input.table, dtype={"slo": str})
    source = str(snakemake.input.table)
    metrics = production_metrics(prod, source)
    per_seed = per_seed_metrics(
        lambda seed: production_metrics(prod[prod["seed"] == seed], source),
        sorted(int(s) for s in prod["seed"].unique()))
    metrics = mean_over_seeds(metrics, per_seed)
write_csv(metrics, snakemake.output.metrics)
write_csv(per_seed, snakemake.output.seed_metrics)
logging.info("wrote %d metrics to %s (per seed: %s)", len(metrics), snakemake.output.metrics,
             snakemake.output.seed_metrics)
