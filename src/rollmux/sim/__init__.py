"""Cluster simulator: trace replay under a placement policy, at two fidelity levels.

``run_replay(ReplaySpec(trace=..., policy=..., seed=...), out=PATH)`` is one replay as
``rollmux simulate`` runs it (same files, same ``config.json``);
``simulate_trace(jobs, policy, hw, seed, config)`` returns a
:class:`~rollmux.sim.records.SimulationResult` (per-phase, event, time-series and per-job
tables, and a summary) from jobs in memory. Metrics are defined in docs/metrics.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rollmux.lazy import lazy_getattr

if TYPE_CHECKING:
    from rollmux.sim.engine import FIDELITIES, Failure, SimConfig, simulate_trace
    from rollmux.sim.records import SimulationResult
    from rollmux.sim.replay import ReplaySpec, run_replay

# Public names load their module on first use (PEP 562): importing a light submodule, such
# as a command's argument parser, does not load numpy, pandas or the engine (README, "The
# command line": start-up).
_LAZY: dict[str, str] = {
    "FIDELITIES": "rollmux.sim.engine",
    "Failure": "rollmux.sim.engine",
    "SimConfig": "rollmux.sim.engine",
    "simulate_trace": "rollmux.sim.engine",
    "SimulationResult": "rollmux.sim.records",
    "ReplaySpec": "rollmux.sim.replay",
    "run_replay": "rollmux.sim.replay",
}

__all__ = [
    "FIDELITIES",
    "Failure",
    "ReplaySpec",
    "SimConfig",
    "SimulationResult",
    "run_replay",
    "simulate_trace",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
