"""Pipeline config: paper.yaml is an overlay of differences, every profile validates, and
config/README.md is generated from the schemas (so it documents every key)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import pytest
import yaml
from profiles import PAPER, ROOT, TEST, config_readme, load_profile

SCHEMAS = ROOT / "workflow" / "schemas"


def key_paths(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every key, mappings recursed into (the mapping listed too)."""
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        yield path, value
        if isinstance(value, Mapping):
            yield from key_paths(value, path)


def validate(config: Mapping[str, Any]) -> None:
    """Validate as workflow/rules/common.smk does: top level, then each section's schema."""
    jsonschema.validate(config, yaml.safe_load((SCHEMAS / "config.schema.yaml").read_text()))
    for section in ("calibration", "sim", "robustness", "paperfigs", "claims"):
        schema = yaml.safe_load((SCHEMAS / f"{section}.schema.yaml").read_text())
        jsonschema.validate(config.get(section, {}), schema)


@pytest.mark.parametrize("overlays", [(), (PAPER,), (TEST,)], ids=["quick", "paper", "test"])
def test_profiles_validate(overlays: tuple) -> None:
    """The quick profile, and each overlay merged over it, validate against the schemas."""
    validate(load_profile(*overlays))


@pytest.mark.parametrize("overlay", [PAPER, TEST], ids=["paper", "test"])
def test_overlays_hold_only_differences(overlay: Any) -> None:
    """Every value an overlay sets is a key of config.yaml, set to something else."""
    quick = dict(key_paths(load_profile()))
    for path, value in key_paths(yaml.safe_load(overlay.read_text())):
        assert path in quick, f"{overlay.name}: {path} is not a key of config/config.yaml"
        if not isinstance(value, Mapping):
            assert value != quick[path], f"{overlay.name}: {path} repeats config.yaml's value"


def test_paper_overlay_changes_the_scale() -> None:
    """The merged paper profile differs from the quick one where it should (a few keys)."""
    quick, paper = load_profile(), load_profile(PAPER)
    # Whole traces in the paper profile (issue 24), a window in the quick one.
    assert paper["sim"]["sensitivity"]["window"] == 0 < quick["sim"]["sensitivity"]["window"]
    assert paper["seed"] == quick["seed"]  # untouched keys come from config.yaml


def test_config_readme_is_current() -> None:
    """config/README.md is what scripts/config_readme.py writes (run it after a change)."""
    text = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    assert text == config_readme().render(), "run: python scripts/config_readme.py"


def test_config_readme_documents_every_key() -> None:
    """Every key of config.yaml has a row with a meaning in config/README.md."""
    cells = [re.split(r"(?<!\\)\|", line)
             for line in (ROOT / "config" / "README.md").read_text().splitlines()
             if line.startswith("| `")]
    rows = {c[1].strip().strip("`"): c[5].strip() for c in cells}
    sections = {c[1].strip().strip("`") for c in cells if c[3].strip() == "-"}
    for path, value in key_paths(load_profile()):
        parent = path.rpartition(".")[0]
        if parent and parent not in sections:
            continue  # inside a mapping documented whole (e.g. sim.sensitivity.workloads)
        assert path in rows, f"{path} is not in config/README.md"
        if not isinstance(value, Mapping):
            assert rows[path], f"{path} has no meaning in config/README.md"
