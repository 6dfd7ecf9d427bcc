"""Snakemake adapter: the 1 + 1 supremum (results/theorem1/supremum.csv) and the readings
of every documented counterexample (results/theorem1/readings.csv)."""

import logging
import time

from rollmux.io import write_csv
from rollmux.theorem1.readings import readings_table
from rollmux.theorem1.supremum import PING_PONG_KS, supremum_table

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
start = time.process_time()
sizes = sorted(set(int(n) for n in snakemake.params.sizes) | {2, 3})
supremum = supremum_table(sizes, int(snakemake.params.max_duration_s), PING_PONG_KS)
write_csv(supremum, snakemake.output.supremum, float_format="%.9g")
readings = readings_table(int(snakemake.params.max_multiplicity))
write_csv(readings, snakemake.output.readings, float_format="%.9g")
logging.info("%d supremum rows, %d readings in %.1f s CPU", len(supremum), len(readings),
             time.process_time() - start)
