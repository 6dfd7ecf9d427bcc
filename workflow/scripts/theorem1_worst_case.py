"""Snakemake adapter: round-robin's worst case for one family (cells and exhaustive check)."""

import logging
import time

from rollmux.io import write_csv
from rollmux.theorem1.worst_case import CHECK_COLUMNS, Budget, check_table, worst_case_table

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
settings = dict(snakemake.params.settings)
family = snakemake.wildcards.family
seed = int(snakemake.params.seed)
budget = Budget.from_settings(settings)
start = time.perf_counter()
cpu = time.process_time()
cells = worst_case_table([family], list(settings["sizes"]), int(settings["max_duration_s"]),
                         budget, seed)
write_csv(cells, snakemake.output.cells, float_format="%.9g")
logging.info("%s: %d cells in %.1f s (%.1f s CPU)", family, len(cells),
             time.perf_counter() - start, time.process_time() - cpu)
if family in settings["check_families"] and settings["check_sizes"]:
    check = check_table([family], list(settings["check_sizes"]),
                        int(settings["check_max_duration_s"]), budget, seed)
else:
    import pandas as pd

    check = pd.DataFrame(columns=list(CHECK_COLUMNS))
write_csv(check, snakemake.output.check, float_format="%.9g")
logging.info("%s: %d check rows, %.1f s in all (%.1f s CPU)", family, len(check),
             time.perf_counter() - start, time.process_time() - cpu)
