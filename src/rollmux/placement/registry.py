"""The policy registry: policy names to classes, built-ins and plug-ins alike.

Three sources, one name space:

* the built-in policies (the modules beside this one, imported on first use);
* plug-ins: any installed distribution declaring an entry point in the group
  ``rollmux.policies`` (``name = "package.module:PolicyClass"``, the class a subclass of
  :class:`rollmux.placement.PlacementPolicy` whose ``name`` is the entry point's name),
  found with :func:`importlib.metadata.entry_points` and loaded when first asked for;
* :func:`register_policy`, for a policy defined in a script or a test.

A plug-in cannot take a built-in's name, and two distributions cannot declare the same
name: both are refused with an error naming the distribution. A plug-in is foreign code,
so it is guarded (:func:`_guarded`): whatever goes wrong in it (an exception or
``sys.exit`` on import or in ``place()``/``regroup()``, a return value that is not a
decision, a call that takes longer than :func:`plugin_time_limit_s`) becomes one
:class:`rollmux.errors.PluginError` naming the plug-in and its distribution (exit status
5 on the command line, not the internal error's 70). The policy modules import only
:mod:`rollmux.placement.base`, never this module, so the registry sits above them and
nothing imports in a circle.
"""

from __future__ import annotations

import inspect
import math
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar, get_type_hints

from rollmux.errors import PluginError, shorten
from rollmux.placement.base import PlacementPolicy
from rollmux.placement.decisions import Placement, Regrouping

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginError",
    "clear_registry",
    "get_policy",
    "plugin_time_limit_s",
    "policy_class",
    "policy_names",
    "policy_options",
    "policy_shares_nodes",
    "register_policy",
]

#: The entry-point group a distribution declares its policies in.
ENTRY_POINT_GROUP = "rollmux.policies"


#: Longest a plug-in may take to import, or for one ``place()`` or ``regroup()`` call,
#: before it is stopped with a PluginError (seconds; the environment variable
#: ``ROLLMUX_PLUGIN_TIME_LIMIT_S`` replaces it, 0 turns the limit off). The built-in
#: policies decide in milliseconds (Table 5: 591 ms at 2,000 concurrent jobs).
PLUGIN_TIME_LIMIT_S = 300.0


def plugin_time_limit_s() -> float:
    """The plug-in time limit in seconds (0: none): ``ROLLMUX_PLUGIN_TIME_LIMIT_S`` or
    :data:`PLUGIN_TIME_LIMIT_S`; ValueError on a value that is not a number >= 0."""
    text = os.environ.get("ROLLMUX_PLUGIN_TIME_LIMIT_S")
    if text is None:
        return PLUGIN_TIME_LIMIT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"ROLLMUX_PLUGIN_TIME_LIMIT_S={shorten(text)!r}: expected a number of "
                         f"seconds >= 0 (0: no limit)")
    return value


