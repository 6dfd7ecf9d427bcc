# Designs beyond the paper (issue 20, docs/designs.md): every design on the same traces.
#   results/sim/traces/alibaba-adapted.csv   the Alibaba pod trace's arrivals, adapted
#   results/designs/comparison.csv           one row per replay: cost, cost per unit of
#                                            work, SLO attainment (both readings), peak
#                                            GPUs and GPU-hours per type, staleness
#   results/designs/crossover.csv            each replay re-priced over the price ratios
#   results/designs/crossover_ratios.csv     per trace: the price ratio above which two
#                                            fixed pools (rollmux) beat one shared pool
#   results/designs/metrics.csv              every number of the comparison (per trace and
#                                            design), in the metrics contract
#   results/metrics/designs.csv              those the beyond ledger names (its D rows,
#                                            src/rollmux/data/beyond.csv): the claims
#                                            report's "Results beyond the paper"
#   figures/designs_cost_slo.{png,pdf}       cost against realised SLO attainment
#   figures/designs_crossover.{png,pdf}      two pools over one pool against the price ratio
# Replays go through the sweeps' replay rule sim_replay (simulate.smk).
from rollmux.sim.sweeps import RunKey

DESIGNS = config.get("designs") or {}
DESIGN_TRACES = list(DESIGNS.get("traces", ["production-default", "simulation-mixed",
                                            "alibaba-adapted"]))
DESIGN_POLICIES = list(DESIGNS.get("policies", ["solo-d", "verl", "rollmux", "rollmux-join",
                                                "timeslice", "async-solo-d"]))
DESIGN_LENGTH_TRACES = list(DESIGNS.get("lengths_traces", ["production-default"]))
# Seeds of the designs' replays (null: the top-level seeds).
DESIGN_SEEDS = [int(s) for s in (DESIGNS.get("seeds") or SEEDS)]
# The optimum (`optimal`, re-solved at every arrival, free regrouping) where it runs in
# budget, replayed at steady-state progress as the sensitivity sweeps' reference is.
DESIGN_OPTIMAL_TRACES = list(DESIGNS.get("optimal_traces", [
    "production-default", "simulation-mixed", "alibaba-adapted"]))
DESIGN_ALIBABA = DESIGNS.get("alibaba_path",
                             "../shared/traces/alibaba_openb_pod_list_default.csv")
if "alibaba-adapted" in DESIGN_TRACES and not Path(DESIGN_ALIBABA).is_file():
    print(f"rollmux: warning: designs.alibaba_path {DESIGN_ALIBABA!r} is not a file here: "
          "the designs are not replayed on the Alibaba arrivals", file=sys.stderr)
    DESIGN_TRACES.remove("alibaba-adapted")
# The balance axis of the crossover: the simulation profiles (balanced, rollout-heavy,
# train-heavy), replayed with the two-pool, one-pool and Solo-D designs and rollmux-join
# (its guarantee checked on every shipped trace).
DESIGN_BALANCE_TRACES = list(DESIGNS.get("balance_traces", [
    "simulation-balanced", "simulation-rollout-heavy", "simulation-train-heavy"]))
DESIGN_BALANCE_RUNS = [
    RunKey(trace=trace, slo="trace", maxgroup=5, policy=policy, seed=seed)
    for trace in DESIGN_BALANCE_TRACES
    for policy in ("solo-d", "verl", "rollmux", "rollmux-join")
    for seed in DESIGN_SEEDS
]
DESIGN_RUNS = [
    RunKey(trace=trace, slo="trace", maxgroup=5, policy=policy, seed=seed, lengths=lengths)
    for trace in DESIGN_TRACES
    for lengths in ("", LENGTHS_PATH if LENGTHS_PATH and trace in DESIGN_LENGTH_TRACES
                    else None)
    if lengths is not None
    for policy in DESIGN_POLICIES
    for seed in DESIGN_SEEDS
] + [
    RunKey(trace=trace, slo="trace", maxgroup=5, policy="optimal", seed=seed,
           fidelity="analytic")
    for trace in DESIGN_OPTIMAL_TRACES
    if trace in DESIGN_TRACES
    for seed in DESIGN_SEEDS
]
# The results beyond the paper the claims report reads (claims.smk): the D rows.
BEYOND_METRICS.append("results/metrics/designs.csv")


rule designs_alibaba_trace:
    conda:
        ENV
    input:
        pods=DESIGN_ALIBABA,
    output:
        trace="results/sim/traces/alibaba-adapted.csv",
    params:
        seed=config["seed"],
    log:
        "results/logs/designs/alibaba_trace.log",
    script:
        "../scripts/designs_alibaba.py"


rule designs_comparison:
    conda:
        ENV
    input:
        summaries=run_files(DESIGN_RUNS + DESIGN_BALANCE_RUNS, "summary.json"),
        jobs=run_files(DESIGN_RUNS + DESIGN_BALANCE_RUNS, "jobs.csv"),
        events=run_files(DESIGN_RUNS + DESIGN_BALANCE_RUNS, "events.csv"),
        timeseries=run_files(DESIGN_RUNS + DESIGN_BALANCE_RUNS, "timeseries.csv"),
        beyond_ledger="src/rollmux/data/beyond.csv",
    output:
        table="results/designs/comparison.csv",
        crossover="results/designs/crossover.csv",
        ratios="results/designs/crossover_ratios.csv",
        all_metrics="results/designs/metrics.csv",
        metrics="results/metrics/designs.csv",
    params:
        traces=[k.trace for k in DESIGN_RUNS + DESIGN_BALANCE_RUNS],
        lengths=[Path(k.lengths).name if k.lengths else ""
                 for k in DESIGN_RUNS + DESIGN_BALANCE_RUNS],
        comparison_traces=DESIGN_TRACES,
        price_ratios=list(DESIGNS.get("price_ratios",
                                      [1.0, 1.5, 2.0, 2.5, 2.85, 3.5, 4.0, 5.0, 6.0])),
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/designs/comparison.log",
    script:
        "../scripts/designs_comparison.py"


rule fig_designs_cost_slo:
    conda:
        ENV
    input:
        table=rules.designs_comparison.output.table,
    output:
        png=report(
            "figures/designs_cost_slo.png",
            caption="../report/designs_cost_slo.rst",
            category=REPORT_CATEGORY["beyond"],
        ),
        pdf="figures/designs_cost_slo.pdf",
    params:
        python=sys.executable,
    log:
        "results/logs/fig_designs_cost_slo.log",
    shell:
        "{params.python} analysis/fig_designs_cost_slo.py --table {input.table} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig_designs_crossover:
    conda:
        ENV
    input:
        crossover=rules.designs_comparison.output.crossover,
        ratios=rules.designs_comparison.output.ratios,
    output:
        png=report(
            "figures/designs_crossover.png",
            caption="../report/designs_crossover.rst",
            category=REPORT_CATEGORY["beyond"],
        ),
        pdf="figures/designs_crossover.pdf",
    params:
        python=sys.executable,
    log:
        "results/logs/fig_designs_crossover.log",
    shell:
        "{params.python} analysis/fig_designs_crossover.py --crossover {input.crossover} "
        "--ratios {input.ratios} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        *rules.designs_comparison.output,
        *rules.fig_designs_cost_slo.output,
        *rules.fig_designs_crossover.output,
    ]
)
