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

from rollmux.placement.base import register_policy
from rollmux.placement.rollmux import RollMuxPolicy

__all__ = ["costweighted", "expected", "noprune", "ordersearch"]


@register_policy("rollmux-noprune")
def noprune(**options: Any) -> RollMuxPolicy:
    """RollMux without saturation pruning."""
    policy = RollMuxPolicy(prune_saturated=False, **options)
    policy.name = "rollmux-noprune"
    return policy


@register_policy("rollmux-expected")
def expected(**options: Any) -> RollMuxPolicy:
    """RollMux admitting with expected (not worst-case) phase times."""
    policy = RollMuxPolicy(worst_case=False, **options)
    policy.name = "rollmux-expected"
    return policy


@register_policy("rollmux-ordersearch")
def ordersearch(**options: Any) -> RollMuxPolicy:
    """RollMux with per-node order search when round robin misses an SLO."""
    policy = RollMuxPolicy(order_search=True, **options)
    policy.name = "rollmux-ordersearch"
    return policy


@register_policy("rollmux-costweighted")
def costweighted(**options: Any) -> RollMuxPolicy:
    """RollMux minimising marginal cost plus the change in idle GPU dollars per hour."""
    policy = RollMuxPolicy(objective="cost-weighted", **options)
    policy.name = "rollmux-costweighted"
    return policy
