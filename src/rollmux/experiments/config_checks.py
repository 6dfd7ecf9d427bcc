"""Checks of the pipeline's configuration, run when the workflow is parsed.

A dry run (``snakemake -n``) must catch a bad config, not the rule that reads it minutes
later. Two passes, each reporting every problem as ``key.path[i]: message``:

* :func:`validate_schema`: the JSON schemas of ``workflow/schemas/`` (filling in their
  defaults, as ``snakemake.utils.validate`` does), one line per violation naming the
  failing key path, never the schema itself;
* :func:`semantic_problems`: what only Python knows, through the validators the command
  line uses: every policy name against the registry (:func:`rollmux.placement.policy_names`,
  plug-ins included), ``hardware_overrides`` through :func:`rollmux.hardware.load_hardware`,
  every SLO setting through :func:`rollmux.sim.replay.parse_slo`, the sweep plan
  (:func:`rollmux.sim.sweeps.sweep_plan`), and the failure experiment's jobs and kills
  against the trace it builds (:func:`rollmux.experiments.robustness.failure_trace_text`,
  :func:`rollmux.experiments.robustness.failures_text`), and the drift study's policy list
  against its reference and the policies its claims read
  (:class:`rollmux.experiments.robustness.DriftStudy`).

Which keys hold policy names or SLO settings is read from their names, so a list added
later is checked too: a key ``policies`` or ending in ``_policies`` (a list), or
``reference`` / ``policy`` (one name); a key ``slo``, ``slos``, ending in ``_slo`` or
``_slos``, or ``slo_endpoints``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rollmux.errors import printable, shorten

__all__ = [
    "SECTIONS",
    "ConfigError",
    "ConfigProblem",
    "check_config",
    "semantic_problems",
    "validate_schema",
]

#: Sections with a schema of their own, ``workflow/schemas/<section>.schema.yaml``.
SECTIONS = ("calibration", "sim", "robustness", "paperfigs", "claims")
#: The schema of the config as a whole.
TOP_SCHEMA = "config.schema.yaml"


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One defect of the config: the dotted key path (``sim.production.policies[1]``)."""

    path: str
    message: str

    def __str__(self) -> str:
        """``path: message`` on one line, user text escaped."""
        return printable(f"{self.path or '(top level)'}: {self.message}")


class ConfigError(ValueError):
    """The config failed its checks; ``problems`` lists every defect found."""

    def __init__(self, problems: Sequence[ConfigProblem], source: str = "config") -> None:
        """Keep the problems; the message holds one line per problem."""
        self.problems = tuple(problems)
        self.source = source
        super().__init__("\n".join(f"{source}: {p}" for p in self.problems))


# --------------------------------------------------------------------------- schema


def key_path(parts: Sequence[str | int]) -> str:
    """``["sim", "production", "policies", 1]`` as ``sim.production.policies[1]``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _with_defaults(validator_class: Any) -> Any:
    """A validator class that fills in each property's ``default`` before checking it
    (the recipe of the jsonschema FAQ that ``snakemake.utils.validate`` uses)."""
    from jsonschema import validators

    check_properties = validator_class.VALIDATORS["properties"]

    def properties(validator: Any, props: Mapping[str, Any], instance: Any, schema: Any
                   ) -> Iterator[Any]:
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from check_properties(validator, props, instance, schema)

    return validators.extend(validator_class, {"properties": properties})


def _message(error: Any) -> str:
    """A jsonschema error's message with the instance it quotes cut short (a whole
    section would otherwise be echoed)."""
    quoted = repr(error.instance)
    return shorten(error.message.replace(quoted, shorten(quoted)), 300)


def validate_schema(data: dict[str, Any], schema_file: str | Path,
                    prefix: Sequence[str | int] = ()) -> list[ConfigProblem]:
    """Check ``data`` against the YAML schema file, filling in its defaults in place.

    Returns one problem per violation (key path below ``prefix``, short message).
    """
    from jsonschema import Draft202012Validator

    schema = yaml.safe_load(Path(schema_file).read_text(encoding="utf-8"))
    validator = _with_defaults(Draft202012Validator)(schema)
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.path]):
        problems.append(ConfigProblem(key_path([*prefix, *error.absolute_path]),
                                      _message(error)))
    return problems


# --------------------------------------------------------------------------- semantics


def _walk(value: Any, path: tuple[str | int, ...] = ()
          ) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every (key path, value) of a nested config, depth first, in key order."""
    yield path, value
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            yield from _walk(value[key], (*path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, i))


