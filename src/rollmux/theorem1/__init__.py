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

from rollmux.theorem1.boundary import (
    FAMILIES,
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
