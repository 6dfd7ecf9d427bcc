"""Stochastic rollouts, long-tail migration and woven event simulation (paper sec. 4).

:class:`PhaseSampler` draws one job's per-iteration phase durations from its long-tailed
response-length distribution (a truncated lognormal, :mod:`rollmux.jobs`), spread over
its rollout replicas: the rollout ends when the slowest replica finishes, training time
follows the generated tokens. Long-tail migration (``StochasticConfig.migration``) moves
the unfinished responses onto a few replicas once a fraction of them is done, so the
rollout nodes are released early (``rollout_node_s``) while the job's own rollout ends
later (``rollout_s``). :func:`simulate_woven` executes a co-execution group's
round-robin meta-iterations with such per-iteration tables, giving freed GPUs to the
next job while a tail still holds some; :func:`migration_speedup` is the migration gain
of jobs woven on one node per pool.

Draws are deterministic per (root seed, job id, iteration): each job has its own stream
``numpy.random.default_rng([root_seed, blake2b(job_id)])`` read in fixed chunks of
iterations, so results do not depend on the order in which jobs or iterations are
simulated. Every equation and
estimate is in docs/stochastic.md.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special

from rollmux.jobs import ResponseLengthDist, RLJob
from rollmux.model.cycle import steady_switch_s
from rollmux.model.resolved import ResolvedJob
from rollmux.phases import rollout_work_s, training_occupancy_s
from rollmux.phasetimes import PhaseTimes
from rollmux.schedule.eventsim import TIMELINE_COLUMNS, PhaseRecord, simulate, to_frame
from rollmux.schedule.graph import build_schedule, round_robin_node_orders
from rollmux.sim.drift import (
    NO_DRIFT,
    DriftReach,
    DriftTemplate,
    length_factor,
    length_factors,
    parse_reach,
    stable_job_hash,
)
from rollmux.sim.lengths import JobLengths, LengthSource

__all__ = [
    "WOVEN_PHASE_COLUMNS",
    "IterationDraw",
    "PhaseSampler",
    "RolloutCoefficients",
    "StochasticConfig",
    "WovenTables",
    "iteration_end_times",
    "migration_speedup",
    "pair_tables",
    "simulate_woven",
    "steady_iteration_s",
]

FloatArray = NDArray[np.float64]

RAW_CHUNK = 64
"""Iterations per chunk of raw variates drawn from a job's stream (fixes the stream layout)."""
_CALIBRATION_SALT = 0xCA11B  # the calibration stream is fixed per job, independent of seeds
# The factor tables and the rollout coefficients of a sampler without drift depend on the
# job's id (its calibration stream), shape, lengths and rollout times only, never on the
# seed or the training times: computed once per such key (the same arrays, read only).
_MODEL_MEMO: dict[tuple[object, ...], tuple[Any, ...]] = {}
_MODEL_MEMO_SIZE = 4096


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True, slots=True)
class StochasticConfig:
    """Knobs of the stochastic phase model and of long-tail migration.

    ``migration``: consolidate the tail (paper sec. 4); ``migration_threshold``: fraction
    of a job's responses done when the tail moves (paper: 80%); ``migration_replicas``:
    the fewest rollout replicas the tail moves to (more if its KV cache needs them);
    ``migration_const_s``: fixed cost of a migration (pausing the engine, re-admitting the
    requests on the target replicas; est.); ``block_size``: most iterations derived per
    vectorised window (never past the job's last iteration); ``calibration_draws``:
    iterations used to fit the rollout coefficients.
    """

    migration: bool = True
    migration_threshold: float = 0.8
    migration_replicas: int = 1
    migration_const_s: float = 2.0
    block_size: int = 512
    calibration_draws: int = 1000

    def __post_init__(self) -> None:
        """Validate every knob; ValueError names the field and the value."""
        if not isinstance(self.migration, bool):
            raise ValueError(f"migration must be a bool, got {self.migration!r}")
        q = self.migration_threshold
        if isinstance(q, bool) or not isinstance(q, Real) or not 0.0 < float(q) < 1.0:
            raise ValueError(f"migration_threshold must be in (0, 1), got {q!r}")
        object.__setattr__(self, "migration_threshold", float(q))
        for name, minimum in (("migration_replicas", 1), ("block_size", 1),
                              ("calibration_draws", 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
            object.__setattr__(self, name, int(value))
        c = self.migration_const_s
        if isinstance(c, bool) or not isinstance(c, Real) or not math.isfinite(c) or c < 0:
            raise ValueError(f"migration_const_s must be a finite number >= 0, got {c!r}")
        object.__setattr__(self, "migration_const_s", float(c))


class IterationDraw(NamedTuple):
    """One iteration of one job: its stochastic phase durations (s) and tokens.

    ``rollout_s``: when the job's rollout is complete (training may start);
    ``rollout_node_s``: how long the rollout holds all its rollout GPUs (= ``rollout_s``
    without migration); after it, ``tail_gpus`` GPUs keep serving the tail for
    ``tail_s = rollout_s - rollout_node_s``. ``threshold_s``: when the migration
    threshold fraction of responses is done; ``tokens``: generated response tokens.
    """

    iteration: int
    progress: float
    length_factor: float
    rollout_s: float
    rollout_node_s: float
    train_s: float
    tokens: float
    longest_tokens: float
    threshold_s: float
    migrated: bool
    migration_overhead_s: float
    tail_gpus: int

    @property
    def tail_s(self) -> float:
        """How long the consolidated tail runs after the rollout nodes are released."""
        return self.rollout_s - self.rollout_node_s


@dataclass(frozen=True, slots=True)
class RolloutCoefficients:
    """Fitted coefficients of the per-replica rollout time (docs/stochastic.md, eq. R1).

    ``exact`` is False when the two anchors (expected and worst-case rollout) cannot both
    be met; the expected time is then kept and ``worst_case_s`` is the model's own.
    """

    fixed_s: float
    tail_s: float
    work_s: float
    exact: bool

    @property
    def worst_case_s(self) -> float:
        """Rollout time when every response reaches the maximum length."""
        return self.fixed_s + self.tail_s + self.work_s


# --------------------------------------------------------------------------- length model


class _Lengths:
    """Fast vectorised quantiles and clipped partial moments of a truncated lognormal."""

    def __init__(self, dist: ResponseLengthDist) -> None:
        self.mu, self.sigma = dist.mu, dist.sigma
        self.lo, self.hi = dist.min_tokens, dist.max_tokens
        self.mean = dist.mean()
        self.a = (math.log(self.lo) - self.mu) / self.sigma
        self.b = (math.log(self.hi) - self.mu) / self.sigma
        self.phi_a, self.phi_b = float(special.ndtr(self.a)), float(special.ndtr(self.b))
        self.q_a, self.q_b = float(special.ndtr(-self.a)), float(special.ndtr(-self.b))
        self.mass = self.phi_b - self.phi_a

    def quantile(self, one_minus_u: FloatArray) -> FloatArray:
        """Inverse CDF at ``u``, given ``1 - u`` (precise in the upper tail, where maxima lie)."""
        z = -special.ndtri(self.q_b + one_minus_u * (self.q_a - self.q_b))
        return np.clip(np.exp(self.mu + self.sigma * z), self.lo, self.hi)

    def _z(self, x: FloatArray) -> FloatArray:
        """Standardised log-length, clipped to the truncation bounds."""
        x = np.clip(x, self.lo, self.hi)
        return np.clip((np.log(x) - self.mu) / self.sigma, self.a, self.b)

    def cdf(self, x: FloatArray) -> FloatArray:
        """P(L <= x)."""
        return np.clip((special.ndtr(self._z(x)) - self.phi_a) / self.mass, 0.0, 1.0)

    def partial(self, lo: FloatArray, hi: FloatArray, k: int) -> FloatArray:
        """E[L^k ; lo < L <= hi] (zero where hi <= lo)."""
        hi = np.maximum(hi, lo)
        s = k * self.sigma
        scale = math.exp(k * self.mu + 0.5 * s * s) / self.mass
        return scale * np.maximum(
            special.ndtr(self._z(hi) - s) - special.ndtr(self._z(lo) - s), 0.0
        )

    def clipped_moment(self, f: FloatArray, upper: FloatArray, cond: FloatArray,
                       k: int) -> FloatArray:
        """E[clip(f L, 1, upper)^k ; L <= cond], unnormalised (docs/stochastic.md, eq. L3)."""
        lo_b = 1.0 / f
        hi_b = upper / f
        cut = np.minimum(hi_b, cond)
        below = self.cdf(np.minimum(lo_b, cond))
        middle = f**k * self.partial(lo_b, cut, k)
        above = upper**k * np.maximum(self.cdf(cond) - self.cdf(np.minimum(hi_b, cond)), 0.0)
        return below + middle + above


# --------------------------------------------------------------------------- the sampler


class PhaseSampler:
    """Per-job sampler of stochastic phase durations, ``sample(iteration, progress)``.

    ``times`` overrides the job's modelled phase times (e.g. training on fewer GPUs in a
    group); ``drift`` scales response lengths over training progress, as far as
    ``drift_reach`` says (``profile``: the maximum length scales too, so drifted phases can
    exceed the worst case of ``times``; ``cap``: lengths stay below the maximum);
    ``total_iterations`` (default: the job's) defines the nominal progress
    ``iteration / total_iterations`` for which draws are precomputed in vectorised blocks
    (the fast path). ``lengths`` (:class:`rollmux.sim.lengths.LengthSource`) draws each
    iteration's responses from a real workload's recorded steps instead of the lognormal
    (docs/stochastic.md, section 8); the rollout coefficients and the worst case stay the
    lognormal model's, and None keeps every draw as it was.
    """

    job: RLJob
    resolved: ResolvedJob
    config: StochasticConfig
    drift: DriftTemplate
    drift_reach: DriftReach
    root_seed: int
    total_iterations: int
    times: PhaseTimes
    coefficients: RolloutCoefficients
    replicas: int
    tensor_parallel: int
    rollout_nodes: int
    responses: int
    prompt_tokens: float
    expected_tokens: float
    max_tokens: float
    _hash: int
    _lengths: _Lengths
    _per_replica: FloatArray
    _threshold_rank: int
    _kv_bytes_per_token: float
    _kv_capacity: float
    _nvlink_bytes_per_s: float
    _intra_bytes_per_s: float
    _f_grid: FloatArray
    _others_mean: FloatArray
    _others_var: FloatArray
    _min_log_grid: FloatArray
    _min_mean: FloatArray
    _rng: np.random.Generator
    _raw_chunks: list[tuple[FloatArray, FloatArray, FloatArray]]
    _window_start: int
    _window: list[IterationDraw]
    _window_raw: tuple[FloatArray, FloatArray, FloatArray]
    real_lengths: JobLengths | None

    def __init__(
        self,
        resolved: ResolvedJob,
        *,
        root_seed: int = 0,
        config: StochasticConfig | None = None,
        drift: DriftTemplate = NO_DRIFT,
        drift_reach: DriftReach | str = DriftReach.PROFILE,
        times: PhaseTimes | None = None,
        total_iterations: int | None = None,
        lengths: LengthSource | None = None,
    ) -> None:
        """Take the resolved job's shape and phase times and fit the rollout coefficients."""
        if not isinstance(resolved, ResolvedJob):
            raise ValueError(f"resolved must be a rollmux.model.ResolvedJob, got {resolved!r}")
        job = resolved.job
        if isinstance(root_seed, bool) or not isinstance(root_seed, Integral) or root_seed < 0:
            raise ValueError(f"root_seed must be an integer >= 0, got {root_seed!r}")
        if not isinstance(drift, DriftTemplate):
            raise ValueError(f"drift must be a DriftTemplate, got {drift!r}")
        total = job.iterations if total_iterations is None else total_iterations
        if isinstance(total, bool) or not isinstance(total, Integral) or total < 1:
            raise ValueError(f"total_iterations must be an integer >= 1, got {total!r}")
        config = config or StochasticConfig()
        self.job = job
        self.resolved = resolved
        self.config = config
        if not isinstance(config, StochasticConfig):
            raise ValueError(f"config must be a StochasticConfig, got {config!r}")
        self.drift = drift
        self.drift_reach = parse_reach(drift_reach)
        self.root_seed = int(root_seed)
        self.total_iterations = int(total)
        times = times if times is not None else resolved.times
        if not isinstance(times, PhaseTimes):
            raise ValueError(f"times must be a PhaseTimes, got {times!r}")
        self.times = times
        self._hash = stable_job_hash(job.job_id)
        self._lengths = _Lengths(resolved.length_dist())
        shape = resolved.shape
        self.replicas = shape.replicas
        self.tensor_parallel = shape.tensor_parallel
        self.rollout_nodes = shape.nodes
        self.responses = resolved.responses_per_iter
        if self.responses < self.replicas:
            raise ValueError(
                f"job {job.job_id!r}: {self.responses} responses cannot occupy "
                f"{self.replicas} rollout replicas"
            )
        base, extra = divmod(self.responses, self.replicas)
        self._per_replica = np.array(
            [base + (1 if r < extra else 0) for r in range(self.replicas)], dtype=float
        )
        self.prompt_tokens = float(resolved.prompt_tokens)
        self.expected_tokens = self.responses * self._lengths.mean
        self.max_tokens = self.responses * self._lengths.hi
        self._threshold_rank = math.ceil(config.migration_threshold * self.responses)
        self._kv_bytes_per_token = resolved.kv_bytes_per_token
        self._kv_capacity = resolved.kv_capacity_bytes
        self._nvlink_bytes_per_s = resolved.nvlink_bytes_per_s
        self._intra_bytes_per_s = resolved.intra_bytes_per_s
        self._init_model()
        self._rng = np.random.default_rng([self.root_seed, self._hash])
        self._raw_chunks = []
        self._window_start = 0
        self._window = []
        self._window_raw = (np.empty((0, 0)), np.empty((0, 0)), np.empty(0))
        if lengths is not None and not isinstance(lengths, LengthSource):
            raise ValueError(f"lengths must be a LengthSource or None, got {lengths!r}")
        self.real_lengths = None if lengths is None else lengths.for_job(
            job.job_id, job.turns, self.root_seed, self._lengths.hi)

    # ------------------------------------------------------------------ model constants

    def _raw(self, rng: np.random.Generator, k: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Raw variates of ``k`` iterations: max uniforms, sum normals, threshold betas."""
        v = rng.random((k, self.replicas))
        z = rng.standard_normal((k, self.replicas))
        n, rank = self.responses, self._threshold_rank
        beta = rng.beta(rank, n - rank + 1, size=k)
        return v, z, beta

    def _init_model(self) -> None:
        """The factor tables and the rollout coefficients, from the memo where one applies.

        Without drift, what :meth:`_init_factor_tables` and :meth:`_calibrate` read is the
        key below (the calibration stream is seeded by the job's id, not the root seed;
        the training times never enter), so a sampler of the same job at another seed or
        with other training times (each pair of a micro-benchmark at every seed, each
        multiplier of the what-it-would-take search) gets the same arrays and floats.
        """
        key: tuple[object, ...] | None = None
        if self.drift is NO_DRIFT:
            key = (self.job.job_id, self._hash, self.resolved.length_dist(), self.drift_reach,
                   self.config.calibration_draws, self.responses, self.replicas,
                   self._threshold_rank, self.times.rollout_s, self.times.rollout_max_s,
                   self.resolved.rollout_fixed_s)
            hit = _MODEL_MEMO.get(key)
            if hit is not None:
                (self._f_grid, self._others_mean, self._others_var, self._min_log_grid,
                 self._min_mean, self.coefficients) = hit
                return
        self._init_factor_tables()
        self.coefficients = self._calibrate()
        if key is not None:
            if len(_MODEL_MEMO) >= _MODEL_MEMO_SIZE:
                _MODEL_MEMO.clear()
            arrays = (self._f_grid, self._others_mean, self._others_var, self._min_log_grid,
                      self._min_mean)
            for arr in arrays:
                arr.setflags(write=False)
            _MODEL_MEMO[key] = (*arrays, self.coefficients)

    def _init_factor_tables(self) -> None:
        """Per drift factor f: mean of the non-longest responses of a replica, and variance.

        The longest of ``n_r`` responses is drawn exactly; the other ``n_r - 1`` get the mean
        ``(n_r E[Y] - E[Y_max]) / (n_r - 1)`` (so the replica's sum has the exact mean
        ``n_r E[Y]``) and the unconditional variance of ``Y = clip(f L, 1, c(f))`` with
        the cap ``c(f)`` of :meth:`length_cap` (docs/stochastic.md, eq. L4, D3). Tabulated on
        a grid of f, interpolated per draw.
        """
        lengths = self._lengths
        if self.drift is NO_DRIFT:
            grid = np.array([1.0])
        else:
            ends = length_factors(self.drift, np.array([0.0, 1.0]))
            grid = np.linspace(float(ends.min()), float(ends.max()), 65)
        points = 2048
        log_v = np.log((np.arange(points) + 0.5) / points)
        hi = np.full_like(grid, lengths.hi)
        cap = self.length_cap(grid)
        mean = lengths.clipped_moment(grid, cap, hi, 1)
        var = np.maximum(lengths.clipped_moment(grid, cap, hi, 2) - mean**2, 0.0)
        others = np.empty((grid.size, self.replicas))
        for n in np.unique(self._per_replica):
            raw_max = lengths.quantile(-np.expm1(log_v / n))
            top = np.clip(grid[:, None] * raw_max[None, :], 1.0, cap[:, None]).mean(axis=1)
            cols = self._per_replica == n
            value = (n * mean - top) / (n - 1.0) if n > 1 else np.zeros_like(mean)
            others[:, cols] = value[:, None]
        self._f_grid, self._others_mean, self._others_var = grid, others, var
        # E[min(L, y)] on a log grid of y, for the threshold's completed work (eq. M2).
        ys = np.exp(np.linspace(math.log(lengths.lo), math.log(lengths.hi), 1025))
        below = lengths.partial(np.full_like(ys, lengths.lo * 0.5), ys, 1)
        self._min_log_grid = np.log(ys)
        self._min_mean = below + ys * (1.0 - lengths.cdf(ys))

    def _replica_stats(
        self, v: FloatArray, z: FloatArray, f: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Per-replica longest (scaled) length and scaled length sum, shape [k][replica]."""
        lengths = self._lengths
        n_r = self._per_replica
        log_v = np.log(np.maximum(v, 1e-300)) / n_r
        raw_max = lengths.quantile(-np.expm1(log_v))
        top = np.clip(f[:, None] * raw_max, 1.0, self.length_cap(f)[:, None])
        grid = self._f_grid
        if grid.size == 1:
            m1, var = self._others_mean[0], self._others_var[0]
        else:
            pos = np.clip((f - grid[0]) / (grid[1] - grid[0]), 0.0, grid.size - 1.0)
            lo = np.minimum(pos.astype(int), grid.size - 2)
            w = (pos - lo)[:, None]
            m1 = (1.0 - w) * self._others_mean[lo] + w * self._others_mean[lo + 1]
            var = ((1.0 - w[:, 0]) * self._others_var[lo] + w[:, 0] * self._others_var[lo + 1])
            var = var[:, None]
        others = n_r - 1.0
        total = top + others * m1 + np.sqrt(others * var) * z
        return top, np.clip(total, top + others, n_r * top)

    def _calibrate(self) -> RolloutCoefficients:
        """Fit fixed/tail/work coefficients to the expected and worst-case rollout times."""
        expected, worst = self.times.rollout_s, self.times.rollout_max_s
        rng = np.random.default_rng([_CALIBRATION_SALT, self._hash])
        v, z, _ = self._raw(rng, self.config.calibration_draws)
        f = np.ones(v.shape[0])
        top, total = self._replica_stats(v, z, f)
        tail_frac = top / self._lengths.hi
        work_frac = total / (self._per_replica * self._lengths.hi)

        def g(rho: float) -> float:
            return float(np.mean(np.max(rho * tail_frac + (1.0 - rho) * work_frac, axis=1)))

        g0, g1 = g(0.0), g(1.0)
        fixed = min(self.resolved.rollout_fixed_s, 0.9 * expected)
        target = (expected - fixed) / (worst - fixed) if worst > fixed else 1.0
        exact = True
        if target > g1 and g1 < 1.0:
            rho = 1.0
            fixed = (expected - worst * g1) / (1.0 - g1)
        elif target >= g0:
            lo, hi = 0.0, 1.0
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if g(mid) < target else (lo, mid)
            rho = 0.5 * (lo + hi)
        else:
            rho = 0.0
            fixed = (expected - worst * g0) / (1.0 - g0)
            if fixed < 0.0:
                # Stragglers alone push the mean above the model's expectation: keep the
                # expected time, let the worst case fall below the model's (documented).
                fixed, exact = 0.0, False
                return RolloutCoefficients(0.0, 0.0, expected / g0, exact)
        span = worst - fixed
        return RolloutCoefficients(fixed, rho * span, (1.0 - rho) * span, exact)

    # ------------------------------------------------------------------ drawing

    def length_cap(self, factor: FloatArray) -> FloatArray:
        """Longest possible response at drift factor ``f`` (eq. D3): f L (profile) or L (cap)."""
        f = np.asarray(factor, dtype=float)
        if self.drift_reach is DriftReach.PROFILE:
            return self._lengths.hi * f
        return np.full_like(f, self._lengths.hi)

    def drifted_times(self, progress: float) -> PhaseTimes:
        """The job's phase profile at training ``progress`` under its drift (eq. D4).

        What the one-shot profiler would measure at the job's maximum token limit at that
        progress, with the expected times beside it. Under ``profile`` reach every
        length-dependent part scales by f(p): the rollout beyond its fixed part, and the
        generated tokens that training time follows (docs/stochastic.md, T1). Under ``cap``
        the maximum does not move, so the profile is the one of admission (``times``).
        """
        f = length_factor(self.drift, progress)
        t = self.times
        if self.drift_reach is DriftReach.CAP or f == 1.0:
            return t
        fixed = self.coefficients.fixed_s
        slope = (t.train_max_s - t.train_s) / (self.max_tokens - self.expected_tokens)
        train_s = max(t.train_s + slope * (f - 1.0) * self.expected_tokens, 1e-3 * t.train_s)
        train_max_s = t.train_max_s + slope * (f - 1.0) * self.max_tokens
        return replace(
            t,
            rollout_s=fixed + f * (t.rollout_s - fixed),
            rollout_max_s=fixed + f * (t.rollout_max_s - fixed),
            train_s=train_s,
            train_max_s=max(train_max_s, train_s),
        )

    def nominal_progress(self, iteration: int) -> float:
        """``min(1, iteration / total_iterations)``, the progress of the fast path."""
        return min(1.0, iteration / self.total_iterations)

    def _derive_arrays(self, v: FloatArray, z: FloatArray, beta: FloatArray,
                       progress: FloatArray, first: int = 0) -> dict[str, NDArray[Any]]:
        """Phase durations of consecutive iterations from ``first`` from their raw variates
        (vectorised)."""
        cfg, lengths, coef = self.config, self._lengths, self.coefficients
        big = lengths.hi
        f = length_factors(self.drift, progress)
        real = self.real_lengths
        if real is not None:
            steps = real.step_indices(first, first + v.shape[0])
            top, total = real.replica_stats(steps, v, z, f, self.length_cap(f),
                                            self._per_replica)
        else:
            top, total = self._replica_stats(v, z, f)
        per_replica = (coef.tail_s * top / big
                       + coef.work_s * total / (self._per_replica * big))
        rollout = coef.fixed_s + per_replica.max(axis=1)
        longest = top.max(axis=1)
        tokens = total.sum(axis=1)
        if real is not None:
            x_q, done_mean = real.threshold(steps, beta, f, self.length_cap(f), longest)
        else:
            # Threshold: the rank-k order statistic of all responses (exact marginal).
            x_q = np.minimum(np.clip(f * lengths.quantile(1.0 - beta), 1.0,
                                     self.length_cap(f)), longest)
            # E[min(f L, x)] = f E[min(L, x / f)] from a table (the 1-token clip ignored).
            done_mean = f * np.interp(np.log(x_q / f), self._min_log_grid, self._min_mean)
        threshold = np.minimum(
            coef.fixed_s + coef.tail_s * x_q / big + coef.work_s * done_mean / big, rollout
        )
        # Migration: the unfinished responses' KV cache moves onto the tail replicas.
        tail_seqs = self.responses - self._threshold_rank
        kv_bytes = tail_seqs * self._kv_bytes_per_token * (self.prompt_tokens + x_q)
        need = np.ceil(kv_bytes / self._kv_capacity)
        tail_replicas = np.clip(np.maximum(cfg.migration_replicas, need), 1, self.replicas)
        moved = kv_bytes * (self.replicas - tail_replicas) / self.replicas
        if self.rollout_nodes == 1:
            bandwidth = tail_replicas * self.tensor_parallel * self._nvlink_bytes_per_s
        else:
            bandwidth = np.full_like(moved, self._intra_bytes_per_s)
        overhead = cfg.migration_const_s + moved / bandwidth
        migrate = (cfg.migration & (tail_replicas < self.replicas)
                   & (threshold + overhead < rollout))
        node_s = np.where(migrate, threshold + overhead, rollout)
        done_s = np.where(migrate, rollout + overhead, rollout)
        # Training: the line through (E tokens, train_s) and (max tokens, train_max_s).
        t_exp, t_max = self.times.train_s, self.times.train_max_s
        slope = (t_max - t_exp) / (self.max_tokens - self.expected_tokens)
        train = np.maximum(t_exp + slope * (tokens - self.expected_tokens),
                           1e-3 * t_exp)
        tail_gpus = (tail_replicas * self.tensor_parallel).astype(int)
        return {
            "progress": progress, "length_factor": f, "rollout_s": done_s,
            "rollout_node_s": node_s, "train_s": train, "tokens": tokens,
            "longest_tokens": longest, "threshold_s": threshold, "migrated": migrate,
            "migration_overhead_s": np.where(migrate, overhead, 0.0),
            "tail_gpus": np.where(migrate, tail_gpus, 0),
        }

    def _derive(self, first: int, v: FloatArray, z: FloatArray, beta: FloatArray,
                progress: FloatArray) -> list[IterationDraw]:
        """Draws of consecutive iterations from their raw variates."""
        cols = self._derive_arrays(v, z, beta, progress, first)
        rows = zip(*(cols[name].tolist() for name in IterationDraw._fields[1:]), strict=True)
        make = tuple.__new__
        return [make(IterationDraw, (first + i, *row)) for i, row in enumerate(rows)]

    def _raw_range(self, first: int, stop: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Raw variates of iterations [first, stop), from the job's one stream in fixed chunks.

        Chunks of :data:`RAW_CHUNK` iterations are drawn in order from
        ``default_rng([root_seed, blake2b(job_id)])`` and kept, so a draw does not depend on
        which iterations were asked for before it.
        """
        while len(self._raw_chunks) * RAW_CHUNK < stop:
            self._raw_chunks.append(self._raw(self._rng, RAW_CHUNK))
        lo, hi = first // RAW_CHUNK, -(-stop // RAW_CHUNK)
        parts = self._raw_chunks[lo:hi]
        cut = slice(first - lo * RAW_CHUNK, stop - lo * RAW_CHUNK)
        return tuple(  # type: ignore[return-value]
            np.concatenate([part[i] for part in parts])[cut] for i in range(3)
        )

    def _load_window(self, first: int) -> None:
        """Derive a window of draws from ``first`` (up to ``block_size``, within the job)."""
        size = self.config.block_size
        if first < self.total_iterations:
            size = min(size, self.total_iterations - first)
        raw = self._raw_range(first, first + size)
        progress = np.minimum(1.0, np.arange(first, first + size) / self.total_iterations)
        self._window = self._derive(first, *raw, progress)
        self._window_raw = raw
        self._window_start = first

    def sample(self, iteration: int, progress: float | None = None) -> IterationDraw:
        """The draw of ``iteration`` at training ``progress`` (default: the nominal one).

        Deterministic in (root seed, job id, iteration, progress). The fast path (no drift,
        or the nominal progress) returns a precomputed draw.
        """
        if type(iteration) is not int:
            if isinstance(iteration, bool) or not isinstance(iteration, Integral):
                raise ValueError(f"iteration must be an integer >= 0, got {iteration!r}")
            iteration = int(iteration)
        if iteration < 0:
            raise ValueError(f"iteration must be an integer >= 0, got {iteration!r}")
        offset = iteration - self._window_start
        if not 0 <= offset < len(self._window):
            self._load_window(iteration)
            offset = 0
        draw = self._window[offset]
        if progress is None or progress == draw.progress:
            return draw
        if isinstance(progress, bool) or not isinstance(progress, Real) or not (
                0.0 <= progress <= 1.0):
            raise ValueError(f"progress must be a number in [0, 1], got {progress!r}")
        if self.drift is NO_DRIFT:
            return draw._replace(progress=float(progress))
        v, z, beta = self._window_raw
        s = slice(offset, offset + 1)
        return self._derive(iteration, v[s], z[s], beta[s], np.array([float(progress)]))[0]

    def arrays(self, iterations: int, first: int = 0) -> dict[str, NDArray[Any]]:
        """Columns of :class:`IterationDraw` (minus ``iteration``) for ``iterations``
        consecutive iterations from ``first`` at nominal progress, in one vectorised pass.

        Equal to the fields of :meth:`sample`'s draws; the cheapest way to fetch a whole job.
        """
        if isinstance(iterations, bool) or not isinstance(iterations, Integral) or iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
        if isinstance(first, bool) or not isinstance(first, Integral) or first < 0:
            raise ValueError(f"first must be an integer >= 0, got {first!r}")
        stop = int(first) + int(iterations)
        progress = np.minimum(1.0, np.arange(first, stop) / self.total_iterations)
        return self._derive_arrays(*self._raw_range(int(first), stop), progress, int(first))

    def table(self, iterations: int, first: int = 0) -> list[IterationDraw]:
        """Draws of ``iterations`` consecutive iterations from ``first`` (nominal progress)."""
        if isinstance(iterations, bool) or not isinstance(iterations, Integral) or iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
        return [self.sample(first + i) for i in range(int(iterations))]

    def worst_case(self) -> IterationDraw:
        """The deterministic draw with every response at the maximum length (no drift)."""
        coef, t = self.coefficients, self.times
        return IterationDraw(
            iteration=-1, progress=0.0, length_factor=1.0, rollout_s=coef.worst_case_s,
            rollout_node_s=coef.worst_case_s, train_s=t.train_max_s, tokens=self.max_tokens,
            longest_tokens=self._lengths.hi, threshold_s=coef.worst_case_s, migrated=False,
            migration_overhead_s=0.0, tail_gpus=0,
        )


# --------------------------------------------------------------------------- woven simulation

WOVEN_PHASE_COLUMNS: tuple[str, ...] = TIMELINE_COLUMNS
"""Columns of :func:`simulate_woven`'s table: those of the schedule's timeline
(:data:`rollmux.schedule.eventsim.TIMELINE_COLUMNS`), except that a tail row names only the
first node its GPUs are on."""


@dataclass(frozen=True)
class WovenTables:
    """Per-iteration phase tables ``[iteration][job]`` of a group (seconds, GPUs).

    ``node_s``: rollout node occupancy at full capacity (switch included); ``tail_s``:
    the migrated tail after the nodes are released; ``tail_gpus``: GPUs the tail keeps;
    ``train_s``: training node occupancy (sync and switch included).
    """

    node_s: FloatArray
    tail_s: FloatArray
    tail_gpus: NDArray[np.int64]
    train_s: FloatArray

    def __post_init__(self) -> None:
        """Coerce to arrays of one shape; durations positive (tails >= 0), GPUs >= 0."""
        shape = np.shape(self.node_s)
        for name in ("node_s", "tail_s", "tail_gpus", "train_s"):
            arr = np.asarray(getattr(self, name), dtype=int if name == "tail_gpus" else float)
            if arr.ndim != 2 or arr.shape != shape or arr.size == 0:
                raise ValueError(f"{name} must be a non-empty [iteration][job] table of shape "
                                 f"{shape}, got shape {arr.shape}")
            bad = ~np.isfinite(arr) | (arr < 0) if name in ("tail_s", "tail_gpus") else (
                ~np.isfinite(arr) | (arr <= 0))
            if bad.any():
                k, j = map(int, np.argwhere(bad)[0])
                raise ValueError(f"{name}[{k}][{j}] = {arr[k, j]!r}: out of range")
            object.__setattr__(self, name, arr)

    @property
    def iterations(self) -> int:
        """Rows of the tables."""
        return int(self.node_s.shape[0])

    @property
    def n_jobs(self) -> int:
        """Columns of the tables."""
        return int(self.node_s.shape[1])


def _pins(name: str, pins: Sequence[Sequence[Hashable]], n: int) -> list[tuple[Hashable, ...]]:
    """Per-job node tuples, validated."""
    if isinstance(pins, str) or len(pins) != n:
        raise ValueError(f"{name} must list the nodes of each of the {n} jobs, got {pins!r}")
    out = []
    for j, entry in enumerate(pins):
        nodes = tuple(entry) if isinstance(entry, Sequence) and not isinstance(entry, str) else (
            entry,)
        if not nodes or len(set(nodes)) != len(nodes):
            raise ValueError(f"{name}[{j}] = {entry!r}: needs distinct node ids")
        out.append(nodes)
    return out


def _woven_records(
    tables: WovenTables,
    rollout_nodes: Sequence[Sequence[Hashable]],
    train_nodes: Sequence[Sequence[Hashable]],
    order: Sequence[int] | None,
    gpus_per_node: int,
) -> list[PhaseRecord]:
    """:func:`simulate_woven`'s phase records, as the reference simulator returns them."""
    n, iters = tables.n_jobs, tables.iterations
    r_pins = _pins("rollout_nodes", rollout_nodes, n)
    t_pins = _pins("train_nodes", train_nodes, n)
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, Integral) or (
            gpus_per_node < 1):
        raise ValueError(f"gpus_per_node must be an integer >= 1, got {gpus_per_node!r}")
    perm = list(range(n)) if order is None else [int(o) for o in order]
    if sorted(perm) != list(range(n)):
        raise ValueError(f"order = {order!r}: expected a permutation of 0..{n - 1}")
    schedule = build_schedule(tables.node_s[0].tolist(), tables.train_s[0].tolist(), r_pins,
                              t_pins, round_robin_node_orders(r_pins, t_pins, perm))
    return simulate(schedule, iters, rollout_s=tables.node_s.tolist(),
                    train_s=tables.train_s.tolist(), tail_s=tables.tail_s.tolist(),
                    tail_gpus=tables.tail_gpus.tolist(), gpus_per_node=int(gpus_per_node))


def simulate_woven(
    tables: WovenTables,
    rollout_nodes: Sequence[Sequence[Hashable]],
    train_nodes: Sequence[Sequence[Hashable]],
    order: Sequence[int] | None = None,
    gpus_per_node: int = 8,
) -> pd.DataFrame:
    """Execute round-robin meta-iterations with per-iteration tables and migrated tails.

    Every node serves its jobs in ``order`` (default: index order), one phase at a time:
    the reference simulator :func:`rollmux.schedule.eventsim.simulate` (static
    discipline) runs the group by the rules of :mod:`rollmux.phases`. A rollout needs
    ``node_s`` seconds of its nodes at full capacity; while earlier jobs' tails still
    hold GPUs of a node it progresses at the free share of the node (eq. S1 of
    docs/stochastic.md). After it the job's tail runs ``tail_s`` on ``tail_gpus`` GPUs of
    its first rollout nodes, then its training runs ``train_s``. Returns one row per phase
    and node (columns :data:`WOVEN_PHASE_COLUMNS`).
    """
    frame = to_frame(_woven_records(tables, rollout_nodes, train_nodes, order, gpus_per_node))
    return frame.sort_values(["start_s", "node", "job"], kind="stable").reset_index(drop=True)


def _train_end_times(records: Sequence[PhaseRecord], n_jobs: int) -> FloatArray:
    """:func:`iteration_end_times` of the records' frame, without the frame (same floats)."""
    ends: dict[tuple[int, int], float] = {}
    for r in records:
        if r.phase == "train":
            key = (r.iteration, r.job)
            if key not in ends or r.end_s > ends[key]:
                ends[key] = r.end_s
    rows = sorted({iteration for iteration, _ in ends})
    index = {iteration: i for i, iteration in enumerate(rows)}
    table = np.full((len(rows), n_jobs), np.nan)
    for (iteration, job), end in ends.items():
        if 0 <= job < n_jobs:
            table[index[iteration], job] = end
    return table


def iteration_end_times(frame: pd.DataFrame, n_jobs: int) -> FloatArray:
    """End time of each job's training per iteration, shape [iteration][job]."""
    train = frame[frame["phase"] == "train"].groupby(["iteration", "job"])["end_s"].max()
    table = train.unstack("job").reindex(columns=range(n_jobs))
    return table.to_numpy(dtype=float)


def steady_iteration_s(ends: FloatArray, skip: int | None = None) -> FloatArray:
    """Each job's mean iteration time after ``skip`` warm-up iterations (default N // 10).

    ``(end[N-1] - end[skip-1]) / (N - skip)``; with ``skip = 0`` the first iteration
    counts from time 0.
    """
    ends = np.asarray(ends, dtype=float)
    n_iter = ends.shape[0]
    if skip is None:
        skip = max(1, n_iter // 10)
    if isinstance(skip, bool) or not isinstance(skip, Integral) or not 0 <= int(skip) < n_iter:
        raise ValueError(f"skip must be an integer in [0, {n_iter - 1}], got {skip!r}")
    first = int(skip)
    start = ends[first - 1] if first > 0 else np.zeros(ends.shape[1])
    return (ends[-1] - start) / (n_iter - first)


# --------------------------------------------------------------------------- pairs


def pair_tables(
    pair: Sequence[ResolvedJob],
    *,
    seed: int = 0,
    iterations: int = 60,
    config: StochasticConfig | None = None,
) -> WovenTables:
    """Per-iteration tables of resolved jobs woven on one rollout node and one training node.

    Both nodes are shared, so every phase pays the job's warm switch; training also
    carries the sync and is rescaled to one training node (compute-bound).
    """
    if isinstance(pair, ResolvedJob) or len(pair) < 2:
        raise ValueError(f"pair must hold at least two resolved jobs, got {pair!r}")
    for resolved in pair:
        if not isinstance(resolved, ResolvedJob):
            raise ValueError(f"pair entries must be resolved jobs, got {resolved!r}")
    ids = [resolved.job_id for resolved in pair]
    if len(set(ids)) != len(ids):
        raise ValueError(f"pair: job ids must differ, got {ids!r}")
    cols: list[list[IterationDraw]] = []
    extra: list[tuple[float, float]] = []
    for resolved in pair:
        job = resolved.job
        if resolved.shape.nodes != 1:
            raise ValueError(f"job {job.job_id!r}: rollout_gpus={job.rollout_gpus} spans more "
                             f"than one rollout node")
        times = resolved.times
        scale = job.train_gpus / resolved.gpus_per_node
        times = replace(times, train_s=times.train_s * scale,
                        train_max_s=times.train_max_s * scale)
        sampler = PhaseSampler(resolved, root_seed=seed, config=config, times=times,
                               total_iterations=iterations)
        cols.append(sampler.table(iterations))
        # Both nodes are shared: the group model's switch of a shared phase.
        extra.append((steady_switch_s(times, shared=True), times.sync_s))
    rows = list(zip(*cols, strict=True))
    node = [[rollout_work_s(extra[j][0], d.rollout_node_s) for j, d in enumerate(row)]
            for row in rows]
    tail = [[d.tail_s for d in row] for row in rows]
    gpus = [[d.tail_gpus for d in row] for row in rows]
    train = [[training_occupancy_s(extra[j][0], d.train_s, extra[j][1])
              for j, d in enumerate(row)] for row in rows]
    return WovenTables(np.array(node), np.array(tail), np.array(gpus), np.array(train))


def _throughput_per_h(tables: WovenTables, rollout: Sequence[Sequence[int]],
                      train: Sequence[Sequence[int]], gpus_per_node: int) -> float:
    """Steady-state job-iterations per hour of a simulated group."""
    records = _woven_records(tables, rollout, train, None, gpus_per_node)
    per_job = steady_iteration_s(_train_end_times(records, tables.n_jobs))
    return float(np.sum(3600.0 / per_job))


def migration_speedup(
    pair: Sequence[ResolvedJob],
    *,
    seed: int = 0,
    iterations: int = 60,
    config: StochasticConfig | None = None,
) -> float:
    """Throughput with long-tail migration over without, jobs woven on one node per pool.

    The same draws (same seed) feed both runs; only ``config.migration`` differs.
    """
    cfg = config or StochasticConfig()
    on = replace(cfg, migration=True)
    off = replace(cfg, migration=False)
    n = len(pair)
    pins = [[0]] * n
    tables_on = pair_tables(pair, seed=seed, iterations=iterations, config=on)
    gpn = pair[0].gpus_per_node
    with_mig = _throughput_per_h(tables_on, pins, pins, gpn)
    without = _throughput_per_h(pair_tables(pair, seed=seed, iterations=iterations,
                                            config=off), pins, pins, gpn)
    return with_mig / without
