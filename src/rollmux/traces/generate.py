"""Seeded trace generators: production (§6.4), simulation (§6.5) and micro-benchmarks (§6.2)."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from scipy.optimize import brentq

from rollmux.errors import echo
from rollmux.io import read_yaml
from rollmux.memo import memoised
from rollmux.traces import philly
from rollmux.traces.stats import PAPER_TARGETS, job_summary

if TYPE_CHECKING:
    import pandas as pd

HOUR_S = 3600.0
WORKLOADS_FILE = "workloads.yaml"
PROFILE_TYPES = {"balanced": "BL", "rollout-heavy": "RH", "train-heavy": "TH"}
SIZE_CLASSES = ("S", "M", "L")
_TILT_LIMIT = 200.0
#: Iterations of each micro-benchmark job (throughput is measured per iteration).
MICROBENCH_ITERATIONS = 100


@dataclass(frozen=True)
class Generated:
    """A generated trace: its jobs, and the statistics it achieved next to the targets."""

    jobs: list[Any]
    targets: dict[str, Any]
    achieved: dict[str, Any]
    comments: tuple[str, ...] = ()


@memoised(1)
def _packaged_workloads() -> dict[str, Any]:
    """The packaged workloads.yaml (all generator estimates)."""
    text = resources.files("rollmux.traces").joinpath(WORKLOADS_FILE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def load_workloads(path: str | Path | None = None) -> dict[str, Any]:
    """Workload estimates from `path`, or the packaged workloads.yaml when None."""
    if path is None:
        return _packaged_workloads()
    document = read_yaml(path)
    if not isinstance(document, dict) or not {"production", "simulation", "profiles"} <= set(
        document
    ):
        raise ValueError(f"{path}: a workloads file needs production, simulation, profiles keys")
    return document


# ------------------------------------------------------------------ sampling helpers


def largest_remainder_counts(weights: Sequence[float], n: int) -> np.ndarray:
    """Integer counts summing to n, proportional to weights (Hamilton's method)."""
    w = np.asarray(weights, dtype=float)
    if n < 0 or w.size == 0 or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"need n >= 0 and non-negative weights with a positive sum, got {weights}")
    quota = w / w.sum() * n
    counts = np.floor(quota).astype(int)
    remainder = quota - counts
    order = np.lexsort((np.arange(w.size), -remainder))  # ties -> lower index first
    counts[order[: n - counts.sum()]] += 1
    return counts


