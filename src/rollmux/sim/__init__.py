"""Cluster simulator: trace replay under a placement policy, at two fidelity levels.

``run_replay(ReplaySpec(trace=..., policy=..., seed=...), out=PATH)`` is one replay as
``rollmux simulate`` runs it (same files, same ``config.json``);
``simulate_trace(jobs, policy, hw, seed, config)`` returns a
:class:`~rollmux.sim.records.SimulationResult` (per-phase, event, time-series and per-job
tables, and a summary) from jobs in memory. Metrics are defined in docs/metrics.md.
"""

from __future__ import annotations

from rollmux.sim.engine import FIDELITIES, Failure, SimConfig, simulate_trace
from rollmux.sim.records import SimulationResult
from rollmux.sim.replay import ReplaySpec, run_replay

__all__ = ["FIDELITIES", "Failure", "ReplaySpec", "SimConfig", "SimulationResult", "run_replay",
           "simulate_trace"]
