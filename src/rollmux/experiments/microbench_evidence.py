"""What it would take: the experiments behind the micro-benchmark claims that differ (§6.2-6.3).

:func:`what_it_would_take` (results/microbench/what_it_would_take.csv) puts every Fig. 10
gain (C14-C22) and Table 4's bounds (C23, C24) next to the paper's, under the default setup
and under the readings the paper leaves open, and for each gain the input it would take to
give the paper's value:

- readings: ``default``; ``baselines_in_group`` (Solo-D, veRL and Gavel+ run each job on
  the GPUs it has in its group, not on those it requests); ``spatial_stacked`` (each D rolls
  out on one of C's H20 nodes); ``e_other_size`` (of the two E sizes at which the
  train mux's largest overhead would meet Table 4's upper bound, the one farther from our
  estimate; C23 is predicted, so this is what it would take, not a fit);
  ``d_ratio_on_group_gpus`` (Type-D's ``T_roll ~ 2.5 T_train`` holds on the 8 H800 it has
  in the train mux, A and C's rollout refitted); each with Table 4's ends and every group's
  ``T_load / T_cycle`` (the paper's train mux "leaves some bubbles unfilled");
- Solo-D: RollMux's mean slowdown against the jobs' requested solo runs that the paper's
  gain implies with our group's and Solo-D's costs, next to ours and Table 4's bound;
- veRL: the co-located rollout speed-up (``perf.colocated_rollout_speedup``, fitted to the
  production trace) at which our veRL gives the paper's gain;
- Gavel+: Gavel+'s throughput per dollar over Solo-D's, the paper's (ratio of its two gains)
  and ours;
- Table 4's ideal (C24): per job, the H800/H20 rollout-time ratio that would put RollMux
  8.0% and 18.1% slower than the ideal, next to the phase model's roofline ratio, and the
  batch (prompts per iteration, a Table 3 value) at which the roofline gives the nearer one.

The sync speed-ups C26 and C27 have their own evidence
(:mod:`rollmux.experiments.sync_evidence`). Column definitions: docs/stochastic.md §4.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from rollmux.closedform import pools_from_hardware, verl_fleet
from rollmux.experiments.claims import load_ledger
from rollmux.experiments.microbench import SCENARIOS, build_scenario
from rollmux.experiments.microbench_fit import (
    e_train_roots,
    fit_microbench_types,
    microbench_targets,
    with_sizes,
)
from rollmux.experiments.microbench_sim import baseline_jobs, table4, throughput_table
from rollmux.hardware import Hardware, load_hardware
from rollmux.io import write_csv
from rollmux.jobtypes import job_type, load_microbench
from rollmux.phasetimes import resolved_prompts_per_iter, rollout_time_ratio

__all__ = [
    "EVIDENCE_COLUMNS",
    "Reading",
    "readings",
    "what_it_would_take",
]

EVIDENCE_COLUMNS: tuple[str, ...] = (
    "claim_id", "scenario", "subject", "reading", "quantity", "unit", "paper", "ours",
    "needed", "note",
)
"""Columns of :func:`what_it_would_take` (docs/stochastic.md §4, "What it would take")."""


_BASELINES = {"solo-d": "solod", "gavel-plus": "gavel", "verl": "verl"}
# Batch multipliers scanned for the roofline ratio the paper's ideal implies.
_BATCH_GRID = np.exp(np.linspace(math.log(1.0 / 16.0), math.log(64.0), 241))


def _paper_values(ledger: pd.DataFrame) -> dict[str, tuple[str, float, float, float]]:
    """Metric -> (claim id, value, low, high) of the ledger (NaN where not given)."""
    def number(text: object) -> float:
        return float(str(text)) if str(text).strip() else math.nan

    return {str(rec["metric"]): (str(rec["claim_id"]), number(rec["paper_value"]),
                                 number(rec["paper_low"]), number(rec["paper_high"]))
            for rec in ledger.to_dict("records")}


def _row(claim_id: str, scenario: str, subject: str, reading: str, quantity: str, unit: str,
         paper: float, ours: float, needed: float = math.nan, note: str = "") -> dict[str, Any]:
    return {"claim_id": claim_id, "scenario": scenario, "subject": subject, "reading": reading,
            "quantity": quantity, "unit": unit, "paper": paper, "ours": ours, "needed": needed,
            "note": note}


def _gains(table: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(scenario, system) -> rollmux_gain of a throughput table."""
    return {(r.scenario, r.system): float(r.rollmux_gain) for r in table.itertuples()}


