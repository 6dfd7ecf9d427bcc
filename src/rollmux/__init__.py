"""rollmux: a trace-driven benchmark and reproduction harness for RollMux (Weave, OSDI '26)."""

from __future__ import annotations

# Nothing is imported at run time: the `rollmux` console script imports this package
# first, and the less it loads the shorter the moment in which a Ctrl-C is Python's own
# (a traceback) rather than the command line's (exit 130, rollmux.entry).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rollmux.schedule import meta_iteration_time

# Public names load their module on first use (PEP 562): importing a light submodule, such
# as a command's argument parser, does not load numpy, pandas or the engine (README, "The
# command line": start-up).
_LAZY: dict[str, str] = {
    "meta_iteration_time": "rollmux.schedule",
}

__all__ = ["__version__", "meta_iteration_time"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use."""
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
