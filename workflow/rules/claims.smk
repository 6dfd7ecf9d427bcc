# Claims report: every results/metrics/<stage>.csv (the metrics contract of
# workflow/README.md) joined with the claims ledger on `metric`, with each stochastic
# claim's per-seed values (results/metrics/seeds/<stage>.csv) giving its 95% interval
# over the config's `seeds` and its status. A reproducible claim
# with no result fails this rule, naming the metric. The results beyond the paper
# (ledger src/rollmux/data/beyond.csv, values in BEYOND_METRICS: results/metrics/beyond.csv
# and results/metrics/designs.csv, each appended by the rule file that writes it) follow as
# their own section of figures/claims.md; a result without its value fails it too. The HTML report
# (`snakemake --report figures/report.html`) shows this table beside every figure.

# Stages whose metrics back the paper's claims (results/metrics/<stage>.csv).
CLAIM_STAGES = ["production", "simulation", "robustness", "models"]
# Stages that also write each metric at each seed (results/metrics/seeds/<stage>.csv;
# rollmux.experiments.intervals): a stage resting on stochastic replays belongs here.
CLAIM_SEED_STAGES = ["production", "simulation", "robustness", "models"]
# Stages whose metrics divide by an optimum (optimal, regroup): each writes the optimum's
# certified gap per such metric (results/metrics/gaps/<stage>.csv;
# rollmux.experiments.optimum_gaps), shown beside the claim.
CLAIM_GAP_STAGES = ["simulation", "robustness"]

# The results files the ledger names as evidence (column `evidence`): built before the
# report, which checks that every `differs` row's evidence exists.
import csv as _csv

with open("src/rollmux/data/claims.csv", encoding="utf-8") as _fh:
    EVIDENCE = sorted(
        {
            row["evidence"].strip()
            for row in _csv.DictReader(line for line in _fh if not line.startswith("#"))
            if (row.get("evidence") or "").strip()
        }
    )


# The production claims with real response lengths (production_gap.smk, rule
# evidence_production_lengths): companion rows <metric>@real-lengths and their per-seed
# values, shown beside the lognormal values; none when lengths.path is off.
REAL_LENGTHS_METRICS = ["results/metrics/real_lengths.csv"] if LENGTHS_PATH else []
REAL_LENGTHS_SEED_METRICS = ["results/metrics/seeds/real_lengths.csv"] if LENGTHS_PATH else []


# What it would take (issue 19 item 5): for the simulation claims and Fig. 12's migration
# gain, the model input at which ours gives the paper's value, found by a 1-D search and
# fed back through the metrics' own code (rollmux.experiments.near_edge; docs/metrics.md,
# "What it would take"). The claims report shows it for every reproduced row with
# |margin| > 0.5.
#
# Fig. 12's rows (the training-time multiplier: replays of the micro-benchmark pairs at every
# seed) need no trace replay, so they are their own job, run while the replays run (about
# 40% of the search's CPU, which otherwise ran alone at the end of the pipeline); the rule
# below appends them, unchanged, after the simulation rows.
rule evidence_what_it_would_take_migration:
    conda:
        ENV
    input:
        ledger="src/rollmux/data/claims.csv",
    output:
        rows="results/evidence/what_it_would_take_migration.json",
    params:
        seeds=SEEDS,
        iterations=config["microbench"]["iterations"],
        overrides=config.get("hardware_overrides", {}),
    priority: 20
    log:
        "results/logs/evidence/what_it_would_take_migration.log",
    script:
        "../scripts/near_edge_migration.py"


rule evidence_what_it_would_take:
    conda:
        ENV
    input:
        migration=rules.evidence_what_it_would_take_migration.output.rows,
        sensitivity=rules.sim_sensitivity.output.table,
        mixed=rules.sim_mixed.output.table,
        jobs=run_files(SIM_PLAN.sensitivity + SIM_PLAN.mixed, "jobs.csv"),
        timeseries=run_files(SIM_PLAN.sensitivity + SIM_PLAN.mixed, "timeseries.csv"),
        # Fig. 10's simulated micro-benchmarks at every seed (rule microbench_sim)
        throughput=expand("results/microbench/seeds/seed={seed}/throughput.csv", seed=SEEDS),
        ledger="src/rollmux/data/claims.csv",
    output:
        table="results/evidence/what_it_would_take.csv",
    params:
        window=SIM_PLAN.window,
        slo_endpoints=config["sim"].get("metrics", {}).get("slo_endpoints", ["1.2", "2"]),
        reference=SIM_PLAN.reference,
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/evidence/what_it_would_take.log",
    script:
        "../scripts/near_edge.py"


rule claims_report:
    conda:
        ENV
    input:
        metrics=expand("results/metrics/{stage}.csv", stage=CLAIM_STAGES)
        + REAL_LENGTHS_METRICS,
        # the same metrics at each seed (rollmux.experiments.intervals): each claim's mean
        # and 95% interval over seeds, its status from the interval
        seed_metrics=expand("results/metrics/seeds/{stage}.csv", stage=CLAIM_SEED_STAGES)
        + REAL_LENGTHS_SEED_METRICS,
        # the certified gap of the optimum behind each optimum-normalised claim
        gap_metrics=expand("results/metrics/gaps/{stage}.csv", stage=CLAIM_GAP_STAGES),
        # results beyond the paper (beyond.smk, designs.smk), rendered after the claims
        beyond_metrics=BEYOND_METRICS,
        beyond_ledger="src/rollmux/data/beyond.csv",
        ledger="src/rollmux/data/claims.csv",
        tolerances="src/rollmux/data/claims_tolerances.yaml",
        calibration="src/rollmux/data/calibration.yaml",
        footnotes="src/rollmux/data/claims_footnotes.yaml",
        residuals=CALIBRATION_RESIDUALS,
        # computed inputs that give the paper's values (near-edge reproduced rows)
        what_it_would_take=["results/microbench/what_it_would_take.csv",
                            rules.evidence_what_it_would_take.output.table],
        evidence=EVIDENCE,
    output:
        table=report(
            "figures/claims.csv",
            caption="../report/claims.rst",
            category=REPORT_CATEGORY["claims"],
            labels={"table": "claims table (CSV download)"},
        ),
        html=report(
            "figures/claims.html",
            caption="../report/claims.rst",
            category=REPORT_CATEGORY["claims"],
            labels={"table": "claims table"},
        ),
        markdown="figures/claims.md",
        summary="results/claims_summary.json",
        # the headline counts and the table on the report's landing page
        # (workflow/report/workflow.rst includes it)
        landing="results/report/claims_landing.html",
    params:
        tolerance_overrides=config["claims"].get("tolerance_overrides", {}),
        require_evidence=config["claims"].get("require_evidence", True),
    log:
        "results/logs/claims_report.log",
    script:
        "../scripts/claims_report.py"


TARGETS.extend(
    [
        rules.claims_report.output.table,
        rules.claims_report.output.markdown,
        rules.claims_report.output.summary,
        rules.claims_report.output.html,
        rules.claims_report.output.landing,
    ]
)
