"""Snakemake adapter: fit `production_mix` and check the shipped inputs against it."""

import logging

from rollmux.experiments.calibration import run_production_mix

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
try:
    fit = run_production_mix(
        out_fitted=snakemake.output.fitted,
        out_residuals=snakemake.output.residuals,
        out_trace=snakemake.output.trace,
        shipped_trace=snakemake.input.shipped,
        seed=snakemake.params.seed,
        tolerance=snakemake.params.tolerance,
        workloads_path=snakemake.input.workloads,
        hardware_path=snakemake.input.hardware,
        calibration_path=snakemake.input.calibration,
        ledger_path=snakemake.input.ledger,
    )
except ValueError as exc:  # FitError: the message names the file, value and refresh command
    logging.error("%s", exc)
    raise
logging.info(
    "duration_sigma %s, multi_node_share %s, colocated_rollout_speedup %s (%d rounds)",
    fit.duration_sigma,
    fit.multi_node_share,
    fit.colocated_rollout_speedup,
    fit.rounds,
)
logging.info("residuals:\n%s", fit.residuals.to_string(index=False))
