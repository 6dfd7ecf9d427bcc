"""Brent's bracketing root finder: a pure-Python port of SciPy's ``brentq``.

Why: ``ResponseLengthDist._solve_mu`` runs in every trace replay process, and importing
``scipy.optimize`` for one root costs ~0.25-0.3 s CPU per process (issue 24). This module
repeats the floating-point operations of SciPy's C routine ``scipy/optimize/Zeros/brentq.c``
(Charles Harris; the one behind ``scipy.optimize.brentq`` in SciPy 1.17) in the same order, so
its result is bit-identical to ``scipy.optimize.brentq`` for the same function, bracket,
``xtol``, ``rtol`` and ``maxiter`` (``tests/test_rootfind.py`` checks this). The argument checks
and errors follow SciPy's wrapper (``scipy/optimize/_zeros_py.py`` and ``_zerosmodule.c``).
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable

__all__ = ["BRENTQ_RTOL", "BRENTQ_XTOL", "brentq"]

BRENTQ_XTOL = 2e-12
"""SciPy's default absolute tolerance for ``brentq``."""
BRENTQ_RTOL = 4 * sys.float_info.epsilon
"""SciPy's default (and least allowed) relative tolerance for ``brentq``."""


def _signbit(x: float) -> bool:
    """C's ``signbit``: True for negative numbers, -0.0 and NaNs with the sign bit set."""
    return math.copysign(1.0, x) < 0.0


def brentq(f: Callable[[float], float], a: float, b: float, xtol: float = BRENTQ_XTOL,
           rtol: float = BRENTQ_RTOL, maxiter: int = 100) -> float:
    """A root of ``f`` in ``[a, b]`` (signs of f(a), f(b) differ), as ``scipy.optimize.brentq``."""
    maxiter = operator.index(maxiter)
    xtol, rtol = float(xtol), float(rtol)
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < BRENTQ_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {BRENTQ_RTOL:g})")
    if maxiter < 0:
        raise ValueError("maxiter must be >= 0")

    def call(x: float) -> float:
        """f(x) as a C double; a NaN stops the search (SciPy's ``_wrap_nan_raise``)."""
        fx = float(f(x))
        if math.isnan(fx):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return fx

    # From here on: brentq.c, statement by statement.
    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre = call(xpre)
    fcur = call(xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if _signbit(fpre) == _signbit(fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and _signbit(fpre) != _signbit(fcur):
            xblk = xpre
            fblk = fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre = xcur
            xcur = xblk
            xblk = xpre

            fpre = fcur
            fcur = fblk
            fblk = fpre

        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur

        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:
                # interpolate
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:
                # extrapolate
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            lim_a, lim_b = abs(spre), 3 * abs(sbis) - delta
            if 2 * abs(stry) < (lim_a if lim_a < lim_b else lim_b):  # C's MIN(a, b)
                # good short step
                spre = scur
                scur = stry
            else:
                # bisect
                spre = sbis
                scur = sbis
        else:
            # bisect
            spre = sbis
            scur = sbis

        xpre = xcur
        fpre = fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta

        fcur = call(xcur)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations.")
