# Theorem 1: the boundary map (where round-robin is, and is not, utilisation-optimal) and
# round-robin's worst case per family and group size (docs/theorem1.md).

WORST_CASE = config["theorem1"]["worst_case"]


rule theorem1_summary:
    conda:
        ENV
    output:
        summary="results/theorem1/summary.csv",
    params:
        instances=config["theorem1"]["instances"],
        seed=config["seed"],
    log:
        "results/logs/theorem1_summary.log",
    script:
        "../scripts/theorem1_summary.py"


rule theorem1_worst_case_family:
    conda:
        ENV
    wildcard_constraints:
        family="[a-z_]+",
    output:
        cells="results/theorem1/worst_case/family={family}/cells.csv",
        check="results/theorem1/worst_case/family={family}/check.csv",
    params:
        settings=WORST_CASE,
        seed=config["seed"],
    log:
        "results/logs/theorem1_worst_case/family={family}.log",
    script:
        "../scripts/theorem1_worst_case.py"


rule theorem1_worst_case:
    conda:
        ENV
    input:
        cells=expand(
            "results/theorem1/worst_case/family={family}/cells.csv",
            family=WORST_CASE["families"],
        ),
        checks=expand(
            "results/theorem1/worst_case/family={family}/check.csv",
            family=WORST_CASE["families"],
        ),
    output:
        table="results/theorem1/worst_case.csv",
        check="results/theorem1/worst_case_check.csv",
    log:
        "results/logs/theorem1_worst_case.log",
    script:
        "../scripts/theorem1_worst_case_merge.py"


rule theorem1_readings:
    # The supremum over all multiplicities on one rollout and one training node (proven in
    # docs/theorem1.md) with the ping-pong schedules approaching it, and every reading of
    # each documented counterexample (rollmux.theorem1.supremum, rollmux.theorem1.readings).
    conda:
        ENV
    output:
        supremum="results/theorem1/supremum.csv",
        readings="results/theorem1/readings.csv",
    params:
        sizes=WORST_CASE["sizes"],
        max_duration_s=WORST_CASE["max_duration_s"],
        max_multiplicity=WORST_CASE["max_multiplicity"],
    log:
        "results/logs/theorem1_readings.log",
    script:
        "../scripts/theorem1_readings.py"


rule theorem1_slo_optimum:
    # rollmux-repeat's planner against the certified SLO-constrained optimum on seeded
    # random groups of 3-5 jobs (rollmux.theorem1.slo_optimum, rollmux.schedule.milp).
    conda:
        ENV
    output:
        table="results/theorem1/slo_optimum.csv",
        summary="results/theorem1/slo_optimum_summary.csv",
    params:
        settings=config["theorem1"].get("slo_optimum", {}),
        seed=config["seed"],
    log:
        "results/logs/theorem1_slo_optimum.log",
    script:
        "../scripts/theorem1_slo_optimum.py"


rule fig_theorem1_slo_optimum:
    conda:
        ENV
    input:
        table="results/theorem1/slo_optimum.csv",
    output:
        png=report(
            "figures/fig_theorem1_slo_optimum.png",
            caption="../report/fig_theorem1_slo_optimum.rst",
            category=REPORT_CATEGORY["beyond"],
        ),
        pdf="figures/fig_theorem1_slo_optimum.pdf",
    params:
        python=sys.executable,
    log:
        "results/logs/fig_theorem1_slo_optimum.log",
    shell:
        "{params.python} analysis/fig_theorem1_slo_optimum.py --table {input.table} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig_theorem1_worst_case:
    conda:
        ENV
    input:
        table="results/theorem1/worst_case.csv",
        supremum="results/theorem1/supremum.csv",
    output:
        png=report(
            "figures/fig_theorem1_worst_case.png",
            caption="../report/fig_theorem1_worst_case.rst",
            category=REPORT_CATEGORY["design"],
        ),
        pdf="figures/fig_theorem1_worst_case.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig_theorem1_worst_case.log",
    shell:
        "{params.python} analysis/fig_theorem1_worst_case.py --table {input.table} "
        "--supremum {input.supremum} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        rules.theorem1_summary.output.summary,
        *rules.theorem1_worst_case.output,
        *rules.theorem1_readings.output,
        *rules.theorem1_slo_optimum.output,
        *rules.fig_theorem1_slo_optimum.output,
        *rules.fig_theorem1_worst_case.output,
    ]
)
