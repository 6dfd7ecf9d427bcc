"""Snakemake adapter: one trace replay, from the rule's wildcards to its output folder.

The wildcards are the replay folder's segments (rollmux.sim.replay.wildcard_template);
:meth:`rollmux.sim.ReplaySpec.from_keys`, the inverse of ``spec.path()``, builds the spec
(refusing a folder no spec would write), which is run into the rule's folder.
"""

import logging
from pathlib import Path

from rollmux.sim import ReplaySpec, run_replay
from rollmux.sim.replay import wildcard_keys

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
keys = wildcard_keys(dict(snakemake.wildcards.items()))
spec = ReplaySpec.from_keys(
    keys,
    trace=snakemake.input.trace,
    failures=snakemake.input.get("failures"),
    lengths=str(snakemake.params.lengths) if "lengths" in keys else None,
    hardware_overrides=dict(snakemake.params.overrides),
    record_phases=bool(snakemake.params.record_phases),
)
out = Path(snakemake.output.summary).parent
if out.parts[-len(spec.path().parts):] != spec.path().parts:
    raise ValueError(f"{out} does not end with the replay's folder {spec.path()}")
result = run_replay(spec, out)
s = result.summary
logging.info("%s: %d/%d jobs completed, $%.1f/h average, SLO attainment %.3f; wrote %s",
             spec.policy, s["jobs_completed"], s["jobs"], s["cost_usd_per_h"],
             s["slo_attainment"], out)
