# rollmux reproduction pipeline. Rules live in workflow/rules/; the config is
# validated against workflow/schemas/config.schema.yaml before any rule runs.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/theorem1.smk"
include: "workflow/rules/figures.smk"


rule all:
    input:
        rules.microbench_models.output.table,
        rules.theorem1_summary.output.summary,
        rules.fig01_gantt.output.png,
        rules.fig01_gantt.output.pdf,
