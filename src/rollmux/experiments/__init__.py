"""Paper glue: the experiments of the RollMux paper built from the generic library.

The library layers (hardware, phase model, closed forms, traces, placement, simulator)
know nothing of the paper's figures, claims or calibration targets. This package holds
what does: the fits of inputs the paper does not state to the numbers of its declared
calibration set (:mod:`rollmux.experiments.calibration`, targets in
``rollmux/data/calibration.yaml``), the experiments of each paper section (e.g. the
robustness study of sec. 6.6, :mod:`rollmux.experiments.robustness`, whose policies come
from config), and the checks of the pipeline's config run when the workflow is parsed
(:mod:`rollmux.experiments.config_checks`).
"""
