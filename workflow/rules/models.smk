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


# What it would take: each micro-benchmark claim that differs (Fig. 10 gains, Table 4, the
# sync speed-ups of Fig. 13) next to the readings the paper leaves open and the input that
# would give the paper's value (the ledger's `evidence` for C14-C27).
rule microbench_evidence:
    conda:
        ENV
    input:
        microbench="src/rollmux/data/microbench.yaml",
        ledger="src/rollmux/data/claims.csv",
        calibration="src/rollmux/data/calibration.yaml",
    output:
        evidence="results/microbench/what_it_would_take.csv",
    params:
        iterations=config["microbench"]["iterations"],
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/microbench_evidence.log",
    script:
        "../scripts/microbench_evidence.py"


TARGETS.extend(
    [
        rules.microbench_models.output.table,
        *rules.microbench_sim.output,
        *rules.microbench_evidence.output,
    ]
)
