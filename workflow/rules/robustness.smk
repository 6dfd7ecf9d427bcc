# Robustness: drift templates and settings, failures (paper sec. 6.6, Fig. 16-19, C47-C52).
#
# Drift: traces/<trace>.csv (the production trace of sec. 6.4), or its first
# `first_arrivals` jobs (rule sim_window's cut), is replayed under each drift setting with
# static RollMux, Random, Greedy (Most-Idle) and `regroup` (hourly optimal regrouping
# under the jobs' drifted profiles, with migration pauses) by the one replay rule of
# simulate.smk (sim_replay), into its key=value folders
# results/sim/trace=<trace>[-first<N>]/slo=trace/maxgroup=<n>/drift=<setting>[/drift_reach=cap]/policy=<p>/seed=<s>/.
# The evidence replays and tables of C47-C52: evidence_drift.smk.
# Failure: a small group copied from traces/<failure.source>.csv into the derived trace
# results/sim/traces/robustness-failure.csv, one job killed and resubmitted (the kill list
# results/sim/failures/robustness-failure.csv), replayed by the same replay rule with the
# per-phase table into the spec's folder (a failures= segment)
# results/sim/trace=robustness-failure/slo=trace/maxgroup=default/drift=none/failures=robustness-failure/policy=rollmux/seed=<seed>/.
# Tables and metrics: rollmux.experiments.robustness; definitions: docs/metrics.md,
# "Robustness". The compared policies and the reference: config robustness.policies,
# robustness.reference.

from rollmux.experiments.robustness import SETTINGS as RB_SETTINGS
from rollmux.sim import ReplaySpec
from rollmux.sim.sweeps import RunKey, failures_file, run_files, trace_file, window_name

RB = config["robustness"]
RB_POLICIES = list(RB["policies"])
RB_REFERENCE = str(RB["reference"])
# the drift replays change with the seed (templates drawn per job): every seed of `seeds`
RB_SEEDS = SEEDS
# The drift replays' trace: the first `first_arrivals` arrivals, cut by rule sim_window
# (simulate.smk) like the sensitivity sweeps' windows; 0 = the shipped trace itself.
RB_TRACE_NAME = window_name(RB["trace"], int(RB["first_arrivals"]))
RB_TRACE = trace_file(RB_TRACE_NAME)
RB_REACH = RB["drift_reach"]
RB_RUNS = [
    RunKey(RB_TRACE_NAME, "trace", int(RB["max_group_size"]), policy, seed, drift=setting,
           drift_reach=RB_REACH)
    for setting in RB_SETTINGS
    for policy in RB_POLICIES
    for seed in RB_SEEDS
]
# The failure replay: a derived trace and its kill list, named alike; its folder is the
# spec's own (rule sim_replay_phases of simulate.smk runs it).
RB_FAIL_NAME = "robustness-failure"
RB_FAIL_SPEC = ReplaySpec(trace=trace_file(RB_FAIL_NAME), policy="rollmux",
                          seed=int(config["seed"]), failures=failures_file(RB_FAIL_NAME))
RB_FAIL_DIR = f"results/sim/{RB_FAIL_SPEC.path().as_posix()}"


