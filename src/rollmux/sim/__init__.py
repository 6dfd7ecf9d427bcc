"""Cluster simulator: trace replay under a placement policy, at two fidelity levels.

``simulate_trace(jobs, policy, hw, seed, config)`` returns a
:class:`~rollmux.sim.records.SimulationResult` (per-phase, event, time-series and per-job
tables, and a summary). Metrics are defined in docs/metrics.md.
"""

from __future__ import annotations

from rollmux.sim.engine import FIDELITIES, Failure, SimConfig, simulate_trace
from rollmux.sim.records import SimulationResult

__all__ = ["FIDELITIES", "Failure", "SimConfig", "SimulationResult", "simulate_trace"]