def _named(path: tuple[str | int, ...], is_list: Callable[[str], bool],
           is_one: Callable[[str], bool]) -> bool:
    """Whether ``path`` is one value of a key ``is_one`` names, or an item of a list
    ``is_list`` names."""
    if len(path) >= 2 and isinstance(path[-1], int) and isinstance(path[-2], str):
        return is_list(path[-2])
    return bool(path) and isinstance(path[-1], str) and is_one(path[-1])


def _is_policy_list(key: str) -> bool:
    return key == "policies" or key.endswith("_policies")


def _is_policy(key: str) -> bool:
    return key in ("policy", "reference")


def _is_slo_list(key: str) -> bool:
    return key in ("slos", "slo_endpoints") or key.endswith("_slos")


def _is_slo(key: str) -> bool:
    return key == "slo" or key.endswith("_slo")


def policy_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """Every policy name of the config that the registry does not know, and every named
    plug-in that cannot be imported (it is imported now, so a dry run finds it)."""
    from rollmux.errors import PluginError
    from rollmux.placement import policy_class, policy_names

    known = policy_names()
    problems = []
    loaded: dict[str, str | None] = {}
    for path, value in _walk(config):
        if not _named(path, _is_policy_list, _is_policy) or isinstance(value, list | dict):
            continue
        if value not in known:
            problems.append(ConfigProblem(
                key_path(path),
                f"unknown policy {shorten(str(value))!r} (registered: {', '.join(known)})"))
            continue
        if value not in loaded:
            try:
                policy_class(value)
                loaded[value] = None
            except PluginError as exc:
                loaded[value] = str(exc)
        if loaded[value] is not None:
            problems.append(ConfigProblem(key_path(path), str(loaded[value])))
    return problems


#: Cross-key rules the config's documentation states (config/README.md) that no other check
#: covers (the sweep plan checks each reference and default against its lists, the drift
#: study its reference): the values of the first key must be among those of the second.
MEMBERSHIP_RULES: tuple[tuple[str, str], ...] = (
    ("sim.figures.fig15_policies", "sim.sensitivity.policies"),
)


