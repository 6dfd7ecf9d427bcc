"""One replay, one identity: :class:`ReplaySpec` says what a replay is, :func:`run_replay` runs it.

A spec holds everything that defines one trace replay: the trace, the policy and its
options (a group-size limit, a re-solve interval), the seed, the SLO setting, a kill list,
the hardware (file and overrides) and the replay options as one
:class:`rollmux.sim.engine.SimConfig` (fidelity, drift, migration, sync, real lengths,
whether the per-phase table is kept). ``rollmux simulate`` and the Snakemake replay rule
only build a spec;
:func:`run_replay` loads the trace, replays it and writes the output folder, so a Python
caller gets the same files and the same ``config.json`` as the command line.

``spec.path()`` is the replay's key=value folder (relative)::

    trace=<stem>/slo=<slo>/maxgroup=<n>/drift=<setting>/policy=<name>/seed=<s>

with, between ``drift=`` and ``policy=`` and only when they differ from the defaults,
``drift_reach=cap`` (drift truncated at the maximum length of admission),
``lengths=<folder>``, ``fidelity=analytic``, ``phases=expected`` (expected instead of
sampled phase times), ``migration=off``, ``migration_threshold=<q>``, ``sync=flat``,
``regroup=<h>h`` and ``failures=<stem>`` (a kill list: the failure replay is a replay
like any other). Every replay's folder ends in ``policy=<name>/seed=<s>``, so none nests
inside another's (a folder is replaced whole). The segments are one table
(:data:`SEGMENTS`): ``path()``, its inverse :meth:`ReplaySpec.from_keys` and the
workflow's wildcard template and constraints (:func:`wildcard_template`,
:func:`wildcard_constraints`) come from it.
The hardware is recorded in ``config.json`` but not in the path: one results tree is for
one hardware. Collectors read a replay's keys from its ``config.json``
(:func:`replay_keys`), never from the folder's name.

An output folder is one unit: it is written into a temporary sibling and renamed into
place whole (:func:`rollmux.io.replace_folder`).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollmux.errors import control_characters, echo
from rollmux.io import replace_folder, write_csv, write_json
from rollmux.jobs import RLJob
from rollmux.sim.drift import DriftReach, FailureSpec
from rollmux.sim.engine import FIDELITIES, SYNC_MODES, SimConfig
from rollmux.sim.records import SimulationResult

__all__ = [
    "FLOAT_FORMAT",
    "SEGMENTS",
    "SLO_FROM_TRACE",
    "ReplaySpec",
    "Segment",
    "SloSetting",
    "draw_slos",
    "group_size_options",
    "override_slos",
    "parse_slo",
    "path_keys",
    "read_failures",
    "replay_keys",
    "run_replay",
    "run_replay_folder",
    "wildcard_constraints",
    "wildcard_keys",
    "wildcard_template",
    "write_result",
]

#: Float format of the written tables: 10 significant digits keep 0.1 ms over weeks.
FLOAT_FORMAT = "%.10g"

#: SLO setting that keeps the trace's SLOs.
SLO_FROM_TRACE = "trace"

#: Largest SLO an override accepts: the trace schema's bound on the ``slo`` column (a test
#: keeps the two equal); a co-execution 100 times slower than solo is no objective.
SLO_MAX = 100.0

#: Stream tag of the SLO draws (keeps them apart from every other seeded draw).
_SLO_STREAM = 0x510

#: ``maxgroup`` path segment of a spec without a group-size limit (the policy's own).
_DEFAULT_GROUP = "default"


# --------------------------------------------------------------------------- SLO setting


@dataclass(frozen=True, slots=True)
class SloSetting:
    """An SLO override: every job's SLO is ``low`` (``low == high``) or U(low, high)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        """Check 1 <= low <= high, both finite numbers (stored as floats)."""
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 1.0
            ):
                raise ValueError(f"an SLO must be a finite number >= 1, got {value!r}")
            if value > SLO_MAX:
                raise ValueError(f"an SLO of {value:g} is out of range: must be <= "
                                 f"{SLO_MAX:g} (the trace schema's bound)")
            object.__setattr__(self, name, float(value))
        if self.low > self.high:
            raise ValueError(f"an SLO range needs LO <= HI, got {self.low:g},{self.high:g}")

    @property
    def is_range(self) -> bool:
        """True when SLOs are drawn per job from U(low, high)."""
        return self.high > self.low

    def label(self) -> str:
        """The canonical text: ``1.2`` or ``1,2`` (``%g`` numbers)."""
        return f"{self.low:g},{self.high:g}" if self.is_range else f"{self.low:g}"


