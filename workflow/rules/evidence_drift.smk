# Evidence behind the drift claims C47-C52 (paper sec. 6.6; issue #11, item 3): extra
# replays of the drift study's trace (config `robustness.evidence`: Solo-D, no drift, the
# other drift reaches, stronger templates) through the sweeps' replay rule sim_replay (simulate.smk), and the
# tables that explain the claims, written to results/evidence/drift_*.csv and named in the
# ledger's `evidence` column. Library: rollmux.experiments.drift_evidence; columns:
# docs/metrics.md, "Robustness".
from rollmux.experiments.drift_evidence import evidence_runs

# The evidence replays run at the one `seed` (not every seed of `seeds`: they explain a
# difference, the claims' intervals come from the drift replays of robustness.smk), and
# read the drift replays of that seed.
import dataclasses

DRIFT_EVIDENCE_RUNS = evidence_runs({**config["robustness"], "seeds": [config["seed"]]},
                                    RB_TRACE_NAME)
RB_EVIDENCE_RUNS = list(
    dict.fromkeys(dataclasses.replace(k, seed=config["seed"]) for k in RB_RUNS)
)


rule evidence_drift:
    conda:
        ENV
    input:
        summaries=run_files(RB_EVIDENCE_RUNS + DRIFT_EVIDENCE_RUNS, "summary.json"),
        jobs=run_files(RB_EVIDENCE_RUNS + DRIFT_EVIDENCE_RUNS, "jobs.csv"),
        configs=run_files(RB_EVIDENCE_RUNS + DRIFT_EVIDENCE_RUNS, "config.json"),
        migration=rules.robustness_aggregate.output.migration,
        trace=RB_TRACE,
        ledger="src/rollmux/data/claims.csv",
    output:
        claims="results/evidence/drift_claims.csv",
        costs="results/evidence/drift_cost_by_replay.csv",
        slo="results/evidence/drift_slo_by_job.csv",
        gap="results/evidence/drift_utilisation_gap.csv",
        strengths="results/evidence/drift_slo_by_strength.csv",
    params:
        drift_reach=RB_REACH,
        policies=RB_POLICIES,
        reference=RB_REFERENCE,
        overrides=config.get("hardware_overrides", {}),
    log:
        "results/logs/evidence/drift.log",
    script:
        "../scripts/evidence_drift.py"


TARGETS.extend(rules.evidence_drift.output)
