"""The pipeline config is checked when the workflow is parsed (issue 13, item 3).

A dry run catches what the schemas cannot see (unknown policy names, bad hardware
overrides, SLO settings, failures of unknown jobs), and a schema error is one line naming
the failing key path, never the schema. Unit tests call
`rollmux.experiments.config_checks.check_config`; the subprocess tests run `snakemake -n`
on a copy of the pipeline with a bad config.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from profiles import PROFILES, load_profile
from test_workflow import copy_pipeline

from rollmux.experiments.config_checks import ConfigError, check_config, key_path
from rollmux.placement import PlacementPolicy, registry

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "workflow" / "schemas"
TRACES = ROOT / "traces"


def default_config() -> dict[str, Any]:
    """A fresh copy of config/config.yaml."""
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))


def problems_of(config: dict[str, Any]) -> list[str]:
    """The lines check_config reports for ``config`` (empty when it passes)."""
    try:
        check_config(config, SCHEMAS, TRACES)
    except ConfigError as exc:
        return str(exc).splitlines()
    return []


def set_key(config: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    """Set the value at a key path of a nested config."""
    cursor: Any = config
    for part in path[:-1]:
        cursor = cursor[part]
    cursor[path[-1]] = value


def test_shipped_configs_pass_and_get_their_defaults() -> None:
    """config.yaml and paper.yaml pass; a section left out gets its schema's defaults."""
    for name, overlays in PROFILES.items():
        assert problems_of(load_profile(*overlays)) == [], name
    config = default_config()
    del config["claims"]
    assert problems_of(config) == []
    schema = yaml.safe_load((SCHEMAS / "claims.schema.yaml").read_text(encoding="utf-8"))
    assert config["claims"] == {key: spec["default"]
                                for key, spec in schema["properties"].items()}


def test_key_paths_read_as_written() -> None:
    """Key paths join names with dots and list indices in brackets."""
    assert key_path(["sim", "production", "policies", 1]) == "sim.production.policies[1]"
    assert key_path([]) == ""


@pytest.mark.parametrize("path", [
    ("sim", "production", "policies", 0),
    ("sim", "sensitivity", "policies", 1),
    ("sim", "sensitivity", "reference"),
    ("sim", "fluid", "production_policies", 0),
    ("sim", "fluid", "mixed_policies", 2),
    ("sim", "figures", "fig14_policies", 0),
    ("sim", "figures", "fig15_policies", 1),
])
def test_unknown_policy_in_any_list_is_named(path: tuple[str | int, ...]) -> None:
    """An unknown policy name in any policy list: one line with its key path."""
    config = default_config()
    set_key(config, path, "rolmux")
    lines = problems_of(config)
    expected = f"config: {key_path(path)}: unknown policy 'rolmux' (registered: "
    assert any(line.startswith(expected) for line in lines), lines


def test_a_registered_plugin_policy_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names come from the registry's public lookup, so a policy registered from outside
    the project (as an entry-point plug-in is) passes the check."""

    class Outside(PlacementPolicy):
        """A policy defined outside rollmux."""

    monkeypatch.setitem(registry._registered, "outside-policy", Outside)
    registry.clear_registry()
    try:
        config = default_config()
        config["sim"]["production"]["policies"].append("outside-policy")
        assert problems_of(config) == []
    finally:
        monkeypatch.undo()
        registry.clear_registry()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"gpus.H20.price_usd_per_h": -1},
     "config: hardware_overrides: gpus.H20.price_usd_per_h must be positive"),
    ({"node.no_such_key": 1}, "config: hardware_overrides: unknown override key node.no_such_key"),
    ({"perf.train_mfu": "fast"}, "config: hardware_overrides: "),
])
def test_hardware_overrides_use_the_cli_validator(overrides: dict[str, Any],
                                                  message: str) -> None:
    """A bad key or a negative price in hardware_overrides fails as --hardware-overrides
    does, on one line."""
    config = default_config()
    config["hardware_overrides"] = overrides
    lines = problems_of(config)
    assert len(lines) == 1 and lines[0].startswith(message), lines


@pytest.mark.parametrize(("path", "value", "message"), [
    (("sim", "production", "slo"), "0.5", "config: sim.production.slo: '0.5': an SLO must be"),
    (("sim", "sensitivity", "slos", 0), "2,1.5", "config: sim.sensitivity.slos[0]: '2,1.5'"),
    (("sim", "metrics", "slo_endpoints", 1), "0.9",
     "config: sim.metrics.slo_endpoints[1]: '0.9'"),
    (("sim", "evidence", "admission_slos", 0), "1,", "config: sim.evidence.admission_slos[0]"),
    (("sim", "sensitivity", "slos", 0), 1.2,
     "config: sim.sensitivity.slos[0]: 1.2 is not of type 'string'"),
    (("robustness", "failure", "slo"), 0.5,
     "config: robustness.failure.slo: 0.5 is less than the minimum of 1"),
])
def test_slo_settings_are_checked_for_type_and_range(path: tuple[str | int, ...], value: Any,
                                                     message: str) -> None:
    """An SLO of "0.5", a reversed or broken range, or a number where the setting is text:
    one line naming the key."""
    config = default_config()
    set_key(config, path, value)
    lines = problems_of(config)
    assert len(lines) == 1 and lines[0].startswith(message), lines


def test_failure_of_an_unknown_job_is_caught() -> None:
    """A kill naming a job that is not in the failure experiment's trace."""
    config = default_config()
    config["robustness"]["failure"]["kills"].append({"job_id": "Z9", "kill_at_s": 100})
    assert problems_of(config) == [
        "config: robustness.failure.kills: job_id 'Z9' is not in the trace (jobs: D1, D2, E)"]


