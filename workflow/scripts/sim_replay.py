"""Snakemake adapter: one trace replay, from the rule's wildcards to its output folder.

The wildcards are the replay folder's segments (rollmux.sim.replay.wildcard_template);
:meth:`rollmux.sim.ReplaySpec.from_keys`, the inverse of ``spec.path()``, builds the spec
(refusing a folder no spec would write), which is run into the rule's folder.
"""

import logging
from pathlib import Path

from rollmux.sim.replay import run_replay_folder, wildcard_keys

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
keys = wildcard_keys(dict(snakemake.wildcards.items()))
logging.info(run_replay_folder(
    keys,
    Path(snakemake.output.summary).parent,
    trace=snakemake.input.trace,
    failures=snakemake.input.get("failures"),
    lengths=str(snakemake.params.lengths) if "lengths" in keys else None,
    hardware_overrides=dict(snakemake.params.overrides),
    record_phases=bool(snakemake.params.record_phases),
))
