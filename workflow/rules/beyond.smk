# Results beyond the paper: questions the paper leaves open, answered on the same replays.
# Issue 14: rollmux-repeat (repetition-aware intra-group schedules) next to rollmux on the
# production trace and on the default simulation setting: the cost of completing the
# trace, SLO attainment, per-job slowdown and decision latency (re-made decisions, timed;
# by default read from benchmarks/recorded/, recorded by benchmarks/record_beyond_latency.py,
# so reruns are byte-identical; sim.beyond.measure_latency: true times them here),
#   results/beyond/repeat.csv            one row per replay (rollmux.sim.policy_compare)
#   results/metrics/beyond.csv           the values of the beyond ledger
#                                        (src/rollmux/data/beyond.csv), rendered as the
#                                        claims report's "Results beyond the paper"
#   figures/beyond_repeat.{png,pdf}      the comparison, drawn
# The replays are the replay rule's own (simulate.smk), keyed by SIM_PLAN.repeat.

BEYOND = config["sim"].get("beyond", {})


# The simulation trace's further seeds (sim.beyond.simulation_traces: generated): the
# shipped trace's own generator command with seed s, cut to the sweeps' window.
ruleorder: beyond_sim_trace > sim_window


rule beyond_sim_trace:
    conda:
        ENV
    input:
        trace="traces/{workload}.csv",
    output:
        trace="results/sim/traces/{workload}-gen{gseed}{window}.csv",
    wildcard_constraints:
        workload=r"[A-Za-z0-9_.-]+?",
        gseed=r"\d+",
        window=r"(-first[1-9]\d*)?",
    log:
        "results/logs/beyond/sim_trace/{workload}-gen{gseed}{window}.log",
    script:
        "../scripts/beyond_sim_trace.py"
BEYOND_POLICIES = list(BEYOND.get("repeat_policies", ["rollmux", "rollmux-repeat"]))
BEYOND_MEASURE = bool(BEYOND.get("measure_latency", False))
BEYOND_METRICS.append("results/metrics/beyond.csv")


rule beyond_repeat:
    conda:
        ENV
    input:
        summaries=run_files(SIM_PLAN.repeat, "summary.json"),
        jobs=run_files(SIM_PLAN.repeat, "jobs.csv"),
        events=run_files(SIM_PLAN.repeat, "events.csv"),
        configs=run_files(SIM_PLAN.repeat, "config.json"),
        traces=[trace_file(k.trace) for k in SIM_PLAN.repeat],
        # the planner against the certified SLO-constrained optimum (theorem1.smk)
        slo_optimum="results/theorem1/slo_optimum.csv",
        slo_optimum_summary="results/theorem1/slo_optimum_summary.csv",
        # the recorded latencies and their machine, unless this run times them itself
        recorded=[]
        if BEYOND_MEASURE
        else [
            "benchmarks/recorded/beyond_repeat_latency.csv",
            "benchmarks/recorded/beyond_repeat_machine.json",
        ],
    output:
        table="results/beyond/repeat.csv",
        metrics="results/metrics/beyond.csv",
    params:
        policies=BEYOND_POLICIES,
        # every replayed trace to its label: the production trace, and the simulation
        # trace with its regenerated draws (paired with the others by seed)
        labels={
            key.trace: "production" if key.trace == SIM_PLAN.production[0].trace
            else "simulation"
            for key in SIM_PLAN.repeat
        },
        overrides=SIM_OVERRIDES,
        measure=BEYOND_MEASURE,
    log:
        "results/logs/beyond_repeat.log",
    script:
        "../scripts/beyond_repeat.py"


rule fig_beyond_repeat:
    conda:
        ENV
    input:
        table=rules.beyond_repeat.output.table,
    output:
        png=report(
            "figures/beyond_repeat.png",
            caption="../report/beyond_repeat.rst",
            category=REPORT_CATEGORY["beyond"],
        ),
        pdf="figures/beyond_repeat.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig_beyond_repeat.log",
    shell:
        "{params.python} analysis/fig_beyond_repeat.py --table {input.table} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        *rules.beyond_repeat.output,
        *rules.fig_beyond_repeat.output,
    ]
)
