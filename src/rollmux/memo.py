"""One memo helper for every process-wide cache: value keys, a size bound, one clear-all.

A :class:`Memo` maps keys to computed values. Keys are values (hashable, compared with
``==``): never ``id()`` of an object, which a later object can reuse, and never ``repr``
text. Equal inputs loaded twice (two equal :class:`rollmux.hardware.Hardware`, say)
share an entry; a memoised function must therefore depend on its arguments' values
only. When a memo is full it is emptied (the next calls refill it), so a run's answers
never depend on what was memoised before. Every memo registers itself by name, and
:func:`clear_all` empties them all (tests, benchmarks measuring cold runs).

``@memoised(max_entries)`` memoises a function on its positional arguments; the wrapper
keeps ``.memo`` and ``.cache_clear()``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar

__all__ = ["Memo", "Memoised", "clear_all", "memoised", "memos"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")

_MEMOS: dict[str, Memo[Any, Any]] = {}


class Memo(Generic[K, V]):
    """A named, bounded, process-wide memo keyed by values."""

    def __init__(self, name: str, max_entries: int = 4096,
                 weight: Callable[[V], int] | None = None) -> None:
        """Register the memo as ``name`` (unique) holding at most ``max_entries`` values.

        With ``weight``, ``max_entries`` bounds the summed weight of the values instead
        (e.g. the iterations of memoised draw tables).
        """
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"max_entries must be an integer >= 1, got {max_entries!r}")
        if name in _MEMOS:
            raise ValueError(f"a memo named {name!r} exists already")
        self.name = name
        self.max_entries = max_entries
        self._weight = weight
        self._held = 0
        self._values: dict[K, V] = {}
        _MEMOS[name] = self

    def get(self, key: K) -> V | None:
        """The value memoised for ``key``, or None."""
        return self._values.get(key)

    def put(self, key: K, value: V) -> V:
        """Memoise ``value`` for ``key`` (emptying the memo first when it is full)."""
        size = 1 if self._weight is None else self._weight(value)
        if self._held + size > self.max_entries:
            self.clear()
        self._values[key] = value
        self._held += size
        return value

    def lookup(self, key: K, compute: Callable[[], V]) -> V:
        """The value for ``key``: memoised, else ``compute()`` memoised."""
        values = self._values
        if key in values:
            return values[key]
        return self.put(key, compute())

    def clear(self) -> None:
        """Forget every value."""
        self._values.clear()
        self._held = 0

    def __len__(self) -> int:
        """How many values are memoised."""
        return len(self._values)


class Memoised(Generic[P, R]):
    """A function memoised on its positional arguments (see :func:`memoised`)."""

    def __init__(self, function: Callable[P, R], max_entries: int) -> None:
        """Wrap ``function`` with a memo named after it."""
        functools.update_wrapper(self, function)
        self._function = function
        self.memo: Memo[Hashable, R] = Memo(
            f"{function.__module__}.{function.__qualname__}", max_entries)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """``function(*args)``, memoised; keyword arguments are refused."""
        if kwargs:
            raise TypeError(f"{self._function.__qualname__} is memoised on positional "
                            f"arguments only")
        memo = self.memo
        hit = memo.get(args)
        if hit is not None:
            return hit
        return memo.put(args, self._function(*args, **kwargs))

    def cache_clear(self) -> None:
        """Forget every memoised value of this function."""
        self.memo.clear()


def memoised(max_entries: int = 4096) -> Callable[[Callable[P, R]], Memoised[P, R]]:
    """Decorator: memoise a function of hashable positional arguments in a :class:`Memo`."""

    def deco(function: Callable[P, R]) -> Memoised[P, R]:
        return Memoised(function, max_entries)

    return deco


def memos() -> dict[str, Memo[Any, Any]]:
    """Every registered memo by name."""
    return dict(_MEMOS)


def clear_all() -> None:
    """Empty every process-wide memo."""
    for memo in _MEMOS.values():
        memo.clear()
