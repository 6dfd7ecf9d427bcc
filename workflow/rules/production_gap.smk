# Real response lengths on the production trace and the production cost gap decomposed
# (issue 19): the production replays again with lengths from real runs (config
# lengths.path, simulate --lengths), their claims beside the lognormal ones
# (results/evidence/production_lengths.csv), and the decomposition: our production setup
# moved toward what the paper's numbers imply one documented factor at a time
# (rollmux.experiments.production_gap.FACTORS, best supported first), the production
# claims and RollMux's realised SLO after each step (results/evidence/production_gap.csv,
# figures/fig_production_gap.png; docs/findings.md section 5). Replays go through the
# sweeps' replay rule sim_replay (simulate.smk).
import dataclasses as _gap_dc

from rollmux.experiments.production_gap import FACTORS as GAP_FACTORS
from rollmux.traces.stats import PAPER_TARGETS as _PAPER_TARGETS

GAP_CONFIG = config.get("production_gap") or {}
GAP_TRACE = SIM_PLAN.production[0].trace
GAP_BURST_TRACE = f"{GAP_TRACE}-burst"
# The paper's Solo-D peak per pool (§6.4: "the 328 H20s required by Solo-D").
GAP_TARGET_PEAK = _PAPER_TARGETS["production"]["peak_rollout_gpus_solo"]


# Seeds of the decomposition's replays (default: the production replays' own).
GAP_SEEDS = GAP_CONFIG.get("seeds") or sorted({k.seed for k in SIM_PLAN.production})
# The production replays the claims need (RollMux, Solo-D, veRL; the production setting)
# on a trace with a lengths folder; step 0 is the pipeline's own production replays.
GAP_RUNS = {
    (trace, lengths): tuple(
        _gap_dc.replace(k, trace=trace, lengths=lengths, seed=seed)
        for k in SIM_PLAN.production
        if k.policy in ("rollmux", "solo-d", "verl") and k.seed == SIM_PLAN.production[0].seed
        for seed in GAP_SEEDS
    )
    for trace in (GAP_TRACE, GAP_BURST_TRACE)
    for lengths in ("", LENGTHS_PATH)
}
GAP_FACTOR = {f.name: f for f in GAP_FACTORS}
GAP_STEPS = [
    {"step": "0", "setup": "as shipped", "factor": "", "source": "",
     "runs": GAP_RUNS[GAP_TRACE, ""]},
    {"step": "1", "setup": "+ burst", "factor": GAP_FACTOR["burst"].change,
     "source": GAP_FACTOR["burst"].source, "runs": GAP_RUNS[GAP_BURST_TRACE, ""]},
]
if LENGTHS_PATH:
    GAP_STEPS.append(
        {"step": "2", "setup": "+ burst + lengths", "factor": GAP_FACTOR["lengths"].change,
         "source": GAP_FACTOR["lengths"].source,
         "runs": GAP_RUNS[GAP_BURST_TRACE, LENGTHS_PATH]})
    GAP_STEPS.append(
        {"step": "lengths alone", "setup": "+ lengths", "factor": GAP_FACTOR["lengths"].change,
         "source": GAP_FACTOR["lengths"].source, "runs": GAP_RUNS[GAP_TRACE, LENGTHS_PATH]})


rule gap_burst_trace:
    conda:
        ENV
    input:
        trace=trace_file(GAP_TRACE),
    output:
        trace=f"results/sim/traces/{GAP_BURST_TRACE}.csv",
        info="results/evidence/production_gap_burst.json",
    params:
        experiment="burst",
        target=GAP_TARGET_PEAK,
        window_h=GAP_CONFIG.get("burst_window_h", 168),
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/evidence/production_gap_burst.log",
    script:
        "../scripts/production_gap.py"


rule evidence_production_gap:
    conda:
        ENV
    input:
        summaries=[f for s in GAP_STEPS for f in run_files(s["runs"], "summary.json")],
        timeseries=[f for s in GAP_STEPS for f in run_files(s["runs"], "timeseries.csv")],
        ledger="src/rollmux/data/claims.csv",
        burst=rules.gap_burst_trace.output.info,
    output:
        table="results/evidence/production_gap.csv",
    params:
        experiment="gap",
        steps=[{**{k: v for k, v in s.items() if k != "runs"},
                "folders": [str(k.path()) for k in s["runs"]]} for s in GAP_STEPS],
    log:
        "results/logs/evidence/production_gap.log",
    script:
        "../scripts/production_gap.py"


rule fig_production_gap:
    conda:
        ENV
    input:
        table=rules.evidence_production_gap.output.table,
    output:
        png=report(
            "figures/fig_production_gap.png",
            caption="../report/fig_production_gap.rst",
            category=REPORT_CATEGORY["production"],
        ),
        pdf="figures/fig_production_gap.pdf",
    params:
        python=PYTHON,
    log:
        "results/logs/fig_production_gap.log",
    shell:
        "{params.python} analysis/fig_production_gap.py --table {input.table} "
        "--png {output.png} --pdf {output.pdf} > {log} 2>&1"


TARGETS.extend([rules.evidence_production_gap.output.table, *rules.fig_production_gap.output])

if LENGTHS_PATH:

    rule evidence_production_lengths:
        conda:
            ENV
        input:
            lognormal=run_files(GAP_RUNS[GAP_TRACE, ""], "summary.json"),
            lengths=run_files(GAP_RUNS[GAP_TRACE, LENGTHS_PATH], "summary.json"),
            timeseries=run_files(GAP_RUNS[GAP_TRACE, ""], "timeseries.csv")
            + run_files(GAP_RUNS[GAP_TRACE, LENGTHS_PATH], "timeseries.csv"),
            ledger="src/rollmux/data/claims.csv",
            tolerances="src/rollmux/data/claims_tolerances.yaml",
            jobs=run_files(GAP_RUNS[GAP_TRACE, LENGTHS_PATH], "jobs.csv"),
            trace=trace_file(GAP_TRACE),
        output:
            table=report(
                "results/evidence/production_lengths.csv",
                caption="../report/production_lengths.rst",
                category=REPORT_CATEGORY["production"],
                labels={"table": "production claims with real response lengths"},
            ),
            # RollMux's jobs with real lengths by the workload that served them
            by_workload="results/evidence/production_lengths_by_workload.csv",
            # the production claims' metrics with real lengths as companion rows
            # <metric>@real-lengths (mean over seeds, and each seed), which the claims
            # report shows beside the lognormal values
            metrics="results/metrics/real_lengths.csv",
            seed_metrics="results/metrics/seeds/real_lengths.csv",
        params:
            experiment="lengths",
            lengths=LENGTHS_PATH,
            overrides=SIM_OVERRIDES,
        log:
            "results/logs/evidence/production_lengths.log",
        script:
            "../scripts/production_gap.py"

    rule trace_lengths:
        conda:
            ENV
        output:
            steps="results/lengths/steps.csv",
            fit="results/lengths/fit.csv",
        params:
            path=LENGTHS_PATH,
            python=PYTHON,
        log:
            "results/logs/lengths/trace_lengths.log",
        shell:
            "{params.python} -m rollmux.traces.cli trace lengths {params.path:q} "
            "--out {output.steps} --fit-out {output.fit} > {log} 2>&1"

    TARGETS.extend([rules.evidence_production_lengths.output.table,
                    *rules.trace_lengths.output])