class _PluginTimeout(Exception):
    """Raised inside a plug-in's call when its time is up."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the body after ``seconds`` with _PluginTimeout (a real-time timer; only
    in the main thread, where signals arrive, and only when no other timer is set)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _PluginTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    if previous not in (signal.SIG_DFL, signal.SIG_IGN, None):  # someone else's timer
        signal.signal(signal.SIGALRM, previous)
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _foreign(name: str, origin: str, what: str) -> Iterator[None]:
    """Run plug-in code: every failure of it, time-outs included, becomes a PluginError."""
    limit = plugin_time_limit_s()
    try:
        with _time_limit(limit):
            yield
    except PluginError:
        raise
    except _PluginTimeout:
        raise PluginError(f"policy plug-in {name!r} from {origin}: {what} took longer than "
                          f"{limit:g} s (ROLLMUX_PLUGIN_TIME_LIMIT_S)") from None
    except SystemExit as exc:
        raise PluginError(f"policy plug-in {name!r} from {origin}: {what} exited "
                          f"(sys.exit({shorten(repr(exc.code))}))") from None
    except Exception as exc:  # any failure of foreign code is the plug-in's
        raise PluginError(f"policy plug-in {name!r} from {origin}: {what} raised "
                          f"{type(exc).__name__}: {shorten(str(exc))}") from exc


@dataclass(frozen=True)
class _Plugin:
    """A policy declared by an installed distribution, not yet imported."""

    entry_point: EntryPoint

    @property
    def origin(self) -> str:
        """Where it comes from, for error messages: distribution and object reference."""
        dist = self.entry_point.dist
        name = dist.name if dist is not None else "an unknown distribution"
        return f"distribution {name!r} ({self.entry_point.value})"


_Factory = Callable[..., PlacementPolicy]
_Source = _Factory | _Plugin

# Name -> class (or factory) or a not-yet-loaded plug-in; None until first use, because
# the built-ins and the entry points are looked up once, not at import.
_registry: dict[str, _Source] | None = None
# Registrations by register_policy, kept apart so that clear_registry keeps them.
_registered: dict[str, _Factory] = {}


def _builtin_policies() -> dict[str, _Factory]:
    """The policies shipped with rollmux, by name (their class attribute ``name``)."""
    from rollmux.placement.async_solo_d import AsyncSoloDPolicy
    from rollmux.placement.gavel_plus import GavelPlusPolicy
    from rollmux.placement.greedy import GreedyPolicy
    from rollmux.placement.optimal import OptimalPolicy
    from rollmux.placement.random_policy import RandomPolicy
    from rollmux.placement.regroup import RegroupPolicy
    from rollmux.placement.rollmux import RollMuxPolicy
    from rollmux.placement.rollmux_join import JoinAwareRollMux
    from rollmux.placement.rollmux_repeat import RollMuxRepeatPolicy, RollMuxRepeatStrictPolicy
    from rollmux.placement.solo_d import SoloDPolicy
    from rollmux.placement.timeslice import TimeslicePolicy
    from rollmux.placement.variants import (
        CostWeightedRollMux,
        ExpectedRollMux,
        NoPruneRollMux,
        OrderSearchRollMux,
    )
    from rollmux.placement.verl import VerlPolicy

    classes: tuple[type[PlacementPolicy], ...] = (
        RollMuxPolicy, NoPruneRollMux, ExpectedRollMux, OrderSearchRollMux,
        CostWeightedRollMux, RollMuxRepeatPolicy, RollMuxRepeatStrictPolicy, SoloDPolicy,
        VerlPolicy, GavelPlusPolicy,
        RandomPolicy, GreedyPolicy, OptimalPolicy, RegroupPolicy, TimeslicePolicy,
        AsyncSoloDPolicy, JoinAwareRollMux,
    )
    return {cls.name: cls for cls in classes}


def _plugins(builtin: frozenset[str]) -> dict[str, _Plugin]:
    """The installed plug-ins by name; PluginError on a clash with a built-in or each other."""
    found: dict[str, _Plugin] = {}
    # Sorted so that a clash between two distributions is reported the same way each run.
    declared = sorted(entry_points(group=ENTRY_POINT_GROUP),
                      key=lambda ep: (ep.name, ep.value))
    for ep in declared:
        plugin = _Plugin(ep)
        if ep.name in builtin:
            raise PluginError(f"policy plug-in {ep.name!r} from {plugin.origin}: the name is "
                              f"a built-in policy's; rename the entry point")
        if ep.name in found:
            raise PluginError(f"policy plug-in {ep.name!r} is declared twice: by "
                              f"{found[ep.name].origin} and by {plugin.origin}")
        found[ep.name] = plugin
    return found


def _sources() -> dict[str, _Source]:
    """Every known name and where its policy comes from (built on first use)."""
    global _registry
    if _registry is None:
        builtin = _builtin_policies()
        merged: dict[str, _Source] = {**builtin, **_plugins(frozenset(builtin))}
        _registry = merged
    return {**_registry, **_registered}


def _load_plugin(name: str, plugin: _Plugin) -> type[PlacementPolicy]:
    """Import plug-in ``name`` (guarded, :func:`_guarded`); PluginError naming the
    distribution when it is unusable."""
    with _foreign(name, plugin.origin, "importing it"):
        loaded = plugin.entry_point.load()
    if not (isinstance(loaded, type) and issubclass(loaded, PlacementPolicy)):
        raise PluginError(f"policy plug-in {name!r} from {plugin.origin} is {loaded!r}, not "
                          f"a subclass of rollmux.placement.PlacementPolicy")
    if loaded.name != name:
        raise PluginError(f"policy plug-in {name!r} from {plugin.origin}: its class "
                          f"attribute name is {loaded.name!r}; it must be {name!r}")
    return _guarded(loaded, name, plugin.origin)


def _guarded(cls: type[PlacementPolicy], name: str, origin: str) -> type[PlacementPolicy]:
    """A subclass of plug-in class ``cls`` whose constructor, ``place()`` and ``regroup()``
    turn any failure (exception, ``sys.exit``, time-out, a result that is not a decision)
    into a PluginError naming the plug-in and its distribution."""

    def __init__(self: PlacementPolicy, *args: Any, **kwargs: Any) -> None:
        with _foreign(name, origin, "its constructor"):
            cls.__init__(self, *args, **kwargs)

    def place(self: PlacementPolicy, job: Any, snapshot: Any) -> Any:
        with _foreign(name, origin, f"place() of job {shorten(str(job.job_id))!r}"):
            decision = cls.place(self, job, snapshot)
        if not isinstance(decision, Placement | Regrouping):
            raise PluginError(f"policy plug-in {name!r} from {origin}: place() returned "
                              f"{shorten(repr(decision))}, not a Placement")
        return decision

    def regroup(self: PlacementPolicy, snapshot: Any) -> Any:
        with _foreign(name, origin, "regroup()"):
            decision = cls.regroup(self, snapshot)
        if decision is not None and not isinstance(decision, Regrouping):
            raise PluginError(f"policy plug-in {name!r} from {origin}: regroup() returned "
                              f"{shorten(repr(decision))}, not a Regrouping or None")
        return decision

    namespace = {"__init__": __init__, "place": place, "regroup": regroup,
                 "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                 "__doc__": cls.__doc__, "__signature__": inspect.signature(cls)}
    return type(cls.__name__, (cls,), namespace)


def clear_registry() -> None:
    """Forget the looked-up built-ins and plug-ins (e.g. after installing a plug-in)."""
    global _registry
    _registry = None


P = TypeVar("P", bound=Callable[..., PlacementPolicy])


def register_policy(name: str) -> Callable[[P], P]:
    """Class (or factory) decorator registering a policy under ``name`` in this process.

    For a policy defined in a script or test; an installed package declares an entry
    point in the ``rollmux.policies`` group instead. A name already taken is refused.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")

    def deco(factory: P) -> P:
        known = _sources().get(name)
        if known is not None and known is not factory:
            raise ValueError(f"name {name!r} is already registered")
        _registered[name] = factory
        return factory

    return deco


