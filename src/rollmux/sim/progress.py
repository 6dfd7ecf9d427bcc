"""The interface between the replay driver and a progress model, and a job's phase draws.

The driver (:mod:`rollmux.sim.engine`) owns the cluster: arrivals, policy decisions,
departures, regroupings. How admitted jobs progress between those events is a
:class:`ProgressModel`: :class:`rollmux.sim.eventmodel.EventModel` (every phase an event)
or :class:`rollmux.sim.analytic.AnalyticModel` (steady-state rates). The driver calls the
same methods on either and never asks which one it has.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

import pandas as pd

from rollmux.group import GroupJob
from rollmux.sim.analytic import InFlight

__all__ = ["InFlight", "PhaseDraws", "ProgressModel"]


class PhaseDraws(NamedTuple):
    """A job's phase times for each of its iterations, indexed by iteration.

    ``rollout_s``: when the rollout is complete (training may start); ``node_s``: how long
    it holds all its rollout GPUs (shorter under long-tail migration); ``train_s``:
    training; ``tail_gpus``: GPUs the migrated tail keeps after ``node_s`` (0: none).
    Compact arrays (8 bytes a time, Python floats on indexing).
    """

    rollout_s: array[float]
    node_s: array[float]
    train_s: array[float]
    tail_gpus: array[int]


class ProgressModel(Protocol):
    """How admitted jobs progress between cluster events (both fidelities implement it).

    ``events``: phase events processed so far; ``loop_s``: CPU seconds inside
    :meth:`run_until`.
    """

    events: int
    loop_s: float

    def add_job(self, i: int, group_id: str, member: GroupJob, t: float, done: int,
                target: int, ready_s: float, resident: bool, draws: PhaseDraws | None = None,
                in_flight: InFlight | None = None, iteration_limit_s: float = math.inf
                ) -> None:
        """Admit job ``i`` into group ``group_id`` at ``t`` with ``done`` of ``target`` done.

        ``member``: the job as the group model's member, pinned to node serials. It may
        start at ``ready_s``; ``resident``: its state is on its nodes (else each node's
        first phase pays a cold switch); ``draws``: its phase times (None: the expected
        ones); ``in_flight``: the unfinished iteration it resumes (a free move);
        ``iteration_limit_s``: its SLO x T_solo (the event model counts the iterations
        that take longer; ``inf``: none counted).
        """

    def in_flight(self, i: int, t: float) -> InFlight | None:
        """Job ``i``'s unfinished iteration at ``t`` (None: none begun), before a removal."""

    def remove_job(self, i: int, t: float) -> int:
        """Take job ``i`` out at ``t`` (a running phase is lost); its whole iterations done."""

    def set_node_orders(self, group_id: str, orders: Mapping[int, Sequence[int]]) -> None:
        """Serve group ``group_id``'s nodes (by serial) in these cyclic job orders."""

    def run_until(self, t_limit: float) -> list[tuple[int, float]]:
        """Progress up to ``t_limit``; stop at the first completion, (job, time) pairs."""

    def iterations_done(self, i: int) -> int:
        """Whole iterations job ``i`` has completed."""

    def busy_gpu_s(self, i: int) -> tuple[float, float]:
        """Useful (rollout-pool, training-pool) GPU-seconds of job ``i`` so far."""

    def phase_table(self) -> pd.DataFrame:
        """The per-phase table (columns :data:`rollmux.sim.records.PHASE_RECORD_COLUMNS`)."""
