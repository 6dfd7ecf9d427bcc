"""Snakemake adapter: the production gap decomposed (issue 19 item 3) and the production
claims with real response lengths beside the lognormal ones.

``params.experiment``: ``burst`` (the re-timed trace), ``gap`` (the decomposition table)
or ``lengths`` (the claims beside). Library: rollmux.experiments.production_gap.
"""

import json
import logging
from pathlib import Path

from rollmux.experiments.claims import load_ledger, load_tolerances
from rollmux.experiments.production_gap import (
    Step,
    burst_to_peak,
    gap_table,
    lengths_by_workload,
    lengths_claims,
    real_lengths_metrics,
    slo_by_replay,
    slo_readings,
)
from rollmux.hardware import load_hardware
from rollmux.io import write_csv, write_json
from rollmux.sim.sweeps import collect_runs
from rollmux.traces.loader import load_trace
from rollmux.traces.writer import write_trace

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
experiment = str(snakemake.params.experiment)


def folders(files):
    """The replay folders of a list of their files."""
    return sorted({str(Path(p).parent) for p in files})


def summaries(files):
    """Each replay folder's summary, with its policy (from config.json)."""
    out = {}
    for folder in folders(files):
        summary = json.loads((Path(folder) / "summary.json").read_text(encoding="utf-8"))
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        out[folder] = {**summary, "policy": config["policy"]}
    return out


if experiment == "burst":
    hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
    jobs = load_trace(snakemake.input.trace, hw)
    burst = burst_to_peak(jobs, hw, float(snakemake.params.target),
                          float(snakemake.params.window_h))
    write_trace(list(burst.jobs), snakemake.output.trace,
                [f"arrivals of {Path(snakemake.input.trace).name} pulled toward the start of "
                 f"their {burst.window_h:g} h window by factor {burst.factor:.6g} "
                 f"(Solo-D peak {burst.peak_before:g} -> {burst.peak_after:g} GPUs; "
                 f"rollmux.experiments.production_gap.burst_to_peak)"])
    write_json({"factor": burst.factor, "window_h": burst.window_h,
                "solo_peak_before": burst.peak_before, "solo_peak_after": burst.peak_after,
                "target": burst.target, "reached": burst.reached},
               snakemake.output.info)
    logging.info("factor %.6g: Solo-D peak %g -> %g (target %g)", burst.factor,
                 burst.peak_before, burst.peak_after, burst.target)
elif experiment == "gap":
    ledger = load_ledger(snakemake.input.ledger)
    files = list(snakemake.input.summaries)
    steps = []
    for spec in snakemake.params.steps:
        mine = [f for f in files if str(Path(f).parent) in set(spec["folders"])]
        realised, reference = slo_readings(summaries(mine))
        steps.append(Step(spec["step"], spec["setup"], spec["factor"], spec["source"],
                          collect_runs(folders(mine)), realised, reference,
                          tuple(slo_by_replay(summaries(mine)))))
    table = gap_table(steps, ledger)
    write_csv(table, snakemake.output.table, "%.6g")
    logging.info("wrote %d rows to %s", len(table), snakemake.output.table)
else:
    ledger = load_ledger(snakemake.input.ledger)
    tolerances = load_tolerances(snakemake.input.tolerances)
    lognormal = list(snakemake.input.lognormal)
    real = list(snakemake.input.lengths)
    table = lengths_claims(ledger, tolerances, collect_runs(folders(lognormal)),
                           collect_runs(folders(real)),
                           {"lognormal": slo_readings(summaries(lognormal)),
                            "lengths": slo_readings(summaries(real))})
    write_csv(table, snakemake.output.table, "%.6g")
    logging.info("wrote %d rows to %s", len(table), snakemake.output.table)
    # The same claims' metrics as companion rows <metric>@real-lengths, per seed and their
    # mean, for the claims report (beside the lognormal values).
    metrics, per_seed = real_lengths_metrics(collect_runs(folders(real)),
                                             f"{snakemake.output.table} (replays with "
                                             f"lengths from {snakemake.params.lengths})")
    write_csv(metrics, snakemake.output.metrics)
    write_csv(per_seed, snakemake.output.seed_metrics)
    # RollMux's jobs with real lengths, by the workload that served each (rule R1).
    import pandas as pd

    from rollmux.sim.lengths import LengthSource

    hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
    turns = {job.job_id: job.turns for job in load_trace(snakemake.input.trace, hw)}
    source = LengthSource.read(str(snakemake.params.lengths))
    parts, workload_of = [], {}
    for folder in folders(real):
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        if config["policy"] != "rollmux":
            continue
        seed = int(config["seed"])
        jobs = pd.read_csv(Path(folder) / "jobs.csv")
        jobs["job_id"] = [f"{seed}:{j}" for j in jobs["job_id"]]
        for key in jobs["job_id"]:
            job_id = key.split(":", 1)[1]
            workload_of[key] = source.names()[source.workload_for(job_id, turns[job_id], seed)]
        parts.append(jobs)
    by = lengths_by_workload(pd.concat(parts, ignore_index=True), workload_of)
    write_csv(by, snakemake.output.by_workload, "%.6g")
