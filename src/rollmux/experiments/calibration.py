"""Fit ``production_mix``: the §6.4 production trace's unstated inputs (calibrate, then predict).

The paper states of its production trace (§6.4) 200 jobs over two weeks, Qwen 3B-32B,
4k-32k maximum responses (mean 12.1k), a mean job duration of 27.9 h, SLOs ~ U(1, 2) and
Solo-D on "1:1 rollout and training GPUs"; those are inputs of the generator
(``rollmux/traces/workloads.yaml``). It does not state three inputs that the costs of its
baselines depend on. This fit sets them, each mainly by one target of the declared
calibration set (``rollmux/data/calibration.yaml``, fit ``production_mix``):

- ``duration_sigma`` (workloads.yaml ``production.duration_sigma``), the lognormal shape of
  job durations: with the two-week arrival horizon and the 27.9 h mean it sets the span
  from the first arrival to the last Solo-D completion (fact ``production_span_h``,
  370.2 h). The fit takes the smallest shape whose span reaches the target.
- ``multi_node_share`` (the 16+16 weight of every ``production.gpus_by_size`` entry with
  two options), the share of two-node jobs: Solo-D's cost (C05, and C56 in kUSD/h). Each
  job's option comes from one uniform draw, so the cost is a step function of the share;
  the fit scores every plateau and takes the middle of the best one.
- ``colocated_rollout_speedup`` (defaults.yaml ``perf.colocated_rollout_speedup``), veRL's
  rollout speed on its training GPUs over HBM-bandwidth scaling: veRL's cost (C06).

Solo-D and veRL run each job alone, so their costs are closed forms of the trace
(:func:`rollmux.closedform.isolated_trace_costs`). The fit evaluates them on the
generator's own draws (:func:`rollmux.traces.generate.production_draws`), alternating the
first two parameters until neither moves, then solves the third; every value is rounded
to :data:`DECIMALS` decimals, the trace is generated from the rounded values, and the
residuals are computed on that trace. Everything else the pipeline computes from these
inputs (RollMux's cost, its ratios, bubbles, peaks and admission shares) is a prediction.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import itertools
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy.optimize import brentq

from rollmux.closedform import (
    TraceCost,
    isolated_trace_cost,
    isolated_trace_costs,
    pools_from_hardware,
    solo_d,
    verl,
)
from rollmux.experiments.claims import RESIDUAL_COLUMNS, Calibration, load_calibration, load_ledger
from rollmux.hardware import Hardware, load_hardware
from rollmux.io import write_csv, write_text
from rollmux.model import resolve
from rollmux.traces.generate import (
    HOUR_S,
    generate_production,
    gpu_option,
    load_workloads,
    production_draws,
    production_durations_h,
    production_job,
)
from rollmux.traces.writer import trace_text

__all__ = [
    "DECIMALS",
    "FIT",
    "TARGET_QUANTITIES",
    "FitError",
    "ProductionFit",
    "ProductionModel",
    "Target",
    "check_packaged",
    "check_shipped_trace",
    "fit_production_mix",
    "production_targets",
    "run_production_mix",
]

#: Name of the fit in rollmux/data/calibration.yaml.
FIT = "production_mix"
#: The replay quantity each target of the fit is: (policy, quantity of its TraceCost).
TARGET_QUANTITIES: dict[str, tuple[str, str]] = {
    "production_span_h": ("solo-d", "span_h"),
    "C05": ("solo-d", "usd_per_h"),
    "C56": ("solo-d", "kusd_per_h"),
    "C06": ("verl", "usd_per_h"),
}
_UNITS = {"span_h": "h", "usd_per_h": "USD/h", "kusd_per_h": "kUSD/h"}
#: Decimals of every fitted value (as written into workloads.yaml and defaults.yaml).
DECIMALS = 4
# Duration shapes scanned for the first span crossing (then refined by root finding).
_SIGMA_GRID = np.round(np.arange(0.0, 3.0 + 1e-9, 0.01), 2)
_SPEEDUP_BRACKET = (0.05, 20.0)
_MAX_ROUNDS = 20
WORKLOADS_FILE = "src/rollmux/traces/workloads.yaml"
HARDWARE_FILE = "src/rollmux/data/defaults.yaml"


class FitError(ValueError):
    """The fit cannot reach a target, or the shipped inputs are not the fitted ones."""


@dataclass(frozen=True)
class Target:
    """One target of the fit: the paper's number, its precision and what it measures."""

    target: str
    unit: str
    paper: float
    precision: float  # half a unit of the last digit the paper states
    policy: str
    quantity: str

    def ours(self, costs: Mapping[str, TraceCost]) -> float:
        """Our value of this target from closed-form trace costs by policy.

        An hourly cost is the policy's total over the trace's span (Solo-D's: every job at
        its solo speed), as the claims read it (docs/metrics.md, "Cost ratio": the paper
        divides every policy's total by one span, $188.8k / $510/h = 370.2 h).
        """
        cost = costs[self.policy]
        if self.quantity == "span_h":
            return cost.span_h
        per_h = cost.total_usd / costs["solo-d"].span_h
        if self.quantity == "kusd_per_h":
            return per_h / 1000.0
        return per_h

    def score(self, costs: Mapping[str, TraceCost]) -> float:
        """Squared residual in units of the paper's precision."""
        return ((self.ours(costs) - self.paper) / self.precision) ** 2


