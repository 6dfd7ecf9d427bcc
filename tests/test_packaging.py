"""Packaging consistency: conda environment and pyproject declare the same dependencies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name_and_bound(spec: str) -> tuple[str, str]:
    match = re.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", spec.strip())
    assert match, spec
    return match.group(1).lower(), match.group(2).replace(" ", "")


def test_environment_matches_pyproject() -> None:
    """Every pyproject dependency (and test extra) appears in environment.yml with its bound."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(
        _name_and_bound(s)
        for s in project["dependencies"] + project["optional-dependencies"]["test"]
    )
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = dict(
        _name_and_bound(s) for s in env["dependencies"] if isinstance(s, str) and s != "pip"
    )
    for name, bound in wanted.items():
        assert name in conda, f"{name} missing from environment.yml"
        assert conda[name] == bound, f"{name}: pyproject {bound!r}, environment.yml {conda[name]!r}"
    assert all(bound.startswith(">=") for bound in wanted.values()), "lower bounds only"
