"""rollmux: a trace-driven benchmark and reproduction harness for RollMux (Weave, OSDI '26)."""

from __future__ import annotations

from rollmux.schedule import meta_iteration_time

__all__ = ["__version__", "meta_iteration_time"]
__version__ = "0.1.0"