def _precision(text: str) -> float:
    """Half a unit of the last digit of a number as the paper writes it ("0.94" -> 0.005)."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals


def production_targets(calibration: Calibration, ledger: pd.DataFrame) -> tuple[Target, ...]:
    """The targets of fit ``production_mix``: paper values from the ledger and the facts.

    FitError when the fit is not declared, a target has no known quantity or the wrong
    unit, or the span, a Solo-D cost or veRL's cost is missing.
    """
    fit = calibration.fits.get(FIT)
    if fit is None:
        raise FitError(f"calibration.yaml declares no fit {FIT!r}")
    claims = ledger.set_index("claim_id")
    targets = []
    for target in fit.targets:
        if target not in TARGET_QUANTITIES:
            raise FitError(f"fits.{FIT}.targets: {target!r} measures nothing this fit "
                           f"computes; known: {', '.join(TARGET_QUANTITIES)}")
        policy, quantity = TARGET_QUANTITIES[target]
        if target in claims.index:
            text, unit = str(claims.at[target, "paper_value"]), str(claims.at[target, "unit"])
        else:
            fact = calibration.facts[target]
            text, unit = str(fact["value"]), str(fact.get("unit", ""))
        if unit != _UNITS[quantity]:
            raise FitError(f"fits.{FIT}.targets: {target} is in {unit!r}, the fit computes "
                           f"{quantity} in {_UNITS[quantity]!r}")
        targets.append(Target(target, unit, float(text), _precision(text), policy, quantity))
    quantities = {(t.policy, t.quantity) for t in targets}
    needed = {("solo-d", "span_h"), ("verl", "usd_per_h")}
    if not needed <= quantities or not quantities & {("solo-d", "usd_per_h"),
                                                     ("solo-d", "kusd_per_h")}:
        raise FitError(f"fits.{FIT}.targets must include the span, a Solo-D cost and veRL's "
                       f"cost; got {list(fit.targets)}")
    return tuple(targets)


# Closed forms of a job on one GPU option, columns of ProductionModel.table (veRL at
# co-located speed-up 1: its rollout part is divided by the speed-up in evaluate).
_COLUMNS = ("solo_iteration_s", "solo_usd_per_h", "verl_rollout_s", "verl_rest_s",
            "verl_usd_per_h")


def _two_option_entry(entry: Mapping[str, Any], share: float) -> dict[str, Any]:
    """A gpus_by_size entry with the last of its two options at weight ``share``."""
    if len(entry["options"]) == 1:
        return dict(entry)
    if len(entry["options"]) != 2:
        raise FitError(f"gpus_by_size entry {dict(entry)!r}: the fit varies entries of one or "
                       "two options only")
    return {**entry, "weights": [round(1.0 - share, 12), share]}


class ProductionModel:
    """The production generator's draws with every job's closed forms on each GPU option.

    ``evaluate`` gives Solo-D's and veRL's trace costs for any duration shape, two-node
    share and co-located speed-up without regenerating the trace; it builds the same jobs
    as :func:`rollmux.traces.generate.generate_production`.
    """

    def __init__(self, seed: int, spec: Mapping[str, Any], hw: Hardware) -> None:
        """Draw the trace once and tabulate each job's closed forms on its size's options."""
        self.spec = spec
        self.draws = production_draws(seed, spec)
        self.entries = [spec["gpus_by_size"][str(size)] for size in self.draws.sizes_b]
        widest = max(len(entry["options"]) for entry in self.entries)
        # table[column][job, option]: closed forms of each job on each option of its size.
        self.table = {c: np.full((self.draws.jobs, widest), np.nan) for c in _COLUMNS}
        self.option_index: list[dict[tuple[int, int], int]] = []
        for i, entry in enumerate(self.entries):
            index: dict[tuple[int, int], int] = {}
            for k, option in enumerate(entry["options"]):
                gpus = (int(option[0]), int(option[1]))
                job = production_job(i, self.draws, gpus, spec, hw)
                pools = dataclasses.replace(
                    pools_from_hardware(hw, job.rollout_gpu_type, job.train_gpu_type),
                    colocated_rollout_speedup=1.0,
                )
                phases = resolve(job, hw).phases
                solo, coloc = solo_d(phases, pools), verl(phases, pools)
                values = (solo.iteration_s, solo.cost_usd_per_h, coloc.rollout_s,
                          coloc.iteration_s - coloc.rollout_s, coloc.cost_usd_per_h)
                for column, value in zip(_COLUMNS, values, strict=True):
                    self.table[column][i, k] = value
                index[gpus] = k
            self.option_index.append(index)
        self._picks: dict[float, tuple[tuple[tuple[int, int], ...], np.ndarray]] = {}
        # A job's option flips where its uniform meets the first option's share: the edges
        # of the plateaus of every cost as a function of the two-node share.
        self.share_edges = sorted({0.0, 1.0} | {
            1.0 - float(u) for u, entry in zip(self.draws.gpu_u, self.entries, strict=True)
            if len(entry["options"]) == 2
        })

    def _pick(self, share: float) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
        """Each job's GPUs at two-node share ``share`` (the generator's rule), and its column."""
        if share not in self._picks:
            gpus = tuple(gpu_option(float(u), _two_option_entry(entry, share))
                         for u, entry in zip(self.draws.gpu_u, self.entries, strict=True))
            column = np.array([index[g] for index, g in zip(self.option_index, gpus,
                                                            strict=True)])
            self._picks[share] = (gpus, column)
        return self._picks[share]

    def choices(self, share: float) -> tuple[tuple[int, int], ...]:
        """Each job's (rollout, training) GPUs at two-node share ``share``."""
        return self._pick(share)[0]

    def evaluate(self, sigma: float, share: float, speedup: float) -> dict[str, TraceCost]:
        """Solo-D's and veRL's closed-form trace costs for the three fitted inputs."""
        rows = np.arange(self.draws.jobs)
        cols = self._pick(share)[1]
        pick = {c: self.table[c][rows, cols] for c in _COLUMNS}
        durations_s = HOUR_S * production_durations_h(self.draws.duration_z,
                                                      {**self.spec, "duration_sigma": sigma})
        # iterations_for, vectorised: whole iterations, half to even (as Python's round).
        iterations = np.maximum(1.0, np.rint(durations_s / pick["solo_iteration_s"]))
        verl_iteration_s = pick["verl_rollout_s"] / speedup + pick["verl_rest_s"]
        arrivals = self.draws.arrivals_s
        return {
            "solo-d": isolated_trace_cost(arrivals, iterations * pick["solo_iteration_s"],
                                          pick["solo_usd_per_h"]),
            "verl": isolated_trace_cost(arrivals, iterations * verl_iteration_s,
                                        pick["verl_usd_per_h"]),
        }