def _verl_speedup_needed(scenario: str, paper_gain: float, table: pd.DataFrame,
                         definitions: Mapping[str, Any], hw: Hardware) -> float:
    """The co-located rollout speed-up at which our veRL gives the paper's gain (NaN: none)."""
    sc = build_scenario(scenario, hw, definitions)
    _, phases = baseline_jobs(sc, "requested")
    ours = table[(table.scenario == scenario) & (table.system == "rollmux")].iloc[0]
    ours_per_usd = float(ours.normalised_throughput) / float(ours.cost_usd_per_h)
    pools = pools_from_hardware(hw)

    def gap(speedup: float) -> float:
        fleet = verl_fleet(phases, dataclasses.replace(pools, colocated_rollout_speedup=speedup))
        return ours_per_usd / fleet.normalised_throughput_per_usd_h - paper_gain

    low, high = 0.05, 20.0
    if gap(low) * gap(high) > 0:
        return math.nan
    return float(brentq(gap, low, high, xtol=1e-9))


def _batch_multiplier(job_name: str, definitions: Mapping[str, Any], h800_gpus: int,
                      target_ratio: float, hw: Hardware) -> float:
    """The smallest batch multiplier at which the roofline ratio reaches ``target_ratio``."""
    job = job_type(job_name, definitions)
    base = resolved_prompts_per_iter(job, hw)
    ratios = []
    for m in _BATCH_GRID:
        prompts = max(1, round(float(m) * base))
        ratios.append(rollout_time_ratio(dataclasses.replace(job, prompts_per_iter=prompts), hw,
                                         job.train_gpu_type, h800_gpus))
    now = rollout_time_ratio(job, hw, job.train_gpu_type, h800_gpus)
    sign = np.sign(np.array(ratios) - target_ratio)
    want = np.sign(target_ratio - now)
    hits = [float(m) for m, s in zip(_BATCH_GRID, sign, strict=True) if s == want or s == 0]
    if want == 0:
        return 1.0
    # Nearest multiplier to 1 (log distance) at which the ratio has crossed the target.
    return min(hits, key=lambda m: abs(math.log(m))) if hits else math.nan


@dataclass(frozen=True)
class Reading:
    """One reading of §6.2: job types, the simulated scenario of each claim's, baselines."""

    name: str
    definitions: Mapping[str, Any]
    scenarios: Mapping[str, str]
    solo_config: str = "requested"


def readings(seed: int, iterations: int, hw: Hardware, definitions: Mapping[str, Any],
             ledger: pd.DataFrame) -> tuple[Reading, ...]:
    """The default setup and the readings the paper's text leaves open (module docstring).

    ``d_ratio_on_group_gpus`` holds Type-D's ``T_roll ~ 2.5 T_train`` on the 8 H800 it has
    in the train mux (its training on 16 H800 takes half that) and refits A and C's rollout
    (fit ``microbench_types``) for it.
    """
    targets = microbench_targets(ledger)
    ratio = targets.e_rollout_over_train
    packaged = float(definitions["job_types"]["E"]["train_s"])
    e_other = max(e_train_roots(seed, iterations, targets, definitions, hw),
                  key=lambda root: abs(root - packaged))
    d = definitions["job_types"]["D"]
    halved = with_sizes(definitions, {"D": (float(d["rollout_s"]), float(d["train_s"]) / 2.0)})
    every = {name: name for name in SCENARIOS}
    return (
        Reading("default", definitions, every),
        Reading("baselines_in_group", definitions, every, "in_group"),
        Reading("spatial_stacked", definitions, {"spatial": "spatial_stacked"}),
        Reading("e_other_size", with_sizes(definitions, {"E": (ratio * e_other, e_other)}),
                {"train": "train"}),
        Reading("d_ratio_on_group_gpus",
                fit_microbench_types(seed, iterations, targets, halved, hw).definitions, every),
    )


