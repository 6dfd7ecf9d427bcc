"""Lazy public names of a package (PEP 562): a name's module is imported on first use.

The packages ``rollmux.sim``, ``rollmux.traces`` and ``rollmux.theorem1`` (``rollmux``
itself keeps its own copy: it imports nothing at run time) re-export names from heavy
modules (numpy, pandas, the engine); with their
``__getattr__`` made here, ``import rollmux.sim.cli`` (a command's argument parser) loads
none of them (README, "The command line": start-up).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each of ``names`` (name -> module) is
    imported from its module on first use and kept in the package; any other name is an
    AttributeError."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
