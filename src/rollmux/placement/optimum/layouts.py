"""The pinning space of one group: each pool's pinning up to node relabelling.

A node *is* the set of jobs pinned to it (a bit mask over the group's jobs), so a pool's
pinning up to relabelling its nodes is a multiset of masks with job ``k`` in exactly
``need[k]`` of them. :func:`side_layouts` enumerates these multisets directly, each
once, as non-decreasing tuples (docs/optimum.md, "Pinning space" and "Layout
enumeration").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rollmux.memo import memoised

__all__ = ["LazyList", "connected", "layouts", "pins", "shared", "side_layouts"]


def side_layouts(
    need: Sequence[int], n_nodes: int, masks: Sequence[int]
) -> Iterator[tuple[int, ...]]:
    """Multisets of ``n_nodes`` job sets (bit masks) with job k in exactly ``need[k]`` of them.

    A multiset is one pinning of a pool up to relabelling its nodes. ``masks`` (sorted) are
    the allowed per-node job sets; the multiset is yielded as a non-decreasing tuple, in
    lexicographic order. Dead branches are cut early: a node may only take jobs that still
    need nodes, every such job must appear in some mask not yet passed, and the nodes left
    must be able to hold the placements left.
    """
    n = len(need)
    remaining = list(need)
    chosen: list[int] = []
    bits = [[k for k in range(n) if mask >> k & 1] for mask in masks]
    count = len(masks)
    # union and largest size of the masks from index i on
    suffix_union = [0] * (count + 1)
    suffix_pop = [0] * (count + 1)
    for i in range(count - 1, -1, -1):
        suffix_union[i] = suffix_union[i + 1] | masks[i]
        suffix_pop[i] = max(suffix_pop[i + 1], len(bits[i]))

    def rec(start: int, nodes_left: int, avail: int, total: int) -> Iterator[tuple[int, ...]]:
        if nodes_left == 0:
            if total == 0:
                yield tuple(chosen)
            return
        if (
            total < nodes_left
            or total > nodes_left * suffix_pop[start]
            or avail & ~suffix_union[start]
            or max(remaining) > nodes_left
        ):
            return
        for idx in range(start, count):
            mask = masks[idx]
            if mask & ~avail:
                continue
            members = bits[idx]
            left = avail
            for k in members:
                remaining[k] -= 1
                if remaining[k] == 0:
                    left &= ~(1 << k)
            chosen.append(mask)
            yield from rec(idx, nodes_left - 1, left, total - len(members))
            chosen.pop()
            for k in members:
                remaining[k] += 1

    avail0 = sum(1 << k for k in range(n) if need[k] > 0)
    yield from rec(0, n_nodes, avail0, sum(need))


class LazyList:
    """A generator's items, produced on demand and kept for repeated iteration."""

    def __init__(self, items: Iterator[tuple[int, ...]]) -> None:
        """Wrap ``items``; nothing is produced yet."""
        self._items = items
        self._done: list[tuple[int, ...]] = []
        self._exhausted = False

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        """The items in order, producing more only when the kept ones run out."""
        i = 0
        done = self._done
        while True:
            if i < len(done):
                yield done[i]
                i += 1
                continue
            if self._exhausted:
                return
            item = next(self._items, None)
            if item is None:
                self._exhausted = True
                return
            done.append(item)


@memoised(4096)
def layouts(need: tuple[int, ...], n_nodes: int, masks: tuple[int, ...]) -> LazyList:
    """:func:`side_layouts`, shared between searches (job sets with equal inputs)."""
    return LazyList(side_layouts(need, n_nodes, masks))


@memoised(1 << 16)
def pins(layout: tuple[int, ...], n: int) -> tuple[tuple[int, ...], ...]:
    """Per-job node indices of a side layout (memoised: layouts recur across job sets)."""
    return tuple(tuple(i for i, mask in enumerate(layout) if mask >> k & 1) for k in range(n))


def shared(layout: Sequence[int]) -> int:
    """Bit mask of the jobs sharing at least one node of this side with another job."""
    out = 0
    for mask in layout:
        if mask & (mask - 1):
            out |= mask
    return out


def connected(n: int, lay_r: Sequence[int], lay_t: Sequence[int]) -> bool:
    """Whether the jobs form one component when jobs sharing a node are adjacent."""
    reach = 1
    changed = True
    while changed:
        changed = False
        for layout in (lay_r, lay_t):
            for mask in layout:
                if mask & reach and mask & ~reach:
                    reach |= mask
                    changed = True
    return reach == (1 << n) - 1