@dataclass(frozen=True)
class ProductionFit:
    """The fitted inputs, the trace generated from them, its closed-form costs, residuals."""

    seed: int
    duration_sigma: float
    multi_node_share: float
    colocated_rollout_speedup: float
    workloads: dict[str, Any]
    costs: dict[str, TraceCost]
    trace_text: str
    residuals: pd.DataFrame
    rounds: int

    def document(self, trace_path: str) -> dict[str, Any]:
        """The fitted.yaml document: values, where they live, closed-form costs, trace hash."""
        spec = self.workloads["production"]
        sizes = {size: {"weights": list(entry["weights"])}
                 for size, entry in spec["gpus_by_size"].items() if len(entry["options"]) == 2}
        return {
            "fit": FIT,
            "seed": self.seed,
            "parameters": {
                "duration_sigma": self.duration_sigma,
                "multi_node_share": self.multi_node_share,
                "colocated_rollout_speedup": self.colocated_rollout_speedup,
            },
            "workloads": {"file": WORKLOADS_FILE,
                          "production": {"duration_sigma": self.duration_sigma,
                                         "gpus_by_size": sizes}},
            "hardware": {"file": HARDWARE_FILE,
                         "perf.colocated_rollout_speedup": self.colocated_rollout_speedup},
            "closed_form": {
                policy: {"usd_per_h": round(cost.usd_per_h, 6),
                         "total_usd": round(cost.total_usd, 3),
                         "span_h": round(cost.span_h, 6)}
                for policy, cost in self.costs.items()
            },
            "fit_rounds": self.rounds,
            "trace": {"path": trace_path,
                      "sha256": hashlib.sha256(self.trace_text.encode("utf-8")).hexdigest()},
        }


