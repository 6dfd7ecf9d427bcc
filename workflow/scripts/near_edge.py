"""Snakemake adapter: what it would take (results/evidence/what_it_would_take.csv).

For the simulation claims (SLO attainment: the SLO scale; cost over the optimum: the
H800/H20 price ratio) and Fig. 12's migration gain (the training-time multiplier), the
model input at which ours gives the paper's value, fed back through the metrics' own
code; Fig. 12's rows come from rule evidence_what_it_would_take_migration
(near_edge_migration.py), appended as they are. Library: rollmux.experiments.near_edge.
"""

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.near_edge import (
    NEAR_EDGE_COLUMNS,
    gain_price_rows,
    price_rows,
    read_replays,
    slo_scale_rows,
)
from rollmux.experiments.sensitivity import read_sweep_table, simulation_metrics_over_seeds
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
ledger = load_ledger(snakemake.input.ledger)
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
window = int(snakemake.params.window)
note = f"; first {window} arrivals of each trace" if window else ""
sens = read_sweep_table(snakemake.input.sensitivity)
mixed = read_sweep_table(snakemake.input.mixed)
sources = f"{snakemake.input.sensitivity};{snakemake.input.mixed}"
endpoints = [str(v) for v in snakemake.params.slo_endpoints]


def build(s: pd.DataFrame, m: pd.DataFrame) -> pd.DataFrame:
    """The simulation metrics file's values (means of the per-seed values)."""
    return simulation_metrics_over_seeds(s, m, sources, slo_endpoints=endpoints,
                                         window_note=note)[0]


def build_some(s: pd.DataFrame, m: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """:func:`build`'s rows of ``metrics`` only (the searches read one metric at a time)."""
    return simulation_metrics_over_seeds(s, m, sources, slo_endpoints=endpoints,
                                         window_note=note, metrics=metrics)[0]


replays = read_replays(sorted({str(Path(p).parent) for p in snakemake.input.jobs}))
h20 = hw.gpu("H20").price_usd_per_h
rows = slo_scale_rows(ledger, build, sens, mixed, replays, build_some)
logging.info("SLO scales: %d rows", len(rows))
rows += price_rows(ledger, build, sens, mixed, replays, h20,
                   hw.gpu("H800").price_usd_per_h / h20, str(snakemake.params.reference),
                   build_some)
logging.info("price ratios: %d rows in all", len(rows))
# Fig. 10's gains: the micro-benchmark throughput table of every seed
throughput = [pd.read_csv(p) for p in getattr(snakemake.input, "throughput", [])]
if throughput:
    rows += gain_price_rows(ledger, throughput, hw.gpu("H800").price_usd_per_h / h20)
with open(snakemake.input.migration, encoding="utf-8") as stream:
    migration = json.load(stream)
if not isinstance(migration, list) or any(set(r) != set(NEAR_EDGE_COLUMNS) for r in migration):
    raise ValueError(f"{snakemake.input.migration}: not a list of rows with the columns "
                     f"{', '.join(NEAR_EDGE_COLUMNS)}")
rows += migration
table = pd.DataFrame(rows, columns=list(NEAR_EDGE_COLUMNS))
write_csv(table, snakemake.output.table, "%.6g")
logging.info("wrote %d rows to %s", len(table), snakemake.output.table)