def parse_slo(text: str) -> SloSetting | None:
    """Parse an SLO setting: ``trace`` (None), a number >= 1, or a range ``LO,HI``.

    Raises ValueError with a readable message for anything else.
    """
    raw = str(text).strip()
    if raw.lower() == SLO_FROM_TRACE:
        return None
    parts = [p.strip() for p in raw.split(",")]
    message = (f"--slo must be 'trace', a number >= 1 such as 1.2 or a range LO,HI such "
               f"as 1,2; got {echo(text)}")
    if len(parts) not in (1, 2) or not all(parts):
        raise ValueError(message)
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(message) from None
    try:
        return SloSetting(values[0], values[-1])
    except ValueError as exc:
        raise ValueError(f"--slo {echo(text)}: {exc}") from None


def draw_slos(job_ids: Sequence[str], setting: SloSetting, seed: int) -> list[float]:
    """Each job's SLO under ``setting``: the fixed value, or U(low, high) per job.

    A job's draw depends only on ``seed``, its id and the range (a generator seeded with
    ``(seed, stream, crc32(job_id))``), not on the policy, the other jobs or their order.
    """
    if not setting.is_range:
        return [setting.low] * len(job_ids)
    import numpy as np

    out = []
    for job_id in job_ids:
        key = zlib.crc32(str(job_id).encode("utf-8"))
        rng = np.random.default_rng([int(seed), _SLO_STREAM, key])
        out.append(float(rng.uniform(setting.low, setting.high)))
    return out


def override_slos(jobs: Sequence[RLJob], setting: SloSetting | None, seed: int
                  ) -> list[RLJob]:
    """The jobs with their SLOs replaced per ``setting`` (None: unchanged)."""
    if setting is None:
        return list(jobs)
    slos = draw_slos([job.job_id for job in jobs], setting, seed)
    return [dataclasses.replace(job, slo=slo) for job, slo in zip(jobs, slos, strict=True)]


# --------------------------------------------------------------------------- policy options


def group_size_options(policy: str, max_group_size: int | None) -> tuple[dict[str, Any], bool]:
    """Policy options carrying a group-size limit, and whether the limit applies.

    None: no option. A policy that never shares a node (``shares_nodes = False``) ignores
    the limit (``({}, False)``); a policy declaring ``max_group_size`` among its options
    gets it; any other raises ValueError.
    """
    from rollmux.placement import policy_options, policy_shares_nodes
    from rollmux.placement.base import check_max_group_size

    if max_group_size is None:
        return {}, False
    limit = check_max_group_size(max_group_size)
    if not policy_shares_nodes(policy):
        return {}, False
    if "max_group_size" not in policy_options(policy):
        raise ValueError(f"policy {policy!r} does not take a group-size limit; "
                         f"drop --max-group-size")
    return {"max_group_size": limit}, True


# --------------------------------------------------------------------------- the spec


def _label(value: float) -> str:
    """A number as a path segment: ``%g`` when that reads back exactly, else its repr."""
    text = f"{value:g}"
    return text if float(text) == value else repr(float(value))


@dataclass(frozen=True, slots=True)
class Segment:
    """One key=value segment of a replay's folder: its key, whether it may be left out
    (present only when the spec differs from the default) and the regex of its value."""

    key: str
    optional: bool
    pattern: str


def _choices(values: Sequence[str], default: str) -> str:
    """Regex matching any of ``values`` except ``default`` (an optional segment's values)."""
    return "|".join(re.escape(v) for v in values if v != default)


#: The segments of :meth:`ReplaySpec.path`, in order. The path, the workflow's wildcard
#: template (:func:`wildcard_template`), its constraints (:func:`wildcard_constraints`)
#: and :meth:`ReplaySpec.from_keys` are all generated from this one table.
SEGMENTS: tuple[Segment, ...] = (
    Segment("trace", False, r"[^/]+"),
    Segment("slo", False, r"[^/]+"),
    Segment("maxgroup", False, rf"\d+|{_DEFAULT_GROUP}"),
    Segment("drift", False, r"[^/]+"),
    # Every optional segment comes before policy=: a folder is replaced whole
    # (rollmux.io.replace_folder), so no replay's folder may nest inside another's; the
    # leaf of every replay is policy=<name>/seed=<s>.
    Segment("drift_reach", True, _choices([r.value for r in DriftReach],
                                          DriftReach.PROFILE.value)),
    Segment("lengths", True, r"[^/]+"),
    Segment("fidelity", True, _choices(FIDELITIES, "event")),
    Segment("phases", True, "expected"),
    Segment("migration", True, "off"),
    Segment("migration_threshold", True, r"[^/]+"),
    Segment("sync", True, _choices(SYNC_MODES, "topology")),
    Segment("regroup", True, r"[^/]+h"),
    Segment("failures", True, r"[^/]+"),
    Segment("policy", False, r"[^/]+"),
    Segment("seed", False, r"\d+"),
)


