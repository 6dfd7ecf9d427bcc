"""Response lengths drawn from real training runs instead of the lognormal (``--lengths``).

A :class:`LengthSource` holds the full steps of one or more PolyTrace workloads
(:mod:`rollmux.traces.polytrace`), each response as a fraction of its workload's cap.
:meth:`LengthSource.for_job` picks the workload that serves a job and returns the job's
:class:`JobLengths`: the steps rescaled to the job's maximum tokens (a response at the
workload's cap becomes one at the job's maximum), and a stream of whole steps, one per
iteration. :class:`rollmux.sim.stochastic.PhaseSampler` takes it and draws each
iteration's per-replica longest response, per-replica token sum and migration threshold
from the iteration's step instead of the lognormal (docs/stochastic.md, section 8, R1-R4).

Rule (docs/stochastic.md, R1): multi-turn workloads serve jobs with more than one turn and
packed workloads the others (every workload serves a kind that has none of its own);
among those, a job's workload is uniform from ``default_rng([seed, LENGTHS_SALT,
blake2b(job_id)])``, and the same stream then draws a step per iteration (uniform over the
workload's full steps), in fixed chunks so a draw does not depend on what was asked
before. A workload whose cap is unknown uses its longest recorded response as the cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rollmux.sim.drift import stable_job_hash

if TYPE_CHECKING:  # the reader (scipy's optimiser, yaml) loads only when a folder is read
    from rollmux.traces.polytrace import Workload

__all__ = ["LENGTHS_SALT", "STEP_CHUNK", "JobLengths", "LengthSource", "describe"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Salt of a job's length stream (its own stream: the lognormal draws do not move).
LENGTHS_SALT = 0x1E9E75
#: Iterations per chunk of step draws read from a job's stream (fixes the stream layout).
STEP_CHUNK = 64


@dataclass(frozen=True)
class _SourceWorkload:
    """One workload's full steps as sorted fractions of its cap."""

    name: str
    multiturn: bool
    cap: float
    cap_source: str
    steps: tuple[FloatArray, ...]


class LengthSource:
    """The recorded steps of real workloads, ready to serve jobs (see the module doc)."""

    def __init__(self, workloads: Sequence[Workload], label: str = "") -> None:
        """Keep each workload's full steps as fractions of its cap (ValueError if none)."""
        kept = []
        for w in workloads:
            steps = w.full_steps()
            if not steps:
                continue
            top = max(int(s.lengths.max()) for s in steps)
            cap = w.cap if w.cap is not None else float(max(top, 1))
            source = w.cap_source if w.cap is not None else "longest response"
            fractions = tuple(np.sort(np.minimum(s.lengths / cap, 1.0)) for s in steps)
            kept.append(_SourceWorkload(w.name, w.format == "multiturn", cap, source,
                                        fractions))
        if not kept:
            raise ValueError("lengths: no workload with a full step of training responses")
        self.workloads: tuple[_SourceWorkload, ...] = tuple(kept)
        self.label = label

    @classmethod
    def read(cls, path: str | Path) -> LengthSource:
        """The source of every workload under ``path`` (LengthsError on a bad file)."""
        from rollmux.traces.polytrace import read_lengths

        return cls(read_lengths(path), label=Path(path).name)

    def names(self) -> list[str]:
        """The workloads' names, in order."""
        return [w.name for w in self.workloads]

    def candidates(self, turns: int) -> list[int]:
        """Indices of the workloads that may serve a job of ``turns`` turns (rule R1)."""
        multi = turns > 1
        same = [i for i, w in enumerate(self.workloads) if w.multiturn == multi]
        return same or list(range(len(self.workloads)))

    def workload_for(self, job_id: str, turns: int, seed: int) -> int:
        """The index of the workload serving ``job_id`` (rule R1)."""
        rng = _job_rng(job_id, seed)
        options = self.candidates(turns)
        return options[int(rng.integers(len(options)))]

    def for_job(self, job_id: str, turns: int, seed: int, max_tokens: float) -> JobLengths:
        """The job's lengths: its workload's steps at ``max_tokens`` and its step stream."""
        rng = _job_rng(job_id, seed)
        options = self.candidates(turns)
        chosen = self.workloads[options[int(rng.integers(len(options)))]]
        return JobLengths(chosen, max_tokens, rng)


def _job_rng(job_id: str, seed: int) -> np.random.Generator:
    """A job's length stream."""
    return np.random.default_rng([int(seed), LENGTHS_SALT, stable_job_hash(job_id)])