def _first_root(f: Callable[[float], float], grid: Sequence[float], what: str) -> float:
    """The smallest root of ``f`` on ``grid``: the first sign change, refined by brentq."""
    value = f(grid[0])
    if value >= 0:
        raise FitError(f"{what}: already reached at {grid[0]} (value {value:+.4g})")
    for low, high in itertools.pairwise(grid):
        value = f(high)
        if value >= 0:
            return float(brentq(f, low, high, xtol=1e-12))
    raise FitError(f"{what}: not reached on [{grid[0]}, {grid[-1]}] (last {value:+.4g})")


def _solve_sigma(model: ProductionModel, share: float, span: Target) -> float:
    """The smallest duration shape whose Solo-D span reaches the span target."""
    def gap(sigma: float) -> float:
        """Span at ``sigma`` minus the target (h)."""
        return model.evaluate(sigma, share, 1.0)["solo-d"].span_h - span.paper

    return _first_root(gap, list(_SIGMA_GRID), f"span {span.target} = {span.paper} h by "
                       "production.duration_sigma")


def _solve_share(model: ProductionModel, sigma: float, solo: Sequence[Target]) -> float:
    """The middle of the two-node-share plateau whose Solo-D cost best meets its targets."""
    edges = model.share_edges
    best_share, best_score = math.nan, math.inf
    for low, high in itertools.pairwise(edges):
        if high - low < 1e-9:
            continue
        share = 0.5 * (low + high)
        costs = model.evaluate(sigma, share, 1.0)
        score = sum(t.score(costs) for t in solo)
        if score < best_score:
            best_share, best_score = share, score
    return best_share


def _round_inside(value: float, choice: Callable[[float], Any]) -> float:
    """``value`` rounded to DECIMALS decimals (more when needed to keep ``choice`` the same)."""
    for decimals in range(DECIMALS, 13):
        rounded = round(value, decimals)
        if choice(rounded) == choice(value):
            return rounded
    return value


def _targets_by_policy(targets: Sequence[Target]) -> tuple[Target, list[Target], Target]:
    """(span target, Solo-D cost targets, veRL cost target)."""
    span = next(t for t in targets if t.quantity == "span_h")
    solo = [t for t in targets if t.policy == "solo-d" and t.quantity != "span_h"]
    coloc = next(t for t in targets if t.policy == "verl")
    return span, solo, coloc


