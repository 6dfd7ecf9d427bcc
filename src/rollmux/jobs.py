"""The RL post-training job and its long-tailed response-length distribution.

A job is a frozen record; fields left as ``None`` are filled from the hardware
configuration's workload defaults or derived by :mod:`rollmux.phasetimes`.
See docs/model.md ("Job model", "Response lengths").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from rollmux.memo import memoised

__all__ = [
    "OPTIONAL_FIELDS",
    "PHASE_TIME_FIELDS",
    "RLJob",
    "ResponseLengthDist",
    "length_dist",
]


def _is_missing(value: Any) -> bool:
    """True for None and for float NaN (an empty CSV cell read by pandas)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _as_int(name: str, value: Any, minimum: int) -> int:
    """Coerce an integral value (int, numpy int, or integral float) to int >= ``minimum``."""
    if type(value) is int and value >= minimum:  # fast path: the ABC checks cost ~1 us each
        return value
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, Integral):
        out = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(float(value))
    else:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if out < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return out


def _as_float(name: str, value: Any, *, minimum: float, strict: bool) -> float:
    """Coerce a real number to a finite float above (``strict``) or at ``minimum``."""
    if type(value) is float and math.isfinite(value) and (
        value > minimum if strict else value >= minimum
    ):  # fast path for the common case; the general checks below give the error text
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    out = float(value)
    bad = out <= minimum if strict else out < minimum
    if not math.isfinite(out) or bad:
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be finite and {relation} {minimum}, got {value!r}")
    return out


# Optional fields that must be positive when given.
_POSITIVE_OPTIONAL: tuple[str, ...] = (
    "response_len_sigma", "rollout_mem_gb_per_node", "train_mem_gb_per_node",
    "rollout_s", "train_s", "rollout_max_s", "train_max_s",
)

#: Phase times a job may give directly (seconds); None derives them from the model.
PHASE_TIME_FIELDS: tuple[str, ...] = (
    "rollout_s",
    "train_s",
    "rollout_max_s",
    "train_max_s",
    "sync_s",
    "warm_switch_s",
    "cold_switch_s",
)

# Optional fields: None means "take the default / derive from the model".
OPTIONAL_FIELDS: tuple[str, ...] = (
    "mean_response_tokens",
    "response_len_sigma",
    "prompt_tokens",
    "prompts_per_iter",
    "responses_per_prompt",
    "rollout_mem_gb_per_node",
    "train_mem_gb_per_node",
    *PHASE_TIME_FIELDS,
)


