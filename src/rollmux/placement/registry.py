"""The policy registry: policy names to classes, built-ins and plug-ins alike.

Three sources, one name space:

* the built-in policies (the modules beside this one, imported on first use);
* plug-ins: any installed distribution declaring an entry point in the group
  ``rollmux.policies`` (``name = "package.module:PolicyClass"``, the class a subclass of
  :class:`rollmux.placement.PlacementPolicy` whose ``name`` is the entry point's name),
  found with :func:`importlib.metadata.entry_points` and loaded when first asked for;
* :func:`register_policy`, for a policy defined in a script or a test.

A plug-in cannot take a built-in's name, and two distributions cannot declare the same
name: both are refused with an error naming the distribution. The policy modules import
only :mod:`rollmux.placement.base`, never this module, so the registry sits above them
and nothing imports in a circle.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar, get_type_hints

from rollmux.placement.base import PlacementPolicy

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginError",
    "clear_registry",
    "get_policy",
    "policy_class",
    "policy_names",
    "policy_options",
    "policy_shares_nodes",
    "register_policy",
]

#: The entry-point group a distribution declares its policies in.
ENTRY_POINT_GROUP = "rollmux.policies"


class PluginError(ValueError):
    """A policy plug-in that cannot be used (load failure, wrong type, name clash)."""


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
    from rollmux.placement.rollmux_repeat import RollMuxRepeatPolicy
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
        CostWeightedRollMux, RollMuxRepeatPolicy, SoloDPolicy, VerlPolicy, GavelPlusPolicy,
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
    """Import plug-in ``name``; PluginError naming the distribution when it is unusable."""
    try:
        loaded = plugin.entry_point.load()
    except Exception as exc:  # any import-time failure of foreign code is the plug-in's
        raise PluginError(f"policy plug-in {name!r} from {plugin.origin} failed to load: "
                          f"{type(exc).__name__}: {exc}") from exc
    if not (isinstance(loaded, type) and issubclass(loaded, PlacementPolicy)):
        raise PluginError(f"policy plug-in {name!r} from {plugin.origin} is {loaded!r}, not "
                          f"a subclass of rollmux.placement.PlacementPolicy")
    if loaded.name != name:
        raise PluginError(f"policy plug-in {name!r} from {plugin.origin}: its class "
                          f"attribute name is {loaded.name!r}; it must be {name!r}")
    return loaded


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
