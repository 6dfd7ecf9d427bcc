"""The model layer: a job resolved once on a hardware, and the group it runs in.

:func:`resolve` turns ``(RLJob, Hardware)`` into a :class:`ResolvedJob`; everything
above this layer (closed forms' adapters, the group model, placement, the phase sampler,
the simulators, the experiments) takes the resolved job. :mod:`rollmux.model.cycle` holds
the one statement of a group member's effective phase durations (from the rules of
:mod:`rollmux.phases`) and the group period (from :mod:`rollmux.schedule.maxplus`).

The five types that stand for one job (``RLJob``, ``ResolvedJob``, ``JobPhases``,
``GroupJob``, ``PlacedJob``) and their roles: docs/model.md, "The job types".
"""

from rollmux.model.resolved import ResolvedJob, resolve

__all__ = ["ResolvedJob", "resolve"]
