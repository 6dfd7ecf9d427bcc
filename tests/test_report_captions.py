"""The report's captions show values, not config key names (issue 22, item 6).

A caption (workflow/report/*.rst) is a Jinja template Snakemake renders with the run's
``snakemake.config`` and the rule's ``snakemake.params``: it states the settings a figure
was drawn with (``3 iterations``, ``traces/production-default.csv``), never the name of
the key that holds them (``gantt.iterations``, ``<robustness.trace>``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = sorted((ROOT / "workflow" / "report").glob("*.rst"))
#: Jinja expressions and statements: where key names belong.
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)


def dotted_keys(config: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every nested key of the config as a dotted path (``robustness.failure.jobs``)."""
    for key, value in config.items():
        path = f"{prefix}{key}"
        if prefix:
            yield path
        if isinstance(value, Mapping):
            yield from dotted_keys(value, f"{path}.")


def config() -> dict[str, Any]:
    """The quick profile's config."""
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))


def test_dotted_keys_lists_nested_keys() -> None:
    """The walk gives second-level and deeper keys (the names a caption must not show)."""
    keys = set(dotted_keys(config()))
    assert {"gantt.iterations", "robustness.trace", "robustness.failure.kills"} <= keys


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: p.name)
def test_caption_shows_values_not_key_names(caption: Path) -> None:
    """Outside its Jinja expressions a caption names no config key (``a.b`` or ``<a.b>``)."""
    text = JINJA.sub(" ", caption.read_text(encoding="utf-8"))
    named = sorted(key for key in dotted_keys(config())
                   if re.search(rf"(?<![\w./-]){re.escape(key)}(?![\w-])", text))
    assert named == [], f"{caption.name} names config keys instead of their values"


class _Anything:
    """Stands in for ``snakemake.params`` and ``snakemake.wildcards``: any attribute is a
    string, so a caption's use of a rule's parameters renders."""

    def __getattr__(self, name: str) -> str:
        return "x,y"


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: p.name)
def test_caption_renders_with_the_config(caption: Path) -> None:
    """Each caption is valid Jinja over the config: it renders, with values in place."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    template = env.from_string(caption.read_text(encoding="utf-8"))
    snakemake = type("Snakemake", (), {"config": config(), "params": _Anything(),
                                       "wildcards": _Anything()})
    rendered = template.render(snakemake=snakemake)
    assert "{{" not in rendered and "{%" not in rendered and rendered.strip()


def test_fig01_caption_states_its_settings() -> None:
    """A caption reads its values from the config: Fig. 1's job types and iterations."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    text = (ROOT / "workflow" / "report" / "fig01_gantt.rst").read_text(encoding="utf-8")
    settings = config()
    settings["gantt"] = {"job_types": ["C", "E"], "iterations": 7}
    rendered = env.from_string(text).render(
        snakemake=type("S", (), {"config": settings, "params": _Anything()}))
    assert "(C and E)" in rendered and "for 7 iterations" in rendered
