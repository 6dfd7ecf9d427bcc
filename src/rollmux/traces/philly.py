"""Philly job runtimes: the public CSV, its committed quantile fit, and samplers over both."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.memo import memoised

FIT_FILE = "philly_fit.json"
RUNTIME_FILE = "philly_runtime.csv"
#: Quantile grid of the committed fit (probabilities 0, 0.001, ..., 1).
QUANTILE_POINTS = 1001

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def shared_traces_dir() -> Path:
    """../shared/traces beside the repository (override with $ROLLMUX_SHARED_TRACES)."""
    override = os.environ.get("ROLLMUX_SHARED_TRACES")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3].parent / "shared" / "traces"


def read_runtimes(path: str | Path, min_runtime_s: float = 0.0) -> np.ndarray:
    """Finite runtimes (s) >= min_runtime_s from a CSV with a `runtime` column."""
    from rollmux.io import open_input

    with open_input(path) as stream:
        frame = pd.read_csv(stream, usecols=["runtime"])
    runtimes = pd.to_numeric(frame["runtime"], errors="coerce").to_numpy(dtype=float)
    runtimes = runtimes[np.isfinite(runtimes) & (runtimes >= min_runtime_s) & (runtimes > 0)]
    if runtimes.size < 2:
        raise ValueError(f"{path}: fewer than two usable runtimes >= {min_runtime_s:g} s")
    return runtimes


def fit_runtimes(runtimes: np.ndarray, min_runtime_s: float, source: str) -> dict[str, Any]:
    """A quantile-table fit of log runtimes, plus a lognormal summary, as a JSON-able dict."""
    logs = np.log(np.sort(runtimes))
    probabilities = np.linspace(0.0, 1.0, QUANTILE_POINTS)
    quantiles = np.quantile(logs, probabilities)
    return {
        "source": source,
        "min_runtime_s": float(min_runtime_s),
        "count": int(runtimes.size),
        "mean_s": round(float(runtimes.mean()), 3),
        "max_s": round(float(runtimes.max()), 3),
        "lognormal_mu": round(float(logs.mean()), 6),
        "lognormal_sigma": round(float(logs.std()), 6),
        "log_quantiles": [round(float(q), 6) for q in quantiles],
    }


@memoised(1)
def load_fit() -> dict[str, Any]:
    """The committed fit (src/rollmux/traces/philly_fit.json)."""
    text = resources.files("rollmux.traces").joinpath(FIT_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def fit_sampler(fit: dict[str, Any]) -> Sampler:
    """Inverse-CDF sampling from the fit's quantile table (log-linear interpolation)."""
    log_quantiles = np.asarray(fit["log_quantiles"], dtype=float)
    grid = np.linspace(0.0, 1.0, log_quantiles.size)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        """n runtimes (s) drawn from the fitted distribution."""
        return np.exp(np.interp(rng.uniform(0.0, 1.0, size=n), grid, log_quantiles))

    return sample


def empirical_sampler(runtimes: np.ndarray) -> Sampler:
    """Bootstrap sampling (with replacement) from the real runtimes."""
    values = np.sort(np.asarray(runtimes, dtype=float))

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        """n runtimes (s) drawn from the empirical distribution."""
        return values[rng.integers(0, values.size, size=n)]

    return sample


def runtime_sampler(
    source: str = "auto", path: str | Path | None = None, min_runtime_s: float = 60.0
) -> tuple[Sampler, str]:
    """A runtime sampler and its label: 'csv' (real file), 'fit' (committed) or 'auto'."""
    if source not in ("auto", "csv", "fit"):
        raise ValueError(f"runtimes source must be auto, csv or fit, got {source!r}")
    csv_path = Path(path) if path is not None else shared_traces_dir() / RUNTIME_FILE
    if source == "csv" or (source == "auto" and csv_path.is_file()):
        if not csv_path.is_file():
            raise ValueError(f"Philly runtimes not found at {csv_path}")
        return empirical_sampler(read_runtimes(csv_path, min_runtime_s)), "csv"
    fit = load_fit()
    if abs(float(fit["min_runtime_s"]) - min_runtime_s) > 1e-9:
        raise ValueError(
            f"committed Philly fit used min_runtime_s={fit['min_runtime_s']}, "
            f"asked for {min_runtime_s}; rerun scripts/fit_philly.py"
        )
    return fit_sampler(fit), "fit"


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file (recorded in the fit as provenance)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