def what_it_would_take(
    seed: int = 0,
    iterations: int = 60,
    hw: Hardware | None = None,
    definitions: Mapping[str, Any] | None = None,
    ledger: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The micro-benchmark evidence table (module docstring; columns :data:`EVIDENCE_COLUMNS`)."""
    hw = hw or load_hardware()
    defs = dict(definitions or load_microbench())
    ledger = load_ledger() if ledger is None else ledger
    paper = _paper_values(ledger)
    rows: list[dict[str, Any]] = []
    default = throughput_table(seed, iterations, hw, definitions=defs)
    for reading in readings(seed, iterations, hw, defs, ledger):
        rows += _reading_rows(reading, seed, iterations, hw, paper,
                              default if reading.name == "default" else None)
    # What it would take, default setup.
    gains = _gains(default)
    for scenario in SCENARIOS:
        part = default[default.scenario == scenario].set_index("system")
        n = float(part.loc["solo-d", "normalised_throughput"])
        cost_ratio = float(part.loc["solo-d", "cost_usd_per_h"] / part.loc["rollmux",
                                                                           "cost_usd_per_h"])
        claim, solo_gain, _, _ = paper[f"throughput_ratio_{scenario}_solod"]
        rows.append(_row(
            claim, scenario, "solo-d", "default", "rollmux_mean_slowdown", "x",
            math.nan, n / float(part.loc["rollmux", "normalised_throughput"]),
            needed=cost_ratio / solo_gain,
            note="mean slowdown of the woven jobs against their requested solo runs "
                 "(harmonic); needed: the one the paper's gain implies at our group's and "
                 "Solo-D's costs"))
        claim, verl_gain, _, _ = paper[f"throughput_ratio_{scenario}_verl"]
        rows.append(_row(
            claim, scenario, "verl", "default", "colocated_rollout_speedup", "x", math.nan,
            hw.perf.colocated_rollout_speedup,
            needed=_verl_speedup_needed(scenario, verl_gain, default, defs, hw),
            note="veRL's rollout speed on its H800s over HBM-bandwidth scaling; ours is "
                 "fitted to the production trace (fit production_mix)"))
        claim, gavel_gain, _, _ = paper[f"throughput_ratio_{scenario}_gavel"]
        rows.append(_row(
            claim, scenario, "gavel-plus", "default", "per_usd_over_solo_d", "x",
            solo_gain / gavel_gain, gains[(scenario, "solo-d")] / gains[(scenario, "gavel-plus")],
            note="Gavel+'s throughput per USD/h over Solo-D's; paper: the ratio of its "
                 "Solo-D and Gavel+ gains"))
    rows += _ideal_rows(seed, iterations, hw, defs, paper)
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))


def _reading_rows(reading: Reading, seed: int, iterations: int, hw: Hardware,
                  paper: Mapping[str, tuple[str, float, float, float]],
                  table: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """A reading's gains (C14-C22), Table 4's ends (C23, C24) and each group's load."""
    rows = []
    sim_names = list(reading.scenarios.values())
    claim_of = {sim: name for name, sim in reading.scenarios.items()}
    if table is None:
        table = throughput_table(seed, iterations, hw, names=sim_names,
                                 definitions=reading.definitions,
                                 solo_config=reading.solo_config)
    gains = _gains(table)
    for sim, scenario in claim_of.items():
        for system, short in _BASELINES.items():
            claim, value, _, _ = paper[f"throughput_ratio_{scenario}_{short}"]
            rows.append(_row(claim, scenario, system, reading.name, "gain", "x", value,
                             gains[(sim, system)],
                             note="RollMux throughput per USD/h over the baseline's"))
    if reading.solo_config != "requested":
        return rows  # Table 4 and the groups do not depend on the baselines' GPUs
    over_claim, _, over_low, over_high = paper["iteration_overhead_vs_solo"]
    ideal_claim, _, ideal_low, ideal_high = paper["iteration_slowdown_vs_ideal"]
    t4 = table4(seed, iterations, hw, names=sim_names, definitions=reading.definitions)
    for sim, part in t4.groupby("scenario", sort=False):
        scenario = claim_of[str(sim)]
        for quantity, claim, low, high in (
            ("overhead_vs_solo", over_claim, over_low, over_high),
            ("slower_than_ideal", ideal_claim, ideal_low, ideal_high),
        ):
            pct = 100.0 * part[quantity]
            rows.append(_row(claim, scenario, "all jobs", reading.name, f"{quantity}_low", "%",
                             low, float(pct.min())))
            rows.append(_row(claim, scenario, "all jobs", reading.name, f"{quantity}_high",
                             "%", high, float(pct.max())))
        group = build_scenario(str(sim), hw, reading.definitions).group
        rows.append(_row(over_claim, scenario, "group", reading.name, "t_load_over_t_cycle",
                         "x", math.nan, group.t_load_s() / group.t_cycle_s(),
                         note="closed form: above 1 the group is saturated (Algorithm 1 "
                              "prunes it); the paper's train mux 'leaves some bubbles "
                              "unfilled'"))
    return rows


def _ideal_rows(seed: int, iterations: int, hw: Hardware, defs: Mapping[str, Any],
                paper: Mapping[str, tuple[str, float, float, float]]) -> list[dict[str, Any]]:
    """Per job, the ideal's rollout ratio: ours, the one the paper's C24 needs, the batch."""
    rows = []
    ideal_claim, _, ideal_low, ideal_high = paper["iteration_slowdown_vs_ideal"]
    t4 = table4(seed, iterations, hw, definitions=defs)
    scenarios = {name: build_scenario(name, hw, defs) for name in SCENARIOS}
    for rec in t4.to_dict("records"):
        sc = scenarios[rec["scenario"]]
        j = [job.job_id for job in sc.jobs].index(rec["job"])
        h800 = sc.group.jobs[j].phases.train_gpus
        h20_rollout = rec["ideal_rollout_s"] / rec["ideal_rollout_ratio"]
        train = rec["ideal_s"] - rec["ideal_rollout_s"]
        needed = {end: (rec["rollmux_s"] / (1.0 + pct / 100.0) - train) / h20_rollout
                  for end, pct in (("paper_low", ideal_low), ("paper_high", ideal_high))}
        for end, value in needed.items():
            rows.append(_row(ideal_claim, rec["scenario"], rec["job"], end,
                             "ideal_rollout_ratio", "x", math.nan, rec["ideal_rollout_ratio"],
                             needed=value,
                             note=f"H800/H20 rollout time on {h800} H800 (roofline) and the "
                                  f"ratio that puts RollMux {end.split('_')[1]} end of the "
                                  "paper's range slower than the ideal"))
        nearer = min(needed.values(), key=lambda v: abs(v - rec["ideal_rollout_ratio"]))
        if min(needed.values()) <= rec["ideal_rollout_ratio"] <= max(needed.values()):
            nearer = rec["ideal_rollout_ratio"]
        job_name = rec["job"].rstrip("0123456789")
        rows.append(_row(ideal_claim, rec["scenario"], rec["job"], "default",
                         "prompts_per_iter_multiplier", "x", math.nan, 1.0,
                         needed=_batch_multiplier(job_name, defs, h800, nearer, hw),
                         note="batch (prompts per iteration) over ours at which the roofline "
                              "gives the nearer needed ratio (NaN: no batch does)"))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rollmux.experiments.microbench_evidence``: write both evidence tables."""
    parser = argparse.ArgumentParser(prog="python -m rollmux.experiments.microbench_evidence",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path("results/microbench"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=60)
    args = parser.parse_args(argv)
    try:
        evidence = what_it_would_take(args.seed, args.iterations)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write_csv(evidence, args.out_dir / "what_it_would_take.csv")
    with pd.option_context("display.width", 250, "display.max_rows", 500,
                           "display.max_colwidth", 40):
        print(evidence.drop(columns=["note"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