@dataclass(frozen=True)
class RLJob:
    """One on-policy RL post-training job (model, response lengths, GPUs, SLO, phases)."""

    job_id: str
    model_size_b: float
    max_response_tokens: int
    mean_response_tokens: float | None = None
    response_len_sigma: float | None = None
    prompt_tokens: int | None = None
    prompts_per_iter: int | None = None
    responses_per_prompt: int | None = None
    turns: int = 1
    rollout_gpus: int = 8
    rollout_gpu_type: str = "H20"
    train_gpus: int = 8
    train_gpu_type: str = "H800"
    rollout_mem_gb_per_node: float | None = None
    train_mem_gb_per_node: float | None = None
    slo: float = 1.5
    arrival_s: float = 0.0
    iterations: int = 100
    rollout_s: float | None = None
    train_s: float | None = None
    rollout_max_s: float | None = None
    train_max_s: float | None = None
    sync_s: float | None = None
    warm_switch_s: float | None = None
    cold_switch_s: float | None = None
    workload: str = ""

    def __post_init__(self) -> None:
        """Validate every field; ValueError names the field and the offending value."""
        # Reads and writes go through the instance dict: a frozen dataclass forbids
        # setattr, and loading large traces constructs one job per distinct row.
        vals = self.__dict__
        for name in OPTIONAL_FIELDS:
            value = vals[name]
            if value is not None and _is_missing(value):
                vals[name] = None
        if not isinstance(self.job_id, str) or not self.job_id:
            raise ValueError(f"job_id must be a non-empty string, got {self.job_id!r}")
        for name in ("rollout_gpu_type", "train_gpu_type"):
            value = vals[name]
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if not isinstance(self.workload, str):
            raise ValueError(f"workload must be a string, got {self.workload!r}")

        vals["model_size_b"] = _as_float(
            "model_size_b", vals["model_size_b"], minimum=0, strict=True
        )
        vals["max_response_tokens"] = _as_int("max_response_tokens", vals["max_response_tokens"], 2)
        for name in ("turns", "rollout_gpus", "train_gpus", "iterations"):
            vals[name] = _as_int(name, vals[name], 1)
        for name in ("prompt_tokens", "prompts_per_iter", "responses_per_prompt"):
            if vals[name] is not None:
                vals[name] = _as_int(name, vals[name], 1)
        vals["slo"] = self._check_slo(vals["slo"])
        vals["arrival_s"] = _as_float("arrival_s", vals["arrival_s"], minimum=0, strict=False)
        for name in _POSITIVE_OPTIONAL:
            if vals[name] is not None:
                vals[name] = _as_float(name, vals[name], minimum=0, strict=True)
        for name in ("sync_s", "warm_switch_s", "cold_switch_s"):
            if vals[name] is not None:
                vals[name] = _as_float(name, vals[name], minimum=0, strict=False)

        def set_(name: str, value: Any) -> None:
            vals[name] = value

        if self.mean_response_tokens is not None:
            mean = _as_float(
                "mean_response_tokens", self.mean_response_tokens, minimum=1, strict=True
            )
            if mean >= self.max_response_tokens:
                raise ValueError(
                    "mean_response_tokens must be below max_response_tokens "
                    f"({self.max_response_tokens}), got {self.mean_response_tokens!r}"
                )
            set_("mean_response_tokens", mean)
        for expected, worst in (("rollout_s", "rollout_max_s"), ("train_s", "train_max_s")):
            lo, hi = getattr(self, expected), getattr(self, worst)
            if lo is not None and hi is not None and hi < lo:
                raise ValueError(f"{worst} must be >= {expected} ({lo!r}), got {hi!r}")
        if (
            self.warm_switch_s is not None
            and self.cold_switch_s is not None
            and self.cold_switch_s < self.warm_switch_s
        ):
            raise ValueError(
                f"cold_switch_s must be >= warm_switch_s ({self.warm_switch_s!r}), "
                f"got {self.cold_switch_s!r}"
            )

    @staticmethod
    def _check_slo(value: Any) -> float:
        """The SLO is a maximum slowdown versus running alone, so it cannot be below 1."""
        if type(value) is float and 1 <= value < math.inf:
            return value
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise ValueError(f"slo must be a finite number >= 1, got {value!r}")
        if value < 1:
            raise ValueError(
                f"slo must be >= 1 (a maximum slowdown versus running alone), got {value!r}"
            )
        return float(value)


def _log_interval_mass(lo: float, hi: float) -> float:
    """log P(lo < Z < hi) for a standard normal, stable far into either tail."""
    if lo > 0:
        lo, hi = -hi, -lo
    log_hi, log_lo = float(special.log_ndtr(hi)), float(special.log_ndtr(lo))
    return log_hi + math.log1p(-math.exp(log_lo - log_hi))


def _log_gauss_mass(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """log P(a < Z < b) elementwise: SciPy 1.17's ``scipy.stats._continuous_distns.
    _log_gauss_mass``, the same operations (see :func:`_truncnorm_ppf`)."""
    a, b = np.broadcast_arrays(a, b)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)

    def mass_case_left(a: Any, b: Any) -> Any:
        # log(Phi(b) - Phi(a)) = logsumexp of log Phi(b) and log Phi(a) + i pi
        return special.logsumexp([special.log_ndtr(b), special.log_ndtr(a) + np.pi * 1j],
                                 axis=0)

    out = np.full_like(a, fill_value=np.nan, dtype=np.complex128)
    if a[case_left].size:
        out[case_left] = mass_case_left(a[case_left], b[case_left])
    if a[case_right].size:
        out[case_right] = mass_case_left(-b[case_right], -a[case_right])
    if a[case_central].size:
        ac, bc = a[case_central], b[case_central]
        out[case_central] = special.log1p(-special.ndtr(ac) - special.ndtr(-bc))
    return np.real(out)


