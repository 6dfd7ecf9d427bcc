"""RollMux variants, each registered, showing what one design decision of Algorithm 1 buys.

* ``rollmux-noprune``: no saturation pruning; saturated groups are still examined (the
  SLO check may still admit a job there when members have slack). Slower decisions.
* ``rollmux-expected``: admission with expected instead of worst-case (max-token) phase
  times; packs more, but the worst case can then break SLOs at run time.
* ``rollmux-ordersearch``: when the round-robin order misses an SLO but the lower
  bound ``max(T_load, T_cycle)`` does not, search per-node job orders
  (:func:`rollmux.schedule.search.best_node_orders`) and admit with the orders found.
* ``rollmux-costweighted``: minimise marginal hourly cost plus the change of the
  cluster's *idle GPU dollars* per hour (provisioned price minus busy price, busy =
  rollout and training work per meta-iteration, node price weighted, so an idle H800
  counts 2.85x an idle H20). It weighs how much paid capacity a placement leaves idle
  (a stretched meta-iteration idles every member's nodes), not only what it provisions.
"""

from __future__ import annotations

from typing import Any

from rollmux.placement.rollmux import RollMuxPolicy

__all__ = ["CostWeightedRollMux", "ExpectedRollMux", "NoPruneRollMux", "OrderSearchRollMux"]

#: The options of RollMuxPolicy that no variant fixes.
_COMMON_OPTIONS = frozenset({"max_group_size", "objective", "order_search_limit"})


class NoPruneRollMux(RollMuxPolicy):
    """RollMux without saturation pruning."""

    name = "rollmux-noprune"
    options = _COMMON_OPTIONS | {"worst_case", "order_search"}

    def __init__(self, **options: Any) -> None:
        """RollMux's options, saturation pruning off."""
        super().__init__(prune_saturated=False, **options)


class ExpectedRollMux(RollMuxPolicy):
    """RollMux admitting with expected (not worst-case) phase times."""

    name = "rollmux-expected"
    options = _COMMON_OPTIONS | {"prune_saturated", "order_search"}

    def __init__(self, **options: Any) -> None:
        """RollMux's options, admission with expected phase times."""
        super().__init__(worst_case=False, **options)


class OrderSearchRollMux(RollMuxPolicy):
    """RollMux with per-node order search when round robin misses an SLO."""

    name = "rollmux-ordersearch"
    options = _COMMON_OPTIONS | {"prune_saturated", "worst_case"}

    def __init__(self, **options: Any) -> None:
        """RollMux's options, order search on."""
        super().__init__(order_search=True, **options)


class CostWeightedRollMux(RollMuxPolicy):
    """RollMux minimising marginal cost plus the change in idle GPU dollars per hour."""

    name = "rollmux-costweighted"
    options = _COMMON_OPTIONS - {"objective"} | {"prune_saturated", "worst_case",
                                                  "order_search"}

    def __init__(self, **options: Any) -> None:
        """RollMux's options, the cost-weighted objective."""
        super().__init__(objective="cost-weighted", **options)
