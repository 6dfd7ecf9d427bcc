"""The paper's brute force: every set partition of the jobs, each block by the group search.

This is the "Offline Optimal" of paper Table 5 (exponential: Bell numbers), timed
against :func:`~rollmux.placement.optimum.optimal_partition`. It shares the group search
with the MILP, so it checks the partition layer (columns, split cap, MILP), not the
search; :mod:`.reference` checks the search independently.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.placement.optimum.plans import (
    REL_TOL,
    GroupPlan,
    Orders,
    Partition,
    Space,
    check_group_size,
    check_orders,
    check_space,
    check_time_limit,
    context,
    resolved_jobs,
)
from rollmux.placement.optimum.search import min_cost

__all__ = ["bruteforce_partition", "restricted_growth_partitions"]


def restricted_growth_partitions(n: int, max_size: int) -> Iterator[list[int]]:
    """Every set partition of range(n) with blocks of at most ``max_size``, as block masks.

    Restricted growth strings: job i joins an existing block or opens the next one.
    """
    blocks: list[int] = []
    sizes: list[int] = []

    def rec(i: int) -> Iterator[list[int]]:
        if i == n:
            yield blocks
            return
        for b in range(len(blocks)):
            if sizes[b] < max_size:
                blocks[b] |= 1 << i
                sizes[b] += 1
                yield from rec(i + 1)
                blocks[b] ^= 1 << i
                sizes[b] -= 1
        blocks.append(1 << i)
        sizes.append(1)
        yield from rec(i + 1)
        blocks.pop()
        sizes.pop()

    yield from rec(0)


def bruteforce_partition(
    jobs: Sequence[RLJob],
    hw: Hardware,
    max_group_size: int = 5,
    *,
    time_limit_s: float | None = None,
    orders: Orders = "all",
    space: Space = "full",
) -> Partition:
    """Minimum-cost partition by enumerating every set partition (memoised group costs).

    The paper's brute force; exponential (Bell numbers). Raises TimeoutError when
    ``time_limit_s`` runs out before the enumeration ends.
    """
    start = time.perf_counter()
    max_group_size = check_group_size(max_group_size)
    deadline = start + check_time_limit(time_limit_s)
    all_orders = check_orders(orders)
    full_space = check_space(space)
    ctx = context(hw)
    data = resolved_jobs(jobs, ctx)
    n = len(data)
    memo: dict[int, GroupPlan | None] = {}

    def group_plan(mask: int) -> GroupPlan | None:
        if mask not in memo:
            members = [data[i] for i in range(n) if mask >> i & 1]
            memo[mask] = min_cost(members, ctx, all_orders=all_orders, full_space=full_space)
        return memo[mask]

    def group_cost(mask: int) -> float:
        plan = group_plan(mask)
        return math.inf if plan is None else plan.cost_usd_per_h

    best_cost, best_blocks = math.inf, [1 << i for i in range(n)]
    for count, blocks in enumerate(restricted_growth_partitions(n, max_group_size)):
        if count % 4096 == 0 and time.perf_counter() > deadline:
            raise TimeoutError(
                f"bruteforce_partition: time_limit_s = {time_limit_s!r} ran out after "
                f"{count} of the set partitions of {n} jobs"
            )
        total = 0.0
        for block in blocks:
            total += group_cost(block)
            if total >= best_cost:
                break
        if total < best_cost * (1.0 - REL_TOL):
            best_cost, best_blocks = total, list(blocks)
    plans = [group_plan(block) for block in best_blocks]
    groups = tuple(plan for plan in plans if plan is not None)
    return Partition(
        groups=groups,
        cost_usd_per_h=sum(g.cost_usd_per_h for g in groups),
        solver="bruteforce (restricted growth strings)",
        seconds=time.perf_counter() - start,
    )