def counts_for_mean(
    values: Sequence[float], weights: Sequence[float], n: int, target: float
) -> np.ndarray:
    """Counts over `values` summing to n whose mean is as close to `target` as a tilt allows.

    The weights are exponentially tilted (w_i e^{θ v_i}, θ solved by root finding) so the
    expected mean equals the target; counts then come from largest remainders and single
    moves between neighbouring values that bring the sample mean closer.
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    if not v.min() <= target <= v.max():
        raise ValueError(f"target mean {target} outside [{v.min()}, {v.max()}]")
    scale = v.max() - v.min() or 1.0

    def gap(theta: float) -> float:
        """Expected mean under tilt theta minus the target."""
        p = w * np.exp(theta * (v - v.mean()) / scale)
        return float((p * v).sum() / p.sum() - target)

    # At the ends of [min, max] no finite tilt reaches the target: take the extreme tilt
    # and let the single moves below finish the job.
    if gap(-_TILT_LIMIT) >= 0:
        theta = -_TILT_LIMIT
    elif gap(_TILT_LIMIT) <= 0:
        theta = _TILT_LIMIT
    else:
        theta = brentq(gap, -_TILT_LIMIT, _TILT_LIMIT)
    p = w * np.exp(theta * (v - v.mean()) / scale)
    counts = largest_remainder_counts(p, n)
    order = np.argsort(v)
    improved = True
    while improved:
        improved = False
        error = abs(float((counts * v).sum()) / n - target)
        for a, b in itertools.pairwise(order):
            for src, dst in ((a, b), (b, a)):
                if counts[src] == 0:
                    continue
                trial = counts.copy()
                trial[src] -= 1
                trial[dst] += 1
                trial_error = abs(float((trial * v).sum()) / n - target)
                if trial_error < error - 1e-12:
                    counts, error, improved = trial, trial_error, True
    return counts


def shuffled_choices(
    rng: np.random.Generator, values: Sequence[Any], counts: Sequence[int] | np.ndarray
) -> list[Any]:
    """Each value repeated counts[i] times, in a seeded random order."""
    pool = [value for value, count in zip(values, counts, strict=True) for _ in range(count)]
    order = rng.permutation(len(pool))
    return [pool[i] for i in order]


def poisson_arrivals_s(rng: np.random.Generator, n: int, horizon_s: float) -> np.ndarray:
    """n Poisson arrivals over [0, horizon): sorted uniforms, shifted so the first is at 0."""
    times = np.sort(rng.uniform(0.0, horizon_s, size=n))
    return np.round(times - times[0], 0)


def match_mean_and_max(samples: np.ndarray, mean: float, maximum: float) -> np.ndarray:
    """Power-transform a positive sample, a*x^b, so its mean and maximum hit the targets.

    Keeps the order (and so the shape) of the empirical sample while fixing the two
    statistics the paper states; b solves max/mean of x^b = maximum/mean.
    """
    x = np.asarray(samples, dtype=float)
    if x.size < 2 or np.any(x <= 0) or np.ptp(x) == 0:
        raise ValueError("need at least two distinct positive samples")
    if not 0 < mean < maximum:
        raise ValueError(f"need 0 < mean < maximum, got {mean}, {maximum}")
    z = x / x.max()
    ratio = maximum / mean

    def gap(b: float) -> float:
        """max/mean of z^b minus the target ratio (z's max is 1)."""
        return float(1.0 / np.mean(z**b) - ratio)

    high = 1.0
    while gap(high) < 0:
        high *= 2.0
        if high > 1e4:
            raise ValueError(f"cannot reach max/mean {ratio:.3g} with {x.size} samples")
    low = 1e-9
    if gap(low) > 0:
        raise ValueError(f"max/mean {ratio:.3g} is below what any transform gives")
    b = brentq(gap, low, high, xtol=1e-14)
    y = z**b
    return y * (mean / y.mean())


# ------------------------------------------------------------------ scale


def arrival_limit_h() -> float:
    """The latest arrival a trace may hold (h): the schema's bound on ``arrival_s``."""
    from rollmux.traces.schema import load_schema

    limit_s = load_schema().column("arrival_s").le
    assert limit_s is not None
    return float(limit_s) / HOUR_S


def scaled_spec(
    spec: Mapping[str, Any], kind: str, jobs: int | None = None, rate_scale: float = 1.0
) -> dict[str, Any]:
    """A generator spec for ``jobs`` jobs arriving ``rate_scale`` times as often.

    Only the job count and the arrival horizon change: the horizon grows with the jobs
    and shrinks with the rate (``horizon_h * jobs / spec jobs / rate_scale``), so the
    mean inter-arrival time is the spec's divided by ``rate_scale``; every other
    statistic is drawn as for the spec. Unchanged values are left as they are (the
    shipped traces keep their bytes). ValueError names the option: a count below 1, a
    rate that is not a finite number > 0, or arrivals spread beyond the schema's range.
    """
    out = dict(spec)
    base_jobs = int(spec["jobs"])
    n = base_jobs if jobs is None else jobs
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"--jobs must be a whole number >= 1, got {jobs!r}")
    if isinstance(rate_scale, bool) or not isinstance(rate_scale, int | float) or not (
        math.isfinite(rate_scale) and rate_scale > 0
    ):
        raise ValueError(f"--rate-scale must be a finite number > 0, got {rate_scale!r}")
    if n == base_jobs and rate_scale == 1:
        return out
    horizon_h = float(spec["horizon_h"]) * n / base_jobs / float(rate_scale)
    limit_h = arrival_limit_h()
    if horizon_h > limit_h:
        least = float(spec["horizon_h"]) * n / base_jobs / limit_h
        raise ValueError(
            f"--jobs {n} at --rate-scale {rate_scale:g} spreads {kind} arrivals over "
            f"{horizon_h:.0f} h, beyond the trace schema's {limit_h:.0f} h (arrival_s <= "
            f"{limit_h * HOUR_S:.0f} s); use --rate-scale {math.ceil(least * 100) / 100:g} "
            "or more"
        )
    out.update(jobs=n, horizon_h=horizon_h)
    return out