def _at(config: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted key, or None when a part is missing."""
    value: Any = config
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def membership_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """Every value of a :data:`MEMBERSHIP_RULES` key that its container key lacks."""
    problems = []
    for key, within in MEMBERSHIP_RULES:
        values, container = _at(config, key), _at(config, within)
        if values is None or container is None:
            continue
        allowed = [str(v) for v in container]
        for value in values if isinstance(values, list) else [values]:
            if str(value) not in allowed:
                problems.append(ConfigProblem(
                    key, f"{shorten(str(value))!r} is not among {within} "
                         f"({', '.join(allowed) or 'empty'})"))
    return problems


def slo_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """Every SLO setting that ``rollmux simulate --slo`` would refuse."""
    from rollmux.sim.replay import parse_slo

    problems = []
    for path, value in _walk(config):
        if not _named(path, _is_slo_list, _is_slo) or isinstance(value, list | dict):
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.append(ConfigProblem(key_path(path), f"{value!r}: expected an SLO "
                                          "setting: 'trace', a number >= 1 or 'LO,HI'"))
            continue
        try:
            parse_slo(str(value))
        except ValueError as exc:
            message = str(exc).replace("--slo must be", "an SLO setting must be")
            problems.append(ConfigProblem(key_path(path), message.replace("--slo ", "")))
    return problems


def hardware_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """``hardware_overrides`` through the validator of ``--hardware-overrides``."""
    from rollmux.hardware import load_hardware

    overrides = config.get("hardware_overrides") or {}
    try:
        load_hardware(None, overrides)
    except ValueError as exc:
        return [ConfigProblem("hardware_overrides", str(exc))]
    return []


def sweep_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """The replay sweeps' plan (:func:`rollmux.sim.sweeps.sweep_plan`) builds."""
    from rollmux.sim.sweeps import sweep_plan

    try:
        sweep_plan(config.get("sim") or {}, int(config.get("seed", 0)),
                   config.get("seeds") or None)
    except (ValueError, KeyError, TypeError) as exc:
        message = str(exc).strip("'\"")
        head, _, rest = message.partition(" ")
        # sweep_plan's messages start with the key they are about
        return [ConfigProblem(head, rest) if head.startswith("sim.") and rest
                else ConfigProblem("sim", message)]
    return []


def failure_problems(config: Mapping[str, Any], trace_dir: Path) -> list[ConfigProblem]:
    """The failure experiment's jobs exist in its source trace and every kill names one
    of them, with consistent times (the checks its rule runs, run now)."""
    from rollmux.experiments.robustness import failure_trace_text, failures_text
    from rollmux.hardware import load_hardware

    failure = (config.get("robustness") or {}).get("failure")
    if not isinstance(failure, Mapping):
        return []
    source = trace_dir / f"{failure.get('source', '')}.csv"
    if not source.is_file():
        return [ConfigProblem("robustness.failure.source", f"no shipped trace {source}")]
    jobs = [dict(job) for job in failure.get("jobs") or []]
    try:
        hw = load_hardware(None, config.get("hardware_overrides") or None)
    except ValueError:  # reported by hardware_problems; check the jobs on the defaults
        hw = load_hardware()
    try:
        failure_trace_text(source, jobs, failure.get("slo"), failure.get("iterations"), hw)
    except ValueError as exc:
        return [ConfigProblem("robustness.failure.jobs", str(exc))]
    try:
        failures_text([dict(kill) for kill in failure.get("kills") or []],
                      [str(job["job_id"]) for job in jobs])
    except ValueError as exc:
        message = str(exc).removeprefix("failures: ")
        return [ConfigProblem("robustness.failure.kills", message)]
    return []


def drift_study_problems(config: Mapping[str, Any]) -> list[ConfigProblem]:
    """The drift study's policy list holds its reference and the policies its claims read."""
    from rollmux.experiments.robustness import CLAIM_POLICIES, DriftStudy

    robustness = config.get("robustness")
    if not isinstance(robustness, Mapping) or "policies" not in robustness:
        return []
    try:
        study = DriftStudy.from_config(robustness)
    except ValueError as exc:
        message = str(exc)
        path = ("robustness.reference" if message.startswith("robustness.reference")
                else "robustness.policies")
        return [ConfigProblem(path, message.removeprefix(path).lstrip(": "))]
    missing = [p for p in CLAIM_POLICIES if p not in study.policies]
    if missing:
        return [ConfigProblem("robustness.policies", f"must include {', '.join(missing)} "
                              "(the claims C47-C52 read them)")]
    return []


def semantic_problems(config: Mapping[str, Any], trace_dir: str | Path = "traces"
                      ) -> list[ConfigProblem]:
    """What the schemas cannot check, through the validators the command line uses."""
    return [*policy_problems(config), *membership_problems(config), *slo_problems(config),
            *hardware_problems(config),
            *sweep_problems(config), *failure_problems(config, Path(trace_dir)),
            *drift_study_problems(config)]


def check_config(config: dict[str, Any], schema_dir: str | Path = "workflow/schemas",
                 trace_dir: str | Path = "traces", source: str = "config") -> None:
    """Validate the pipeline config in place (schema defaults filled in); raise
    :class:`ConfigError` listing every problem. Semantic checks run once the schemas pass
    (they rely on the types the schemas guarantee)."""
    schema_dir = Path(schema_dir)
    problems = validate_schema(config, schema_dir / TOP_SCHEMA)
    for section in SECTIONS:
        body = config.setdefault(section, {})
        if isinstance(body, dict):
            problems += validate_schema(body, schema_dir / f"{section}.schema.yaml", (section,))
    if not problems:
        problems = semantic_problems(config, trace_dir)
    if problems:
        raise ConfigError(problems, source)