def _truncnorm_ppf(q: Any, a: float, b: float, loc: float, scale: float) -> Any:
    """``scipy.stats.truncnorm(a, b, loc=loc, scale=scale).ppf(q)`` for ``a < b`` and
    ``scale > 0``, bit for bit: SciPy 1.17's ``rv_continuous.ppf`` and
    ``truncnorm_gen._ppf`` done on scipy.special alone, because importing scipy.stats
    costs about 0.45 s of CPU in every process (every replay of the pipeline needs a
    quantile, see :func:`_expected_max`). tests/test_jobs.py checks it against scipy.stats
    for q in [0, 1] and bounds in either tail (equal arrays, not close ones)."""
    q = np.asarray(q, dtype=float)
    out = np.full(q.shape, np.nan)
    out[q == 0] = a * scale + loc
    out[q == 1] = b * scale + loc
    inside = (q > 0) & (q < 1)
    if np.any(inside):
        qs = np.atleast_1d(q)[np.atleast_1d(inside)]
        lo, hi = np.full_like(qs, a), np.full_like(qs, b)
        if a < 0:
            log_phi = special.logsumexp(
                [special.log_ndtr(lo), np.log(qs) + _log_gauss_mass(lo, hi)], axis=0)
            std = special.ndtri_exp(log_phi)
        else:
            log_phi = special.logsumexp(
                [special.log_ndtr(-hi), np.log1p(-qs) + _log_gauss_mass(lo, hi)], axis=0)
            std = -special.ndtri_exp(log_phi)
        values = std * np.atleast_1d(scale) + np.atleast_1d(loc)
        if out.ndim == 0:
            out = values.reshape(())
        else:
            out[inside] = values
    return out[()] if out.ndim == 0 else out