def wildcard_template() -> str:
    """The replay folder as a Snakemake wildcard template, generated from :data:`SEGMENTS`.

    A required segment is ``key={key}``; an optional one is the wildcard ``{key}`` whose
    value is the whole segment with its leading slash (``/fidelity=analytic``) or empty,
    so a spec with default options has exactly the folder :meth:`ReplaySpec.path` names.
    """
    out = ""
    for seg in SEGMENTS:
        out += f"{{{seg.key}}}" if seg.optional else f"{'/' if out else ''}{seg.key}={{{seg.key}}}"
    return out


def wildcard_constraints() -> dict[str, str]:
    """The template's wildcard constraints (regexes), generated from :data:`SEGMENTS`."""
    return {seg.key: f"(/{seg.key}=(?:{seg.pattern}))?" if seg.optional else seg.pattern
            for seg in SEGMENTS}


def wildcard_keys(wildcards: Mapping[str, str]) -> dict[str, str]:
    """The path's keys (as :meth:`ReplaySpec.segments`) from the template's wildcards.

    An optional wildcard's value is ``""`` (segment absent) or ``/key=value``; anything
    else raises ValueError naming the wildcard.
    """
    keys: dict[str, str] = {}
    for seg in SEGMENTS:
        try:
            value = str(wildcards[seg.key])
        except (KeyError, AttributeError, IndexError):  # also Snakemake's Wildcards
            raise ValueError(f"wildcard {seg.key!r} is missing") from None
        if not seg.optional:
            keys[seg.key] = value
        elif value:
            prefix = f"/{seg.key}="
            if not value.startswith(prefix):
                raise ValueError(f"wildcard {seg.key}={value!r}: expected '' or "
                                 f"'{prefix}<value>'")
            keys[seg.key] = value.removeprefix(prefix)
    return keys


def path_keys(path: str | Path) -> dict[str, str]:
    """The key=value segments of a replay folder (relative, as :meth:`ReplaySpec.path`)."""
    keys: dict[str, str] = {}
    for part in Path(path).parts:
        key, sep, value = part.partition("=")
        if not sep or key in keys:
            raise ValueError(f"{path}: segment {part!r} is not a new key=value")
        keys[key] = value
    return keys


#: The defaults of the replay options (a spec's ``sim``).
_SIM_DEFAULT = SimConfig()


