"""The micro-benchmark job types A-E (paper §6.2) as :class:`RLJob` values.

The definitions (job types and the scenarios built from them) live in
``src/rollmux/data/microbench.yaml``. They sit in the jobs layer because the trace
generators and the phase sampler build jobs from them; the scenarios' closed-form
evaluation is :mod:`rollmux.microbench`.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from rollmux.jobs import RLJob

__all__ = ["job_type", "load_microbench"]


def load_microbench(path: str | None = None) -> dict[str, Any]:
    """The raw micro-benchmark definitions (job types and scenarios) from YAML."""
    if path is None:
        text = resources.files("rollmux.data").joinpath("microbench.yaml").read_text()
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    data = yaml.safe_load(text)
    for key in ("job_types", "scenarios"):
        if not isinstance(data, Mapping) or key not in data:
            raise ValueError(f"{path or 'microbench.yaml'}: missing top-level key {key!r}")
    return data


def job_type(
    name: str, definitions: Mapping[str, Any] | None = None, job_id: str | None = None
) -> RLJob:
    """The :class:`RLJob` of micro-benchmark type ``name`` (A-E)."""
    types = (definitions or load_microbench())["job_types"]
    if name not in types:
        raise ValueError(f"job type {name!r}: unknown (valid: {', '.join(sorted(types))})")
    fields = {k: v for k, v in types[name].items() if k != "description"}
    return RLJob(job_id=job_id or name, workload=f"type-{name}", **fields)
