# Traces: validate the shipped traces, tabulate their statistics beside the paper's, and
# draw Fig. 2 (phase durations per workload class) from the production trace.

# Shipped traces (traces/<name>.csv) characterised by the pipeline; a config may list
# others under traces.characterise.
TRACES = config.get("traces", {}).get(
    "characterise",
    [
        "production-default",
        "simulation-mixed",
        "simulation-balanced",
        "simulation-rollout-heavy",
        "simulation-train-heavy",
        "microbench",
    ],
)


rule trace_stats:
    conda:
        ENV
    input:
        trace="traces/{trace}.csv",
    output:
        phases="results/traces/trace={trace}/phases.csv",
        stats="results/traces/trace={trace}/stats.csv",
    params:
        # paper targets to compare with: production, simulation, microbench or none
        kind=lambda w: next(
            (k for k in ("production", "simulation", "microbench") if w.trace.startswith(k)),
            "other",
        ),
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/trace_stats/trace={trace}.log",
    script:
        "../scripts/trace_stats.py"


rule trace_stats_all:
    conda:
        ENV
    input:
        stats=expand("results/traces/trace={trace}/stats.csv", trace=TRACES),
    output:
        table="results/traces/stats.csv",
    params:
        traces=TRACES,
    log:
        "results/logs/trace_stats_all.log",
    script:
        "../scripts/trace_stats_all.py"


rule fig02_phase_durations:
    conda:
        ENV
    input:
        phases="results/traces/trace=production-default/phases.csv",
    output:
        png=report(
            "figures/fig02_phase_durations.png",
            caption="../report/fig02_phase_durations.rst",
            category=REPORT_CATEGORY["motivation"],
        ),
        pdf="figures/fig02_phase_durations.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig02_phase_durations.log",
    shell:
        "{params.python} analysis/fig02_phase_durations.py --phases {input.phases} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend([rules.trace_stats_all.output.table, *rules.fig02_phase_durations.output])
