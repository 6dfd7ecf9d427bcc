"""Closed-form per-job models: Solo-D, veRL-style co-location and the fluid lower bound.

Every function takes plain numbers wrapped in the small frozen dataclasses below
(:class:`JobPhases`, :class:`PoolSpec` of two :class:`rollmux.hardware.GPUType`), so that
each model can be checked against literals without the phase-time model. The adapters at
the bottom take a hardware's pools or jobs already resolved (:func:`rollmux.model.resolve`),
never ``(RLJob, Hardware)``. The equations, with the
paper section each comes from, are written out in docs/model.md.

Conventions: durations in seconds, prices in USD per GPU-hour, bandwidths in GB/s.
*Busy* GPU-seconds count useful phase work only (rollout and training); engine
switches and weight sync occupy GPUs without doing that work, so they count as
bubble. Hence for every model ``bubble_fraction = 1 - utilisation``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from rollmux import phases as phase_rules
from rollmux.hardware import GPUType
from rollmux.phasetimes import PhaseTimes

if TYPE_CHECKING:
    from rollmux.hardware import Hardware
    from rollmux.model.resolved import ResolvedJob

SECONDS_PER_HOUR = 3600.0

__all__ = [
    "FleetCost",
    "JobPhases",
    "PoolSpec",
    "SoloDMetrics",
    "TraceCost",
    "VerlMetrics",
    "colocated_rollout_s",
    "fluid_cost_usd_per_h",
    "fluid_cost_usd_per_iteration",
    "isolated_trace_cost",
    "isolated_trace_costs",
    "pools_from_hardware",
    "solo_d",
    "solo_d_fleet",
    "verl",
    "verl_fleet",
]


# --------------------------------------------------------------------------- validation


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` unless it is finite and > 0."""
    out = _as_float(name, value)
    if not math.isfinite(out) or out <= 0.0:
        raise ValueError(f"{name} = {value!r}: must be positive and finite")
    return out


