# Evidence behind the production, simulation and sync claims that differ (issue #11, item 3):
# each rule writes results/evidence/<name>.csv, named in the ledger's `evidence` column
# (src/rollmux/data/claims.csv). Library: rollmux.experiments.production_evidence and
# rollmux.experiments.simulation_evidence; extra replays (config sim.evidence) go through
# the sweeps' replay rule sim_replay (simulate.smk). Columns: docs/metrics.md, "Evidence".
from rollmux.experiments.simulation_evidence import evidence_plan

EVIDENCE_PLAN = evidence_plan(config["sim"], config["seed"])
EVIDENCE_LEDGER = "src/rollmux/data/claims.csv"


# C10-C13 (and C01): the paper's bubble reductions under both readings, and ours.
rule evidence_bubble_readings:
    conda:
        ENV
    input:
        production=rules.sim_production.output.table,
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/bubble_readings.csv",
    params:
        experiment="bubble_readings",
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/evidence/bubble_readings.log",
    script:
        "../scripts/evidence_sim.py"


# C01, C02, C04: costs against the fluid bound of the trace's work.
rule evidence_production_cost:
    conda:
        ENV
    input:
        production=rules.sim_production.output.table,
        fluid=rules.sim_fluid.output.table,
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/production_cost.csv",
    params:
        experiment="production_cost",
        trace=config["sim"]["production"]["trace"],
    log:
        "results/logs/evidence/production_cost.log",
    script:
        "../scripts/evidence_sim.py"


# C07-C09: RollMux's admission mix on the production trace under other settings.
rule evidence_admission:
    conda:
        ENV
    input:
        summaries=run_files(EVIDENCE_PLAN.admission, "summary.json"),
        timeseries=run_files(EVIDENCE_PLAN.admission, "timeseries.csv"),
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/admission_sensitivity.csv",
    params:
        experiment="admission",
        reference={"slo": EVIDENCE_PLAN.admission_reference.slo,
                   "maxgroup": EVIDENCE_PLAN.admission_reference.maxgroup},
    log:
        "results/logs/evidence/admission_sensitivity.log",
    script:
        "../scripts/evidence_sim.py"


# C29, C31, C33, C37, C40, C41: Solo-D over the optimum against the paper's baselines.
rule evidence_baseline_cost:
    conda:
        ENV
    input:
        sensitivity=rules.sim_sensitivity.output.table,
        summaries=run_files(EVIDENCE_PLAN.solo, "summary.json"),
        timeseries=run_files(EVIDENCE_PLAN.solo, "timeseries.csv"),
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/baseline_cost_bound.csv",
    params:
        experiment="baseline_cost",
    log:
        "results/logs/evidence/baseline_cost_bound.log",
    script:
        "../scripts/evidence_sim.py"


# C30, C32, C34-C36, C42, C43: how many jobs the SLO-blind baselines slow at all.
rule evidence_baseline_attainment:
    conda:
        ENV
    input:
        sensitivity=rules.sim_sensitivity.output.table,
        jobs=run_files(EVIDENCE_PLAN.attainment, "jobs.csv"),
        configs=run_files(EVIDENCE_PLAN.attainment, "config.json"),
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/baseline_attainment.csv",
    params:
        experiment="baseline_attainment",
        slo_endpoints=config["sim"].get("metrics", {}).get("slo_endpoints", ["1.2", "2"]),
    log:
        "results/logs/evidence/baseline_attainment.log",
    script:
        "../scripts/evidence_sim.py"


# C03 (and every SLO attainment claim): the three SLO readings of RollMux and the SLO-blind
# Random and Greedy on the production trace, and which readings tell them apart
# (rollmux.experiments.slo_readings; the production replays must include random, greedy).
rule evidence_slo_readings:
    conda:
        ENV
    input:
        production=rules.sim_production.output.table,
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/slo_readings.csv",
    params:
        experiment="slo_readings",
        trace=config["sim"]["production"]["trace"],
    log:
        "results/logs/evidence/slo_readings.log",
    script:
        "../scripts/evidence_sim.py"


# C44: RollMux's peak GPUs on the claims' window and on other windows of the trace.
rule evidence_peak_window:
    conda:
        ENV
    input:
        summaries=run_files(EVIDENCE_PLAN.peak, "summary.json"),
        timeseries=run_files(EVIDENCE_PLAN.peak, "timeseries.csv"),
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/peak_window.csv",
    params:
        experiment="peak_window",
        claims_trace=EVIDENCE_PLAN.peak_claims_trace,
    log:
        "results/logs/evidence/peak_window.log",
    script:
        "../scripts/evidence_sim.py"


# C38: the jobs RollMux's replays of the sensitivity settings miss, and why (each replay
# with misses runs again with its per-phase table; rollmux.experiments.slo_evidence).
rule evidence_rollmux_slo:
    conda:
        ENV
    input:
        jobs=run_files(EVIDENCE_PLAN.rollmux_slo, "jobs.csv"),
        configs=run_files(EVIDENCE_PLAN.rollmux_slo, "config.json"),
        traces=sorted({trace_file(k.trace) for k in EVIDENCE_PLAN.rollmux_slo}),
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/rollmux_slo_misses.csv",
    params:
        experiment="rollmux_slo",
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/evidence/rollmux_slo_misses.log",
    script:
        "../scripts/evidence_sim.py"


# C26-C27: the copies and intra-cluster bandwidth the paper's sync speed-ups take.
rule evidence_sync:
    conda:
        ENV
    input:
        sync="results/paperfigs/fig13_sync.csv",
        ledger=EVIDENCE_LEDGER,
    output:
        table="results/evidence/sync_what_it_takes.csv",
    params:
        experiment="sync",
        overrides=SIM_OVERRIDES,
    log:
        "results/logs/evidence/sync_what_it_takes.log",
    script:
        "../scripts/evidence_sim.py"


TARGETS.extend(
    [
        rules.evidence_sync.output.table,
        rules.evidence_bubble_readings.output.table,
        rules.evidence_production_cost.output.table,
        rules.evidence_admission.output.table,
        rules.evidence_baseline_cost.output.table,
        rules.evidence_baseline_attainment.output.table,
        rules.evidence_peak_window.output.table,
        rules.evidence_rollmux_slo.output.table,
        rules.evidence_slo_readings.output.table,
    ]
)
