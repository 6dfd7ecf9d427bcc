"""Response-length drift templates (paper sec. 6.6, Fig. 16) and the failure spec (Fig. 19).

A *drift template* scales a job's response lengths over its training progress
``p = iteration / total_iterations`` in [0, 1]:

* ``none``:        f(p) = 1
* ``increasing``:  f(p) = 1 + s p            (s = 0.5, 1.0, 1.5; 1.0 doubles lengths by the end)
* ``decreasing``:  f(p) = 1 / (1 + s p)      (the mirror image of increasing in log-space)

``1.0x increasing`` is the behaviour the paper observes ("response length grows with
training"). :class:`rollmux.sim.stochastic.PhaseSampler` multiplies every drawn length by
``f(p)``. How far drift reaches is a :class:`DriftReach`: ``profile`` (default) scales the
job's whole profile, its maximum length included, so a drifted job can exceed the worst
case its admission planned for; ``cap`` truncates the scaled lengths at the maximum of
admission. A *setting* (``Increasing``, ``Decreasing``, ``Mixed``) says which template
each job gets; the choice is seeded per job id, so it does not depend on the order jobs
arrive. Equations: docs/stochastic.md (D1-D3).

A :class:`FailureSpec` kills a job at ``kill_at_s`` and resubmits it (as a new arrival,
paper sec. 5) at ``resubmit_at_s``; the cluster engine applies it.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from rollmux.errors import echo

__all__ = [
    "DRIFT_STRENGTHS",
    "NO_DRIFT",
    "TEMPLATES",
    "DriftDirection",
    "DriftReach",
    "DriftSetting",
    "DriftTemplate",
    "FailureSpec",
    "assign_templates",
    "length_factor",
    "length_factors",
    "parse_failures",
    "parse_reach",
    "parse_template",
    "read_failures_csv",
    "stable_job_hash",
]

DRIFT_STRENGTHS: tuple[float, ...] = (0.5, 1.0, 1.5)
"""The paper's drift magnitudes (sec. 6.6): 0.5x, 1.0x and 1.5x."""

DRIFT_STRENGTH_MAX = 100.0
"""Largest drift strength a template *name* may give (``--drift increasing-100``, config):
lengths x101 by the end of training, far beyond the paper's 1.5x; a larger one is a typo,
and its scaled lengths overflow (1e308)."""

DRIFT_STRENGTH_LIMIT = 1e6
"""Largest strength a :class:`DriftTemplate` built in code accepts (tests saturate every
draw at the cap with 2e4); beyond it the scaled lengths lose all precision."""


class DriftDirection(StrEnum):
    """Which way response lengths move over training."""

    NONE = "none"
    INCREASING = "increasing"
    DECREASING = "decreasing"


class DriftReach(StrEnum):
    """How far drift reaches: the job's whole profile, or its lengths below admission's cap.

    ``profile``: the template scales the job's response-length distribution, its maximum
    included ("a job's rollout and training profile can drift during its lifetime, e.g.,
    as response length grows with training", sec. 5.3), so a drifted job can exceed the
    worst case its admission profiled at its maximum token limit. ``cap``: scaled lengths
    are truncated at the maximum of admission, so the worst case never grows.
    """

    PROFILE = "profile"
    CAP = "cap"


class DriftSetting(StrEnum):
    """The paper's drift experiments: which templates the jobs of a trace get."""

    INCREASING = "Increasing"
    DECREASING = "Decreasing"
    MIXED = "Mixed"


