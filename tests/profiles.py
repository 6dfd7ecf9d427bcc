"""The pipeline's config profiles as Snakemake sees them (overlays merged over config.yaml).

Loads scripts/config_readme.py, whose ``profile`` merges with Snakemake's own
``update_config``, so tests, the config page and the pipeline read one merge.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from scriptmod import load_script

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "config" / "paper.yaml"
TEST = ROOT / ".test" / "config" / "config.yaml"


def config_readme() -> ModuleType:
    """scripts/config_readme.py as a module."""
    return load_script("config_readme")


def load_profile(*overlays: Path) -> dict[str, Any]:
    """config/config.yaml with ``overlays`` merged over it, as Snakemake merges them."""
    merged: dict[str, Any] = config_readme().profile(*overlays)
    return merged


#: The two profiles of the pipeline by the name the tests use.
PROFILES = {"config.yaml": (), "paper.yaml": (PAPER,)}
