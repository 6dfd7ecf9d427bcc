# Claims report: every results/metrics/<stage>.csv (the metrics contract of
# workflow/README.md) joined with the claims ledger on `metric`. A reproducible claim
# with no result fails this rule, naming the metric. The HTML report
# (`snakemake --report figures/report.html`) shows this table beside every figure.

# Stages whose metrics back the paper's claims (results/metrics/<stage>.csv).
CLAIM_STAGES = ["production", "simulation", "robustness", "models"]

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



rule claims_report:
    conda:
        ENV
    input:
        metrics=expand("results/metrics/{stage}.csv", stage=CLAIM_STAGES),
        ledger="src/rollmux/data/claims.csv",
        tolerances="src/rollmux/data/claims_tolerances.yaml",
        calibration="src/rollmux/data/calibration.yaml",
        footnotes="src/rollmux/data/claims_footnotes.yaml",
        residuals=CALIBRATION_RESIDUALS,
        evidence=EVIDENCE,
    output:
        table=report(
            "figures/claims.csv",
            caption="../report/claims.rst",
            category="Claims",
            labels={"table": "claims: paper vs ours"},
        ),
        markdown="figures/claims.md",
        summary="results/claims_summary.json",
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
    ]
)