@dataclass(frozen=True, slots=True)
class DriftTemplate:
    """A drift template: a direction and a strength ``s`` (0 for ``none``)."""

    direction: DriftDirection = DriftDirection.NONE
    strength: float = 0.0

    def __post_init__(self) -> None:
        """Validate the direction and the strength (finite, >= 0; 0 exactly for none)."""
        try:
            direction = DriftDirection(self.direction)
        except ValueError:
            raise ValueError(
                f"direction must be one of {[d.value for d in DriftDirection]}, "
                f"got {self.direction!r}"
            ) from None
        object.__setattr__(self, "direction", direction)
        s = self.strength
        if isinstance(s, bool) or not isinstance(s, Real) or not math.isfinite(s) or s < 0:
            raise ValueError(f"strength must be a finite number >= 0, got {s!r}")
        if s > DRIFT_STRENGTH_LIMIT:
            raise ValueError(f"strength {s:g} is out of range: must be <= "
                             f"{DRIFT_STRENGTH_LIMIT:g}")
        if direction is DriftDirection.NONE and s != 0:
            raise ValueError(f"strength must be 0 for direction 'none', got {s!r}")
        object.__setattr__(self, "strength", float(s))

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``increasing-1.0`` or ``none``."""
        if self.direction is DriftDirection.NONE:
            return "none"
        return f"{self.direction.value}-{self.strength:.1f}"

    def factor(self, progress: float) -> float:
        """The response-length scale factor at training ``progress`` in [0, 1]."""
        return length_factor(self, progress)


NO_DRIFT = DriftTemplate()

TEMPLATES: tuple[DriftTemplate, ...] = (
    NO_DRIFT,
    *(DriftTemplate(DriftDirection.INCREASING, s) for s in DRIFT_STRENGTHS),
    *(DriftTemplate(DriftDirection.DECREASING, s) for s in DRIFT_STRENGTHS),
)
"""The seven templates of the paper: none, increasing and decreasing at 0.5x/1.0x/1.5x."""


def _check_progress(progress: float) -> float:
    """``progress`` as a float in [0, 1], else ValueError naming it."""
    if isinstance(progress, bool) or not isinstance(progress, Real):
        raise ValueError(f"progress must be a number in [0, 1], got {progress!r}")
    p = float(progress)
    if not math.isfinite(p) or p < 0.0 or p > 1.0:
        raise ValueError(f"progress must be a number in [0, 1], got {progress!r}")
    return p


def length_factor(template: DriftTemplate, progress: float) -> float:
    """Response-length scale factor f(p): 1, 1 + s p (increasing) or 1 / (1 + s p)."""
    if not isinstance(template, DriftTemplate):
        raise ValueError(f"template must be a DriftTemplate, got {template!r}")
    p = _check_progress(progress)
    if template.direction is DriftDirection.INCREASING:
        return 1.0 + template.strength * p
    if template.direction is DriftDirection.DECREASING:
        return 1.0 / (1.0 + template.strength * p)
    return 1.0


def length_factors(template: DriftTemplate, progress: np.ndarray) -> np.ndarray:
    """Vectorised :func:`length_factor` over an array of progress values in [0, 1]."""
    p = np.asarray(progress, dtype=float)
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError(f"progress must be in [0, 1], got values in [{p.min()}, {p.max()}]")
    if template.direction is DriftDirection.INCREASING:
        return 1.0 + template.strength * p
    if template.direction is DriftDirection.DECREASING:
        return 1.0 / (1.0 + template.strength * p)
    return np.ones_like(p)


class DriftRangeError(ValueError):
    """A drift template whose strength is beyond :data:`DRIFT_STRENGTH_MAX`."""


def parse_template(name: str | DriftTemplate) -> DriftTemplate:
    """A template from its name: ``none``, ``increasing-1.0``, ``decreasing-0.5``, ..."""
    if isinstance(name, DriftTemplate):
        return name
    if not isinstance(name, str):
        raise ValueError(f"template name must be a string, got {name!r}")
    text = name.strip().lower()
    if text in ("none", ""):
        return NO_DRIFT
    direction, _, strength = text.rpartition("-")
    try:
        kind, value = DriftDirection(direction), float(strength)
    except ValueError:
        valid = ", ".join(t.name for t in TEMPLATES)
        raise ValueError(f"template name {echo(name)}: unknown (e.g. {valid})") from None
    if kind is not DriftDirection.NONE and math.isfinite(value) and value > DRIFT_STRENGTH_MAX:
        raise DriftRangeError(f"strength {value:g} is out of range: must be <= "
                              f"{DRIFT_STRENGTH_MAX:g}")
    try:
        return DriftTemplate(kind, value)
    except ValueError:
        valid = ", ".join(t.name for t in TEMPLATES)
        raise ValueError(f"template name {echo(name)}: unknown (e.g. {valid})") from None



def check_setting(setting: str) -> None:
    """ValueError unless ``setting`` is a drift setting (Increasing, Decreasing, Mixed) or a
    template name (:class:`DriftRangeError` for a strength beyond the limit)."""
    if str(setting).lower() in {s.value.lower() for s in DriftSetting}:
        return
    parse_template(setting)


def parse_reach(value: str | DriftReach) -> DriftReach:
    """A :class:`DriftReach` from its name (``profile`` or ``cap``), else ValueError."""
    try:
        return DriftReach(value)
    except ValueError:
        raise ValueError(f"drift_reach must be one of {[r.value for r in DriftReach]}, "
                         f"got {value!r}") from None


def stable_job_hash(job_id: str) -> int:
    """A 64-bit integer from ``job_id`` that is the same in every process (unlike hash())."""
    if not isinstance(job_id, str) or not job_id:
        raise ValueError(f"job_id must be a non-empty string, got {job_id!r}")
    return int.from_bytes(hashlib.blake2b(job_id.encode("utf-8"), digest_size=8).digest(), "big")


_SETTING_SALT = 0x5D1F7  # separates the template-choice stream from the length streams


def assign_templates(
    job_ids: Sequence[str], setting: DriftSetting | str, seed: int = 0
) -> dict[str, DriftTemplate]:
    """Which template each job gets under ``setting`` (seeded per job id).

    A uniform choice, as sec. 6.6 words it: "Increasing, where each job samples from {no
    drift, increasing 0.5x, 1.0x, 1.5x}; Decreasing, defined analogously; and Mixed, where
    each job samples from all templates".
    """
    try:
        setting = DriftSetting(setting)
    except ValueError:
        raise ValueError(
            f"setting must be one of {[s.value for s in DriftSetting]}, got {setting!r}"
        ) from None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(job_ids, str):
        raise ValueError(f"job_ids must be a sequence of job ids, got {job_ids!r}")
    choices = {
        DriftSetting.INCREASING: TEMPLATES[0:4],
        DriftSetting.DECREASING: (NO_DRIFT, *TEMPLATES[4:7]),
        DriftSetting.MIXED: TEMPLATES,
    }[setting]
    out: dict[str, DriftTemplate] = {}
    for job_id in job_ids:
        rng = np.random.default_rng([seed, _SETTING_SALT, stable_job_hash(job_id)])
        out[job_id] = choices[int(rng.integers(len(choices)))]
    return out


# --------------------------------------------------------------------------- failures


@dataclass(frozen=True, slots=True)
class FailureSpec:
    """Kill ``job_id`` at ``kill_at_s``; resubmit it as a new arrival at ``resubmit_at_s``.

    ``resubmit_at_s`` is None when the job is never resubmitted. Times are simulation
    seconds. Paper Fig. 19: job E killed at 2180 s, resubmitted at 4480 s.
    """

    job_id: str
    kill_at_s: float
    resubmit_at_s: float | None = None

    def __post_init__(self) -> None:
        """Validate: a non-empty id, kill time >= 0, resubmission not before the kill."""
        if not isinstance(self.job_id, str) or not self.job_id:
            raise ValueError(f"job_id must be a non-empty string, got {self.job_id!r}")
        kill = _as_time("kill_at_s", self.kill_at_s)
        object.__setattr__(self, "kill_at_s", kill)
        if self.resubmit_at_s is not None:
            again = _as_time("resubmit_at_s", self.resubmit_at_s)
            if again < kill:
                raise ValueError(
                    f"resubmit_at_s must be >= kill_at_s ({kill!r}), got {self.resubmit_at_s!r}"
                )
            object.__setattr__(self, "resubmit_at_s", again)


def _as_time(name: str, value: Any) -> float:
    """A finite time >= 0 from a number or numeric string, else ValueError naming it."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number >= 0, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    out = float(value)
    if not math.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return out