def test_failure_job_copied_from_an_unknown_source_job() -> None:
    """A failure job copied `from` a job the source trace does not hold."""
    config = default_config()
    config["robustness"]["failure"]["jobs"][0]["from"] = "Type-Q"
    lines = problems_of(config)
    assert len(lines) == 1 and lines[0].startswith("config: robustness.failure.jobs: ")
    assert "Type-Q" in lines[0]


def test_sweep_plan_problems_name_their_key() -> None:
    """A default workload that is not one of the workloads, from the sweep plan."""
    config = default_config()
    config["sim"]["sensitivity"]["default_workload"] = "XX"
    assert problems_of(config) == [
        "config: sim.sensitivity.default_workload: 'XX' is not one of the workloads "
        "['BL', 'Mixed', 'RH', 'TH']"]


@pytest.mark.parametrize(("path", "value", "message"), [
    (("sim", "production", "polices"), ["rollmux"],
     "config: sim.production: Additional properties are not allowed ('polices' was "
     "unexpected)"),
    (("theorem1", "instances"), -1, "config: theorem1.instances: -1 is less than the minimum"),
    (("paperfigs",), {"fig03_job_types": "D"}, "config: paperfigs.fig03_job_types: 'D' is "
     "not of type 'array'"),
])
def test_schema_errors_name_the_key_path_not_the_schema(path: tuple[str | int, ...],
                                                        value: Any, message: str) -> None:
    """An unknown key or a bad value: one line with the failing key path and message."""
    config = default_config()
    set_key(config, path, value)
    lines = problems_of(copy.deepcopy(config))
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert "$defs" not in lines[0] and "description" not in lines[0]


# --------------------------------------------------------------------------- snakemake -n


def dry_run(workdir: Path, config: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`snakemake -n` in the pipeline copy ``workdir`` with ``config`` as --configfile."""
    (workdir / "config" / "bad.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile",
                           "config/bad.yaml"], cwd=workdir, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.subprocess
def test_dry_run_catches_what_only_python_knows(tmp_path: Path) -> None:
    """An unknown policy, a bad hardware override, an SLO of "0.5" and a failure of an
    unknown job all stop `snakemake -n`, one `rollmux: error:` line each, nothing more."""
    workdir = copy_pipeline(tmp_path)
    config = default_config()
    config["sim"]["sensitivity"]["policies"].append("nope")
    config["hardware_overrides"] = {"gpus.H20.price_usd_per_h": -1}
    config["sim"]["production"]["slo"] = "0.5"
    config["robustness"]["failure"]["kills"][0]["job_id"] = "Z9"
    result = dry_run(workdir, config)
    assert result.returncode == 1
    source = "rollmux: error: config/config.yaml + config/bad.yaml: "
    lines = result.stderr.splitlines()
    assert [line.split(": ")[3] for line in lines] == [
        "sim.sensitivity.policies[4]", "sim.production.slo", "hardware_overrides",
        "robustness.failure.kills"], result.stderr
    assert all(line.startswith(source) for line in lines), result.stderr
    assert "Traceback" not in result.stderr and "File " not in result.stderr


@pytest.mark.subprocess
def test_dry_run_schema_error_is_one_line(tmp_path: Path) -> None:
    """An unknown key prints the key path and message, not 180-330 lines of schema."""
    workdir = copy_pipeline(tmp_path)
    config = default_config()
    config["sim"]["production"]["polices"] = ["rollmux"]
    result = dry_run(workdir, config)
    assert result.returncode == 1
    assert result.stderr == (
        "rollmux: error: config/config.yaml + config/bad.yaml: sim.production: Additional "
        "properties are not allowed ('polices' was unexpected)\n")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("reference", "optimal",
     "config: robustness.reference: 'optimal' is not one of robustness.policies"),
    ("policies", ["rollmux", "greedy", "regroup"],
     "config: robustness.policies: must include random (the claims C47-C52 read them)"),
    ("policies", ["rollmux", "random", "greedy", "regroup", "solo-d"],
     "config: robustness.policies: ['solo-d'] are replayed as evidence only"),
])
def test_drift_study_policies_hold_the_reference_and_the_claims_policies(
        key: str, value: Any, message: str) -> None:
    """The drift study's list must hold its reference and the claims' policies, and no
    evidence-only policy: one line naming the key."""
    config = default_config()
    config["robustness"][key] = value
    lines = problems_of(config)
    assert len(lines) == 1 and lines[0].startswith(message), lines
