# Closed-form models of the micro-benchmark scenarios (core-model issue, section 4).


rule microbench_models:
    output:
        table="results/models/microbench.csv",
    params:
        scenarios=config["microbench"]["scenarios"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/microbench_models.log",
    script:
        "../scripts/microbench_models.py"
