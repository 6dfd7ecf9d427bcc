"""A replay's phase draws and drifted profiles: what the stochastic sampler gives the driver.

:func:`default_draw_factory` turns a replay config into each job's per-iteration draw
table (:class:`rollmux.sim.progress.PhaseDraws`, memoised across replays of one process);
:func:`default_profile_factory` into each job's drifted profile at a training progress
(what the periodic re-solve of a regrouping policy sees). :func:`drift_templates` assigns
the drift templates of a setting; :func:`length_source` reads a PolyTrace folder of real
response lengths once per process.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rollmux.errors import echo
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.memo import Memo
from rollmux.model import resolve
from rollmux.phasetimes import PhaseTimes
from rollmux.sim.drift import (
    NO_DRIFT,
    DriftRangeError,
    DriftReach,
    DriftSetting,
    DriftTemplate,
    assign_templates,
    parse_template,
)
from rollmux.sim.progress import PhaseDraws

if TYPE_CHECKING:
    from rollmux.sim.engine import SimConfig

__all__ = [
    "DrawFactory",
    "ProfileFactory",
    "default_draw_factory",
    "default_profile_factory",
    "drift_templates",
    "length_source",
]

#: A job's phase draws (:class:`PhaseDraws`) from the job and its phase times.
DrawFactory = Callable[[RLJob, PhaseTimes], PhaseDraws]

#: A job as re-profiled at a training progress in [0, 1]: its drifted phase profile.
ProfileFactory = Callable[[RLJob, float], RLJob]

# Memo of draw tables: the sampler is deterministic per (job, times, seed, options,
# template), so replays of one trace under several policies share its (costly) draws.
# Bounded by the tables' iterations: 1e6 iterations are 24 MB of tables.
_DRAWS: Memo[tuple[Any, ...], PhaseDraws] = Memo(
    "rollmux.sim.sampling.draws", 1_000_000, weight=lambda table: len(table.rollout_s))


def drift_templates(setting: str, job_ids: Sequence[str], seed: int
                    ) -> dict[str, DriftTemplate]:
    """Each job's drift template: a setting (Increasing/Decreasing/Mixed) or one template."""
    names = {s.value.lower(): s for s in DriftSetting}
    if setting.lower() in names:
        return assign_templates(list(job_ids), names[setting.lower()], seed)
    try:
        template = parse_template(setting)
    except DriftRangeError as exc:
        raise ValueError(f"drift {echo(setting)}: {exc}") from None
    except ValueError:
        valid = ", ".join(["none", *(s.value for s in DriftSetting), "increasing-1.0", "..."])
        raise ValueError(f"drift {echo(setting)}: unknown setting (valid: {valid})") from None
    return dict.fromkeys(job_ids, template)


def _stochastic_config(config: SimConfig) -> Any:
    """The phase sampler's :class:`StochasticConfig` of a replay config."""
    from rollmux.sim.stochastic import StochasticConfig

    options: dict[str, Any] = {"migration": config.migration}
    if config.migration_threshold is not None:
        options["migration_threshold"] = config.migration_threshold
    return StochasticConfig(**options)


def length_source(path: str | None) -> Any:
    """The :class:`rollmux.sim.lengths.LengthSource` of a folder, read once per process."""
    if path is None:
        return None
    from rollmux.sim.lengths import LengthSource

    hit = _SOURCES.get(path)
    if hit is None:
        hit = _SOURCES[path] = LengthSource.read(path)
    return hit


_SOURCES: dict[str, Any] = {}


def default_draw_factory(hw: Hardware, config: SimConfig, seed: int,
                         job_ids: Sequence[str] = ()) -> tuple[DrawFactory | None, str]:
    """Per-job draw tables from the stochastic sampler (None: expected times) and a label.

    Drift templates come from ``config.drift`` (seeded with ``seed``); long-tail migration
    from ``config.migration``. Tables are memoised across replays in this process.
    """
    templates = drift_templates(config.drift, job_ids, seed)
    if config.fidelity != "event" or not config.stochastic:
        return None, "expected"
    from rollmux.sim.stochastic import PhaseSampler

    sconf = _stochastic_config(config)
    source = length_source(config.lengths)

    def make(job: RLJob, times: PhaseTimes) -> PhaseDraws:
        template = templates[job.job_id]
        # Value keys (equal hardware loaded twice shares the tables).
        key = (job, times, seed, sconf, template, config.drift_reach, hw, config.lengths)
        hit = _DRAWS.get(key)
        if hit is not None:
            return hit
        sampler = PhaseSampler(resolve(job, hw), root_seed=seed, config=sconf, drift=template,
                               drift_reach=config.drift_reach, times=times, lengths=source)
        draws = [sampler.sample(k) for k in range(job.iterations)]
        table = PhaseDraws(array("d", [d.rollout_s for d in draws]),
                           array("d", [d.rollout_node_s for d in draws]),
                           array("d", [d.train_s for d in draws]),
                           array("i", [d.tail_gpus for d in draws]))
        return _DRAWS.put(key, table)

    return make, "stochastic"


def default_profile_factory(hw: Hardware, config: SimConfig, seed: int,
                            job_ids: Sequence[str] = ()) -> ProfileFactory | None:
    """Each job's drifted profile at a training progress (None: no profile ever drifts).

    The profile is what the one-shot profiler would measure at that progress
    (:meth:`rollmux.sim.stochastic.PhaseSampler.drifted_times`): the job with its expected
    and worst-case rollout and training times replaced. Profiles drift only with sampled
    phases, a template other than ``none`` and ``drift_reach`` ``profile``.
    """
    templates = drift_templates(config.drift, job_ids, seed)
    if (config.fidelity != "event" or not config.stochastic
            or config.drift_reach != DriftReach.PROFILE.value
            or all(t == NO_DRIFT for t in templates.values())):
        return None
    from rollmux.sim.stochastic import PhaseSampler

    sconf = _stochastic_config(config)
    samplers: dict[str, PhaseSampler] = {}

    def drifted(job: RLJob, progress: float) -> RLJob:
        sampler = samplers.get(job.job_id)
        if sampler is None:
            sampler = PhaseSampler(resolve(job, hw), root_seed=seed, config=sconf,
                                   drift=templates[job.job_id],
                                   drift_reach=config.drift_reach)
            samplers[job.job_id] = sampler
        times = sampler.drifted_times(progress)
        if times is sampler.times:
            return job
        return dataclasses.replace(job, rollout_s=times.rollout_s,
                                   rollout_max_s=times.rollout_max_s, train_s=times.train_s,
                                   train_max_s=times.train_max_s)

    return drifted
