# Trace replays (`rollmux simulate`) and their key=value sweeps: Fig. 14 (production
# trace), Fig. 15 (sensitivity to workload, SLO and group size), Fig. 20 (mixed
# workload), each policy's cost over the fluid lower bound, and the claims metrics
# results/metrics/production.csv (C01-C13, C56) and simulation.csv (C28-C44).
#
# One replay rule serves every sweep here, the drift study and the failure replay
# (robustness.smk): it builds a rollmux.sim.ReplaySpec from its wildcards
# (ReplaySpec.from_keys, the inverse of spec.path()) and runs it (rollmux.sim.run_replay)
# into
#   results/sim/trace={trace}/slo={slo}/maxgroup={maxgroup}/drift={drift}/policy={policy}/seed={seed}/
# with the spec's optional segments (fidelity=, phases=, failures=, ...) between drift=
# and policy=, so no replay's folder nests inside another's (each is replaced whole): the
# spec's own key=value folder (spec.path()); slo=trace keeps the trace's SLOs, drift=none
# is no drift. A trace name `<name>-first<N>` is the window of the first
# N arrivals of traces/<name>.csv (written by sim_window; config sim.sensitivity.window).
# The runs each table needs come from rollmux.sim.sweeps.sweep_plan(config); collectors
# read each run's keys from its config.json.
import dataclasses
from pathlib import Path

from rollmux.sim.replay import wildcard_constraints, wildcard_template
from rollmux.sim.sweeps import replay_inputs, run_files, sweep_plan, trace_file

SIM_PLAN = sweep_plan(config["sim"], config["seed"], SEEDS)
# Real response lengths (config lengths.path, a PolyTrace folder read at run time; see
# docs/stochastic.md section 7). Absent folder: the replays with real lengths are left out
# of the targets, with a warning.
LENGTHS_PATH = (config.get("lengths") or {}).get("path") or ""
if LENGTHS_PATH and not Path(LENGTHS_PATH).is_dir():
    print(f"rollmux: warning: lengths.path {LENGTHS_PATH!r} is not a folder here: the "
          "replays with real response lengths are skipped", file=sys.stderr)
    LENGTHS_PATH = ""
SIM_OVERRIDES = config.get("hardware_overrides", {})
# The replay folder's wildcard template and constraints, generated from the spec's
# segments (rollmux.sim.replay.SEGMENTS): optional segments are wildcards holding the whole
# segment or nothing, decoded by rollmux.sim.replay.wildcard_keys, never here.
SIM_RUN_KEYS = wildcard_template()
SIM_RUN_DIR = f"results/sim/{SIM_RUN_KEYS}"
SIM_CONSTRAINTS = wildcard_constraints()


rule sim_window:
    conda:
        ENV
    input:
        trace="traces/{base}.csv",
    output:
        trace="results/sim/traces/{base}-first{n}.csv",
    wildcard_constraints:
        n=r"[1-9]\d*",
    log:
        "results/logs/sim/window/{base}-first{n}.log",
    script:
        "../scripts/sim_window.py"


rule sim_replay:
    conda:
        ENV
    input:
        unpack(replay_inputs),
    output:
        summary=f"{SIM_RUN_DIR}/summary.json",
        timeseries=f"{SIM_RUN_DIR}/timeseries.csv",
        jobs=f"{SIM_RUN_DIR}/jobs.csv",
        events=f"{SIM_RUN_DIR}/events.csv",
        config=f"{SIM_RUN_DIR}/config.json",
    wildcard_constraints:
        **SIM_CONSTRAINTS,
    params:
        overrides=SIM_OVERRIDES,
        lengths=LENGTHS_PATH,
        record_phases=False,
    log:
        f"results/logs/sim/{SIM_RUN_KEYS}.log",
    benchmark:
        f"results/logs/sim/benchmark/{SIM_RUN_KEYS}.tsv"
    script:
        "../scripts/sim_replay.py"


