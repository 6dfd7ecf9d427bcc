"""Snakemake adapter: the failure replay's trace and kill list (Fig. 19)."""

import logging

from rollmux.experiments.robustness import failure_trace_text, failures_text, write_validated_trace
from rollmux.hardware import load_hardware
from rollmux.io import write_text

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
jobs = [dict(job) for job in snakemake.params.jobs]
text = failure_trace_text(snakemake.input.trace, jobs, float(snakemake.params.slo),
                          int(snakemake.params.iterations), hw)
write_validated_trace(text, snakemake.output.trace, hw)
kills = failures_text([dict(k) for k in snakemake.params.kills], [j["job_id"] for j in jobs])
write_text(snakemake.output.failures, kills)
logging.info("wrote %s and %s", snakemake.output.trace, snakemake.output.failures)
