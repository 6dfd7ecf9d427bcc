"""Theorem 1 of the paper (§4.3): where round-robin is utilisation-optimal, and by how much not.

* :mod:`rollmux.theorem1.boundary`: the boundary map, seeded random small groups per
  family compared with the exhaustive optimum;
* :mod:`rollmux.theorem1.worst_case`: an adversarial search for the largest ratio best
  schedule / round-robin per family and group size, checked against exhaustive
  enumeration on small domains;
* :mod:`rollmux.theorem1.counterexamples`: the smallest instances beyond each proven
  statement of docs/theorem1.md, by exhaustive enumeration.

The proven bounds live in :mod:`rollmux.schedule.bounds`, the repetition-aware search in
:mod:`rollmux.schedule.repeat`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rollmux.lazy import lazy_getattr

if TYPE_CHECKING:
    from rollmux.theorem1.boundary import (
        GENERATORS,
        SUMMARY_COLUMNS,
        Instance,
        boundary_map,
        evaluate,
        generate,
        instance_table,
        order_search_gap,
        summarise,
        t_cycle_s,
        t_load_s,
        unsaturate,
    )
    from rollmux.theorem1.settings import FAMILIES

# Public names load their module on first use (PEP 562): importing a light submodule, such
# as a command's argument parser, does not load numpy, pandas or the engine (README, "The
# command line": start-up).
_LAZY: dict[str, str] = {
    "FAMILIES": "rollmux.theorem1.settings",
    "GENERATORS": "rollmux.theorem1.boundary",
    "SUMMARY_COLUMNS": "rollmux.theorem1.boundary",
    "Instance": "rollmux.theorem1.boundary",
    "boundary_map": "rollmux.theorem1.boundary",
    "evaluate": "rollmux.theorem1.boundary",
    "generate": "rollmux.theorem1.boundary",
    "instance_table": "rollmux.theorem1.boundary",
    "order_search_gap": "rollmux.theorem1.boundary",
    "summarise": "rollmux.theorem1.boundary",
    "t_cycle_s": "rollmux.theorem1.boundary",
    "t_load_s": "rollmux.theorem1.boundary",
    "unsaturate": "rollmux.theorem1.boundary",
}

__all__ = [
    "FAMILIES",
    "GENERATORS",
    "SUMMARY_COLUMNS",
    "Instance",
    "boundary_map",
    "evaluate",
    "generate",
    "instance_table",
    "order_search_gap",
    "summarise",
    "t_cycle_s",
    "t_load_s",
    "unsaturate",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
