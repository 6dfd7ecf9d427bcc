# Theorem 1 boundary map: where round-robin is (and is not) utilisation-optimal.


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


TARGETS.append(rules.theorem1_summary.output.summary)
