"""Snakemake adapter: what it would take for the micro-benchmark claims (C14-C27)."""

import logging

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.microbench_evidence import what_it_would_take
from rollmux.hardware import load_hardware
from rollmux.io import write_csv
from rollmux.jobtypes import load_microbench

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
ledger = load_ledger(snakemake.input.ledger)
definitions = load_microbench(str(snakemake.input.microbench))
evidence = what_it_would_take(int(snakemake.params.seed), int(snakemake.params.iterations), hw,
                              definitions, ledger)
write_csv(evidence, snakemake.output.evidence)
logging.info("wrote %d rows to %s", len(evidence), snakemake.output.evidence)
