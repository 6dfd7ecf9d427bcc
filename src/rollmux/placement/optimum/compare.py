"""Time the exact optimum, and optionally the brute force, on one set of jobs.

The one measurement the ``rollmux bench optimum`` command, Table 5 and
``benchmarks/bench_optimum.py`` share; which jobs to time (the workload) is theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.placement.optimum.bruteforce import bruteforce_partition
from rollmux.placement.optimum.partition import optimal_partition
from rollmux.placement.optimum.plans import Orders, Space, solo_cost_usd_per_h

__all__ = ["compare_solvers"]


def compare_solvers(
    jobs: Sequence[RLJob],
    hw: Hardware,
    *,
    max_group_size: int = 5,
    bruteforce: bool = False,
    bruteforce_time_limit_s: float | None = None,
    orders: Orders = "all",
    space: Space = "full",
    time_limit_s: float | None = None,
) -> dict[str, Any]:
    """Wall time, cost and size of the MILP optimum of ``jobs``; with ``bruteforce``, of both.

    Brute force gets ``bruteforce_time_limit_s``; when it runs out ``bruteforce_finished``
    is False and its cost is None. Without ``bruteforce`` its four fields are None.
    """
    result = optimal_partition(
        jobs, hw, max_group_size, time_limit_s=time_limit_s, orders=orders, space=space
    )
    out: dict[str, Any] = {
        "max_group_size": max_group_size,
        "orders": orders,
        "space": space,
        "seconds": result.seconds,
        "optimal_cost_usd_per_h": result.cost_usd_per_h,
        "solo_cost_usd_per_h": solo_cost_usd_per_h(jobs, hw),
        "groups": len(result.groups),
        "largest_group": max(len(g.job_ids) for g in result.groups),
        "columns": result.n_columns,
        "solver": result.solver,
        "proven_optimal": result.proven_optimal,
        "bruteforce_seconds": None,
        "bruteforce_cost_usd_per_h": None,
        "bruteforce_finished": None,
        "bruteforce_time_limit_s": None,
    }
    if bruteforce:
        out["bruteforce_time_limit_s"] = bruteforce_time_limit_s
        t0 = time.perf_counter()
        try:
            brute = bruteforce_partition(
                jobs,
                hw,
                max_group_size,
                time_limit_s=bruteforce_time_limit_s,
                orders=orders,
                space=space,
            )
        except TimeoutError:
            out["bruteforce_seconds"] = time.perf_counter() - t0
            out["bruteforce_finished"] = False
        else:
            out["bruteforce_seconds"] = brute.seconds
            out["bruteforce_cost_usd_per_h"] = brute.cost_usd_per_h
            out["bruteforce_finished"] = True
    return out
