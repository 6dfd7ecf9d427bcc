"""Column names and codes of the simulator's tables, defined once (STYLE habit 5).

The simulator emits flat rows (plain tuples in its hot loop) and turns them into pandas
tables only at the end. Every metric in :mod:`rollmux.sim.metrics` is a pure function
of these tables; docs/metrics.md defines each metric on these columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = [
    "EVENT_COLUMNS",
    "EVENT_KINDS",
    "JOB_COLUMNS",
    "PHASE_CODES",
    "PHASE_RECORD_COLUMNS",
    "POOL_CODES",
    "SimulationResult",
    "timeseries_columns",
]

#: Per-phase table (event fidelity), one row per phase per node it occupies, in the
#: order the nodes were released. Compact form: integers for job, phase, pool and node.
#: ``job`` indexes the per-job table (column ``job``); ``phase`` is a :data:`PHASE_CODES`
#: code; ``node`` the serial of the node id (``R12``/``T12`` -> 12; serials are unique
#: across pools); ``pool`` a :data:`POOL_CODES` code; ``iteration`` counts the job's
#: iterations from 0; ``start_s``/``end_s`` the node's occupancy (switch + work + sync);
#: ``work_s`` the useful work inside it (rollout or training only; switches and sync are
#: bubble); ``gpus`` the job's GPUs on that node. A ``tail`` row is a migrated long tail
#: (rollmux.phases): the GPUs it keeps on that rollout node after the rollout released
#: it, from the release until the job's rollout is complete (``work_s``: that duration).
PHASE_RECORD_COLUMNS: tuple[str, ...] = (
    "job", "phase", "iteration", "node", "pool", "start_s", "end_s", "work_s", "gpus",
)

#: ``phase`` codes of the per-phase table.
PHASE_CODES: dict[str, int] = {"rollout": 0, "train": 1, "tail": 2}

#: ``pool`` codes of the per-phase table (a veRL rollout runs on the training pool).
POOL_CODES: dict[str, int] = {"rollout": 0, "train": 1}

#: Cluster-level event log (both fidelities): arrivals and their decisions, completions,
#: kills, resubmissions and regroupings. ``strategy`` is the decision's strategy (empty
#: for other kinds); ``detail`` a reason (rejections) or the moved jobs (regroupings).
EVENT_COLUMNS: tuple[str, ...] = (
    "time_s", "kind", "job_id", "group_id", "strategy", "marginal_cost_usd_per_h", "detail",
)

#: ``kind`` values of the event log.
EVENT_KINDS: tuple[str, ...] = (
    "arrival", "complete", "kill", "resubmit", "regroup",
)

#: Per-job table. ``solo_iteration_s`` is the job's Solo-D iteration time (expected phase
#: times of the phase model: rollout + training + sync); ``achieved_iteration_s`` its
#: running time over the iterations it completed; ``slowdown`` their ratio; ``slo_met``
#: ``slowdown <= slo`` (False for rejected or unfinished jobs). ``running_s`` excludes the
#: time between a kill and the resubmission. ``busy_*_gpu_s`` are the useful GPU-seconds
#: the job did on each pool. The three SLO readings (docs/metrics.md): ``slowdown``/``slo_met``
#: the paper reference (realised over the worst-case solo estimate); ``*_realised`` realised
#: over solo on the same draws; ``*_planned`` the largest worst-case co-execution over
#: worst-case solo of the groups the job was in (what Algorithm 1 checks).
JOB_COLUMNS: tuple[str, ...] = (
    "job", "job_id", "arrival_s", "slo", "iterations", "iterations_done", "status",
    "strategy", "group_id", "admitted_s", "finish_s", "running_s", "incarnations",
    "solo_iteration_s", "achieved_iteration_s", "slowdown", "slo_met",
    "solo_iteration_realised_s", "slowdown_realised", "slo_met_realised",
    "slowdown_planned", "slo_met_planned", "busy_rollout_gpu_s", "busy_train_gpu_s", "reason",
)


def timeseries_columns(gpu_types: tuple[str, ...]) -> tuple[str, ...]:
    """Columns of the time series: a step function, each row holding from its time on.

    ``cost_usd_per_h`` is the hourly price of every provisioned GPU; ``gpus_rollout`` /
    ``gpus_train`` the GPUs of each pool; ``gpus_<type>`` the GPUs of each type; the last
    row (at the end of the replay) has no GPUs.
    """
    return (
        "time_s", "cost_usd_per_h", "gpus_rollout", "gpus_train",
        *(f"gpus_{t}" for t in gpu_types), "jobs_active", "groups",
    )


@dataclass(frozen=True)
class SimulationResult:
    """The outputs of one replay: its tables (pandas), summary and resolved config.

    ``timings`` holds wall-clock measurements (never written with the results, which
    must be byte-identical across runs).
    """

    phases: pd.DataFrame
    events: pd.DataFrame
    timeseries: pd.DataFrame
    jobs: pd.DataFrame
    summary: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
