# rollmux reproduction pipeline. Rules live in workflow/rules/; the config is
# validated against workflow/schemas/config.schema.yaml before any rule runs.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/theorem1.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/traces.smk"


rule all:
    input:
        rules.microbench_models.output.table,
        rules.microbench_sim.output.table4,
        rules.microbench_sim.output.throughput,
        rules.microbench_sim.output.migration,
        rules.theorem1_summary.output.summary,
        rules.fig01_gantt.output.png,
        rules.fig01_gantt.output.pdf,
        rules.trace_stats_all.output.table,
        rules.fig02_phase_durations.output.png,
        rules.fig02_phase_durations.output.pdf,
