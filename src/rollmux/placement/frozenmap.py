"""An immutable, insertion-ordered mapping whose updates share structure with their source.

Cluster snapshots keep their groups, nodes and jobs in FrozenMaps. Copying a
dict of 20,000 jobs on every admission made placing N jobs cost O(N^2); here an update
(:meth:`FrozenMap.edit`, then :meth:`MapEdit.freeze`) copies two short lists of pointers
and the few blocks it touches, O(n / B + B) with B = 64 entries per block, and leaves its
source untouched. Two maps of one lineage (one derived from the other by edits) number
their entries alike, so :meth:`FrozenMap.changed_keys` finds what differs between them by
comparing blocks by identity, which lets a policy keep per-group state current without
rescanning the cluster.

Iteration order is a dict's: insertion order, a replaced value keeps its key's place, a
deleted key that is set again moves to the end.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from itertools import chain, compress
from operator import is_not
from typing import Any, Generic, TypeVar, overload

__all__ = ["FrozenMap", "MapEdit"]

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")

_BLOCK_BITS = 6
_BLOCK = 1 << _BLOCK_BITS  # entries per block
_SLOT = _BLOCK - 1
_BUCKET_LOAD = 32  # keys per index bucket after a rehash (rehash beyond twice that)

# A block is a list of entries, each a (key, value) pair or None where a key was deleted.
# Blocks and buckets are never mutated once a FrozenMap holds them: an edit copies the
# ones it changes first.
_Entry = tuple[Any, Any] | None


def _bucket_count(n: int) -> int:
    """Index buckets for ``n`` keys: a power of two near ``n / _BUCKET_LOAD``."""
    count = 1
    while count * _BUCKET_LOAD < n:
        count *= 2
    return count


def _index(entries: Iterable[_Entry], buckets: int) -> list[dict[Any, int]]:
    """The key -> slot index of ``entries`` (slot = position among them) in ``buckets``."""
    index: list[dict[Any, int]] = [{} for _ in range(buckets)]
    mask = buckets - 1
    for slot, entry in enumerate(entries):
        if entry is not None:
            index[hash(entry[0]) & mask][entry[0]] = slot
    return index


def _fresh(entries: list[_Entry]) -> tuple[Any, ...]:
    """Parts of a map holding the live ``entries`` in order, numbered anew (a new lineage)."""
    return (
        [entries[i : i + _BLOCK] for i in range(0, len(entries), _BLOCK)],
        _index(entries, _bucket_count(len(entries))),
        len(entries),
        len(entries),
        object(),
    )


class FrozenMap(Mapping[K, V]):
    """An immutable insertion-ordered mapping; :meth:`edit` derives updated copies cheaply."""

    __slots__ = ("_blocks", "_buckets", "_len", "_lineage", "_used")

    _blocks: list[list[_Entry]]
    _buckets: list[dict[K, int]]
    _len: int
    _used: int  # slots taken, deleted ones included
    _lineage: object  # shared by maps whose slots are numbered alike

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        """A map of ``items`` (a mapping or key-value pairs; a repeated key keeps its last)."""
        self._set(*_fresh(list(dict(items).items())))

    def _set(
        self,
        blocks: list[list[_Entry]],
        buckets: list[dict[K, int]],
        length: int,
        used: int,
        lineage: object,
    ) -> None:
        """Take ownership of the parts (no copy)."""
        self._blocks = blocks
        self._buckets = buckets
        self._len = length
        self._used = used
        self._lineage = lineage

    # ------------------------------------------------------------------- reading

    def __getitem__(self, key: K) -> V:
        """The value of ``key``; KeyError if absent."""
        buckets = self._buckets
        slot = buckets[hash(key) & (len(buckets) - 1)].get(key)
        if slot is None:
            raise KeyError(key)
        entry = self._blocks[slot >> _BLOCK_BITS][slot & _SLOT]
        assert entry is not None  # the index only holds live slots
        value: V = entry[1]
        return value

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | D, /) -> V | D: ...

    def get(self, key: K, default: Any = None, /) -> Any:
        """The value of ``key``, or ``default``."""
        buckets = self._buckets
        slot = buckets[hash(key) & (len(buckets) - 1)].get(key)
        if slot is None:
            return default
        entry = self._blocks[slot >> _BLOCK_BITS][slot & _SLOT]
        assert entry is not None
        return entry[1]

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is in the map."""
        buckets = self._buckets
        return key in buckets[hash(key) & (len(buckets) - 1)]

    def __len__(self) -> int:
        """The number of keys."""
        return self._len

    def __iter__(self) -> Iterator[K]:
        """Keys in insertion order."""
        for block in self._blocks:
            for entry in block:
                if entry is not None:
                    yield entry[0]

    def values(self) -> ValuesView[V]:
        """Values in insertion order (without a lookup per key)."""
        return _Values(self)

    def items(self) -> ItemsView[K, V]:
        """(key, value) pairs in insertion order (without a lookup per key)."""
        return _Items(self)

    def _entries(self) -> Iterator[tuple[K, V]]:
        """Live (key, value) entries in insertion order."""
        for block in self._blocks:
            for entry in block:
                if entry is not None:
                    yield entry

    def __repr__(self) -> str:
        """``FrozenMap({...})``."""
        return f"FrozenMap({dict(self._entries())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the plain items (the lineage is not kept)."""
        return (FrozenMap, (dict(self._entries()),))

    # ------------------------------------------------------------------- updating

    def edit(self) -> MapEdit[K, V]:
        """A mutable draft starting from this map; :meth:`MapEdit.freeze` returns the result."""
        return MapEdit(self)

    def changed_keys(self, other: FrozenMap[K, V]) -> set[K] | None:
        """Keys whose value object differs between ``other`` and this map, or that only one has.

        None when the two maps are not of one lineage (compare them another way). The
        answer may include keys re-set to the same value object; it never misses one.
        """
        if other._lineage is not self._lineage:
            return None
        out: set[K] = set()
        mine, theirs = self._blocks, other._blocks
        common = min(len(mine), len(theirs))
        # Compare blocks by identity at C speed; only the few that differ are walked.
        differ = compress(range(common), map(is_not, mine, theirs))
        for i in chain(differ, range(common, max(len(mine), len(theirs)))):
            a = mine[i] if i < len(mine) else []
            b = theirs[i] if i < len(theirs) else []
            both = min(len(a), len(b))
            for j in compress(range(both), map(is_not, a, b)):
                for entry in (a[j], b[j]):
                    if entry is not None:
                        out.add(entry[0])
            for entry in chain(a[both:], b[both:]):  # slots only one map has used
                if entry is not None:
                    out.add(entry[0])
        return out


