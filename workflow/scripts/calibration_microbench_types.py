"""Snakemake adapter: fit `microbench_types` and check the packaged job types against it."""

import logging

from rollmux.experiments.microbench_fit import run_microbench_types

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
try:
    fit = run_microbench_types(
        out_fitted=snakemake.output.fitted,
        out_residuals=snakemake.output.residuals,
        seed=int(snakemake.params.seed),
        iterations=int(snakemake.params.iterations),
        microbench_path=snakemake.input.microbench,
        hardware_path=snakemake.input.hardware,
        calibration_path=snakemake.input.calibration,
        ledger_path=snakemake.input.ledger,
    )
except ValueError as exc:  # FitError: the message names the file, key and fitted value
    logging.error("%s", exc)
    raise
logging.info("fitted sizes %s", fit.sizes)
logging.info("residuals:\n%s", fit.residuals.to_string(index=False))
