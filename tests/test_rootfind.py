"""Tests of rollmux.rootfind.brentq: SciPy's brentq bit for bit, without scipy.optimize."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rollmux.jobs import ResponseLengthDist
from rollmux.rootfind import brentq

optimize = pytest.importorskip("scipy.optimize")

_finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
_scale = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _family(kind: int, root: float, k: float, c: float) -> Callable[[float], float]:
    """An increasing function with one root at ``root`` (shapes that exercise every branch)."""
    if kind == 0:
        return lambda x: k * (x - root)
    if kind == 1:
        return lambda x: k * (x - root) ** 3 + c * (x - root)
    if kind == 2:
        return lambda x: math.tanh(k * (x - root))
    if kind == 3:
        return lambda x: math.expm1(min(k * (x - root), 700.0))
    if kind == 4:
        return lambda x: math.atan(x - root) + c * (x - root) ** 5
    return lambda x: math.copysign(abs(x - root) ** 0.25, x - root) * k


def _same(f: Callable[[float], float], a: float, b: float, **kw: float) -> None:
    """The port and scipy.optimize.brentq agree bit for bit, or raise the same error type."""
    try:
        ref: float | type[Exception] = optimize.brentq(f, a, b, **kw)
    except (ValueError, RuntimeError) as exc:
        ref = type(exc)
    try:
        got: float | type[Exception] = brentq(f, a, b, **kw)
    except (ValueError, RuntimeError) as exc:
        got = type(exc)
    if isinstance(ref, float) and isinstance(got, float):
        assert got == ref or (math.isnan(got) and math.isnan(ref)), (a, b, kw, got, ref)
        assert math.copysign(1.0, got) == math.copysign(1.0, ref)
    else:
        assert got == ref, (a, b, kw, got, ref)


@settings(max_examples=400, deadline=None)
@given(kind=st.integers(0, 5), root=_finite, lo=_scale, hi=_scale, k=_scale,
       c=st.floats(min_value=0.0, max_value=10.0), decreasing=st.booleans(),
       tols=st.sampled_from([{}, {"xtol": 1e-12, "rtol": 1e-12, "maxiter": 500},
                             {"xtol": 1e-3, "rtol": 1e-6}, {"maxiter": 5},
                             {"xtol": 1e-300, "rtol": 4 * sys.float_info.epsilon}]))
def test_brentq_equals_scipy_bit_for_bit(kind: int, root: float, lo: float, hi: float, k: float,
                                         c: float, decreasing: bool,
                                         tols: dict[str, float]) -> None:
    """Monotone functions of several shapes, either direction, any bracket around the root,
    several tolerances and iteration caps: the same float (or the same error) as SciPy."""
    g = _family(kind, root, k, c)
    f = (lambda x: -g(x)) if decreasing else g
    _same(f, root - lo, root + hi, **tols)
    _same(f, root + hi, root - lo, **tols)  # reversed bracket


def test_brentq_edge_cases_match_scipy() -> None:
    """Roots at an end, no sign change, a root at zero, NaN values, bad arguments."""
    cases: list[tuple[Callable[[float], float], float, float, dict[str, float]]] = [
        (lambda x: x - 1.0, 1.0, 3.0, {}),
        (lambda x: x - 3.0, 1.0, 3.0, {}),
        (lambda x: x * x + 1.0, -1.0, 1.0, {}),
        (lambda x: x, -1.0, 2.0, {}),
        (lambda x: x ** 3, -1e-3, 5.0, {"xtol": 1e-300}),
        (lambda x: math.nan if x > 0.5 else x - 0.25, 0.0, 1.0, {}),
        (lambda x: x - 0.3, 0.0, 1.0, {"xtol": 0.0}),
        (lambda x: x - 0.3, 0.0, 1.0, {"rtol": 1e-17}),
        (lambda x: x - 0.3, 0.0, 1.0, {"maxiter": 0}),
        (lambda x: x - 0.3, 0.0, 1.0, {"maxiter": -1}),
        (lambda x: 1.0 if x > 0 else -1.0, -1.0, 3.0, {}),
    ]
    for f, a, b, kw in cases:
        _same(f, a, b, **kw)
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, -1.0, 1.0)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: x - 0.3, 0.0, 1.0, maxiter=1)


@pytest.mark.parametrize("max_tokens", [2.0, 64.0, 512.0, 2048.0, 4096.0, 8192.0, 16384.0,
                                        32768.0, 65536.0])
def test_solve_mu_gap_functions_match_scipy(max_tokens: float,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``_solve_mu``'s own gap functions over the traces' (max, mean fraction, sigma) grid:
    the root (mu) is SciPy's to the bit, so every replay's bytes stay as they were."""
    import rollmux.jobs as jobs

    calls: list[dict[str, float]] = []

    def scipy_brentq(f: Callable[[float], float], a: float, b: float, **kw: float) -> float:
        """SciPy's brentq on the gap and bracket _solve_mu hands over."""
        calls.append(kw)
        return float(optimize.brentq(f, a, b, **kw))

    for fraction in (0.6, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.8, 0.95, 0.99):
        for sigma in (0.05, 0.2, 0.5, 0.8, 1.0, 1.5, 2.5, 4.0):
            mean = 1.0 + fraction * (max_tokens - 1.0)
            dist = ResponseLengthDist(max_tokens=max_tokens, mean_tokens=mean, sigma=sigma)
            got = dist.mu  # solved with rollmux.rootfind.brentq
            with monkeypatch.context() as m:
                m.setattr(jobs, "brentq", scipy_brentq)
                ref = dist._solve_mu()
            assert calls[-1] == {"xtol": 1e-12, "rtol": 1e-12, "maxiter": 500}
            assert type(got) is float and got == ref, (max_tokens, mean, sigma)
    assert len(calls) == 80


def test_length_dist_leaves_scipy_optimize_unloaded() -> None:
    """Building a length distribution (solving mu), its mean and quantiles, and importing the
    schedule bounds module leave scipy.optimize unloaded (~0.3 s CPU per replay process)."""
    code = ("import sys, numpy as np\n"
            "from rollmux.jobs import ResponseLengthDist, length_dist\n"
            "import rollmux.schedule.bounds\n"
            "d = ResponseLengthDist(max_tokens=8192.0, mean_tokens=2867.2, sigma=0.8)\n"
            "d.mu; d.mean(); d.moment(2); d.quantile(0.5); d.sample(np.random.default_rng(0), 4)\n"
            "length_dist(16384.0, 5000.0, 1.2).mu\n"
            "print('scipy.optimize' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