#: Paper targets that hold for the paper's job count and rate only (the span, the peak
#: demand): not shown beside a scaled trace's statistics.
SCALE_DEPENDENT_TARGETS = {
    "production": ("span_h", "peak_rollout_gpus_solo", "peak_train_gpus_solo"),
    "simulation": (),
}


def _unscaled_targets(targets: dict[str, Any], kind: str, jobs: int | None,
                      rate_scale: float) -> dict[str, Any]:
    """``targets`` without those a scaled trace is not expected to meet."""
    if jobs is None and rate_scale == 1:
        return targets
    return {k: v for k, v in targets.items() if k not in SCALE_DEPENDENT_TARGETS[kind]}


def _scale_option_text(jobs: int | None, rate_scale: float) -> str:
    """The --jobs / --rate-scale options of a provenance line (empty when not given)."""
    text = "" if jobs is None else f" --jobs {jobs}"
    return text if rate_scale == 1 else f"{text} --rate-scale {rate_scale:g}"


# ------------------------------------------------------------------ job construction


def _rljob(**fields: Any) -> Any:
    """An RLJob from keyword fields (imported late: the job model is a sibling module)."""
    from rollmux.jobs import RLJob

    return RLJob(**fields)


def _phase_times(job: Any, hw: Any) -> Any:
    """The phase model's times for a job (the job resolved on ``hw``)."""
    from rollmux.model import resolve

    return resolve(job, hw).times


def _hardware(hw: Any) -> Any:
    """hw, or the default hardware catalogue."""
    if hw is not None:
        return hw
    from rollmux.hardware import load_hardware

    return load_hardware()


def iterations_for(duration_s: float, solo_iteration_s: float) -> int:
    """Whole iterations that best fill duration_s (at least one)."""
    return max(1, round(duration_s / solo_iteration_s))


def _slo_draws(rng: np.random.Generator, n: int, slo: Sequence[float] | float) -> np.ndarray:
    """SLOs: Uniform(low, high) when given a pair, else a constant; rounded to 1e-3, >= 1."""
    if isinstance(slo, int | float):
        return np.full(n, float(slo))
    low, high = (float(s) for s in slo)
    return np.maximum(1.0, np.round(rng.uniform(low, high, size=n), 3))


@dataclass(frozen=True)
class ProductionDraws:
    """Every random draw of the production generator (§6.4), one entry per job.

    The draws depend on the seed and on the workload keys that shape them (job count,
    arrival horizon, size, length and task shares, turns, SLO and multi-turn ranges), not
    on the duration tail or the GPU-option weights: a fit of those inputs rebuilds the jobs
    from the same draws (:func:`production_durations_h`, :func:`gpu_option`,
    :func:`production_job`).
    """

    arrivals_s: np.ndarray
    sizes_b: tuple[float, ...]
    max_response_tokens: tuple[int, ...]
    tasks: tuple[str, ...]
    duration_z: np.ndarray  # standard normal per job: log job duration before scaling
    slos: np.ndarray
    gpu_u: np.ndarray  # uniform per job: its GPU option by inverse CDF (gpu_option)
    turns: np.ndarray
    rollout_over_train: np.ndarray  # multi-turn rollout / training time

    @property
    def jobs(self) -> int:
        """Number of jobs drawn."""
        return len(self.sizes_b)