def policy_names() -> tuple[str, ...]:
    """Every registered policy name (built-in, plug-in, registered), sorted."""
    return tuple(sorted(_sources()))


def builtin_policy_names() -> tuple[str, ...]:
    """The policies shipped with rollmux, sorted (no plug-in, no process registration)."""
    return tuple(sorted(_builtin_policies()))


def policy_class(name: str) -> _Factory:
    """The class (or factory) of policy ``name``; ValueError lists the valid names."""
    sources = _sources()
    if not isinstance(name, str) or name not in sources:
        raise ValueError(f"unknown policy {name!r}; valid names: {', '.join(sorted(sources))}")
    source = sources[name]
    if isinstance(source, _Plugin):
        loaded = _load_plugin(name, source)
        assert _registry is not None  # _sources() built it
        _registry[name] = loaded
        return loaded
    return source


def _declared_options(factory: Callable[..., Any]) -> frozenset[str]:
    """The keyword options a policy class (or factory) accepts.

    The class's ``options`` attribute when it declares one; otherwise the named
    parameters of its constructor, and for a factory taking ``**options`` those of the
    policy class it returns.
    """
    declared = getattr(factory, "options", None)
    if declared is not None:
        return frozenset(declared)
    params = list(inspect.signature(factory).parameters.values())
    named = {p.name for p in params if p.kind in (
        p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        returned = None if isinstance(factory, type) else get_type_hints(factory).get("return")
        if isinstance(returned, type) and issubclass(returned, PlacementPolicy):
            named |= _declared_options(returned)
    return frozenset(named)


def policy_options(name: str) -> frozenset[str]:
    """The keyword options policy ``name`` accepts (e.g. ``seed``, ``max_group_size``)."""
    return _declared_options(policy_class(name))


def policy_shares_nodes(name: str) -> bool:
    """False when every group of policy ``name`` holds one job (a group-size limit is moot)."""
    factory = policy_class(name)
    if not isinstance(factory, type):
        returned = get_type_hints(factory).get("return")
        factory = returned if isinstance(returned, type) else PlacementPolicy
    return bool(getattr(factory, "shares_nodes", True))


def get_policy(name: str, **options: Any) -> PlacementPolicy:
    """The policy registered as ``name`` built with ``options``; ValueError lists valid names."""
    factory = policy_class(name)
    unknown = sorted(set(options) - _declared_options(factory))
    if unknown:
        accepted = ", ".join(sorted(_declared_options(factory))) or "none"
        raise ValueError(f"policy {name!r} does not take option(s) {', '.join(unknown)} "
                         f"(it takes: {accepted})")
    return factory(**options)
