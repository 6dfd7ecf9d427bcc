"""Snakemake adapter: drift replays -> drift.csv, utilisation.csv, migration.csv, metrics
(with their per-seed values and the reference's certified gaps)."""

import logging
from pathlib import Path

from rollmux.experiments.intervals import mean_over_seeds, per_seed_metrics
from rollmux.experiments.robustness import (
    DriftStudy,
    RunRef,
    drift_table,
    migration_table,
    robustness_gaps,
    robustness_metrics,
    utilisation_table,
)
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
# Each replay's setting, policy, seed and drift reach come from its config.json.
runs = [RunRef.from_folder(Path(summary).parent) for summary in snakemake.input.summaries]
# The compared policies and the reference come from config robustness.policies, .reference.
study = DriftStudy(tuple(snakemake.params.policies), str(snakemake.params.reference))
out = snakemake.output
drift = drift_table(runs, study)
utilisation = utilisation_table(drift, study.reference)
migration = migration_table([r for r in runs if r.policy == study.reference],
                            snakemake.input.trace, study, hw)
metrics = robustness_metrics(drift, utilisation, out.drift, out.utilisation,
                             context=snakemake.params.context)
# every drift replay changes with the seed: each claim's value at each seed alone, and the
# metrics file's value the mean of those (rollmux.experiments.intervals)
per_seed = per_seed_metrics(
    lambda seed: robustness_metrics(drift[drift["seed"] == seed],
                                    utilisation[utilisation["seed"] == seed],
                                    out.drift, out.utilisation),
    sorted(int(s) for s in drift["seed"].unique()))
metrics = mean_over_seeds(metrics, per_seed)
write_csv(drift, out.drift, "%.10g")
write_csv(utilisation, out.utilisation, "%.10g")
write_csv(migration, out.migration, "%.10g")
write_csv(metrics, out.metrics, "%.6g")
write_csv(per_seed, out.seed_metrics, "%.6g")
write_csv(robustness_gaps(drift, out.drift, study.reference), out.gap_metrics, "%.6g")
logging.info("%d replays; wrote %s, %s, %s, %s", len(runs), out.drift, out.utilisation,
             out.migration, out.metrics)