def production_draws(seed: int, spec: Mapping[str, Any]) -> ProductionDraws:
    """The random draws of the production trace for ``seed`` and a workloads ``production`` spec."""
    rng = np.random.default_rng(seed)
    n = int(spec["jobs"])
    arrivals = poisson_arrivals_s(rng, n, float(spec["horizon_h"]) * HOUR_S)
    sizes = shuffled_choices(
        rng, spec["model_sizes_b"], largest_remainder_counts(spec["model_size_weights"], n)
    )
    lengths = shuffled_choices(
        rng,
        spec["max_response_tokens"],
        counts_for_mean(
            spec["max_response_tokens"],
            spec["max_response_weights"],
            n,
            float(spec["target_mean_max_response_k"]) * 1024,
        ),
    )
    task_names = list(spec["tasks"])
    tasks = shuffled_choices(
        rng,
        task_names,
        largest_remainder_counts([spec["tasks"][t]["weight"] for t in task_names], n),
    )
    duration_z = rng.standard_normal(n)
    slos = _slo_draws(rng, n, spec["slo"])
    gpu_u = rng.uniform(0.0, 1.0, size=n)
    turn_low = np.array([spec["tasks"][t]["turns"][0] for t in tasks], dtype=np.int64)
    turn_high = np.array([spec["tasks"][t]["turns"][1] for t in tasks], dtype=np.int64)
    turns = rng.integers(turn_low, turn_high + 1)
    ratio_low, ratio_high = (float(r) for r in spec["multi_turn_rollout_over_train"])
    ratios = rng.uniform(ratio_low, ratio_high, size=n)
    return ProductionDraws(
        arrivals_s=arrivals,
        sizes_b=tuple(float(s) for s in sizes),
        max_response_tokens=tuple(int(v) for v in lengths),
        tasks=tuple(str(t) for t in tasks),
        duration_z=duration_z,
        slos=slos,
        gpu_u=gpu_u,
        turns=turns,
        rollout_over_train=ratios,
    )


def production_durations_h(duration_z: np.ndarray, spec: Mapping[str, Any]) -> np.ndarray:
    """Job durations (h): lognormal exp(sigma z) scaled to the mean, floored, mean restored."""
    sigma = float(spec["duration_sigma"])
    mean_h = float(spec["mean_duration_h"])
    if not math.isfinite(sigma) or sigma < 0:
        raise ValueError(f"production.duration_sigma = {sigma!r}: must be finite and >= 0")
    raw = np.exp(sigma * np.asarray(duration_z, dtype=float))
    durations_h = np.maximum(raw / raw.mean() * mean_h, float(spec["min_duration_h"]))
    return durations_h * (mean_h / durations_h.mean())


def gpu_option(u: float, entry: Mapping[str, Any]) -> tuple[int, int]:
    """The (rollout, training) GPUs of a ``gpus_by_size`` entry picked by uniform ``u``.

    Inverse CDF over the entry's weights: option i when u falls in its share of [0, 1).
    """
    weights = [float(w) for w in entry["weights"]]
    if len(weights) != len(entry["options"]) or min(weights) < 0 or sum(weights) <= 0:
        raise ValueError(f"gpus_by_size entry {dict(entry)!r}: need one weight >= 0 per "
                         "option, with a positive sum")
    cumulative = list(itertools.accumulate(weights))
    cdf = [c / cumulative[-1] for c in cumulative]
    index = min(bisect.bisect_right(cdf, u), len(cdf) - 1)
    rollout_gpus, train_gpus = (int(g) for g in entry["options"][index])
    return rollout_gpus, train_gpus


