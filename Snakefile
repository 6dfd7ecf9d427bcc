# rollmux reproduction pipeline. Rules live in workflow/rules/; the config is checked
# when the workflow is parsed (workflow/rules/common.smk: the schemas of
# workflow/schemas/, then policy names, hardware overrides, SLO settings and failures).
import threading

from snakemake.utils import min_version

min_version("8.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/theorem1.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/traces.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/evidence_sim.smk"
include: "workflow/rules/production_gap.smk"
include: "workflow/rules/robustness.smk"
include: "workflow/rules/evidence_drift.smk"
include: "workflow/rules/paperfigs.smk"
include: "workflow/rules/calibration.smk"
include: "workflow/rules/beyond.smk"
include: "workflow/rules/designs.smk"
include: "workflow/rules/claims.smk"
# Last: it batches the seeds of the replays the rules above ask for.
include: "workflow/rules/sim_batch.smk"


# Snakemake re-arms a threading.Timer after each pass of its scheduler loop (the span of
# --max-jobs-per-timespan; `make reproduce` sets 5 s, see the Makefile). The interpreter waits
# for those timers before it exits, so cancel them once the run has ended either way
# (tests/test_workflow.py::test_run_ends_without_waiting_out_the_scheduler_timer).
onsuccess:
    for _timer in threading.enumerate():
        if isinstance(_timer, threading.Timer):
            _timer.cancel()


onerror:
    for _timer in threading.enumerate():
        if isinstance(_timer, threading.Timer):
            _timer.cancel()


rule all:
    default_target: True
    input:
        TARGETS,