_FAILURE_KEYS = ("job_id", "kill_at_s", "resubmit_at_s")


def parse_failures(rows: Iterable[Mapping[str, Any]]) -> tuple[FailureSpec, ...]:
    """Failure specs from dicts (YAML lists, CSV rows); empty resubmit cells mean never.

    Rows are sorted by kill time, then job id. Unknown keys, missing keys and two
    failures of one job whose kill falls before the previous resubmission raise ValueError.
    """
    if isinstance(rows, Mapping | str):
        raise ValueError(f"rows must be a list of mappings, got {rows!r}")
    specs: list[FailureSpec] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"rows[{i}] must be a mapping, got {row!r}")
        unknown = set(row) - set(_FAILURE_KEYS)
        if unknown:
            raise ValueError(f"rows[{i}]: unknown key {sorted(unknown)[0]!r} "
                             f"(valid: {', '.join(_FAILURE_KEYS)})")
        for key in ("job_id", "kill_at_s"):
            if key not in row:
                raise ValueError(f"rows[{i}]: missing key {key!r}")
        again = row.get("resubmit_at_s")
        if again is None or (isinstance(again, str) and not again.strip()) or (
            isinstance(again, float) and math.isnan(again)
        ):
            again = None
        try:
            specs.append(FailureSpec(str(row["job_id"]).strip(), row["kill_at_s"],
                                     None if again is None else _as_time("resubmit_at_s", again)))
        except ValueError as exc:
            raise ValueError(f"rows[{i}]: {exc}") from None
    specs.sort(key=lambda s: (s.kill_at_s, s.job_id))
    last: dict[str, FailureSpec] = {}
    for spec in specs:
        prev = last.get(spec.job_id)
        if prev is not None and (prev.resubmit_at_s is None
                                 or spec.kill_at_s < prev.resubmit_at_s):
            raise ValueError(
                f"job_id {spec.job_id!r}: killed at {spec.kill_at_s!r} while not running "
                f"(previous kill at {prev.kill_at_s!r}, resubmitted at {prev.resubmit_at_s!r})"
            )
        last[spec.job_id] = spec
    return tuple(specs)


def read_failures_csv(path: str | Path) -> tuple[FailureSpec, ...]:
    """Failure specs from a CSV file with header ``job_id,kill_at_s,resubmit_at_s``."""
    from rollmux.io import open_input

    with open_input(path, "r", newline="", encoding="utf-8") as fh:
        return parse_failures(list(csv.DictReader(fh)))
