"""Stand-in inputs of the claims report that a pipeline run would write.

The shipped calibration set's fits read their residuals from results files; a test of the
report writes one per fit under its temporary results root with
:func:`write_calibration_residuals` (every target at +0.000%).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rollmux.experiments.claims import load_calibration, load_ledger

#: The header of a calibration residuals file (rollmux.experiments.calibration).
RESIDUALS_HEADER = "target,unit,paper,fitted,residual,note\n"


def write_calibration_residuals(root: Path, ledger: pd.DataFrame | None = None) -> None:
    """A residuals file under ``root`` for each fit of the calibration set of ``ledger``
    (default: the shipped ledger), every target fitted exactly."""
    ledger = load_ledger() if ledger is None else ledger
    for fit in load_calibration(ledger).fits.values():
        path = root / fit.residuals
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(RESIDUALS_HEADER
                        + "".join(f"{t},x,1,1,+0.000%,test\n" for t in fit.targets))
