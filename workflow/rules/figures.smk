# Figures drawn from simulation output (one analysis script per figure).


rule gantt_phases:
    conda:
        ENV
    output:
        phases="results/gantt/phases.csv",
    params:
        job_types=config["gantt"]["job_types"],
        iterations=config["gantt"]["iterations"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/gantt_phases.log",
    script:
        "../scripts/gantt_phases.py"


rule fig01_gantt:
    conda:
        ENV
    input:
        phases=rules.gantt_phases.output.phases,
    output:
        png=report(
            "figures/fig01_gantt.png",
            caption="../report/fig01_gantt.rst",
            category=REPORT_CATEGORY["motivation"],
        ),
        pdf="figures/fig01_gantt.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig01_gantt.log",
    shell:
        "{params.python} analysis/fig01_gantt.py --phases {input.phases} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(rules.fig01_gantt.output)