@dataclass(frozen=True)
class ReplaySpec:
    """Everything that defines one trace replay (validated on construction).

    ``trace``: the trace CSV; ``policy``: a registered policy name; ``seed``: seed of the
    phase draws, the SLO draws and the policy (when it takes one); ``slo``: ``trace``, a
    number >= 1 or a range ``LO,HI`` (stored canonical, e.g. ``2.0`` -> ``2``);
    ``max_group_size``: group-size limit passed to policies that take one (None: the
    policy's own); ``regroup_interval_h``: re-solve period passed to regrouping policies
    (None: the policy's own; it also sets ``sim.regroup_interval_s``); ``failures``: a
    kill list CSV (:func:`read_failures`); ``hardware``/``hardware_overrides``: hardware
    YAML (None: the shipped one) and dotted-key overrides; ``sim``: the replay options
    (:class:`rollmux.sim.engine.SimConfig`: fidelity, sampled or expected phases,
    migration and its threshold, drift and its reach, sync, real lengths, whether the
    per-phase table is kept). ``sim.failures`` and ``sim.policy_options`` stay empty:
    :func:`run_replay` fills them from ``failures`` and the policy options.
    """

    trace: str
    policy: str
    seed: int = 0
    slo: str = SLO_FROM_TRACE
    max_group_size: int | None = None
    regroup_interval_h: float | None = None
    failures: str | None = None
    hardware: str | None = None
    hardware_overrides: tuple[tuple[str, Any], ...] = field(default=())
    sim: SimConfig = field(default=_SIM_DEFAULT)

    def __post_init__(self) -> None:
        """Validate and canonicalise every field; ValueError names the field."""
        from rollmux.placement import policy_names
        from rollmux.placement.base import check_max_group_size

        set_ = object.__setattr__
        if not isinstance(self.trace, str | Path) or not str(self.trace):
            raise ValueError(f"trace must be a path, got {self.trace!r}")
        set_(self, "trace", str(self.trace))
        if self.policy not in policy_names():
            raise ValueError(f"unknown policy {self.policy!r}; valid names: "
                             f"{', '.join(policy_names())}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {self.seed!r}")
        setting = parse_slo(self.slo)
        set_(self, "slo", SLO_FROM_TRACE if setting is None else setting.label())
        if self.max_group_size is not None:
            check_max_group_size(self.max_group_size)
        for name in ("failures", "hardware"):
            value = getattr(self, name)
            if value is not None:
                if not isinstance(value, str | Path) or not str(value):
                    raise ValueError(f"{name} must be a path or None, got {value!r}")
                set_(self, name, str(value))
        overrides = self.hardware_overrides
        if isinstance(overrides, Mapping):
            overrides = tuple(overrides.items())
        try:
            set_(self, "hardware_overrides", tuple(sorted((str(k), v) for k, v in overrides)))
        except (TypeError, ValueError):
            raise ValueError(f"hardware_overrides must map dotted keys to values, got "
                             f"{self.hardware_overrides!r}") from None
        sim = self.sim
        if not isinstance(sim, SimConfig):
            raise ValueError(f"sim must be a SimConfig, got {sim!r}")
        if sim.failures or sim.policy_options:
            raise ValueError("sim.failures and sim.policy_options are filled by run_replay: "
                             "give the spec's failures (a kill list CSV) and policy options")
        h = self.regroup_interval_h
        if h is None:
            if sim.regroup_interval_s != _SIM_DEFAULT.regroup_interval_s:
                raise ValueError("regroup_interval_h sets the re-solve period (a policy "
                                 "option); leave sim.regroup_interval_s at its default")
        else:
            if isinstance(h, bool) or not isinstance(h, int | float) or not (
                    math.isfinite(h) and h > 0):
                raise ValueError(f"regroup_interval_h must be a finite number > 0, got {h!r}")
            set_(self, "regroup_interval_h", float(h))
            if sim.regroup_interval_s not in (_SIM_DEFAULT.regroup_interval_s, h * 3600.0):
                raise ValueError("regroup_interval_h and sim.regroup_interval_s disagree; "
                                 "set regroup_interval_h only")
            set_(self, "sim", dataclasses.replace(sim, regroup_interval_s=float(h) * 3600.0))

    # ------------------------------------------------------------------ identity

    def keys(self) -> dict[str, Any]:
        """The replay's keys: trace (file stem), slo, maxgroup, drift, policy, seed."""
        return replay_keys({"trace": self.trace, "slo_override": self.slo,
                            "max_group_size": self.max_group_size, "drift": self.sim.drift,
                            "policy": self.policy, "seed": self.seed,
                            "lengths": self.sim.lengths})

    def segments(self) -> dict[str, str]:
        """The folder's key=value segments, in :data:`SEGMENTS` order (optional ones only
        where the spec differs from the default)."""
        sim = self.sim
        values: dict[str, str | None] = {
            "trace": Path(self.trace).stem,
            "slo": self.slo,
            "maxgroup": _DEFAULT_GROUP if self.max_group_size is None
            else str(self.max_group_size),
            "drift": sim.drift,
            "drift_reach": None if sim.drift_reach == _SIM_DEFAULT.drift_reach
            else sim.drift_reach,
            "lengths": None if sim.lengths is None else Path(sim.lengths).name,
            "policy": self.policy,
            "seed": str(self.seed),
            "fidelity": None if sim.fidelity == _SIM_DEFAULT.fidelity else sim.fidelity,
            "phases": None if sim.stochastic else "expected",
            "migration": None if sim.migration else "off",
            "migration_threshold": None if sim.migration_threshold is None
            else _label(sim.migration_threshold),
            "sync": None if sim.sync == _SIM_DEFAULT.sync else sim.sync,
            "regroup": None if self.regroup_interval_h is None
            else f"{_label(self.regroup_interval_h)}h",
            "failures": None if self.failures is None else Path(self.failures).stem,
        }
        return {seg.key: value for seg in SEGMENTS
                if (value := values[seg.key]) is not None}

    def path(self) -> Path:
        """The replay's key=value folder (relative; see the module docstring)."""
        return Path(*(f"{key}={value}" for key, value in self.segments().items()))

    @classmethod
    def from_keys(cls, keys: Mapping[str, str], *, trace: str | Path,
                  failures: str | Path | None = None, hardware: str | Path | None = None,
                  hardware_overrides: tuple[tuple[str, Any], ...] | Mapping[str, Any] = (),
                  lengths: str | Path | None = None, record_phases: bool = True
                  ) -> ReplaySpec:
        """The spec whose :meth:`segments` are ``keys`` (the inverse of :meth:`path`).

        The files the path names by stem only are given: ``trace`` (stem = ``trace``
        key), ``failures`` (stem = ``failures`` key) and ``lengths`` (folder name =
        ``lengths`` key); so are the settings no path holds (hardware, overrides,
        whether the per-phase table is kept). ValueError for an unknown, missing or
        non-canonical key, or a file that does not match its key.
        """
        known = {seg.key for seg in SEGMENTS}
        unknown = [key for key in keys if key not in known]
        missing = [seg.key for seg in SEGMENTS if not seg.optional and seg.key not in keys]
        if unknown or missing:
            raise ValueError(f"replay keys: unknown {unknown}, missing {missing}")
        for key, given, name in (("trace", trace, Path(str(trace)).stem),
                                 ("failures", failures,
                                  None if failures is None else Path(str(failures)).stem),
                                 ("lengths", lengths,
                                  None if lengths is None else Path(str(lengths)).name)):
            if keys.get(key) != name:
                raise ValueError(f"replay keys: {key}={keys.get(key)!r} but the file "
                                 f"given is {given!r}")

        def number(key: str, text: str) -> float:
            try:
                return float(text)
            except ValueError:
                raise ValueError(f"replay keys: {key}={text!r} is not a number") from None

        group = keys["maxgroup"]
        if group != _DEFAULT_GROUP and not group.isdigit():
            raise ValueError(f"replay keys: maxgroup={group!r} is not a number or "
                             f"{_DEFAULT_GROUP!r}")
        if not keys["seed"].isdigit():
            raise ValueError(f"replay keys: seed={keys['seed']!r} is not a number")
        threshold = keys.get("migration_threshold")
        regroup = keys.get("regroup")
        if regroup is not None and not regroup.endswith("h"):
            raise ValueError(f"replay keys: regroup={regroup!r} must end with 'h'")
        sim = SimConfig(
            fidelity=keys.get("fidelity", _SIM_DEFAULT.fidelity),
            stochastic=keys.get("phases") != "expected",
            migration=keys.get("migration") != "off",
            migration_threshold=None if threshold is None
            else number("migration_threshold", threshold),
            drift=keys["drift"],
            drift_reach=keys.get("drift_reach", _SIM_DEFAULT.drift_reach),
            sync=keys.get("sync", _SIM_DEFAULT.sync),
            record_phases=record_phases,
            lengths=None if lengths is None else str(lengths),
        )
        spec = cls(trace=str(trace), policy=keys["policy"], seed=int(keys["seed"]),
                   slo=keys["slo"],
                   max_group_size=None if group == _DEFAULT_GROUP else int(group),
                   regroup_interval_h=None if regroup is None
                   else number("regroup", regroup.removesuffix("h")),
                   failures=None if failures is None else str(failures),
                   hardware=None if hardware is None else str(hardware),
                   hardware_overrides=tuple(dict(hardware_overrides).items()), sim=sim)
        if spec.segments() != dict(keys):
            raise ValueError(f"replay keys {dict(keys)} are not canonical: the spec they "
                             f"name has the folder {spec.path()}")
        return spec

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, record_phases: bool | None = None
                    ) -> ReplaySpec:
        """The spec that wrote a replay's resolved configuration (``config.json``).

        ``record_phases`` overrides whether the per-phase table is kept (None: as
        recorded). ValueError when a field is missing or invalid.
        """
        names = {f.name for f in dataclasses.fields(SimConfig)} - {"failures",
                                                                   "policy_options"}
        try:
            options = dict(config.get("policy_options") or {})
            fields = {name: config[name] for name in names if name in config}
            fields["regroup_interval_s"] = _SIM_DEFAULT.regroup_interval_s
            if record_phases is not None:
                fields["record_phases"] = record_phases
            interval = options.get("regroup_interval_s")
            return cls(trace=str(config["trace"]), policy=str(config["policy"]),
                       seed=int(config["seed"]),
                       slo=str(config.get("slo_override") or SLO_FROM_TRACE),
                       max_group_size=config.get("max_group_size"),
                       regroup_interval_h=None if interval is None
                       else float(interval) / 3600.0,
                       failures=config.get("failures_file"),
                       hardware=config.get("hardware_file"),
                       hardware_overrides=tuple(dict(config.get("hardware_overrides")
                                                     or {}).items()),
                       sim=SimConfig(**fields))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a replay's configuration (missing or bad {exc})") from None

    # ------------------------------------------------------------------ resolution

    def policy_options(self) -> tuple[dict[str, Any], bool]:
        """The policy's options, and whether the group-size limit applies."""
        from rollmux.placement import policy_options

        options, applied = group_size_options(self.policy, self.max_group_size)
        if self.regroup_interval_h is not None:
            if "regroup_interval_s" not in policy_options(self.policy):
                raise ValueError(f"policy {self.policy!r} does not regroup periodically; "
                                 f"drop --regroup-interval-h")
            options["regroup_interval_s"] = self.regroup_interval_h * 3600.0
        return options, applied


