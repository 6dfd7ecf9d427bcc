"""Snakemake adapter: the claims report (figures/claims.*, results/claims_summary.json)."""

import logging

from rollmux.experiments.claims import build_claims_report, counts_line

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
try:
    counts = build_claims_report(
        snakemake.input.metrics,
        out_csv=snakemake.output.table,
        out_md=snakemake.output.markdown,
        out_summary=snakemake.output.summary,
        ledger=snakemake.input.ledger,
        tolerances=snakemake.input.tolerances,
        tolerance_overrides=snakemake.params.tolerance_overrides,
        calibration=snakemake.input.calibration,
        footnotes=snakemake.input.footnotes,
        require_evidence=snakemake.params.require_evidence,
        beyond_metrics_paths=list(snakemake.input.beyond_metrics),
        beyond_ledger=snakemake.input.beyond_ledger,
        what_it_would_take_paths=list(snakemake.input.what_it_would_take),
        out_html=snakemake.output.html,
        out_html_fragment=snakemake.output.landing,
        seed_metrics_paths=snakemake.input.seed_metrics,
        gap_metrics_paths=snakemake.input.gap_metrics,
    )
except ValueError as exc:  # ClaimsError: name the file, row and field in the log too
    logging.error("%s", exc)
    raise
logging.info("%s", counts_line(counts))
