"""Snakemake adapter: the per-family worst-case tables, concatenated in family order."""

import logging

import pandas as pd

from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
for paths, out in ((snakemake.input.cells, snakemake.output.table),
                   (snakemake.input.checks, snakemake.output.check)):
    # Read as text so that every number keeps the bytes its family's job wrote.
    frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in paths]
    merged = pd.concat(frames, ignore_index=True)
    write_csv(merged, out)
    logging.info("wrote %d rows to %s", len(merged), out)