@dataclass(frozen=True)
class ResponseLengthDist:
    """Lognormal response length truncated to [min_tokens, max_tokens] with a given mean.

    ``mu`` is solved so that the truncated (conditional) mean equals ``mean_tokens``.
    Lengths are continuous token counts; callers that need integers round them.
    """

    max_tokens: float
    mean_tokens: float
    sigma: float
    min_tokens: float = 1.0

    def __post_init__(self) -> None:
        """Validate the bounds, mean and shape, then solve for ``mu``."""
        lo = _as_float("min_tokens", self.min_tokens, minimum=0, strict=True)
        hi = _as_float("max_tokens", self.max_tokens, minimum=lo, strict=True)
        mean = _as_float("mean_tokens", self.mean_tokens, minimum=lo, strict=True)
        if mean >= hi:
            raise ValueError(
                f"mean_tokens must be below max_tokens ({hi}), got {self.mean_tokens!r}"
            )
        sigma = _as_float("sigma", self.sigma, minimum=0, strict=True)
        object.__setattr__(self, "min_tokens", lo)
        object.__setattr__(self, "max_tokens", hi)
        object.__setattr__(self, "mean_tokens", mean)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "_mu", self._solve_mu())

    @property
    def mu(self) -> float:
        """Location of log(length) before truncation."""
        return float(self._mu)  # type: ignore[attr-defined]

    def _bounds(self, mu: float) -> tuple[float, float]:
        """Standardised truncation bounds of log(length) for a given ``mu``."""
        return (
            (math.log(self.min_tokens) - mu) / self.sigma,
            (math.log(self.max_tokens) - mu) / self.sigma,
        )

    def _moment_at(self, mu: float, k: float) -> float:
        """E[L^k] of the truncated lognormal with location ``mu`` (log-space, no underflow)."""
        a, b = self._bounds(mu)
        log_num = _log_interval_mass(a - k * self.sigma, b - k * self.sigma)
        log_z = _log_interval_mass(a, b)
        return math.exp(k * mu + 0.5 * k * k * self.sigma**2 + log_num - log_z)

    def _solve_mu(self) -> float:
        """Find mu with truncated mean = mean_tokens (the mean is increasing in mu)."""
        log_lo, log_hi = math.log(self.min_tokens), math.log(self.max_tokens)
        span = 6.0 * self.sigma + 1.0
        a, b = log_lo - span, log_hi + span

        def gap(mu: float) -> float:
            return self._moment_at(mu, 1.0) - self.mean_tokens

        # Widen the bracket until it straddles the root; the limits are min and max tokens.
        for _ in range(40):
            if gap(a) < 0 < gap(b):
                break
            span *= 2.0
            a, b = a - span, b + span
        else:  # pragma: no cover - the mean is strictly inside (min, max)
            raise ValueError(f"mean_tokens {self.mean_tokens!r} cannot be matched with sigma")
        from scipy import optimize  # lazy: scipy.optimize/stats cost ~1 s to import

        return float(optimize.brentq(gap, a, b, xtol=1e-12, rtol=1e-12, maxiter=500))

    def _lognorm_trunc(self) -> Any:
        """The truncated normal distribution of log(length)."""
        a, b = self._bounds(self.mu)
        from scipy import stats  # lazy, see above

        return stats.truncnorm(a, b, loc=self.mu, scale=self.sigma)

    def mean(self) -> float:
        """Expected response length in tokens."""
        return self._moment_at(self.mu, 1.0)

    def moment(self, k: float) -> float:
        """E[L^k] in tokens^k (k = 2 drives the KV-cache read volume)."""
        return self._moment_at(self.mu, float(k))

    def cdf(self, tokens: float | NDArray[np.float64]) -> NDArray[np.float64]:
        """P(L <= tokens)."""
        x = np.clip(np.asarray(tokens, dtype=float), self.min_tokens, self.max_tokens)
        return np.asarray(self._lognorm_trunc().cdf(np.log(x)), dtype=float)

    def quantile(self, q: float | NDArray[np.float64]) -> NDArray[np.float64] | float:
        """The length at cumulative probability ``q`` in [0, 1]."""
        arr = np.asarray(q, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
            raise ValueError(f"q must be in [0, 1], got {q!r}")
        a, b = self._bounds(self.mu)
        out = np.clip(np.exp(_truncnorm_ppf(arr, a, b, self.mu, self.sigma)), self.min_tokens,
                      self.max_tokens)
        return float(out) if out.ndim == 0 else out

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.float64]:
        """Draw lengths by inverse-CDF sampling (deterministic for a seeded generator)."""
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
        u = rng.random(size)
        a, b = self._bounds(self.mu)
        out = np.exp(_truncnorm_ppf(u, a, b, self.mu, self.sigma))
        return np.clip(out, self.min_tokens, self.max_tokens)

    def expected_max(self, n: int) -> float:
        """Expected longest of ``n`` independent lengths, by exact integration.

        E[max] = min + integral over [min, max] of (1 - F(x)^n) dx, done in log-space
        because F rises steeply near the top of a long tail. Memoised on the distribution's
        parameters and ``n``: a trace of many jobs has only a few distinct ones.
        """
        n = _as_int("n", n, 1)
        if n == 1:
            return self.mean()
        return _expected_max(self, n)


@memoised(4096)
def _expected_max(dist: ResponseLengthDist, n: int) -> float:
    """:meth:`ResponseLengthDist.expected_max` for ``n >= 2`` (the integral, cached)."""
    a, b = dist._bounds(dist.mu)
    log_mass = _log_interval_mass(a, b)
    log_lo, log_hi = math.log(dist.min_tokens), math.log(dist.max_tokens)

    def integrand(u: float) -> float:
        z = (u - dist.mu) / dist.sigma
        if z >= b:
            return 0.0
        upper = math.exp(_log_interval_mass(max(z, a), b) - log_mass)
        if upper >= 1.0:
            return math.exp(u)
        # 1 - F^n computed as -expm1(n log F) keeps precision when F is close to 1.
        return -math.expm1(n * math.log1p(-upper)) * math.exp(u)

    knee = float(np.log(dist.quantile(1.0 - 1.0 / (n + 1))))
    points = [p for p in (knee,) if log_lo < p < log_hi]
    from scipy import integrate  # lazy, see ResponseLengthDist._solve_mu

    value, _ = integrate.quad(integrand, log_lo, log_hi, points=points, limit=200)
    return float(min(dist.max_tokens, dist.min_tokens + value))


@memoised(4096)
def length_dist(max_tokens: float, mean_tokens: float, sigma: float) -> ResponseLengthDist:
    """One (immutable, shared) distribution per parameter set: solving for mu is not free."""
    return ResponseLengthDist(max_tokens=max_tokens, mean_tokens=mean_tokens, sigma=sigma)