# The same replay rule for a replay with a kill list (the failures= segment; Fig. 19's
# failure replay, robustness.smk): it also declares the per-phase table the failure
# timeline reads. Same template, constraints, inputs and script; only phases.csv is added.
use rule sim_replay as sim_replay_phases with:
    output:
        summary=f"{SIM_RUN_DIR}/summary.json",
        timeseries=f"{SIM_RUN_DIR}/timeseries.csv",
        jobs=f"{SIM_RUN_DIR}/jobs.csv",
        events=f"{SIM_RUN_DIR}/events.csv",
        config=f"{SIM_RUN_DIR}/config.json",
        phases=f"{SIM_RUN_DIR}/phases.csv",
    wildcard_constraints:
        **{**SIM_CONSTRAINTS, "failures": SIM_CONSTRAINTS["failures"].removesuffix("?")},
    params:
        overrides=SIM_OVERRIDES,
        lengths=LENGTHS_PATH,
        record_phases=True,


ruleorder: sim_replay_phases > sim_replay


rule sim_production:
    conda:
        ENV
    input:
        summaries=run_files(SIM_PLAN.production, "summary.json"),
        timeseries=run_files(SIM_PLAN.production, "timeseries.csv"),
    output:
        table="results/sim/production.csv",
        timeseries="results/sim/production_timeseries.csv",
    params:
        seeds=SIM_PLAN.seeds,
    log:
        "results/logs/sim/production.log",
    script:
        "../scripts/sim_collect.py"


rule sim_mixed:
    conda:
        ENV
    input:
        summaries=run_files(SIM_PLAN.mixed, "summary.json"),
        timeseries=run_files(SIM_PLAN.mixed, "timeseries.csv"),
    output:
        table="results/sim/mixed.csv",
        timeseries="results/sim/mixed_timeseries.csv",
    params:
        seeds=SIM_PLAN.seeds,
        settings=[dataclasses.asdict(SIM_PLAN.mixed_setting)],
        reference=SIM_PLAN.reference,
    log:
        "results/logs/sim/mixed.log",
    script:
        "../scripts/sim_collect.py"


rule sim_sensitivity:
    conda:
        ENV
    input:
        summaries=run_files(SIM_PLAN.sensitivity, "summary.json"),
        timeseries=run_files(SIM_PLAN.sensitivity, "timeseries.csv"),
    output:
        table="results/sim/sensitivity.csv",
    params:
        seeds=SIM_PLAN.seeds,
        settings=[dataclasses.asdict(s) for s in SIM_PLAN.settings],
        reference=SIM_PLAN.reference,
    log:
        "results/logs/sim/sensitivity.log",
    script:
        "../scripts/sim_collect.py"


rule sim_fluid:
    conda:
        ENV
    input:
        summaries=run_files(SIM_PLAN.fluid, "summary.json"),
        timeseries=run_files(SIM_PLAN.fluid, "timeseries.csv"),
        jobs=run_files(SIM_PLAN.fluid, "jobs.csv"),
        traces=[trace_file(t) for t in sorted({k.trace for k in SIM_PLAN.fluid})],
    output:
        table="results/sim/fluid.csv",
        timeseries="results/sim/fluid_timeseries.csv",
    params:
        trace_names=sorted({k.trace for k in SIM_PLAN.fluid}),
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/sim/fluid.log",
    script:
        "../scripts/sim_fluid.py"


rule sim_metrics_production:
    conda:
        ENV
    input:
        table=rules.sim_production.output.table,
    output:
        metrics="results/metrics/production.csv",
        seed_metrics="results/metrics/seeds/production.csv",
    log:
        "results/logs/sim/metrics_production.log",
    script:
        "../scripts/sim_metrics.py"


rule sim_metrics_simulation:
    conda:
        ENV
    input:
        sensitivity=rules.sim_sensitivity.output.table,
        mixed=rules.sim_mixed.output.table,
    output:
        metrics="results/metrics/simulation.csv",
        seed_metrics="results/metrics/seeds/simulation.csv",
        # the certified gap of the optimum behind each cost over optimal's
        # (rollmux.experiments.optimum_gaps)
        gap_metrics="results/metrics/gaps/simulation.csv",
    params:
        window=SIM_PLAN.window,
        reference=SIM_PLAN.reference,
        slo_endpoints=config["sim"].get("metrics", {}).get("slo_endpoints", ["1.2", "2"]),
    log:
        "results/logs/sim/metrics_simulation.log",
    script:
        "../scripts/sim_metrics.py"


