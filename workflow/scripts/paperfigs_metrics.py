"""Snakemake adapter: claims metrics C14-C27, C45-C46, C53-C55 (results/metrics/models.csv).

The simulated micro-benchmark claims (C14-C25) draw phase times: their values at each seed
alone go to results/metrics/seeds/models.csv, and the metrics file's value is their mean
(rollmux.experiments.intervals); the other claims are deterministic.
"""

import logging

from rollmux.experiments.intervals import mean_over_seeds, per_seed_metrics
from rollmux.experiments.model_figures import MICROBENCH_METRICS, models_metrics
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
paths = {key: str(snakemake.input[key]) for key in (
    "throughput", "table4", "migration", "sync", "switch", "latency", "optimum", "theorem1")}
scope = list(snakemake.params.theorem1_scope)


def at_seed(seed: int) -> dict[str, str]:
    """The inputs with the simulated micro-benchmark tables of ``seed``."""
    return {**paths, **{t: f"results/microbench/seeds/seed={seed}/{t}.csv"
                        for t in ("throughput", "table4", "migration")}}


per_seed = per_seed_metrics(lambda seed: models_metrics(at_seed(seed), scope),
                            [int(s) for s in snakemake.params.seeds], MICROBENCH_METRICS)
frame = mean_over_seeds(models_metrics(paths, scope), per_seed)
write_csv(frame, snakemake.output.metrics)
write_csv(per_seed, snakemake.output.seed_metrics)
logging.info("wrote %d metrics to %s (per seed: %s)", len(frame), snakemake.output.metrics,
             snakemake.output.seed_metrics)