def production_job(
    i: int, draws: ProductionDraws, gpus: tuple[int, int], spec: Mapping[str, Any], hw: Any
) -> Any:
    """Job ``i`` of the draws on ``gpus`` (rollout, training), one iteration.

    A job whose modelled phase is under ``min_phase_s`` gets the smallest batch multiplier
    that lifts it there; a multi-turn job's rollout is pinned to its drawn multiple of the
    modelled training time (paper §2: multi-turn rollout is 3-4x training).
    """
    hw = _hardware(hw)
    turns = int(draws.turns[i])
    job = _rljob(
        job_id=f"prod-{i:04d}",
        model_size_b=draws.sizes_b[i],
        max_response_tokens=draws.max_response_tokens[i],
        turns=turns,
        rollout_gpus=gpus[0],
        train_gpus=gpus[1],
        slo=float(draws.slos[i]),
        arrival_s=float(draws.arrivals_s[i]),
        workload=draws.tasks[i],
    )
    times = _phase_times(job, hw)
    for multiplier in spec["batch_multipliers"]:
        if min(times.train_s, times.rollout_s) >= float(spec["min_phase_s"]):
            break
        job = dataclasses.replace(
            job, prompts_per_iter=int(multiplier) * hw.workload.prompts_per_iter
        )
        times = _phase_times(job, hw)
    if turns > 1:
        # Pin the rollout directly rather than trusting the phase model's tool-latency
        # estimate.
        rollout_s = round(float(draws.rollout_over_train[i]) * times.train_s, 3)
        job = dataclasses.replace(
            job,
            rollout_s=rollout_s,
            rollout_max_s=round(rollout_s * times.rollout_max_s / times.rollout_s, 3),
        )
    return job


def with_iterations(job: Any, duration_h: float, hw: Any) -> Any:
    """``job`` with the whole number of solo iterations that best fills ``duration_h``."""
    times = _phase_times(job, _hardware(hw))
    return dataclasses.replace(
        job, iterations=iterations_for(duration_h * HOUR_S, times.solo_iteration_s)
    )


def generate_production(
    seed: int,
    hw: Any = None,
    workloads: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    rate_scale: float = 1.0,
) -> Generated:
    """The §6.4 trace: 200 jobs over two weeks, Qwen 3B-32B, 4k-32k responses, mean 27.9 h.

    ``jobs`` and ``rate_scale`` scale the job count and the arrival rate
    (:func:`scaled_spec`); the shares, phase times, GPU options and durations are drawn
    as for 200 jobs.
    """
    spec = scaled_spec((workloads or load_workloads())["production"], "production", jobs,
                       rate_scale)
    hw = _hardware(hw)
    draws = production_draws(seed, spec)
    durations_h = production_durations_h(draws.duration_z, spec)
    job_list = []
    for i in range(draws.jobs):
        gpus = gpu_option(float(draws.gpu_u[i]), spec["gpus_by_size"][str(draws.sizes_b[i])])
        job_list.append(with_iterations(production_job(i, draws, gpus, spec, hw),
                                        durations_h[i], hw))
    ratio_low, ratio_high = spec["multi_turn_rollout_over_train"]
    targets = dict(PAPER_TARGETS["production"])
    targets.update(
        jobs=draws.jobs,
        horizon_h=float(spec["horizon_h"]),
        mean_max_response_k=float(spec["target_mean_max_response_k"]),
        mean_duration_h=float(spec["mean_duration_h"]),
        multi_turn_ratio_min=float(ratio_low),
        multi_turn_ratio_max=float(ratio_high),
        phase_min_s=float(spec["min_phase_s"]),
        rollout_heavy_share="> 0.5",
    )
    comments = _provenance("production", seed, _scale_option_text(jobs, rate_scale))
    targets = _unscaled_targets(targets, "production", jobs, rate_scale)
    return Generated(job_list, targets, _summary(job_list, hw), comments)


def _provenance(kind: str, seed: int, extra: str = "") -> tuple[str, ...]:
    """Comment lines naming the command that regenerates a trace."""
    command = f"rollmux trace generate {kind} --seed {seed}{extra}"
    return (f"generated by: {command}",)


def _summary(jobs: Sequence[Any], hw: Any) -> dict[str, Any]:
    """Achieved statistics of a job list."""
    return job_summary(jobs, hw)