rule fig14_trace_replay:
    conda:
        ENV
    input:
        table=rules.sim_production.output.table,
        timeseries=rules.sim_production.output.timeseries,
    output:
        png=report(
            "figures/fig14_trace_replay.png",
            caption="../report/fig14_trace_replay.rst",
            category=REPORT_CATEGORY["production"],
        ),
        pdf="figures/fig14_trace_replay.pdf",
    params:
        python=PYTHON,
        policies=",".join(config["sim"].get("figures", {}).get(
            "fig14_policies", ["rollmux", "solo-d", "verl"])),
    log:
        "results/logs/fig14_trace_replay.log",
    shell:
        "{params.python} analysis/fig14_trace_replay.py --table {input.table} "
        "--timeseries {input.timeseries} --policies {params.policies} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig15_sensitivity:
    conda:
        ENV
    input:
        table=rules.sim_sensitivity.output.table,
    output:
        png=report(
            "figures/fig15_sensitivity.png",
            caption="../report/fig15_sensitivity.rst",
            category=REPORT_CATEGORY["sensitivity"],
        ),
        pdf="figures/fig15_sensitivity.pdf",
    params:
        python=PYTHON,
        policies=",".join(config["sim"].get("figures", {}).get(
            "fig15_policies", ["rollmux", "random", "greedy"])),
    log:
        "results/logs/fig15_sensitivity.log",
    shell:
        "{params.python} analysis/fig15_sensitivity.py --table {input.table} "
        "--policies {params.policies} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig20_mixed:
    conda:
        ENV
    input:
        table=rules.sim_mixed.output.table,
        timeseries=rules.sim_mixed.output.timeseries,
    output:
        png=report(
            "figures/fig20_mixed.png",
            caption="../report/fig20_mixed.rst",
            category=REPORT_CATEGORY["sensitivity"],
        ),
        pdf="figures/fig20_mixed.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig20_mixed.log",
    shell:
        "{params.python} analysis/fig20_mixed.py --table {input.table} "
        "--timeseries {input.timeseries} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig_fluid_bound:
    conda:
        ENV
    input:
        table=rules.sim_fluid.output.table,
        fluid=rules.sim_fluid.output.timeseries,
        timeseries=rules.sim_production.output.timeseries,
    output:
        png=report(
            "figures/fig_fluid_bound.png",
            caption="../report/fig_fluid_bound.rst",
            category=REPORT_CATEGORY["production"],
        ),
        pdf="figures/fig_fluid_bound.pdf",
    params:
        python=PYTHON,
        # readable names of the compared traces (the figure shows no internal names)
        trace_labels=";".join(
            f"{trace}="
            + (
                "production trace"
                if trace == config["sim"]["production"]["trace"]
                else f"simulation trace, {config['sim']['sensitivity']['default_workload']}"
                + " workload"
                + (f", first {SIM_PLAN.window} arrivals" if SIM_PLAN.window else "")
            )
            for trace in sorted({k.trace for k in SIM_PLAN.fluid})
        ),
    log:
        "results/logs/fig_fluid_bound.log",
    shell:
        "{params.python} analysis/fig_fluid_bound.py --table {input.table} "
        "--fluid {input.fluid} --timeseries {input.timeseries} "
        "--trace-labels '{params.trace_labels}' "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend(
    [
        rules.sim_production.output.table,
        rules.sim_sensitivity.output.table,
        rules.sim_mixed.output.table,
        rules.sim_fluid.output.table,
        *rules.sim_metrics_production.output,
        *rules.sim_metrics_simulation.output,
        *rules.fig14_trace_replay.output,
        *rules.fig15_sensitivity.output,
        *rules.fig20_mixed.output,
        *rules.fig_fluid_bound.output,
    ]
)
