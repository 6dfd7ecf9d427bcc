# Calibrate, then predict: every fit of the declared calibration set
# (src/rollmux/data/calibration.yaml) runs here, before any claim is computed. A fit sets
# inputs the paper does not state to numbers that describe inputs or baselines only, and
# writes results/calibration/<fit>/{fitted.yaml,residuals.csv}; the claims report marks
# its targets `calibrated`.


# Fit `production_mix`: the production trace's duration tail, two-node share and veRL's
# co-located rollout speed, fitted to the trace span and Solo-D's and veRL's costs. The
# rule fails, naming the refresh command, when the packaged inputs (workloads.yaml,
# defaults.yaml) or the shipped trace are not the fitted ones.
rule calibrate_production_mix:
    conda:
        ENV
    input:
        workloads="src/rollmux/traces/workloads.yaml",
        hardware="src/rollmux/data/defaults.yaml",
        calibration="src/rollmux/data/calibration.yaml",
        ledger="src/rollmux/data/claims.csv",
        shipped=f"traces/{config['calibration']['production_mix']['trace']}.csv",
    output:
        fitted="results/calibration/production_mix/fitted.yaml",
        residuals="results/calibration/production_mix/residuals.csv",
        trace=f"results/calibration/production_mix/{config['calibration']['production_mix']['trace']}.csv",
    params:
        seed=config["calibration"]["production_mix"]["seed"],
        tolerance=config["calibration"]["production_mix"]["tolerance"],
    log:
        "results/logs/calibration/production_mix.log",
    script:
        "../scripts/calibration_production_mix.py"


TARGETS.extend(rules.calibrate_production_mix.output)


# Fit `microbench_types`: the sizes of micro-benchmark job types A, C and E (Table 3 is an
# image), fitted to the facts of sec. 6.2 only (Table 4's overheads, C23, are predicted). The rule fails, naming the value, when the packaged
# src/rollmux/data/microbench.yaml is not the fitted one.
rule calibrate_microbench_types:
    conda:
        ENV
    input:
        microbench="src/rollmux/data/microbench.yaml",
        hardware="src/rollmux/data/defaults.yaml",
        calibration="src/rollmux/data/calibration.yaml",
        ledger="src/rollmux/data/claims.csv",
    output:
        fitted="results/calibration/microbench_types/fitted.yaml",
        residuals="results/calibration/microbench_types/residuals.csv",
    params:
        seed=config["calibration"]["microbench_types"]["seed"],
        iterations=config["calibration"]["microbench_types"]["iterations"],
    log:
        "results/logs/calibration/microbench_types.log",
    script:
        "../scripts/calibration_microbench_types.py"


TARGETS.extend(rules.calibrate_microbench_types.output)