def _profile_names(profile: str, profiles: Mapping[str, Any]) -> list[str]:
    """The Table 6 configurations a --profile value draws from."""
    key = profile.strip()
    if key.lower() == "mixed":
        return list(profiles)
    if key.lower() in PROFILE_TYPES:
        prefix = PROFILE_TYPES[key.lower()]
        return [f"{prefix}-{s}" for s in SIZE_CLASSES if f"{prefix}-{s}" in profiles]
    if key.upper() in PROFILE_TYPES.values():
        return [f"{key.upper()}-{s}" for s in SIZE_CLASSES if f"{key.upper()}-{s}" in profiles]
    if key in profiles:
        return [key]
    valid = ["mixed", *PROFILE_TYPES, *profiles]
    raise ValueError(f"unknown profile {echo(profile)}; valid: {', '.join(valid)}")


def profile_job(
    job_id: str,
    profile_name: str,
    rng: np.random.Generator,
    profiles: Mapping[str, Any],
    max_over_expected: float,
    **fields: Any,
) -> Any:
    """An RLJob of a Table 6 configuration, phase times drawn from its uniform ranges."""
    profile = profiles[profile_name]
    rollout_s = round(float(rng.uniform(*profile["rollout_s"])), 3)
    train_s = round(float(rng.uniform(*profile["train_s"])), 3)
    return _rljob(
        job_id=job_id,
        model_size_b=float(profile["model_size_b"]),
        max_response_tokens=int(profile["max_response_tokens"]),
        turns=int(profile["turns"]),
        rollout_gpus=int(profile["rollout_gpus"]),
        train_gpus=int(profile["train_gpus"]),
        rollout_s=rollout_s,
        train_s=train_s,
        rollout_max_s=round(rollout_s * max_over_expected, 3),
        train_max_s=round(train_s * max_over_expected, 3),
        workload=profile_name,
        **fields,
    )


def generate_simulation(
    seed: int,
    profile: str = "mixed",
    hw: Any = None,
    workloads: Mapping[str, Any] | None = None,
    runtimes_source: str = "auto",
    philly_path: str | Path | None = None,
    slo: Sequence[float] | float | None = None,
    jobs: int | None = None,
    rate_scale: float = 1.0,
) -> Generated:
    """The §6.5 trace: 300 jobs over 580 h, Philly durations (mean 14.4 h, max 142.9 h).

    ``jobs`` and ``rate_scale`` scale the job count and the arrival rate
    (:func:`scaled_spec`). Durations keep the paper's mean and maximum at any size (the
    transform is fitted to the whole sample); their median stays within a few per cent
    of the 300-job trace's (tests/test_traces_scale.py).
    """
    document = workloads or load_workloads()
    spec = scaled_spec(document["simulation"], "simulation", jobs, rate_scale)
    profiles = document["profiles"]
    hw = _hardware(hw)
    names = _profile_names(profile, profiles)
    rng = np.random.default_rng(seed)
    n = int(spec["jobs"])
    arrivals = poisson_arrivals_s(rng, n, float(spec["horizon_h"]) * HOUR_S)
    sampler, source = philly.runtime_sampler(
        runtimes_source, philly_path, min_runtime_s=float(spec["min_runtime_s"])
    )
    raw = sampler(rng, n)
    try:
        durations_h = match_mean_and_max(
            raw, float(spec["mean_duration_h"]), float(spec["max_duration_h"])
        )
    except ValueError as exc:
        if jobs is None:
            raise
        raise ValueError(f"--jobs {n}: too few simulation jobs for the durations' mean "
                         f"{spec['mean_duration_h']:g} h and maximum "
                         f"{spec['max_duration_h']:g} h ({exc})") from None
    chosen = [names[i] for i in rng.integers(0, len(names), size=n)]
    slos = _slo_draws(rng, n, spec["slo"] if slo is None else slo)
    job_list = []
    for i in range(n):
        job = profile_job(
            f"sim-{i:04d}",
            chosen[i],
            rng,
            profiles,
            float(spec["max_over_expected"]),
            slo=float(slos[i]),
            arrival_s=float(arrivals[i]),
        )
        times = _phase_times(job, hw)
        job_list.append(
            dataclasses.replace(
                job, iterations=iterations_for(durations_h[i] * HOUR_S, times.solo_iteration_s)
            )
        )
    targets = dict(PAPER_TARGETS["simulation"])
    targets.update(
        jobs=n,
        horizon_h=float(spec["horizon_h"]),
        mean_duration_h=float(spec["mean_duration_h"]),
        max_duration_h=float(spec["max_duration_h"]),
    )
    if isinstance(slo, int | float):
        targets.update(slo_min=float(slo), slo_max=float(slo))
    elif slo is not None:
        targets.update(slo_min=float(slo[0]), slo_max=float(slo[1]))
    extra = f" --profile {profile} --runtimes {source}{_scale_option_text(jobs, rate_scale)}"
    comments = (*_provenance("simulation", seed, extra), f"durations: Philly runtimes ({source})")
    targets = _unscaled_targets(targets, "simulation", jobs, rate_scale)
    return Generated(job_list, targets, _summary(job_list, hw), comments)


