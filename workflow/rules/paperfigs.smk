# Model figures and tables of the paper (Fig. 3, 4, 6, 7, 10, 12, 13, the Theorem 1
# boundary map, Tables 1-6) and the claims metrics they back (results/metrics/models.csv).
# Data come from rollmux.experiments.model_figures and rollmux.experiments.tables; one analysis script per figure.

PAPERFIGS = config["paperfigs"]
PF_DATA = "results/paperfigs"
PF_TABLES = "results/tables"


rule paperfigs_data:
    conda:
        ENV
    output:
        **{
            name: f"{PF_DATA}/{name}.csv"
            for name in (
                "fig03_phases",
                "fig03_slowdowns",
                "fig04_switch",
                "fig06_phases",
                "fig06_status",
                "fig07_phases",
                "fig10_phases",
                "fig12_lengths",
                "fig12_stats",
                "fig13_sync",
            )
        },
    params:
        cfg=PAPERFIGS,
        scenarios=config["microbench"]["scenarios"],
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/paperfigs_data.log",
    script:
        "../scripts/paperfigs_data.py"


rule paperfigs_tables:
    conda:
        ENV
    input:
        table4="results/microbench/table4.csv",
    output:
        **{
            f"{name}_{ext}": f"{PF_TABLES}/{name}.{ext}"
            for name in ("table1", "table2", "table3", "table4", "table6")
            for ext in ("csv", "md")
        },
    params:
        layouts=PAPERFIGS["table2_layouts"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/paperfigs_tables.log",
    script:
        "../scripts/paperfigs_tables.py"


rule table5_latency:
    # the longest job of this stage (building a 2,000-job cluster): start it first
    priority: 10
    conda:
        ENV
    input:
        # the recorded measurement and its machine, unless this run times Table 5 itself
        recorded=[]
        if PAPERFIGS["table5_measure"]
        else [
            "benchmarks/recorded/table5_latency.csv",
            "benchmarks/recorded/table5_machine.json",
        ],
    output:
        csv=f"{PF_TABLES}/table5_latency.csv",
        md=f"{PF_TABLES}/table5_latency.md",
    params:
        part="latency",
        measure=PAPERFIGS["table5_measure"],
        jobs=PAPERFIGS["table5_jobs"],
        decisions=PAPERFIGS["table5_decisions"],
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/table5_latency.log",
    script:
        "../scripts/paperfigs_table5.py"


rule table5_optimum:
    conda:
        ENV
    input:
        # the recorded measurement and its machine, unless this run times Table 5 itself
        recorded=[]
        if PAPERFIGS["table5_measure"]
        else [
            "benchmarks/recorded/table5_optimum.csv",
            "benchmarks/recorded/table5_machine.json",
        ],
    output:
        csv=f"{PF_TABLES}/table5_optimum.csv",
        md=f"{PF_TABLES}/table5_optimum.md",
    params:
        part="optimum",
        measure=PAPERFIGS["table5_measure"],
        jobs=PAPERFIGS["table5_optimum_jobs"],
        time_limit_s=PAPERFIGS["table5_bruteforce_time_limit_s"],
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/table5_optimum.log",
    script:
        "../scripts/paperfigs_table5.py"


rule models_metrics:
    conda:
        ENV
    input:
        throughput="results/microbench/throughput.csv",
        table4="results/microbench/table4.csv",
        migration="results/microbench/migration.csv",
        sync=f"{PF_DATA}/fig13_sync.csv",
        switch=f"{PF_DATA}/fig04_switch.csv",
        latency=rules.table5_latency.output.csv,
        optimum=rules.table5_optimum.output.csv,
        theorem1="results/theorem1/summary.csv",
        # the simulated micro-benchmarks at every seed (C14-C25: mean and interval)
        seed_tables=expand("results/microbench/seeds/seed={seed}/{table}.csv",
                           seed=SEEDS, table=("throughput", "table4", "migration")),
    output:
        metrics="results/metrics/models.csv",
        seed_metrics="results/metrics/seeds/models.csv",
    params:
        theorem1_scope=PAPERFIGS["theorem1_scope"],
        seeds=SEEDS,
    log:
        "results/logs/models_metrics.log",
    script:
        "../scripts/paperfigs_metrics.py"


rule fig03_bad_case:
    conda:
        ENV
    input:
        phases=f"{PF_DATA}/fig03_phases.csv",
        slowdowns=f"{PF_DATA}/fig03_slowdowns.csv",
    output:
        png=report("figures/fig03_bad_case.png", caption="../report/fig03_bad_case.rst",
                   category=REPORT_CATEGORY["motivation"]),
        pdf="figures/fig03_bad_case.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig03_bad_case.log",
    shell:
        "{params.python} analysis/fig03_bad_case.py --phases {input.phases} "
        "--slowdowns {input.slowdowns} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig04_switch:
    conda:
        ENV
    input:
        switch=f"{PF_DATA}/fig04_switch.csv",
    output:
        png=report("figures/fig04_switch.png", caption="../report/fig04_switch.rst",
                   category=REPORT_CATEGORY["motivation"]),
        pdf="figures/fig04_switch.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig04_switch.log",
    shell:
        "{params.python} analysis/fig04_switch.py --switch {input.switch} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig06_group_status:
    conda:
        ENV
    input:
        phases=f"{PF_DATA}/fig06_phases.csv",
        status=f"{PF_DATA}/fig06_status.csv",
    output:
        png=report("figures/fig06_group_status.png",
                   caption="../report/fig06_group_status.rst", category=REPORT_CATEGORY["design"]),
        pdf="figures/fig06_group_status.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig06_group_status.log",
    shell:
        "{params.python} analysis/fig06_group_status.py --phases {input.phases} "
        "--status {input.status} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig07_migration:
    conda:
        ENV
    input:
        phases=f"{PF_DATA}/fig07_phases.csv",
    output:
        png=report("figures/fig07_migration.png", caption="../report/fig07_migration.rst",
                   category=REPORT_CATEGORY["design"]),
        pdf="figures/fig07_migration.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig07_migration.log",
    shell:
        "{params.python} analysis/fig07_migration.py --phases {input.phases} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig10_microbench:
    conda:
        ENV
    input:
        phases=f"{PF_DATA}/fig10_phases.csv",
        throughput="results/microbench/throughput.csv",
        seed_tables=expand("results/microbench/seeds/seed={seed}/throughput.csv", seed=SEEDS),
    output:
        png=report("figures/fig10_microbench.png", caption="../report/fig10_microbench.rst",
                   category=REPORT_CATEGORY["microbench"]),
        pdf="figures/fig10_microbench.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig10_microbench.log",
    shell:
        "{params.python} analysis/fig10_microbench.py --phases {input.phases} "
        "--throughput {input.throughput} --seed-tables {input.seed_tables} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig12_migration:
    conda:
        ENV
    input:
        lengths=f"{PF_DATA}/fig12_lengths.csv",
        stats=f"{PF_DATA}/fig12_stats.csv",
        migration="results/microbench/migration.csv",
    output:
        png=report("figures/fig12_migration.png", caption="../report/fig12_migration.rst",
                   category=REPORT_CATEGORY["microbench"]),
        pdf="figures/fig12_migration.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig12_migration.log",
    shell:
        "{params.python} analysis/fig12_migration.py --lengths {input.lengths} "
        "--stats {input.stats} --migration {input.migration} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig13_sync:
    conda:
        ENV
    input:
        sync=f"{PF_DATA}/fig13_sync.csv",
    output:
        png=report("figures/fig13_sync.png", caption="../report/fig13_sync.rst",
                   category=REPORT_CATEGORY["microbench"]),
        pdf="figures/fig13_sync.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig13_sync.log",
    shell:
        "{params.python} analysis/fig13_sync.py --sync {input.sync} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig_theorem1_boundary:
    conda:
        ENV
    input:
        summary="results/theorem1/summary.csv",
    output:
        png=report("figures/fig_theorem1_boundary.png",
                   caption="../report/fig_theorem1_boundary.rst", category=REPORT_CATEGORY["design"]),
        pdf="figures/fig_theorem1_boundary.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig_theorem1_boundary.log",
    shell:
        "{params.python} analysis/fig_theorem1_boundary.py --summary {input.summary} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        *rules.paperfigs_tables.output,
        *rules.table5_latency.output,
        *rules.table5_optimum.output,
        *rules.models_metrics.output,
        *rules.fig03_bad_case.output,
        *rules.fig04_switch.output,
        *rules.fig06_group_status.output,
        *rules.fig07_migration.output,
        *rules.fig10_microbench.output,
        *rules.fig12_migration.output,
        *rules.fig13_sync.output,
        *rules.fig_theorem1_boundary.output,
    ]
)
