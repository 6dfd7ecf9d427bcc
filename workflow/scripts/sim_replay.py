"""Snakemake adapter: one trace replay, from the rule's wildcards to its output folder.

Builds the :class:`rollmux.sim.ReplaySpec` of the wildcards (no per-phase table), checks
that the rule's folder is the spec's own key=value folder and runs it.
"""

import logging
from pathlib import Path

from rollmux.sim import ReplaySpec, run_replay

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
w = snakemake.wildcards
spec = ReplaySpec(
    trace=snakemake.input.trace,
    policy=w.policy,
    seed=int(w.seed),
    slo=w.slo,
    max_group_size=int(w.maxgroup),
    drift=w.drift,
    stochastic=w.phases != "/phases=expected",
    fidelity="analytic" if w.fidelity == "/fidelity=analytic" else "event",
    drift_reach="cap" if w.reach == "/drift_reach=cap" else "profile",
    hardware_overrides=tuple(dict(snakemake.params.overrides).items()),
    record_phases=False,
    lengths=str(snakemake.params.lengths) if w.lengths else None,
)
out = Path(snakemake.output.summary).parent
if out.parts[-len(spec.path().parts):] != spec.path().parts:
    raise ValueError(f"{out} does not end with the replay's folder {spec.path()}")
result = run_replay(spec, out)
s = result.summary
logging.info("%s: %d/%d jobs completed, $%.1f/h average, SLO attainment %.3f; wrote %s",
             spec.policy, s["jobs_completed"], s["jobs"], s["cost_usd_per_h"],
             s["slo_attainment"], out)