def generate_microbench(seed: int = 0, hw: Any = None, path: str | Path | None = None) -> Generated:
    """The §6.2 job types A-E as direct phase times (one job per type, all at t = 0).

    The types come from src/rollmux/data/microbench.yaml (or `path`), shared with the
    micro-benchmark models; the seed is unused (nothing is random) but kept for a
    uniform command line.
    """
    from rollmux.jobtypes import load_microbench

    document = load_microbench(None if path is None else str(path))
    hw = _hardware(hw)
    keep = (
        "model_size_b",
        "max_response_tokens",
        "turns",
        "rollout_gpus",
        "train_gpus",
        "rollout_s",
        "train_s",
        "rollout_max_s",
        "train_max_s",
    )
    jobs = [
        _rljob(
            job_id=f"Type-{name}",
            workload=f"type-{name}",
            iterations=MICROBENCH_ITERATIONS,
            **{key: job_type[key] for key in keep if key in job_type},
        )
        for name, job_type in document["job_types"].items()
    ]
    targets = {
        "jobs": len(jobs),
        "Type-D rollout/train": 2.5,
        "Type-E rollout/train": 6.0,
        "Type-C GPUs (H20+H800)": "16+16",
        "Type-D GPUs (H20+H800)": "8+16",
    }
    by_id = {job.job_id: job for job in jobs}
    achieved = _summary(jobs, hw)
    for key, job_id in (("Type-D rollout/train", "Type-D"), ("Type-E rollout/train", "Type-E")):
        if job_id in by_id:
            achieved[key] = round(by_id[job_id].rollout_s / by_id[job_id].train_s, 3)
    for key, job_id in (("Type-C GPUs (H20+H800)", "Type-C"), ("Type-D GPUs (H20+H800)", "Type-D")):
        if job_id in by_id:
            achieved[key] = f"{by_id[job_id].rollout_gpus}+{by_id[job_id].train_gpus}"
    return Generated(jobs, targets, achieved, _provenance("microbench", seed))


def statistics_lines(generated: Generated) -> list[str]:
    """Achieved statistics beside their targets, one line each, for the CLI."""
    lines = [f"{'statistic':<34} {'target':>16} {'achieved':>16}"]
    keys = list(generated.targets) + [k for k in generated.achieved if k not in generated.targets]
    for key in keys:
        target = generated.targets.get(key, "")
        value = generated.achieved.get(key, "")
        lines.append(f"{key:<34} {_fmt(target):>16} {_fmt(value):>16}")
    return lines


def statistics_table(generated: Generated) -> pd.DataFrame:
    """The rows of :func:`statistics_lines` as a table (statistic, target, achieved; a
    statistic without a target or an achieved value has an empty cell)."""
    import pandas as pd

    keys = list(generated.targets) + [k for k in generated.achieved if k not in generated.targets]
    return pd.DataFrame({
        "statistic": keys,
        "target": [generated.targets.get(k) for k in keys],
        "achieved": [generated.achieved.get(k) for k in keys],
    })


def _fmt(value: Any) -> str:
    """Compact rendering of a statistic."""
    if isinstance(value, float):
        return f"{value:.4g}" if not math.isfinite(value) or abs(value) < 1000 else f"{value:.0f}"
    return str(value)
