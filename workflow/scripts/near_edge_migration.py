"""Snakemake adapter: what it would take for Fig. 12's migration gain (the training-time
multiplier at which each end of the gain is the paper's), as JSON rows for rule
evidence_what_it_would_take (results/evidence/what_it_would_take_migration.json).

JSON keeps every float exactly (NaN where no multiplier in the bracket gives the paper's
value), so the table the other rule writes is the one a single job would write. Library:
rollmux.experiments.near_edge.migration_rows.
"""

import json
import logging

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.near_edge import migration_rows
from rollmux.hardware import load_hardware
from rollmux.io import write_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
ledger = load_ledger(snakemake.input.ledger)
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
rows = migration_rows(ledger, [int(s) for s in snakemake.params.seeds],
                      int(snakemake.params.iterations), hw)
write_text(snakemake.output.rows, json.dumps(rows, indent=1) + "\n")
logging.info("wrote %d rows to %s", len(rows), snakemake.output.rows)