def fit_production_mix(
    seed: int,
    targets: Sequence[Target],
    workloads: Mapping[str, Any] | None = None,
    hw: Hardware | None = None,
) -> ProductionFit:
    """Fit the duration shape, two-node share and co-located speed-up to ``targets``."""
    base = copy.deepcopy(dict(workloads or load_workloads()))
    hw = hw or load_hardware()
    spec = base["production"]
    span, solo, coloc = _targets_by_policy(targets)
    model = ProductionModel(seed, spec, hw)
    share, rounds = 0.0, 0
    sigma = _solve_sigma(model, share, span)
    while rounds < _MAX_ROUNDS:
        rounds += 1
        new_share = _solve_share(model, sigma, solo)
        new_sigma = _solve_sigma(model, new_share, span)
        settled = (model.choices(new_share) == model.choices(share)
                   and abs(new_sigma - sigma) <= 1e-12)
        share, sigma = new_share, new_sigma
        if settled:
            break
    if not settled:
        raise FitError(f"fit {FIT}: duration shape and two-node share still move after "
                       f"{_MAX_ROUNDS} rounds")
    sigma = round(sigma, DECIMALS)
    share = _round_inside(share, model.choices)

    def verl_gap(speedup: float) -> float:
        """veRL's cost at ``speedup`` minus its target (in the target's unit)."""
        return coloc.ours(model.evaluate(sigma, share, speedup)) - coloc.paper

    low, high = _SPEEDUP_BRACKET
    if verl_gap(low) * verl_gap(high) > 0:
        raise FitError(f"{coloc.target} = {coloc.paper} {coloc.unit}: veRL's cost does not "
                       f"reach it for a co-located speed-up in [{low}, {high}]")
    speedup = round(float(brentq(verl_gap, low, high, xtol=1e-12)), DECIMALS)

    fitted = copy.deepcopy(base)
    fitted_spec = fitted["production"]
    fitted_spec["duration_sigma"] = sigma
    fitted_spec["gpus_by_size"] = {
        size: _rounded_entry(_two_option_entry(entry, share))
        for size, entry in spec["gpus_by_size"].items()
    }
    fitted_hw = dataclasses.replace(
        hw, perf=dataclasses.replace(hw.perf, colocated_rollout_speedup=speedup))
    generated = generate_production(seed, fitted_hw, fitted)
    costs = isolated_trace_costs([resolve(job, fitted_hw) for job in generated.jobs])
    expected = model.evaluate(sigma, share, speedup)
    for policy, cost in costs.items():
        if not math.isclose(cost.usd_per_h, expected[policy].usd_per_h, rel_tol=1e-9):
            raise FitError(f"internal: the fit's {policy} cost {expected[policy].usd_per_h} is "
                           f"not the generated trace's {cost.usd_per_h}")
    return ProductionFit(
        seed=seed,
        duration_sigma=sigma,
        multi_node_share=share,
        colocated_rollout_speedup=speedup,
        workloads=fitted,
        costs=costs,
        trace_text=trace_text(generated.jobs, generated.comments),
        residuals=_residuals(targets, costs),
        rounds=rounds,
    )


