"""Fit ``microbench_types``: the unread Table 3 sizes of job types A, C and E, to facts only.

Table 3 of the paper (the micro-benchmark job types A-E) is an image; its text (§6.2) gives
Type-D ``T_roll ~ 2.5 T_train`` and Type-E ``T_roll ~ 6 T_train``, the GPUs of C and D, and
Table 4's bounds. Our job types (``rollmux/data/microbench.yaml``) are estimates; the sizes
that decide how the scenarios pack are set here from the paper's numbers and words that
describe the jobs, never from a RollMux result (declared fit ``microbench_types`` of
``rollmux/data/calibration.yaml``; its targets are facts of the text only):

- ``A.train_s``: "two jobs with similar structures (Type-A), an ideal case in which jobs
  are fully complementary ... keeps both rollout and training clusters fully utilized"
  (fact ``temporal_a_fully_complementary``): A's training with its sync and switch lasts
  as long as its rollout with its switch, so the temporal group is full.
- ``C.rollout_s``: "WEAVE identifies idle resources created by the large job's rollout
  phase and 'packs' the two smaller jobs into these bubbles" (fact
  ``spatial_d_trainings_in_c_rollout``): C's expected rollout is the two D trainings it
  holds on C's training nodes (training, sync and warm switch; closed form), rounded up.
- ``E.rollout_s = 6 E.train_s`` (fact ``microbench_e_rollout_over_train``), E's training
  kept at our estimate.

C's training and E's size stay our estimates (microbench.yaml): Table 4's "only 1.6-9.8%
overhead over solo execution" (C23) is a RollMux result, so it is predicted, never fitted
(issue 19 item 4). :func:`e_train_roots` still gives the E sizes at which the train mux's
largest overhead would meet the paper's 9.8% (what it would take,
:mod:`rollmux.experiments.microbench_evidence`).

Worst-case times keep the estimate rule of microbench.yaml (rollout 1.25x, training 1.5x
the expected). The overheads are those of :func:`rollmux.experiments.microbench_sim.table4`
(stochastic phases, seed and iterations of the fit); every value is rounded to
:data:`DECIMALS` decimals, on the side that keeps the constraint where there is one. The
fit fails, naming the value, when the packaged microbench.yaml is not the fitted one.
Everything the pipeline then computes from the job types (Fig. 10's gains, Table 4, the
ideal, Fig. 12) is a prediction.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from scipy.optimize import brentq

from rollmux.experiments.claims import RESIDUAL_COLUMNS, load_calibration, load_ledger
from rollmux.experiments.microbench import build_scenario
from rollmux.experiments.microbench_sim import table4
from rollmux.hardware import Hardware, load_hardware
from rollmux.io import write_csv, write_text
from rollmux.jobtypes import load_microbench

__all__ = [
    "DECIMALS",
    "FIT",
    "FITTED_FIELDS",
    "MicrobenchFit",
    "MicrobenchTargets",
    "check_packaged",
    "e_train_roots",
    "fit_microbench_types",
    "microbench_targets",
    "run_microbench_types",
    "with_sizes",
]

#: Name of the fit in rollmux/data/calibration.yaml.
FIT = "microbench_types"
#: Table 4's overhead claim (a RollMux result: predicted, never fitted), and the facts the
#: fit holds.
CAP_CLAIM = "C23"
FACT_PACKING = "spatial_d_trainings_in_c_rollout"
FACT_E_RATIO = "microbench_e_rollout_over_train"
FACT_COMPLEMENTARY = "temporal_a_fully_complementary"
#: Worst case over expected of the fitted types (the estimate rule of microbench.yaml).
WORST_ROLLOUT = 1.25
WORST_TRAIN = 1.5
#: The job-type fields this fit sets (with their worst cases), by type.
FITTED_FIELDS: dict[str, tuple[str, ...]] = {"A": ("train_s",),
                                             "C": ("rollout_s",),
                                             "E": ("rollout_s",)}
#: Decimals of every fitted value (seconds, as written into microbench.yaml).
DECIMALS = 1
MICROBENCH_FILE = "src/rollmux/data/microbench.yaml"
_STEP = 10.0**-DECIMALS


class FitError(ValueError):
    """The fit cannot meet a target, or the packaged job types are not the fitted ones."""


@dataclass(frozen=True)
class MicrobenchTargets:
    """The paper's facts the fit uses, and Table 4's overhead bounds (%, not fitted: read
    by the what-it-would-take experiments)."""

    overhead_low_pct: float
    overhead_high_pct: float
    d_trainings_in_c_rollout: float
    e_rollout_over_train: float
    a_train_over_rollout: float


def microbench_targets(ledger: pd.DataFrame, calibration_path: Path | str | None = None
                       ) -> MicrobenchTargets:
    """The facts of fit ``microbench_types`` and Table 4's bounds (C23, from the ledger).

    FitError when the fit is not declared or does not list exactly its three facts (C23 is
    a RollMux result and must not be a target).
    """
    calibration = load_calibration(ledger, calibration_path)
    fit = calibration.fits.get(FIT)
    if fit is None:
        raise FitError(f"calibration.yaml declares no fit {FIT!r}")
    needed = {FACT_PACKING, FACT_E_RATIO, FACT_COMPLEMENTARY}
    if set(fit.targets) != needed:
        raise FitError(f"fits.{FIT}.targets must be {sorted(needed)}, got {list(fit.targets)}")
    claim = ledger.set_index("claim_id").loc[CAP_CLAIM]
    if claim["unit"] != "%" or claim["kind"] != "range":
        raise FitError(f"{CAP_CLAIM}: the fit needs a range in %, got {claim['kind']} in "
                       f"{claim['unit']}")
    return MicrobenchTargets(
        overhead_low_pct=float(claim["paper_low"]),
        overhead_high_pct=float(claim["paper_high"]),
        d_trainings_in_c_rollout=float(calibration.facts[FACT_PACKING]["value"]),
        e_rollout_over_train=float(calibration.facts[FACT_E_RATIO]["value"]),
        a_train_over_rollout=float(calibration.facts[FACT_COMPLEMENTARY]["value"]),
    )


def with_sizes(definitions: Mapping[str, Any], sizes: Mapping[str, tuple[float, float]]
               ) -> dict[str, Any]:
    """``definitions`` with job types' expected (rollout_s, train_s) replaced, worst cases
    by the estimate rule (rollout x :data:`WORST_ROLLOUT`, training x :data:`WORST_TRAIN`)."""
    out = copy.deepcopy(dict(definitions))
    for name, (rollout_s, train_s) in sizes.items():
        entry = out["job_types"][name]
        entry.update(rollout_s=rollout_s, train_s=train_s,
                     rollout_max_s=round(WORST_ROLLOUT * rollout_s, DECIMALS + 2),
                     train_max_s=round(WORST_TRAIN * train_s, DECIMALS + 2))
    return out


def _round_up(x: float) -> float:
    return round(math.ceil(x / _STEP - 1e-9) * _STEP, DECIMALS)


def _round_down(x: float) -> float:
    return round(math.floor(x / _STEP + 1e-9) * _STEP, DECIMALS)


def _chains_s(name: str, definitions: Mapping[str, Any], hw: Hardware) -> list[float]:
    """Each job's closed-form chain in a scenario: effective rollout plus effective training."""
    group = build_scenario(name, hw, definitions).group
    rollout, train = group.effective_phases_s()
    return [r + t for r, t in zip(rollout, train, strict=True)]


