# rollmux reproduction pipeline. Rules live in workflow/rules/; the config is checked
# when the workflow is parsed (workflow/rules/common.smk: the schemas of
# workflow/schemas/, then policy names, hardware overrides, SLO settings and failures).
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


rule all:
    default_target: True
    input:
        TARGETS,