class _Values(ValuesView[V]):
    """Values of a FrozenMap, iterated block by block."""

    _mapping: FrozenMap[Any, V]

    def __iter__(self) -> Iterator[V]:
        """Values in insertion order."""
        for block in self._mapping._blocks:
            for entry in block:
                if entry is not None:
                    yield entry[1]


class _Items(ItemsView[K, V]):
    """Items of a FrozenMap, iterated block by block."""

    _mapping: FrozenMap[K, V]

    def __iter__(self) -> Iterator[tuple[K, V]]:
        """(key, value) pairs in insertion order."""
        return self._mapping._entries()


class MapEdit(Generic[K, V]):
    """A draft of a :class:`FrozenMap`: set and delete keys like a dict, then :meth:`freeze`.

    The source map is never modified: a block or index bucket is copied the first time
    the draft writes to it.
    """

    __slots__ = (
        "_blocks", "_buckets", "_frozen", "_len", "_lineage", "_own_blocks",
        "_own_buckets", "_used",
    )

    def __init__(self, source: FrozenMap[K, V]) -> None:
        """Start from ``source`` (shallow copies of its block and bucket lists only)."""
        self._blocks = list(source._blocks)
        self._buckets = list(source._buckets)
        self._len = source._len
        self._used = source._used
        self._lineage = source._lineage
        self._own_blocks: set[int] = set()
        self._own_buckets: set[int] = set()
        self._frozen = False

    def _slot(self, key: K) -> int | None:
        """The slot of ``key`` in the draft, or None."""
        buckets = self._buckets
        return buckets[hash(key) & (len(buckets) - 1)].get(key)

    def _check_open(self) -> None:
        """ValueError once :meth:`freeze` has handed the draft's lists to a map."""
        if self._frozen:
            raise ValueError("this MapEdit is frozen; call edit() on the map it returned")

    def _block(self, i: int) -> list[_Entry]:
        """Block ``i``, copied first if the draft does not own it yet."""
        if i not in self._own_blocks:
            self._blocks[i] = list(self._blocks[i])
            self._own_blocks.add(i)
        return self._blocks[i]

    def _bucket(self, key: K) -> dict[K, int]:
        """The index bucket of ``key``, copied first if the draft does not own it yet."""
        i = hash(key) & (len(self._buckets) - 1)
        if i not in self._own_buckets:
            self._buckets[i] = dict(self._buckets[i])
            self._own_buckets.add(i)
        return self._buckets[i]

    def __getitem__(self, key: K) -> V:
        """The draft's value of ``key``; KeyError if absent."""
        slot = self._slot(key)
        if slot is None:
            raise KeyError(key)
        entry = self._blocks[slot >> _BLOCK_BITS][slot & _SLOT]
        assert entry is not None
        value: V = entry[1]
        return value

    def get(self, key: K, default: V | None = None) -> V | None:
        """The draft's value of ``key``, or ``default``."""
        slot = self._slot(key)
        if slot is None:
            return default
        entry = self._blocks[slot >> _BLOCK_BITS][slot & _SLOT]
        assert entry is not None
        value: V = entry[1]
        return value

    def __contains__(self, key: object) -> bool:
        """Whether the draft has ``key``."""
        buckets = self._buckets
        return key in buckets[hash(key) & (len(buckets) - 1)]

    def __len__(self) -> int:
        """The number of keys in the draft."""
        return self._len

    def __setitem__(self, key: K, value: V) -> None:
        """Set ``key`` (a new key goes last; an existing one keeps its place)."""
        self._check_open()
        slot = self._slot(key)
        if slot is not None:
            self._block(slot >> _BLOCK_BITS)[slot & _SLOT] = (key, value)
            return
        slot = self._used
        i = slot >> _BLOCK_BITS
        if i == len(self._blocks):
            self._blocks.append([])
            self._own_blocks.add(i)
        self._block(i).append((key, value))
        self._bucket(key)[key] = slot
        self._used += 1
        self._len += 1

    def __delitem__(self, key: K) -> None:
        """Delete ``key``; KeyError if absent."""
        self._check_open()
        slot = self._slot(key)
        if slot is None:
            raise KeyError(key)
        self._block(slot >> _BLOCK_BITS)[slot & _SLOT] = None
        del self._bucket(key)[key]
        self._len -= 1

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Delete ``key`` and return its value, or return ``default`` if absent."""
        if key not in self:
            return default
        value = self[key]
        del self[key]
        return value

    def freeze(self) -> FrozenMap[K, V]:
        """The edited map (the draft cannot be written to afterwards)."""
        self._check_open()
        self._frozen = True
        out: FrozenMap[K, V] = FrozenMap.__new__(FrozenMap)
        if self._used > _BLOCK and self._used > 2 * self._len:
            # Mostly deleted slots: renumber the live entries (a new lineage).
            out._set(*_fresh([e for b in self._blocks for e in b if e is not None]))
            return out
        buckets = self._buckets
        if self._len > 2 * _BUCKET_LOAD * len(buckets):
            # Same slots, more buckets: the lineage (and changed_keys) is unaffected.
            buckets = _index((e for b in self._blocks for e in b), _bucket_count(self._len))
        out._set(self._blocks, buckets, self._len, self._used, self._lineage)
        return out
