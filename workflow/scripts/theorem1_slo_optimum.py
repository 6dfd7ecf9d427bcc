"""Snakemake adapter: rollmux-repeat's planner against the certified SLO-constrained optimum
(results/theorem1/slo_optimum.csv, slo_optimum_summary.csv)."""

import logging
import time

from rollmux.io import write_csv
from rollmux.theorem1.slo_optimum import slo_optimum_summary, slo_optimum_table

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
settings = dict(snakemake.params.settings)
seed = int(snakemake.params.seed)
start = time.process_time()
table = slo_optimum_table(
    [int(n) for n in settings.get("sizes", [3, 4, 5])], int(settings.get("groups", 20)), seed,
    max_multiplicity=int(settings.get("max_multiplicity", 3)),
    max_duration_s=int(settings.get("max_duration_s", 20)),
    slo_range=tuple(float(x) for x in settings.get("slo_range", [1.2, 2.5])),
)
write_csv(table, snakemake.output.table, float_format="%.9g")
write_csv(slo_optimum_summary(table, seed), snakemake.output.summary, float_format="%.6g")
logging.info("%d groups, %d certified, %.1f s CPU", len(table), int(table["certified"].sum()),
             time.process_time() - start)
