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

from rollmux.sim.replay import path_keys, run_replay_folder

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
setting = str(snakemake.wildcards.setting)
folders = {Path(f).parent.name: Path(f).parent for f in snakemake.output}
for seed in snakemake.params.seeds:
    keys = path_keys(f"{setting}/seed={int(seed)}")
    out = folders.get(f"seed={int(seed)}")
    if out is None:
        raise ValueError(f"no output folder for {setting}/seed={int(seed)}")
    try:
        line = run_replay_folder(
            keys,
            out,
            trace=snakemake.input.trace,
            lengths=str(snakemake.params.lengths) if "lengths" in keys else None,
            hardware_overrides=dict(snakemake.params.overrides),
            record_phases=False,
        )
    except Exception as exc:
        exc.add_note(f"rollmux: replay {setting}/seed={seed} failed (one job replaying "
                     f"seeds {list(snakemake.params.seeds)})")
        logging.exception("%s seed=%s failed", setting, seed)
        raise
    logging.info("seed=%s %s", seed, line)