def _max_overhead(name: str, definitions: Mapping[str, Any], hw: Hardware, seed: int,
                  iterations: int) -> float:
    """The largest Table 4 overhead (fraction) of a scenario's jobs."""
    t4 = table4(seed, iterations, hw, names=(name,), definitions=definitions)
    return float(t4["overhead_vs_solo"].max())


def _root(f: Callable[[float], float], low: float, high: float, what: str) -> float:
    """The root of ``f`` on [low, high] (brentq); FitError when the ends do not bracket it."""
    f_low, f_high = f(low), f(high)
    if f_low * f_high > 0:
        raise FitError(f"{what}: no root on [{low:g}, {high:g}] (values {f_low:+.4g}, "
                       f"{f_high:+.4g})")
    return float(brentq(f, low, high, xtol=1e-6))


@dataclass(frozen=True)
class MicrobenchFit:
    """The fitted sizes of A, C and E, the job types with them, Table 4 and the residuals.

    """

    seed: int
    iterations: int
    sizes: dict[str, tuple[float, float]]
    definitions: dict[str, Any]
    table4: pd.DataFrame
    residuals: pd.DataFrame

    def document(self) -> dict[str, Any]:
        """The fitted.yaml document: values, where they live, the seed and iterations."""
        return {
            "fit": FIT,
            "seed": self.seed,
            "iterations": self.iterations,
            "file": MICROBENCH_FILE,
            "job_types": {
                name: {key: self.definitions["job_types"][name][key]
                       for key in ("rollout_s", "train_s", "rollout_max_s", "train_max_s")}
                for name in self.sizes
            },
        }


