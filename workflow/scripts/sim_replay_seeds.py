"""Snakemake adapter: every seed of one replay setting, one after another, in this process.

The wildcard ``setting`` is a replay folder without its ``seed=`` segment; for each seed
of ``params.seeds`` the spec is built from the folder's keys
(:meth:`rollmux.sim.ReplaySpec.from_keys`, as ``sim_replay.py`` does from its wildcards)
and run into ``results/sim/<setting>/seed=<s>/`` (:func:`rollmux.sim.run_replay`: written
into a temporary sibling, then replacing the folder whole). A replay depends only on its
spec: the process-wide memos are keyed by value (rollmux.memo), so the folders have the
bytes one ``sim_replay`` job per seed writes (tests/test_seedbatch.py). A failing seed
stops the batch with its error, noted with the setting and seed.
"""

import logging
from pathlib import Path

from rollmux.sim import ReplaySpec, run_replay
from rollmux.sim.replay import path_keys

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
setting = str(snakemake.wildcards.setting)
folders = sorted({Path(f).parent for f in snakemake.output}, key=str)
for seed in snakemake.params.seeds:
    keys = path_keys(f"{setting}/seed={int(seed)}")
    spec = ReplaySpec.from_keys(
        keys,
        trace=snakemake.input.trace,
        lengths=str(snakemake.params.lengths) if "lengths" in keys else None,
        hardware_overrides=dict(snakemake.params.overrides),
        record_phases=False,
    )
    out = next((f for f in folders if f.name == f"seed={int(seed)}"), None)
    if out is None or out.parts[-len(spec.path().parts):] != spec.path().parts:
        raise ValueError(f"no output folder ends with the replay's folder {spec.path()}")
    try:
        result = run_replay(spec, out)
    except Exception as exc:
        exc.add_note(f"rollmux: replay {setting}/seed={seed} failed (one job replaying "
                     f"seeds {list(snakemake.params.seeds)})")
        logging.exception("%s seed=%s failed", setting, seed)
        raise
    s = result.summary
    logging.info("%s seed=%s: %d/%d jobs completed, $%.1f/h average, SLO attainment %.3f; "
                 "wrote %s", spec.policy, seed, s["jobs_completed"], s["jobs"],
                 s["cost_usd_per_h"], s["slo_attainment"], out)
