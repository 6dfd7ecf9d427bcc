"""The `optimal` baseline: minimum-cost partition of concurrent jobs into co-execution groups.

Formulation, pinning space and pruning proofs: docs/optimum.md. One module per concern:

* :mod:`.plans` - results (:class:`GroupPlan`, :class:`Partition`), per-job data,
  argument checks, the Solo-D cost.
* :mod:`.layouts` - the pinning space: each pool's pinning up to node relabelling.
* :mod:`.periods` - exact round-robin periods of (sub)problems, memoised by value.
* :mod:`.search` - :func:`min_cost_group`, the cheapest feasible plan of exactly a
  given set of jobs; each pruning rule P1-P8 is a function over one search state.
* :mod:`.partition` - :func:`optimal_partition`, set partitioning over the feasible
  groups solved exactly by HiGHS, and :class:`ColumnCache` across calls.
* :mod:`.bruteforce` - :func:`bruteforce_partition`, the paper's brute force over set
  partitions (it shares the group search, so it checks the partition layer).
* :mod:`.reference` - :func:`reference_partition`, a naive enumeration of every
  pinning and order scored by the group model alone, sharing no code with the search:
  the tests' independent check of costs and feasibility.
* :mod:`.compare` - :func:`compare_solvers`, the timing the benchmarks share.
"""

from __future__ import annotations

from rollmux.placement.optimum import layouts, periods
from rollmux.placement.optimum.bruteforce import bruteforce_partition
from rollmux.placement.optimum.compare import compare_solvers
from rollmux.placement.optimum.partition import ColumnCache, optimal_partition
from rollmux.placement.optimum.plans import (
    GroupPlan,
    Orders,
    Partition,
    Space,
    solo_cost_usd_per_h,
)
from rollmux.placement.optimum.reference import (
    REFERENCE_MAX_JOBS,
    ReferenceGroup,
    ReferencePartition,
    reference_group,
    reference_partition,
)
from rollmux.placement.optimum.search import min_cost_group

__all__ = [
    "REFERENCE_MAX_JOBS",
    "ColumnCache",
    "GroupPlan",
    "Orders",
    "Partition",
    "ReferenceGroup",
    "ReferencePartition",
    "Space",
    "bruteforce_partition",
    "clear_caches",
    "compare_solvers",
    "min_cost_group",
    "optimal_partition",
    "reference_group",
    "reference_partition",
    "solo_cost_usd_per_h",
]


def clear_caches() -> None:
    """Empty every process-wide memo of the optimum (all keyed by value; answers unchanged).

    Per-policy state lives in :class:`ColumnCache` (``ColumnCache.clear``).
    """
    layouts.layouts.cache_clear()
    periods.orders.cache_clear()
    periods.proper_subsets.cache_clear()
    periods.relabel_table.cache_clear()
    periods._projection.cache_clear()