def fit_microbench_types(
    seed: int,
    iterations: int,
    targets: MicrobenchTargets,
    definitions: Mapping[str, Any] | None = None,
    hw: Hardware | None = None,
) -> MicrobenchFit:
    """Fit A's training, C's rollout and E's rollout to the facts (module docstring)."""
    hw = hw or load_hardware()
    base = copy.deepcopy(dict(definitions or load_microbench()))
    types = base["job_types"]

    # A's effective training (with sync and switch) is its effective rollout: a full group.
    a_rollout = float(types["A"]["rollout_s"])
    rollout, train = build_scenario("temporal", hw, with_sizes(base, {"A": (a_rollout, 1.0)})
                                    ).group.effective_phases_s()
    a_train = round(targets.a_train_over_rollout * rollout[0] - (train[0] - 1.0), DECIMALS)
    if a_train <= 0:
        raise FitError(f"A.train_s: A's rollout {a_rollout} s is shorter than its sync")
    base = with_sizes(base, {"A": (a_rollout, a_train)})

    # C's rollout holds the D trainings on its training nodes (closed form, expected).
    spatial = build_scenario("spatial", hw, base)
    _, eff_train = spatial.group.effective_phases_s()
    d_jobs = [j for j, job in enumerate(spatial.jobs) if job.job_id.startswith("D")]
    if len(d_jobs) != targets.d_trainings_in_c_rollout:
        raise FitError(f"scenario spatial has {len(d_jobs)} D jobs; fact {FACT_PACKING} says "
                       f"{targets.d_trainings_in_c_rollout:g}")
    c_rollout = _round_up(sum(eff_train[j] for j in d_jobs))

    c_train = float(types["C"]["train_s"])  # our estimate: C23 is predicted, not fitted
    ratio = targets.e_rollout_over_train
    e_train = float(types["E"]["train_s"])  # our estimate; its rollout from the fact
    sizes = {"A": (a_rollout, a_train), "C": (c_rollout, c_train),
             "E": (round(ratio * e_train, DECIMALS + 2), e_train)}
    fitted = with_sizes(base, sizes)
    t4 = table4(seed, iterations, hw, definitions=fitted)
    return MicrobenchFit(seed, iterations, sizes, fitted, t4, _residuals(targets, fitted, hw))


def e_train_roots(
    seed: int,
    iterations: int,
    targets: MicrobenchTargets,
    definitions: Mapping[str, Any],
    hw: Hardware,
) -> tuple[float, float]:
    """E's two training times at which the train mux's largest overhead meets Table 4's
    upper bound (what it would take; not a fit: C23 is predicted).

    The first: E smaller than the D jobs' cycle, E waits (its overhead at the cap, rounded
    up); the second: E's chain sets the cycle, the D jobs wait (rounded down).
    """
    cap = targets.overhead_high_pct / 100.0
    ratio = targets.e_rollout_over_train

    def gap(e_train: float) -> float:
        """Largest train-mux overhead at E's training ``e_train`` minus the cap."""
        defs = with_sizes(definitions, {"E": (ratio * e_train, e_train)})
        return _max_overhead("train", defs, hw, seed, iterations) - cap

    def chain_gap(e_train: float) -> float:
        """E's closed-form chain minus the longest D chain."""
        chains = _chains_s("train", with_sizes(definitions, {"E": (ratio * e_train, e_train)}),
                           hw)
        return chains[-1] - max(chains[:-1])

    what = f"E.train_s at the {CAP_CLAIM} cap {targets.overhead_high_pct}%"
    equal = _root(chain_gap, 1.0, 100.0 * float(definitions["job_types"]["D"]["train_s"]),
                  "E's chain meeting the D chains")
    waits = _round_up(_root(gap, 0.25 * equal, equal, what + " (E waits)"))
    sets_cycle = _round_down(_root(gap, equal, 4.0 * equal, what + " (E sets the cycle)"))
    return waits, sets_cycle


