"""The micro-benchmark job types A-E (paper Table 3), each as an RLJob.

The types live in ``src/rollmux/data/microbench.yaml`` (documented estimates; A's training
and C's and E's phase times fitted, :mod:`rollmux.experiments.microbench_fit`), beside the
scenarios the paper's micro-benchmarks build from them
(:mod:`rollmux.experiments.microbench`). The trace generators and the phase sampler use
the types; this module reads them and knows nothing of the scenarios.
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