rule robustness_templates:
    conda:
        ENV
    input:
        trace=f"traces/{RB['trace']}.csv",
    output:
        curves="results/robustness/templates.csv",
    params:
        model_sizes_b=RB["templates"]["model_sizes_b"],
        iterations=RB["templates"]["iterations"],
        drift_reach=RB_REACH,
        seed=config["seed"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/robustness/templates.log",
    script:
        "../scripts/robustness_templates.py"


rule robustness_aggregate:
    conda:
        ENV
    input:
        summaries=run_files(RB_RUNS, "summary.json"),
        events=run_files(RB_RUNS, "events.csv"),
        configs=run_files(RB_RUNS, "config.json"),
        trace=RB_TRACE,
    output:
        drift="results/robustness/drift.csv",
        utilisation="results/robustness/utilisation.csv",
        migration="results/robustness/migration.csv",
        metrics="results/metrics/robustness.csv",
        seed_metrics="results/metrics/seeds/robustness.csv",
        # the certified gap of regroup behind each cost ratio (rollmux.experiments.optimum_gaps)
        gap_metrics="results/metrics/gaps/robustness.csv",
    params:
        context=(
            f"trace {RB['trace']}, "
            + (f"first {RB['first_arrivals']} arrivals (quick-profile window)"
               if RB["first_arrivals"] else "all jobs")
            + f", drift reach {RB_REACH}"
        ),
        policies=RB_POLICIES,
        reference=RB_REFERENCE,
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/robustness/aggregate.log",
    script:
        "../scripts/robustness_aggregate.py"


rule robustness_failure_inputs:
    conda:
        ENV
    input:
        trace=f"traces/{RB['failure']['source']}.csv",
    output:
        trace=RB_FAIL_SPEC.trace,
        failures=RB_FAIL_SPEC.failures,
    params:
        jobs=RB["failure"]["jobs"],
        slo=RB["failure"]["slo"],
        iterations=RB["failure"]["iterations"],
        kills=RB["failure"]["kills"],
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/robustness/failure_inputs.log",
    script:
        "../scripts/robustness_failure_inputs.py"


rule robustness_failure_timeline:
    conda:
        ENV
    input:
        phases=f"{RB_FAIL_DIR}/phases.csv",
        jobs=f"{RB_FAIL_DIR}/jobs.csv",
        events=f"{RB_FAIL_DIR}/events.csv",
    output:
        timeline="results/robustness/failure/timeline.csv",
    log:
        "results/logs/robustness/failure_timeline.log",
    script:
        "../scripts/robustness_failure_timeline.py"


rule fig16_drift_templates:
    conda:
        ENV
    input:
        code="analysis/fig16_drift_templates.py",
        curves=rules.robustness_templates.output.curves,
    output:
        png=report(
            "figures/fig16_drift_templates.png",
            caption="../report/fig16_drift_templates.rst",
            category=REPORT_CATEGORY["robustness"],
        ),
        pdf="figures/fig16_drift_templates.pdf",
    params:
        python=PYTHON,
        window=RB["templates"]["window"],
    log:
        "results/logs/fig16_drift_templates.log",
    shell:
        "{params.python} {input.code} --curves {input.curves} "
        "--window {params.window} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig17_drift_cost:
    conda:
        ENV
    input:
        code="analysis/fig17_drift_cost.py",
        drift=rules.robustness_aggregate.output.drift,
    output:
        png=report(
            "figures/fig17_drift_cost.png",
            caption="../report/fig17_drift_cost.rst",
            category=REPORT_CATEGORY["robustness"],
        ),
        pdf="figures/fig17_drift_cost.pdf",
    params:
        python=PYTHON,
        policies=" ".join(RB_POLICIES),
        reference=RB_REFERENCE,
    log:
        "results/logs/fig17_drift_cost.log",
    shell:
        "{params.python} {input.code} --drift {input.drift} "
        "--policies {params.policies} --reference {params.reference} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig18_drift_utilisation:
    conda:
        ENV
    input:
        code="analysis/fig18_drift_utilisation.py",
        utilisation=rules.robustness_aggregate.output.utilisation,
        migration=rules.robustness_aggregate.output.migration,
    output:
        png=report(
            "figures/fig18_drift_utilisation.png",
            caption="../report/fig18_drift_utilisation.rst",
            category=REPORT_CATEGORY["robustness"],
        ),
        pdf="figures/fig18_drift_utilisation.pdf",
    params:
        python=PYTHON,
        reference=RB_REFERENCE,
    log:
        "results/logs/fig18_drift_utilisation.log",
    shell:
        "{params.python} {input.code} "
        "--utilisation {input.utilisation} --migration {input.migration} "
        "--reference {params.reference} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig19_failure_timeline:
    conda:
        ENV
    input:
        code="analysis/fig19_failure_timeline.py",
        timeline=rules.robustness_failure_timeline.output.timeline,
        events=f"{RB_FAIL_DIR}/events.csv",
    output:
        png=report(
            "figures/fig19_failure_timeline.png",
            caption="../report/fig19_failure_timeline.rst",
            category=REPORT_CATEGORY["robustness"],
        ),
        pdf="figures/fig19_failure_timeline.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig19_failure_timeline.log",
    shell:
        "{params.python} {input.code} --timeline {input.timeline} "
        "--events {input.events} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        rules.robustness_templates.output.curves,
        *rules.robustness_aggregate.output,
        rules.robustness_failure_timeline.output.timeline,
        *rules.fig16_drift_templates.output,
        *rules.fig17_drift_cost.output,
        *rules.fig18_drift_utilisation.output,
        *rules.fig19_failure_timeline.output,
    ]
)
