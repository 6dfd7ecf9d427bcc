"""Snakemake adapter: claims metrics of the trace replays (results/metrics/<stage>.csv).

Production (C01-C13, C56) from results/sim/production.csv; simulation (C28-C44) from
results/sim/sensitivity.csv and results/sim/mixed.csv.
"""

import logging

import pandas as pd

from rollmux.experiments.production import production_metrics
from rollmux.experiments.sensitivity import simulation_metrics
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
if hasattr(snakemake.input, "sensitivity"):
    window = int(snakemake.params.window)
    note = f"; first {window} arrivals of each trace" if window else ""
    metrics = simulation_metrics(
        pd.read_csv(snakemake.input.sensitivity, dtype={"value": str, "slo": str}),
        pd.read_csv(snakemake.input.mixed, dtype={"value": str, "slo": str}),
        f"{snakemake.input.sensitivity};{snakemake.input.mixed}",
        slo_endpoints=[str(v) for v in snakemake.params.slo_endpoints],
        window_note=note,
    )
else:
    metrics = production_metrics(pd.read_csv(snakemake.input.table, dtype={"slo": str}),
                                 str(snakemake.input.table))
write_csv(metrics, snakemake.output.metrics)
logging.info("wrote %d metrics to %s", len(metrics), snakemake.output.metrics)
