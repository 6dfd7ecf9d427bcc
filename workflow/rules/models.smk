# Closed-form models of the micro-benchmark scenarios (core-model issue, section 4).


rule microbench_models:
    conda:
        ENV
    output:
        table="results/models/microbench.csv",
    params:
        scenarios=config["microbench"]["scenarios"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/microbench_models.log",
    script:
        "../scripts/microbench_models.py"


rule microbench_sim:
    conda:
        ENV
    output:
        table4="results/microbench/table4.csv",
        throughput="results/microbench/throughput.csv",
        migration="results/microbench/migration.csv",
    params:
        scenarios=config["microbench"]["scenarios"],
        iterations=config["microbench"]["iterations"],
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/microbench_sim.log",
    script:
        "../scripts/microbench_sim.py"


TARGETS.extend(
    [
        rules.microbench_models.output.table,
        *rules.microbench_sim.output,
    ]
)