class JobLengths:
    """One job's recorded steps in tokens and its per-iteration step stream."""

    def __init__(self, workload: _SourceWorkload, max_tokens: float,
                 rng: np.random.Generator) -> None:
        """Rescale the workload's steps to ``max_tokens`` (at least one token each)."""
        self.workload = workload.name
        self.max_tokens = float(max_tokens)
        self.steps = tuple(np.clip(s * self.max_tokens, 1.0, self.max_tokens)
                           for s in workload.steps)
        self.means = np.array([s.mean() for s in self.steps])
        self.vars = np.array([s.var() for s in self.steps])
        self._cumsum = tuple(np.concatenate([[0.0], np.cumsum(s)]) for s in self.steps)
        self._rng = rng
        self._drawn: list[IntArray] = []
        self._emax: dict[tuple[int, int], float] = {}

    @property
    def mean_tokens(self) -> float:
        """Mean response length over the steps (each step weighted equally)."""
        return float(self.means.mean())

    def step_indices(self, first: int, stop: int) -> IntArray:
        """The step of each iteration in [first, stop), from the job's stream in chunks."""
        while len(self._drawn) * STEP_CHUNK < stop:
            self._drawn.append(self._rng.integers(len(self.steps), size=STEP_CHUNK))
        return np.concatenate(self._drawn)[first:stop] if stop > first else np.zeros(
            0, dtype=np.int64)

    def expected_max(self, step: int, n: int) -> float:
        """E[longest of ``n`` responses drawn with replacement from ``step``] (eq. R2)."""
        key = (step, n)
        hit = self._emax.get(key)
        if hit is None:
            values = self.steps[step]
            m = values.size
            cdf = (np.arange(1, m + 1) / m) ** n
            hit = float(np.sum(values * np.diff(np.concatenate([[0.0], cdf]))))
            self._emax[key] = hit
        return hit

    def quantile(self, step: int, u: FloatArray) -> FloatArray:
        """The step's empirical quantile at ``u`` (the smallest x with F(x) >= u)."""
        values = self.steps[step]
        index = np.clip(np.ceil(u * values.size).astype(np.int64) - 1, 0, values.size - 1)
        return np.asarray(values[index], dtype=float)

    def mean_min(self, step: int, x: FloatArray) -> FloatArray:
        """E[min(L, x)] over the step's responses (eq. R3)."""
        values, cumsum = self.steps[step], self._cumsum[step]
        below = np.searchsorted(values, x, side="right")
        return np.asarray((cumsum[below] + x * (values.size - below)) / values.size,
                          dtype=float)

    def replica_stats(self, steps: IntArray, v: FloatArray, z: FloatArray, f: FloatArray,
                      cap: FloatArray, per_replica: FloatArray
                      ) -> tuple[FloatArray, FloatArray]:
        """Per-replica longest and summed lengths, shape [iteration][replica] (eq. R2).

        The longest of a replica's ``n`` responses is the step's quantile at ``v ** (1/n)``
        (exact for draws with replacement); the other ``n - 1`` have the mean that keeps
        the replica's expected sum at ``n`` times the step's mean, and the step's variance
        (a normal sum, as for the lognormal, eq. L4). Drift scales lengths by ``f`` and
        caps them at ``cap``.
        """
        top = np.empty_like(v)
        others_mean = np.empty_like(v)
        var = np.empty(v.shape[0])
        u = np.exp(np.log(np.maximum(v, 1e-300)) / per_replica)
        for step in np.unique(steps):
            rows = steps == step
            s = int(step)
            top[rows] = self.quantile(s, u[rows])
            mean = self.means[s]
            for n in np.unique(per_replica):
                cols = per_replica == n
                emax = self.expected_max(s, int(n))
                value = (n * mean - emax) / (n - 1.0) if n > 1 else 0.0
                others_mean[np.ix_(rows, cols)] = value
            var[rows] = self.vars[s]
        top = np.clip(f[:, None] * top, 1.0, cap[:, None])
        others = per_replica - 1.0
        total = (top + others * f[:, None] * others_mean
                 + np.sqrt(others * var[:, None]) * f[:, None] * z)
        return top, np.clip(total, top + others, per_replica * top)

    def threshold(self, steps: IntArray, beta: FloatArray, f: FloatArray, cap: FloatArray,
                  longest: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The migration threshold's length and E[min(f L, x)] per iteration (eq. R3)."""
        x_q = np.empty_like(beta)
        done = np.empty_like(beta)
        for step in np.unique(steps):
            rows = steps == step
            s = int(step)
            q = np.minimum(np.clip(f[rows] * self.quantile(s, beta[rows]), 1.0, cap[rows]),
                           longest[rows])
            x_q[rows] = q
            done[rows] = f[rows] * self.mean_min(s, q / f[rows])
        return x_q, done


def describe(source: LengthSource) -> list[dict[str, object]]:
    """One record per workload: name, format, cap and its source, full steps."""
    return [{"workload": w.name, "format": "multiturn" if w.multiturn else "packed",
             "cap": w.cap, "cap_source": w.cap_source, "steps": len(w.steps),
             "mean_over_cap": float(np.mean([s.mean() for s in w.steps])),
             "responses_per_step": int(np.median([s.size for s in w.steps]))}
            for w in source.workloads]

