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


# The simulated micro-benchmarks draw phase times: one run per seed of `seeds` (C14-C25
# take their mean and 95% interval over them, rules models_metrics and fig10_microbench),
# and the tables of the one `seed` under results/microbench/ for everything else.
MICROBENCH_TABLES = ("table4", "throughput", "migration")


rule microbench_sim:
    conda:
        ENV
    output:
        **{t: f"results/microbench/seeds/seed={{seed}}/{t}.csv" for t in MICROBENCH_TABLES},
    wildcard_constraints:
        seed=r"\d+",
    params:
        scenarios=config["microbench"]["scenarios"],
        iterations=config["microbench"]["iterations"],
        seed=lambda w: int(w.seed),
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/microbench_sim/seed={seed}.log",
    script:
        "../scripts/microbench_sim.py"


rule microbench_tables:
    conda:
        ENV
    input:
        **{t: f"results/microbench/seeds/seed={config['seed']}/{t}.csv"
           for t in MICROBENCH_TABLES},
    output:
        **{t: f"results/microbench/{t}.csv" for t in MICROBENCH_TABLES},
    log:
        "results/logs/microbench_tables.log",
    shell:
        "(cp {input.table4} {output.table4} && cp {input.throughput} {output.throughput} "
        "&& cp {input.migration} {output.migration}) > {log} 2>&1"


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
        *rules.microbench_tables.output,
        *rules.microbench_evidence.output,
    ]
)