def replay_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """A replay's keys from its resolved configuration (``config.json``).

    ``trace`` (the trace file's stem), ``slo`` (``trace`` or the override's label),
    ``maxgroup`` (None: the policy's own limit), ``drift``, ``policy``, ``seed``, and
    ``lengths`` (the folder's name) only for a replay with real lengths; equal
    to :meth:`ReplaySpec.keys` of the spec that wrote it. ValueError when a field is
    missing (not a replay's configuration).
    """
    try:
        keys = {"trace": Path(str(config["trace"])).stem,
                "slo": config["slo_override"] or SLO_FROM_TRACE,
                "maxgroup": config["max_group_size"], "drift": config["drift"],
                "policy": config["policy"], "seed": int(config["seed"])}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a replay's configuration (missing or bad {exc})") from None
    if config.get("lengths"):  # real response lengths (absent: the lognormal)
        keys["lengths"] = Path(str(config["lengths"])).name
    return keys


#: Columns of a failure list (``--failures``): kill ``job_id`` at ``kill_at_s``,
#: resubmit it at ``resubmit_at_s`` (empty: never).
FAILURE_COLUMNS = ("job_id", "kill_at_s", "resubmit_at_s")


def read_failures(path: str | Path, job_ids: Sequence[str] | None = None
                  ) -> tuple[FailureSpec, ...]:
    """The failure list CSV at ``path`` as FailureSpecs, every defect located.

    Header ``job_id,kill_at_s,resubmit_at_s`` (``resubmit_at_s`` optional, an empty cell:
    never resubmitted). Raises :class:`rollmux.errors.InputFileError` listing each problem
    by file, line, 1-based row and column: unreadable or non-UTF-8 bytes, unknown or
    missing columns, short or long rows, control characters, bad times, a job id not in
    ``job_ids`` (when given), a job killed again before its resubmission.
    """
    from rollmux.errors import ANY_COLUMN, HEADER_ROW, InputFileError, Problem, os_reason
    from rollmux.sim.drift import parse_failures

    name = str(path)
    problems: list[Problem] = []

    def fail(line: int, row: int, column: str, message: str) -> InputFileError:
        return InputFileError([*problems, Problem(name, line, row, column, message)])

    from rollmux.io import InputPathError, read_input_bytes

    try:
        raw = read_input_bytes(path)
    except InputPathError as exc:
        raise fail(0, HEADER_ROW, ANY_COLUMN, exc.reason) from None
    except OSError as exc:
        raise fail(0, HEADER_ROW, ANY_COLUMN, f"cannot read: {os_reason(exc)}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise fail(line, HEADER_ROW, ANY_COLUMN, "not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        records = [(reader.line_num, record) for record in reader if any(c.strip() for c in record)]
    except csv.Error as exc:
        raise fail(reader.line_num, HEADER_ROW, ANY_COLUMN, f"malformed CSV: {exc}") from None
    if not records:
        raise fail(1, HEADER_ROW, ANY_COLUMN, "empty file (expected the header "
                   f"{','.join(FAILURE_COLUMNS)})")
    header_line, header = records[0]
    header = [cell.strip() for cell in header]
    for column in header:
        if column not in FAILURE_COLUMNS or header.count(column) > 1:
            what = "column appears twice" if column in FAILURE_COLUMNS else (
                f"unknown column (expected {', '.join(FAILURE_COLUMNS)})")
            problems.append(Problem(name, header_line, HEADER_ROW, column or "''", what))
    for column in FAILURE_COLUMNS[:2]:
        if column not in header:
            problems.append(Problem(name, header_line, HEADER_ROW, column,
                                    "required column is missing"))
    if problems:
        raise InputFileError(problems)
    known = None if job_ids is None else set(job_ids)
    kept: list[dict[str, str]] = []
    where: dict[int, tuple[int, int]] = {}
    for row, (line, record) in enumerate(records[1:], start=1):
        if len(record) != len(header):
            kind = "truncated row" if len(record) < len(header) else "row has extra fields"
            problems.append(Problem(name, line, row, ANY_COLUMN, f"{kind}: expected "
                                    f"{len(header)} fields, found {len(record)}"))
            continue
        cells = dict(zip(header, (c.strip() for c in record), strict=True))
        before = len(problems)
        for column, value in cells.items():
            if control_characters(value):
                problems.append(Problem(name, line, row, column,
                                        f"control character in {value!r}"))
        if len(problems) > before:
            continue
        try:
            parse_failures([cells])
        except ValueError as exc:
            message = str(exc).removeprefix("rows[0]: ")
            column = next((c for c in FAILURE_COLUMNS[::-1] if c in message), ANY_COLUMN)
            problems.append(Problem(name, line, row, column, message))
            continue
        if known is not None and cells["job_id"] not in known:
            problems.append(Problem(name, line, row, "job_id",
                                    f"unknown job id {cells['job_id']!r} (not in the trace)"))
            continue
        where[len(kept)] = (line, row)
        kept.append(cells)
    if problems:
        raise InputFileError(problems)
    if len(kept) == 0:
        raise fail(header_line, HEADER_ROW, ANY_COLUMN, "no failure rows")
    try:
        return parse_failures(kept)
    except ValueError as exc:  # a job killed again while not running
        first_bad = next(k for k in range(1, len(kept) + 1) if not _parses(kept[:k]))
        line, row = where[first_bad - 1]
        raise fail(line, row, "kill_at_s", str(exc)) from None


def _parses(rows: Sequence[Mapping[str, str]]) -> bool:
    """Whether these failure rows form a consistent list (the row that breaks it is the
    first whose prefix does not)."""
    from rollmux.sim.drift import parse_failures

    try:
        parse_failures(rows)
    except ValueError:
        return False
    return True


def _sha256(path: Path) -> str:
    """Hex digest of a file's bytes (recorded in config.json)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_replay(spec: ReplaySpec, out: str | Path | None = None, *,
               progress: Callable[[int], None] | None = None) -> SimulationResult:
    """Replay ``spec``; write its output folder to ``out`` (if given); the result.

    Loads the hardware, the trace (a :class:`rollmux.traces.errors.TraceError` lists
    an invalid trace's problems) and the failure list (:func:`read_failures`), applies
    the SLO setting, runs :func:`rollmux.sim.engine.simulate_trace` with ``spec.sim``
    completed by the kill list and the policy options, and completes the resolved
    configuration (``config.json``) with the spec. ``progress(n)`` is called as jobs
    finish. With ``out``, the per-phase rows are streamed into the folder's
    ``phases.csv`` while the replay runs (same bytes as :func:`write_result` writes; the
    result's ``phases`` is then empty), so the replay's memory does not grow with them;
    the folder still appears whole, or not at all.
    """
    from rollmux.hardware import load_hardware
    from rollmux.sim.engine import simulate_trace
    from rollmux.sim.phasesink import CsvPhaseSink
    from rollmux.traces.loader import load_trace

    overrides = dict(spec.hardware_overrides)
    hw = load_hardware(spec.hardware, overrides or None)
    options, limit_applied = spec.policy_options()
    jobs = override_slos(load_trace(spec.trace, hw), parse_slo(spec.slo), spec.seed)
    failures = read_failures(spec.failures, [job.job_id for job in jobs]) if spec.failures \
        else ()
    config = dataclasses.replace(spec.sim, failures=failures,
                                 policy_options=tuple(options.items()))

    def replay(sink: CsvPhaseSink | None) -> SimulationResult:
        """The replay, its configuration completed with the spec."""
        result = simulate_trace(jobs, spec.policy, hw, spec.seed, config, progress=progress,
                                phase_sink=sink)
        _complete_config(result.config, spec, overrides, limit_applied)
        return result

    if out is None:
        return replay(None)
    streams = spec.sim.record_phases and spec.sim.fidelity == "event"
    with replace_folder(Path(out), run=f"rollmux simulate {spec.path().as_posix()}") as tmp:
        sink = CsvPhaseSink(tmp / PHASES_FILE, FLOAT_FORMAT) if streams else None
        try:
            result = replay(sink)
        finally:
            if sink is not None:
                sink.close()
        _write_tables(result, tmp)
    return result


def run_replay_folder(keys: Mapping[str, str], out: str | Path, **spec_options: Any) -> str:
    """Replay the spec of a folder's ``keys`` into ``out`` (a pipeline job); its log line.

    The spec is ``ReplaySpec.from_keys(keys, **spec_options)``; ``out`` must end with the
    spec's own folder (``spec.path()``), else ValueError. Shared by the replay rules'
    adapters (``workflow/scripts/sim_replay.py``, ``sim_replay_seeds.py``).
    """
    spec = ReplaySpec.from_keys(keys, **spec_options)
    folder = Path(out)
    if folder.parts[-len(spec.path().parts):] != spec.path().parts:
        raise ValueError(f"{folder} does not end with the replay's folder {spec.path()}")
    s = run_replay(spec, folder).summary
    return (f"{spec.policy}: {s['jobs_completed']}/{s['jobs']} jobs completed, "
            f"${s['cost_usd_per_h']:.1f}/h average, SLO attainment "
            f"{s['slo_attainment']:.3f}; wrote {folder}")


def _complete_config(config: dict[str, Any], spec: ReplaySpec, overrides: dict[str, Any],
                     limit_applied: bool) -> None:
    """Add the spec's trace, SLO, group-limit and hardware settings to a resolved config."""
    config.update({
        "trace": spec.trace,
        "trace_sha256": _sha256(Path(spec.trace)),
        "slo_override": None if spec.slo == SLO_FROM_TRACE else spec.slo,
        "max_group_size": spec.max_group_size,
        "max_group_size_applied": limit_applied,
    })
    if overrides:
        config["hardware_overrides"] = overrides
    if spec.hardware is not None:
        config["hardware_file"] = spec.hardware
    if spec.failures is not None:
        config["failures_file"] = spec.failures
    if spec.sim.lengths is not None:
        from rollmux.sim.engine import length_source
        from rollmux.sim.lengths import describe

        config["lengths_workloads"] = describe(length_source(spec.sim.lengths))


#: The per-phase table's file in an output folder.
PHASES_FILE = "phases.csv"


def _write_tables(result: SimulationResult, folder: Path) -> list[str]:
    """Write a result's tables into ``folder`` (phases.csv only when it has rows); names."""
    names = []
    if len(result.phases):
        names.append(write_csv(result.phases, folder / PHASES_FILE, FLOAT_FORMAT).name)
    elif (folder / PHASES_FILE).exists():  # streamed there during the replay
        names.append(PHASES_FILE)
    names.append(write_csv(result.events, folder / "events.csv", FLOAT_FORMAT).name)
    names.append(write_csv(result.timeseries, folder / "timeseries.csv", FLOAT_FORMAT).name)
    names.append(write_csv(result.jobs, folder / "jobs.csv", FLOAT_FORMAT).name)
    names.append(write_json(result.config, folder / "config.json").name)
    names.append(write_json(result.summary, folder / "summary.json").name)
    return names


def write_result(result: SimulationResult, out: str | Path) -> list[Path]:
    """Write a :class:`SimulationResult`'s files as the folder ``out``, replacing it whole.

    ``phases.csv`` (when the result has per-phase rows), ``events.csv``,
    ``timeseries.csv``, ``jobs.csv``, ``config.json`` and ``summary.json``; nothing of an
    earlier run stays in ``out``. Returns the final paths.
    """
    out = Path(out)
    run = " ".join(f"{key}={result.config[key]}" for key in ("policy", "seed")
                   if key in result.config)
    with replace_folder(out, run=f"rollmux simulate {run}".strip()) as tmp:
        names = _write_tables(result, tmp)
    return [out / name for name in names]
