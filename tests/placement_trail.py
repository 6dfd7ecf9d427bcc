"""Placement decisions along a seeded sequence of arrivals and departures.

:func:`decision_trail` admits a production-style job mix one job at a time with one
policy; before each arrival a seeded coin releases a random active job, so groups fill,
shrink and vanish and snapshots of one lineage see every kind of update. One row per
decision: where the job went and the meta-iteration the policy computed.

The fixture ``tests/golden/placement/decisions.csv.gz`` holds these rows as the
placement code of main at 6b86be6 (before groups were indexed, issue 15) made them;
tests/test_placement_scale.py checks that today's code makes the same decisions. To
record it again from a checkout of some reference code:

    PYTHONPATH=<checkout>/src .venv/bin/python tests/placement_trail.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from rollmux.experiments.jobmix import production_mix
from rollmux.hardware import load_hardware
from rollmux.placement import apply, empty_snapshot, get_policy, release

FIXTURE = Path(__file__).resolve().parent / "golden" / "placement" / "decisions.csv.gz"

#: (policy, arrivals): a few thousand decisions over the RollMux variants.
TRAILS: tuple[tuple[str, int], ...] = (
    ("rollmux", 2000),
    ("rollmux-noprune", 1000),
    ("rollmux-expected", 1000),
    ("rollmux-costweighted", 400),
)
SEED = 0
#: Chance that one active job departs before an arrival (the cluster still grows).
DEPARTURE_P = 0.5


def decision_trail(policy: str, arrivals: int, seed: int = SEED) -> pd.DataFrame:
    """The decisions of ``policy`` on ``arrivals`` seeded arrivals with departures between."""
    hw = load_hardware()
    rng = np.random.default_rng(seed)
    placer = get_policy(policy)
    snapshot = empty_snapshot(hw)
    rows = []
    for step, job in enumerate(production_mix(arrivals, seed, hw)):
        if snapshot.jobs and rng.random() < DEPARTURE_P:
            active = sorted(snapshot.jobs)
            snapshot = release(snapshot, active[int(rng.integers(len(active)))])
        decision = placer.place(job, snapshot)
        rows.append({
            "policy": policy,
            "step": step,
            "job_id": job.job_id,
            "strategy": decision.strategy.value,
            "group_id": decision.group_id,
            "rollout_nodes": " ".join(decision.rollout_nodes),
            "train_nodes": " ".join(decision.train_nodes),
            "new_nodes": " ".join(n.node_id for n in decision.new_nodes),
            "marginal_cost_usd_per_h": decision.marginal_cost_usd_per_h,
            "meta_iteration_s": decision.meta_iteration_s,
            "active_jobs": len(snapshot.jobs),
        })
        snapshot = apply(snapshot, decision)
    return pd.DataFrame(rows)


def main() -> None:
    """Record every trail of TRAILS into FIXTURE."""
    frames = []
    for policy, arrivals in TRAILS:
        frames.append(decision_trail(policy, arrivals))
        print(f"{policy}: {arrivals} decisions", file=sys.stderr)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(frames).to_csv(FIXTURE, index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
