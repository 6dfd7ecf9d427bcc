"""Snakemake adapter: one evidence experiment of the production or simulation claims.

``params.experiment`` names it (workflow/rules/evidence_sim.smk); the library functions
are in rollmux.experiments.production_evidence and simulation_evidence.
"""

import json
import logging
from pathlib import Path

import pandas as pd

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.evidence import paper_ranges, paper_values
from rollmux.experiments.production_evidence import (
    admission_sensitivity,
    bubble_readings,
    production_cost_bound,
)
from rollmux.experiments.simulation_evidence import (
    BASELINE_COST_CLAIMS,
    BASELINE_SLO_CLAIMS,
    baseline_attainment_bound,
    baseline_cost_bound,
    peak_window,
    slowed_share,
)
from rollmux.experiments.slo_evidence import concat_misses, replay_misses
from rollmux.experiments.slo_readings import readings_table
from rollmux.experiments.sync_evidence import SYNC_CLAIMS, sync_what_it_takes
from rollmux.hardware import load_hardware
from rollmux.io import write_csv
from rollmux.sim.sweeps import collect_runs, run_keys

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
experiment = str(snakemake.params.experiment)
ledger = load_ledger(snakemake.input.ledger)
SENS_DTYPES = {"value": str, "slo": str}


def folders(files: list[str]) -> list[str]:
    """The replay folders of a list of their files."""
    return sorted({str(Path(p).parent) for p in files})


if experiment == "bubble_readings":
    hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
    prod = pd.read_csv(snakemake.input.production, dtype={"slo": str})
    table = bubble_readings(prod, paper_values(ledger, ["C01", "C10", "C11", "C12", "C13"]),
                            hw.gpu("H20").price_usd_per_h, hw.gpu("H800").price_usd_per_h)
elif experiment == "production_cost":
    prod = pd.read_csv(snakemake.input.production, dtype={"slo": str})
    fluid = pd.read_csv(snakemake.input.fluid, dtype={"slo": str})
    fluid = fluid[fluid["trace"] == str(snakemake.params.trace)]
    table = production_cost_bound(prod, fluid,
                                  paper_values(ledger, ["C01", "C02", "C04", "C05", "C06"]))
elif experiment == "admission":
    runs = collect_runs(folders(snakemake.input.summaries))
    table = admission_sensitivity(runs, paper_values(ledger, ["C07", "C08", "C09"]),
                                  dict(snakemake.params.reference))
elif experiment == "baseline_cost":
    sens = pd.read_csv(snakemake.input.sensitivity, dtype=SENS_DTYPES)
    solo = collect_runs(folders(snakemake.input.summaries))
    # the evidence replays run at one seed; the sweeps' table holds every seed of `seeds`
    sens = sens[sens["seed"].isin(set(solo["seed"]))]
    table = baseline_cost_bound(sens, solo, paper_ranges(ledger, list(BASELINE_COST_CLAIMS)))
elif experiment == "baseline_attainment":
    sens = pd.read_csv(snakemake.input.sensitivity, dtype=SENS_DTYPES)
    slowed = {}
    for folder in folders(snakemake.input.jobs):
        keys = run_keys(folder)
        jobs = pd.read_csv(Path(folder) / "jobs.csv")
        slowed[(str(keys["trace"]), str(keys["slo"]), int(keys["maxgroup"]),
                str(keys["policy"]), int(keys["seed"]))] = slowed_share(jobs)
    # the evidence replays' seeds only (the sweeps' table holds every seed of `seeds`)
    sens = sens[sens["seed"].isin({key[-1] for key in slowed})]
    table = baseline_attainment_bound(sens, slowed,
                                      paper_ranges(ledger, list(BASELINE_SLO_CLAIMS)),
                                      [str(v) for v in snakemake.params.slo_endpoints])
elif experiment == "slo_readings":
    prod = pd.read_csv(snakemake.input.production, dtype={"slo": str})
    table = readings_table(prod, str(snakemake.params.trace), "C03")
elif experiment == "peak_window":
    runs = collect_runs(folders(snakemake.input.summaries))
    table = peak_window(runs, paper_values(ledger, ["C44"])["C44"],
                        str(snakemake.params.claims_trace))
elif experiment == "rollmux_slo":
    overrides = dict(snakemake.params.overrides)
    table = concat_misses([replay_misses(folder, overrides)
                           for folder in folders(snakemake.input.jobs)])
elif experiment == "sync":
    hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
    table = sync_what_it_takes(pd.read_csv(snakemake.input.sync),
                               paper_ranges(ledger, list(SYNC_CLAIMS.values())), hw)
else:
    raise ValueError(f"unknown evidence experiment {experiment!r}")
write_csv(table, snakemake.output.table)
logging.info("%s: %d rows to %s (%s)", experiment, len(table), snakemake.output.table,
             json.dumps(sorted(set(table["claim"]))))