def _rounded_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A gpus_by_size entry with weights as written in workloads.yaml (DECIMALS+ decimals)."""
    weights = [float(w) for w in entry["weights"]]
    if len(weights) == 2:
        share = weights[1]
        weights = [round(1.0 - share, 12), share]
    return {"options": [list(o) for o in entry["options"]], "weights": weights}


_NOTES = {
    "span_h": "span (first arrival to last completion)",
    "usd_per_h": "total cost / the trace's span (Solo-D's)",
    "kusd_per_h": "total cost / the trace's span (Solo-D's), in thousands",
}


def _residuals(targets: Sequence[Target], costs: Mapping[str, TraceCost]) -> pd.DataFrame:
    """One row per target: paper, ours (closed form on the generated trace), residual."""
    rows = []
    for t in targets:
        ours = t.ours(costs)
        rows.append({
            "target": t.target,
            "unit": t.unit,
            "paper": f"{t.paper:g}",
            "fitted": f"{ours:.6g}",
            "residual": f"{100.0 * (ours / t.paper - 1.0):+.3f}%",
            "note": f"{'Solo-D' if t.policy == 'solo-d' else 'veRL'} {_NOTES[t.quantity]}, "
                    "closed form (expected phase times) on the generated trace",
        })
    return pd.DataFrame(rows, columns=list(RESIDUAL_COLUMNS))


def relative_residual(text: str) -> float:
    """A residuals.csv ``residual`` cell ("+0.012%") as a fraction (0.00012)."""
    return float(text.rstrip("%")) / 100.0


def check_packaged(
    fit: ProductionFit,
    workloads: Mapping[str, Any],
    hw: Hardware,
    workloads_file: str = WORKLOADS_FILE,
    hardware_file: str = HARDWARE_FILE,
) -> list[str]:
    """Problems where the packaged inputs are not the fitted values (empty: in step)."""
    problems = []
    spec = workloads["production"]
    fitted = fit.workloads["production"]
    if float(spec["duration_sigma"]) != fit.duration_sigma:
        problems.append(f"{workloads_file}: production.duration_sigma is "
                        f"{spec['duration_sigma']}; the fit gives {fit.duration_sigma}")
    for size, entry in fitted["gpus_by_size"].items():
        shipped = [float(w) for w in spec["gpus_by_size"][size]["weights"]]
        if shipped != entry["weights"]:
            problems.append(f"{workloads_file}: production.gpus_by_size.\"{size}\".weights is "
                            f"{shipped}; the fit gives {entry['weights']}")
    if hw.perf.colocated_rollout_speedup != fit.colocated_rollout_speedup:
        problems.append(f"{hardware_file}: perf.colocated_rollout_speedup.value is "
                        f"{hw.perf.colocated_rollout_speedup}; the fit gives "
                        f"{fit.colocated_rollout_speedup}")
    return problems


def check_shipped_trace(fit: ProductionFit, shipped: Path | str) -> list[str]:
    """A problem when the shipped trace is not byte for byte the trace of the fitted inputs."""
    path = Path(shipped)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [f"{path}: cannot read the shipped trace ({exc})"]
    if text == fit.trace_text:
        return []
    ours, theirs = fit.trace_text.splitlines(), text.splitlines()
    line = next((k + 1 for k, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                min(len(ours), len(theirs)) + 1)
    return [f"{path}: not the trace generated from the fitted inputs (first difference on "
            f"line {line}); refresh it with: rollmux trace generate production --seed "
            f"{fit.seed} --out {path}"]


def run_production_mix(
    out_fitted: Path | str,
    out_residuals: Path | str,
    out_trace: Path | str,
    shipped_trace: Path | str,
    seed: int,
    tolerance: float,
    workloads_path: Path | str | None = None,
    hardware_path: Path | str | None = None,
    calibration_path: Path | str | None = None,
    ledger_path: Path | str | None = None,
) -> ProductionFit:
    """Fit, check the packaged inputs, shipped trace and residuals, then write the outputs.

    Raises FitError listing every problem (and writes nothing) when the packaged values or
    the shipped trace are not the fitted ones, or a residual exceeds ``tolerance``
    (relative) plus the paper's own rounding of that target.
    """
    ledger = load_ledger(ledger_path)
    targets = production_targets(load_calibration(ledger, calibration_path), ledger)
    workloads = load_workloads(workloads_path)
    hw = load_hardware(hardware_path)
    fit = fit_production_mix(seed, targets, workloads, hw)
    problems = check_packaged(fit, workloads, hw, str(workloads_path or WORKLOADS_FILE),
                              str(hardware_path or HARDWARE_FILE))
    problems += check_shipped_trace(fit, shipped_trace)
    for target, rec in zip(targets, fit.residuals.to_dict("records"), strict=True):
        allowed = tolerance + target.precision / abs(target.paper)
        if abs(relative_residual(rec["residual"])) > allowed:
            problems.append(f"target {rec['target']}: fitted {rec['fitted']} {rec['unit']} is "
                            f"{rec['residual']} from the paper's {rec['paper']}, beyond the "
                            f"tolerance {100 * allowed:.3g}% (its own rounding included)")
    if problems:
        raise FitError(f"fit {FIT}: " + "\n  ".join(["the shipped inputs are not the fitted "
                                                     "ones:", *problems]))
    write_text(out_trace, fit.trace_text)
    write_csv(fit.residuals, out_residuals)
    header = (f"# Fit {FIT} (src/rollmux/data/calibration.yaml): inputs of the production "
              "trace fitted to the paper's\n# Solo-D and veRL costs and the trace span. "
              "Written by rollmux.experiments.calibration.\n")
    write_text(out_fitted, header + yaml.safe_dump(fit.document(str(out_trace)),
                                                   sort_keys=False))
    return fit


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rollmux.experiments.calibration``: run fit production_mix, print its values."""
    parser = argparse.ArgumentParser(prog="python -m rollmux.experiments.calibration",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path(f"results/calibration/{FIT}"))
    parser.add_argument("--seed", type=int, default=0, help="seed of the production trace")
    parser.add_argument("--shipped", type=Path, default=Path("traces/production-default.csv"))
    parser.add_argument("--tolerance", type=float, default=0.005,
                        help="largest relative residual accepted")
    args = parser.parse_args(argv)
    try:
        fit = run_production_mix(args.out_dir / "fitted.yaml", args.out_dir / "residuals.csv",
                                 args.out_dir / "production-default.csv", args.shipped,
                                 args.seed, args.tolerance)
    except (FitError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"duration_sigma {fit.duration_sigma}, multi_node_share {fit.multi_node_share}, "
          f"colocated_rollout_speedup {fit.colocated_rollout_speedup}")
    print(fit.residuals.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
