"""Snakemake adapter: the Alibaba pod trace's arrivals as an RL job trace (`trace adapt`)."""

import contextlib

from rollmux.cli import main

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
with open(snakemake.log[0], "w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
    status = main(["trace", "adapt", "alibaba", "--path", str(snakemake.input.pods),
                   "--seed", str(snakemake.params.seed), "--out", str(snakemake.output.trace),
                   "--quiet"])
if status:
    raise SystemExit(f"rollmux trace adapt alibaba failed (exit {status}); see the log")
