"""Snakemake adapter: the failure replay (Fig. 19), a spec with a kill list and phases."""

import logging
from pathlib import Path

from rollmux.sim import ReplaySpec, run_replay

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
spec = ReplaySpec(
    trace=snakemake.input.trace,
    policy=str(snakemake.params.policy),
    seed=int(snakemake.params.seed),
    failures=snakemake.input.failures,
    hardware_overrides=tuple(dict(snakemake.params.overrides).items()),
)
out = Path(snakemake.output.summary).parent
run_replay(spec, out)
logging.info("failure replay %s written to %s", spec.path(), out)