def check_non_negative(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` unless it is finite and >= 0."""
    out = _as_float(name, value)
    if not math.isfinite(out) or out < 0.0:
        raise ValueError(f"{name} = {value!r}: must be non-negative and finite")
    return out


def check_count(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise ``ValueError`` unless it is an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} = {value!r}: must be an integer >= {minimum}")
    return int(value)


def check_positive_int(name: str, value: int) -> int:
    """Return ``value`` as an int, or raise ``ValueError`` unless it is an integer >= 1."""
    return check_count(name, value, 1)


def _as_float(name: str, value: object) -> float:
    """``value`` as a float; bools, strings and other non-numbers raise ``ValueError``."""
    if type(value) is float:  # the common case; the ABC check below is slow
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} = {value!r}: expected a number")
    return float(value)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """The two GPU pools of a disaggregated cluster: rollout (inference) and training.

    Each pool is a :class:`rollmux.hardware.GPUType` (the cost models read its
    ``price_usd_per_h`` and ``hbm_bw_gbps``); build it from the loaded hardware with
    :func:`pools_from_hardware`, so that hardware overrides apply.
    ``colocated_rollout_speedup`` is how much faster a co-located (veRL) rollout runs on the
    training GPUs than HBM-bandwidth scaling predicts (1: bandwidth scaling alone).
    """

    rollout: GPUType
    train: GPUType
    colocated_rollout_speedup: float = 1.0

    def __post_init__(self) -> None:
        """Check that both pools are GPU types and the speed-up is positive."""
        for name in ("rollout", "train"):
            if not isinstance(getattr(self, name), GPUType):
                raise ValueError(f"{name} = {getattr(self, name)!r}: expected a "
                                 f"rollmux.hardware.GPUType")
        object.__setattr__(self, "colocated_rollout_speedup", check_positive(
            "colocated_rollout_speedup", self.colocated_rollout_speedup))

    def cost_usd_per_h(self, rollout_gpus: int, train_gpus: int) -> float:
        """Hourly price of ``rollout_gpus`` rollout GPUs plus ``train_gpus`` training GPUs."""
        n_r = check_count("rollout_gpus", rollout_gpus, 0)
        n_t = check_count("train_gpus", train_gpus, 0)
        return n_r * self.rollout.price_usd_per_h + n_t * self.train.price_usd_per_h




@dataclass(frozen=True, slots=True)
class JobPhases:
    """One RL job's per-iteration phase times and the GPU counts they hold for.

    ``times`` is the job's :class:`rollmux.phasetimes.PhaseTimes` (the one definition of
    every phase-time field) with ``rollout_s``/``train_s`` the expected durations on the
    job's own ``rollout_gpus`` rollout GPUs and ``train_gpus`` training GPUs. The models
    here read ``rollout_s``, ``train_s``, ``sync_s`` (cross-cluster weight sync),
    ``warm_switch_s`` (reloading the job's state from host memory when a GPU set changes
    hands) and the worst cases ``rollout_max_s``/``train_max_s`` used for admission,
    exposed as properties; build from literals with :meth:`of`.
    """

    times: PhaseTimes
    rollout_gpus: int = 8
    train_gpus: int = 8

    def __post_init__(self) -> None:
        """Check positive expected durations and GPU counts; store the times as floats."""
        times = self.times
        if not isinstance(times, PhaseTimes):
            raise ValueError(f"times = {times!r}: expected a rollmux.phasetimes.PhaseTimes")
        check_positive("rollout_s", times.rollout_s)
        check_positive("train_s", times.train_s)
        # The models' outputs are floats whatever number type a job's given times have.
        if any(type(getattr(times, name)) is not float for name in _PHASE_TIME_FIELDS):
            object.__setattr__(self, "times", PhaseTimes(
                **{name: float(getattr(times, name)) for name in _PHASE_TIME_FIELDS}))
        set_ = object.__setattr__
        set_(self, "rollout_gpus", check_positive_int("rollout_gpus", self.rollout_gpus))
        set_(self, "train_gpus", check_positive_int("train_gpus", self.train_gpus))

    @classmethod
    def of(
        cls,
        rollout_s: float,
        train_s: float,
        sync_s: float = 0.0,
        rollout_gpus: int = 8,
        train_gpus: int = 8,
        warm_switch_s: float = 0.0,
        rollout_max_s: float | None = None,
        train_max_s: float | None = None,
    ) -> JobPhases:
        """A job from literal times; worst cases default to the expected ones.

        The fields no model here reads take their lower bounds: flat sync = ``sync_s``,
        cold switch = ``warm_switch_s``.
        """
        rollout = check_positive("rollout_s", rollout_s)
        train = check_positive("train_s", train_s)
        sync = check_non_negative("sync_s", sync_s)
        warm = check_non_negative("warm_switch_s", warm_switch_s)
        # PhaseTimes checks worst case >= expected.
        times = PhaseTimes(
            rollout_s=rollout, train_s=train, sync_s=sync, sync_flat_s=sync,
            warm_switch_s=warm, cold_switch_s=warm,
            rollout_max_s=rollout if rollout_max_s is None
            else check_positive("rollout_max_s", rollout_max_s),
            train_max_s=train if train_max_s is None
            else check_positive("train_max_s", train_max_s),
        )
        return cls(times, rollout_gpus, train_gpus)

    @property
    def rollout_s(self) -> float:
        """Expected rollout duration on the job's rollout GPUs (s)."""
        return self.times.rollout_s

    @property
    def train_s(self) -> float:
        """Expected training duration on the job's training GPUs (s)."""
        return self.times.train_s

    @property
    def sync_s(self) -> float:
        """Cross-cluster (topology-aware) weight sync per iteration (s)."""
        return self.times.sync_s

    @property
    def warm_switch_s(self) -> float:
        """Reloading the job's state from host memory onto a GPU set (s)."""
        return self.times.warm_switch_s

    @property
    def rollout_max_s(self) -> float:
        """Worst-case rollout duration, every response at max tokens (s)."""
        return self.times.rollout_max_s

    @property
    def train_max_s(self) -> float:
        """Worst-case training duration, every response at max tokens (s)."""
        return self.times.train_max_s

    @property
    def solo_iteration_s(self) -> float:
        """Iteration time alone on its own GPUs: rollout + train + sync (notes section 3)."""
        return self.times.solo_iteration_s

    def worst_case(self) -> JobPhases:
        """The same job with its worst-case (max-token) phase durations as the nominal ones."""
        times = replace(self.times, rollout_s=self.rollout_max_s, train_s=self.train_max_s)
        return replace(self, times=times)

    def with_train(self, train_gpus: int, scale: float) -> JobPhases:
        """The same job on ``train_gpus`` training GPUs with its training times x ``scale``."""
        times = replace(self.times, train_s=self.train_s * scale,
                        train_max_s=self.train_max_s * scale)
        return replace(self, times=times, train_gpus=train_gpus)

    def busy_gpu_s(self) -> tuple[float, float]:
        """Useful GPU-seconds per iteration on the (rollout, training) pools."""
        return self.rollout_s * self.rollout_gpus, self.train_s * self.train_gpus


_PHASE_TIME_FIELDS = tuple(PhaseTimes.__dataclass_fields__)


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class FleetCost:
    """Throughput and hourly cost of a set of jobs.

    ``iterations_per_h`` counts raw iterations, so a job with short iterations weighs
    more; ``normalised_throughput`` sums each job's speed relative to running Solo-D
    (``T_solo_j / T_j``: n for n Solo-D jobs), which compares unequal jobs fairly.
    """

    iterations_per_h: float
    cost_usd_per_h: float
    normalised_throughput: float

    @property
    def iterations_per_usd(self) -> float:
        """Iterations per dollar (= iterations per hour per dollar-per-hour)."""
        return self.iterations_per_h / self.cost_usd_per_h

    @property
    def normalised_throughput_per_usd_h(self) -> float:
        """Solo-equivalent jobs kept running per dollar-per-hour."""
        return self.normalised_throughput / self.cost_usd_per_h


class PoolBubbles:
    """Bubble fractions of a metrics record with ``rollout_``/``train_utilisation``."""

    __slots__ = ()
    rollout_utilisation: float
    train_utilisation: float

    @property
    def rollout_bubble_fraction(self) -> float:
        """Share of provisioned rollout GPU-seconds not doing rollout work."""
        return 1.0 - self.rollout_utilisation

    @property
    def train_bubble_fraction(self) -> float:
        """Share of provisioned training GPU-seconds not doing training work."""
        return 1.0 - self.train_utilisation


class PerIterationCost:
    """Cost per iteration of a metrics record with ``iteration_s`` and ``cost_usd_per_h``."""

    __slots__ = ()
    iteration_s: float
    cost_usd_per_h: float

    @property
    def cost_usd_per_iteration(self) -> float:
        """GPU cost of one iteration."""
        return self.cost_usd_per_h * self.iteration_s / SECONDS_PER_HOUR

    @property
    def iterations_per_usd(self) -> float:
        """Iterations per dollar."""
        return 1.0 / self.cost_usd_per_iteration


@dataclass(frozen=True, slots=True)
class SoloDMetrics(PoolBubbles, PerIterationCost):
    """Solo-D (one job alone on its own rollout and training GPUs) per-iteration metrics."""

    iteration_s: float
    rollout_utilisation: float
    train_utilisation: float
    cost_usd_per_h: float


@dataclass(frozen=True, slots=True)
class VerlMetrics(PerIterationCost):
    """veRL-style co-location (every phase on the job's own training GPUs) metrics."""

    iteration_s: float
    rollout_s: float
    train_s: float
    switch_s: float
    gpus: int
    cost_usd_per_h: float

    @property
    def utilisation(self) -> float:
        """Share of provisioned GPU-seconds doing rollout or training work."""
        return (self.rollout_s + self.train_s) / self.iteration_s

    @property
    def bubble_fraction(self) -> float:
        """Share of provisioned GPU-seconds spent switching engines."""
        return 1.0 - self.utilisation


# --------------------------------------------------------------------------- models


def solo_d(job: JobPhases, pools: PoolSpec) -> SoloDMetrics:
    """Solo-D: the job alone on its rollout and training GPUs, phases strictly in sequence.

    T = rollout + train + sync; the rollout pool idles during train + sync and the
    training pool during rollout + sync (notes sections 1 and 6).
    """
    iteration_s = job.solo_iteration_s
    return SoloDMetrics(
        iteration_s=iteration_s,
        rollout_utilisation=job.rollout_s / iteration_s,
        train_utilisation=job.train_s / iteration_s,
        cost_usd_per_h=pools.cost_usd_per_h(job.rollout_gpus, job.train_gpus),
    )


def colocated_rollout_s(job: JobPhases, pools: PoolSpec) -> float:
    """Rollout time on the job's training GPUs: decode is HBM-bandwidth bound, so it scales
    with the aggregate bandwidth, over the co-located speed-up s (fitted, docs/model.md):
    ``rollout_s * (n_r * bw_r) / (n_t * bw_t) / s``."""
    rollout_bw = job.rollout_gpus * pools.rollout.hbm_bw_gbps
    train_bw = job.train_gpus * pools.train.hbm_bw_gbps
    return job.rollout_s * rollout_bw / train_bw / pools.colocated_rollout_speedup


def verl(
    job: JobPhases, pools: PoolSpec, switch_s: float | None = None
) -> VerlMetrics:
    """veRL-style co-location: rollout and training time-share the job's training GPUs.

    T = rollout_colocated + train + 2 * switch (one engine switch rollout -> train and one
    train -> rollout per iteration; the in-place weight reshard is part of the switch, and
    there is no cross-cluster sync). ``switch_s`` defaults to the switch a co-located phase
    pays at the steady state (:func:`rollmux.phases.switch_paid`, the job's warm switch).
    """
    if switch_s is None:
        paid = phase_rules.switch_paid(False, True, False)
        switch = phase_rules.switch_s(paid, job.warm_switch_s, job.times.cold_switch_s)
    else:
        switch = check_non_negative("switch_s", switch_s)
    rollout_s = colocated_rollout_s(job, pools)
    return VerlMetrics(
        iteration_s=rollout_s + job.train_s + 2.0 * switch,
        rollout_s=rollout_s,
        train_s=job.train_s,
        switch_s=switch,
        gpus=job.train_gpus,
        cost_usd_per_h=pools.cost_usd_per_h(0, job.train_gpus),
    )


def fluid_cost_usd_per_iteration(job: JobPhases, pools: PoolSpec) -> float:
    """Fluid lower bound: one iteration's useful GPU-seconds, each priced, no bubble at all.

    ``(n_r * rollout_s * p_r + n_t * train_s * p_t) / 3600``. It bounds every model that
    runs rollout on rollout GPUs and training on training GPUs. It bounds veRL too
    when the rollout GPU is no dearer per unit of co-located rollout speed
    (p_r / bw_r <= p_t / (s bw_t), s the co-located speed-up).
    """
    rollout_gpu_s, train_gpu_s = job.busy_gpu_s()
    usd_s = (rollout_gpu_s * pools.rollout.price_usd_per_h
             + train_gpu_s * pools.train.price_usd_per_h)
    return usd_s / SECONDS_PER_HOUR


def fluid_cost_usd_per_h(jobs: Sequence[JobPhases], pools: PoolSpec) -> float:
    """Fluid lower bound per hour for ``jobs`` running concurrently at their solo rates."""
    _check_jobs(jobs)
    return sum(
        fluid_cost_usd_per_iteration(job, pools) * SECONDS_PER_HOUR / job.solo_iteration_s
        for job in jobs
    )


def solo_d_fleet(jobs: Sequence[JobPhases], pools: PoolSpec) -> FleetCost:
    """Iterations per hour and hourly cost of ``jobs`` each run Solo-D."""
    _check_jobs(jobs)
    metrics = [solo_d(job, pools) for job in jobs]
    return FleetCost(
        iterations_per_h=sum(SECONDS_PER_HOUR / m.iteration_s for m in metrics),
        cost_usd_per_h=sum(m.cost_usd_per_h for m in metrics),
        normalised_throughput=float(len(metrics)),
    )


def verl_fleet(
    jobs: Sequence[JobPhases], pools: PoolSpec, switch_s: float | None = None
) -> FleetCost:
    """Iterations per hour and hourly cost of ``jobs`` each run veRL-style co-located."""
    _check_jobs(jobs)
    metrics = [verl(job, pools, switch_s) for job in jobs]
    return FleetCost(
        iterations_per_h=sum(SECONDS_PER_HOUR / m.iteration_s for m in metrics),
        cost_usd_per_h=sum(m.cost_usd_per_h for m in metrics),
        normalised_throughput=sum(
            job.solo_iteration_s / m.iteration_s for job, m in zip(jobs, metrics, strict=True)
        ),
    )


@dataclass(frozen=True, slots=True)
class TraceCost:
    """Cost of a trace replayed with every job alone on its own GPUs (Solo-D, veRL).

    ``span_s`` runs from the first arrival to the last completion; ``usd_per_h`` is the
    total over the span, the replay metric ``cost_usd_per_h`` (docs/metrics.md).
    """

    total_usd: float
    span_s: float

    @property
    def span_h(self) -> float:
        """Span in hours."""
        return self.span_s / SECONDS_PER_HOUR

    @property
    def usd_per_h(self) -> float:
        """Time-average hourly cost over the span."""
        return self.total_usd / self.span_h


def isolated_trace_cost(
    arrivals_s: ArrayLike, run_s: ArrayLike, usd_per_h: ArrayLike
) -> TraceCost:
    """Jobs each alone on their own GPUs from arrival for ``run_s`` at ``usd_per_h``.

    Total = sum of usd_per_h x run_s; span = max(arrival + run) - min(arrival).
    """
    arrivals = np.asarray(arrivals_s, dtype=float)
    runs = np.asarray(run_s, dtype=float)
    rates = np.asarray(usd_per_h, dtype=float)
    if arrivals.size == 0 or arrivals.shape != runs.shape or runs.shape != rates.shape:
        raise ValueError("arrivals_s, run_s and usd_per_h need one entry per job (at least one)")
    if not np.all(np.isfinite(runs) & (runs > 0)) or not np.all(np.isfinite(rates)):
        raise ValueError("run_s must be positive and usd_per_h finite for every job")
    span_s = float(np.max(arrivals + runs) - np.min(arrivals))
    return TraceCost(total_usd=float(np.dot(rates, runs)) / SECONDS_PER_HOUR, span_s=span_s)


def _check_jobs(jobs: Sequence[JobPhases]) -> None:
    if isinstance(jobs, JobPhases) or not isinstance(jobs, Sequence) or not jobs:
        raise ValueError(f"jobs = {jobs!r}: expected a non-empty sequence of JobPhases")
    for i, job in enumerate(jobs):
        if not isinstance(job, JobPhases):
            raise ValueError(f"jobs[{i}] = {job!r}: expected a JobPhases")


# --------------------------------------------------------------------------- adapters


def pools_from_hardware(
    hw: Hardware, rollout_gpu_type: str = "H20", train_gpu_type: str = "H800"
) -> PoolSpec:
    """The :class:`PoolSpec` of a :class:`rollmux.hardware.Hardware` for two GPU types."""
    return PoolSpec(rollout=hw.gpu(rollout_gpu_type), train=hw.gpu(train_gpu_type),
                    colocated_rollout_speedup=hw.perf.colocated_rollout_speedup)


def isolated_trace_costs(jobs: Sequence[ResolvedJob]) -> dict[str, TraceCost]:
    """Solo-D's and veRL's cost of replaying resolved ``jobs`` (expected phase times), by
    policy name.

    Each job runs alone from its arrival for ``iterations`` iterations: Solo-D on its own
    rollout and training GPUs (:func:`solo_d`), veRL on its training GPUs (:func:`verl`),
    with its phases and pools as resolved (:func:`rollmux.model.resolve`).
    """
    if not jobs:
        raise ValueError("jobs must hold at least one job")
    arrivals: list[float] = []
    runs: dict[str, list[float]] = {"solo-d": [], "verl": []}
    rates: dict[str, list[float]] = {"solo-d": [], "verl": []}
    for resolved in jobs:
        job, pools, phases = resolved.job, resolved.pools, resolved.phases
        arrivals.append(job.arrival_s)
        for name, metrics in (("solo-d", solo_d(phases, pools)), ("verl", verl(phases, pools))):
            runs[name].append(job.iterations * metrics.iteration_s)
            rates[name].append(metrics.cost_usd_per_h)
    return {name: isolated_trace_cost(arrivals, runs[name], rates[name]) for name in runs}
