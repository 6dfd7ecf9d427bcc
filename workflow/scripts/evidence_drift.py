"""Snakemake adapter: the drift study's and evidence replays -> results/evidence/drift_*.csv.

Library: rollmux.experiments.drift_evidence (workflow/rules/evidence_drift.smk).
"""

import logging
from pathlib import Path

import pandas as pd

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.drift_evidence import (
    DRIFT_CLAIMS,
    attainment_by_strength,
    cost_by_replay,
    drift_claims_evidence,
    slo_by_job,
    utilisation_gap,
)
from rollmux.experiments.evidence import paper_ranges
from rollmux.experiments.robustness import NO_DRIFT_SETTING, SETTINGS, DriftStudy, RunRef
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
reach = str(snakemake.params.drift_reach)
# The compared policies and the reference come from config robustness.policies, .reference.
study = DriftStudy(tuple(snakemake.params.policies), str(snakemake.params.reference))
# Each replay's setting, policy, seed and drift reach come from its config.json.
runs = [RunRef.from_folder(Path(summary).parent) for summary in snakemake.input.summaries]
ledger = load_ledger(snakemake.input.ledger)
paper = paper_ranges(ledger, list(DRIFT_CLAIMS))
metric_of = dict(zip(ledger["claim_id"], ledger["metric"], strict=True))
out = snakemake.output
# Cost ratios need a regroup replay of the same setting: drift settings and no drift only.
costs = cost_by_replay([r for r in runs if r.drift_reach == reach
                        and r.setting in (*SETTINGS, NO_DRIFT_SETTING)], study,
                       {metric_of[c]: paper[c] for c in DRIFT_CLAIMS})
slo = slo_by_job(runs, snakemake.input.trace, study, hw)
migration = pd.read_csv(snakemake.input.migration)
gap = utilisation_gap(runs, study, migration, reach)
strengths = attainment_by_strength(runs, study)
claims = drift_claims_evidence(costs, slo, gap, paper, reach, strengths)
write_csv(claims, out.claims)
for table, path in ((costs, out.costs), (slo, out.slo), (gap, out.gap),
                    (strengths, out.strengths)):
    write_csv(table, path, "%.10g")
logging.info("%d replays; wrote %s", len(runs), ", ".join(str(p) for p in out))