def _residuals(targets: MicrobenchTargets, definitions: Mapping[str, Any],
               hw: Hardware) -> pd.DataFrame:
    """One row per number the fit uses (its three facts): paper, ours after the fit."""
    spatial = build_scenario("spatial", hw, definitions)
    _, eff_train = spatial.group.effective_phases_s()
    d_train = [eff_train[j] for j, job in enumerate(spatial.jobs) if job.job_id.startswith("D")]
    e = definitions["job_types"]["E"]
    held = float(definitions["job_types"]["C"]["rollout_s"]) / (sum(d_train) / len(d_train))
    temporal = build_scenario("temporal", hw, definitions).group
    rollout, train = temporal.effective_phases_s()
    rows = [
        (FACT_PACKING, "trainings", targets.d_trainings_in_c_rollout, held,
         "C's expected rollout over one D training on C's nodes (training, sync, switch)"),
        (FACT_E_RATIO, "x", targets.e_rollout_over_train,
         float(e["rollout_s"]) / float(e["train_s"]), "E.rollout_s / E.train_s"),
        (FACT_COMPLEMENTARY, "x", targets.a_train_over_rollout, train[0] / rollout[0],
         "A's training with sync and switch over its rollout with switch (temporal mux)"),
    ]
    out = []
    for target, unit, paper, ours, note in rows:
        residual = (f"{ours - paper:+.3f} pp" if unit == "%"
                    else f"{100.0 * (ours / paper - 1.0):+.3f}%")
        out.append({"target": target, "unit": unit, "paper": f"{paper:g}",
                    "fitted": f"{ours:.6g}", "residual": residual, "note": note})
    return pd.DataFrame(out, columns=list(RESIDUAL_COLUMNS))


def check_packaged(fit: MicrobenchFit, definitions: Mapping[str, Any],
                   microbench_file: str = MICROBENCH_FILE) -> list[str]:
    """Problems where the packaged job types are not the fitted values (empty: in step)."""
    problems = []
    for name, values in fit.document()["job_types"].items():
        shipped = definitions["job_types"][name]
        for key, value in values.items():
            if float(shipped.get(key, math.nan)) != float(value):
                problems.append(f"{microbench_file}: job_types.{name}.{key} is "
                                f"{shipped.get(key)}; the fit gives {value}")
    return problems


def run_microbench_types(
    out_fitted: Path | str,
    out_residuals: Path | str,
    seed: int,
    iterations: int,
    microbench_path: Path | str | None = None,
    hardware_path: Path | str | None = None,
    calibration_path: Path | str | None = None,
    ledger_path: Path | str | None = None,
) -> MicrobenchFit:
    """Fit, check the packaged job types, then write the outputs.

    Raises FitError listing every problem (and writes nothing) when a packaged value is not
    the fitted one.
    """
    ledger = load_ledger(ledger_path)
    targets = microbench_targets(ledger, calibration_path)
    definitions = load_microbench(None if microbench_path is None else str(microbench_path))
    hw = load_hardware(hardware_path)
    fit = fit_microbench_types(seed, iterations, targets, definitions, hw)
    problems = check_packaged(fit, definitions, str(microbench_path or MICROBENCH_FILE))
    if problems:
        raise FitError(f"fit {FIT}: " + "\n  ".join(["the packaged job types are not the "
                                                     "fitted ones:", *problems]))
    write_csv(fit.residuals, out_residuals)
    header = (f"# Fit {FIT} (src/rollmux/data/calibration.yaml): sizes of micro-benchmark "
              "job types A, C and E\n# fitted to the facts of sec. 6.2 (Table 4 is "
              "predicted). Written by rollmux.experiments.microbench_fit.\n")
    write_text(out_fitted, header + yaml.safe_dump(fit.document(), sort_keys=False))
    return fit


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rollmux.experiments.microbench_fit``: run the fit, print its values."""
    parser = argparse.ArgumentParser(prog="python -m rollmux.experiments.microbench_fit",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path(f"results/calibration/{FIT}"))
    parser.add_argument("--seed", type=int, default=0, help="seed of the stochastic phases")
    parser.add_argument("--iterations", type=int, default=60, help="iterations per job")
    args = parser.parse_args(argv)
    try:
        fit = run_microbench_types(args.out_dir / "fitted.yaml", args.out_dir / "residuals.csv",
                                   args.seed, args.iterations)
    except (FitError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(yaml.safe_dump(fit.document()["job_types"], sort_keys=False), end="")
    print(fit.residuals.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
