"""Micro-benchmark scenarios (paper §6.2), evaluated in closed form, and Fig. 1's timelines.

The scenarios live in ``src/rollmux/data/microbench.yaml`` (documented estimates; Table 3
of the paper is an image), built from the job types A-E of :mod:`rollmux.jobtypes`. Each
scenario is one co-execution group; :func:`scenario_table` compares it with the same jobs
run Solo-D and veRL co-located, and with the fluid lower bound, at equal hourly
provisioning cost (throughput per dollar-hour; throughput counts solo-equivalent jobs, so
unequal jobs compare fairly). Equations: docs/model.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from rollmux.closedform import (
    FleetCost,
    JobPhases,
    fluid_cost_usd_per_h,
    pools_from_hardware,
    solo_d_fleet,
    verl_fleet,
)
from rollmux.group import CoExecutionGroup, GroupJob, NodeCapacity, node_capacity_from_hardware
from rollmux.hardware import Hardware, load_hardware
from rollmux.jobs import RLJob
from rollmux.jobtypes import job_type, load_microbench
from rollmux.model import ResolvedJob, resolve

SCENARIOS: tuple[str, ...] = ("temporal", "train", "spatial")

TABLE_COLUMNS: tuple[str, ...] = (
    "scenario",
    "system",
    "jobs",
    "h20_gpus",
    "h800_gpus",
    "cost_usd_per_h",
    "normalised_throughput",
    "throughput_per_kusd_h",
    "rollmux_gain",
    "rollout_utilisation",
    "train_utilisation",
    "max_slowdown",
    "meta_iteration_s",
    "t_cycle_s",
    "t_load_s",
    "status",
)
"""Columns of :func:`scenario_table` (defined in docs/metrics.md)."""


@dataclass(frozen=True)
class Scenario:
    """One micro-benchmark scenario: its jobs (as given and resolved), their solo phases
    and the woven group.

    ``ideal_rollout_ratio``: each job's modelled rollout time on its in-group training GPUs
    over that on its rollout GPUs (NaN where the rollout does not fit there), Table 4's
    ideal co-location (:func:`rollmux.experiments.microbench_sim.run_scenario`).
    """

    name: str
    description: str
    jobs: tuple[RLJob, ...]
    solo_phases: tuple[JobPhases, ...]
    group: CoExecutionGroup
    resolved: tuple[ResolvedJob, ...]
    ideal_rollout_ratio: tuple[float, ...]


def build_scenario(
    name: str, hw: Hardware | None = None, definitions: Mapping[str, Any] | None = None
) -> Scenario:
    """Build scenario ``name`` (temporal, train, spatial) as a co-execution group."""
    hw = hw or load_hardware()
    data = definitions or load_microbench()
    scenarios = data["scenarios"]
    if name not in scenarios:
        raise ValueError(f"scenario {name!r}: unknown (valid: {', '.join(sorted(scenarios))})")
    spec = scenarios[name]
    types: Sequence[str] = spec["jobs"]
    n = len(types)
    jobs = tuple(job_type(t, data, job_id=f"{t}{i}") for i, t in enumerate(types))
    for key in ("rollout_node", "train_node", "train_gpus_in_group"):
        if key in spec and len(spec[key]) != n:
            raise ValueError(f"scenario {name!r}: {key} needs {n} entries, got {len(spec[key])}")
    train_gpus = spec.get("train_gpus_in_group") or [job.train_gpus for job in jobs]
    resolved_jobs: list[ResolvedJob] = []
    ratios: list[float] = []
    for job, gpus in zip(jobs, train_gpus, strict=True):
        resolved_jobs.append(resolve(job, hw))
        # The modelled rollout (given times aside) on the job's in-group training GPUs
        # over on its own rollout GPUs (the roofline of rollmux.phasetimes.rollout_time_s).
        modelled = replace(job, rollout_s=None, rollout_max_s=None)
        moved = replace(modelled, rollout_gpu_type=job.train_gpu_type, rollout_gpus=gpus)
        try:
            ratios.append(resolve(moved, hw).times.rollout_s
                          / resolve(modelled, hw).times.rollout_s)
        except ValueError:  # the rollout does not fit there: no ideal co-location
            ratios.append(math.nan)
    resolved = tuple(resolved_jobs)
    solo = tuple(r.phases for r in resolved)
    members = []
    for r, phases, r_nodes, t_nodes, gpus in zip(
        resolved, solo, spec["rollout_node"], spec["train_node"], train_gpus, strict=True
    ):
        # Training is compute-bound: its time scales inversely with the GPUs it gets.
        scale = phases.train_gpus / gpus
        in_group = phases.with_train(gpus, scale)
        members.append(
            GroupJob(
                phases=in_group,
                rollout_nodes=tuple(r_nodes),
                train_nodes=tuple(t_nodes),
                slo=r.slo,
                rollout_mem_gb_per_node=r.rollout_mem_gb,
                train_mem_gb_per_node=r.train_mem_gb,
                job_id=r.job_id,
            )
        )
    group = CoExecutionGroup(
        jobs=tuple(members),
        rollout_node_ids=tuple(spec["rollout_nodes"]),
        train_node_ids=tuple(spec["train_nodes"]),
        # The group's nodes are of its jobs' GPU types, priced as resolved.
        pools=resolved[0].pools,
        node_capacity=NodeCapacity(resolved[0].gpus_per_node, resolved[0].host_mem_gb),
    )
    return Scenario(name, str(spec.get("description", "")).strip(), jobs, solo, group, resolved,
                    tuple(ratios))


def scenario_table(
    names: Sequence[str] = SCENARIOS,
    hw: Hardware | None = None,
    definitions: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Closed-form comparison of each scenario's group with Solo-D, veRL and the fluid bound."""
    hw = hw or load_hardware()
    pools = pools_from_hardware(hw)
    rows: list[dict[str, Any]] = []
    for name in names:
        sc = build_scenario(name, hw, definitions)
        m = sc.group.metrics()
        # Normalise by each job's Solo-D time on the GPUs it asked for (not its in-group
        # phases, which may run on fewer training GPUs), like the Solo-D and veRL rows.
        solo_s = [p.solo_iteration_s for p in sc.solo_phases]
        woven = FleetCost(
            iterations_per_h=m.iterations_per_h,
            cost_usd_per_h=m.cost_usd_per_h,
            normalised_throughput=sum(t / m.meta_iteration_s for t in solo_s),
        )
        fleets = {
            "rollmux": (woven, m),
            "solo-d": (solo_d_fleet(list(sc.solo_phases), pools), None),
            "verl": (verl_fleet(list(sc.solo_phases), pools), None),
        }
        ours = fleets["rollmux"][0].normalised_throughput_per_usd_h
        job_names = "+".join(j.job_id for j in sc.jobs)
        gpus = {
            "rollmux": (
                len(sc.group.rollout_node_ids) * hw.node.gpus_per_node,
                len(sc.group.train_node_ids) * hw.node.gpus_per_node,
            ),
            "solo-d": (sum(p.rollout_gpus for p in sc.solo_phases),
                       sum(p.train_gpus for p in sc.solo_phases)),
            "verl": (0, sum(p.train_gpus for p in sc.solo_phases)),
        }
        for system, (fleet, metrics) in fleets.items():
            per_k = 1000.0 * fleet.normalised_throughput_per_usd_h
            rows.append({
                "scenario": name,
                "system": system,
                "jobs": job_names,
                "h20_gpus": gpus[system][0],
                "h800_gpus": gpus[system][1],
                "cost_usd_per_h": fleet.cost_usd_per_h,
                "normalised_throughput": fleet.normalised_throughput,
                "throughput_per_kusd_h": per_k,
                "rollmux_gain": ours / fleet.normalised_throughput_per_usd_h,
                "rollout_utilisation": metrics.rollout_utilisation if metrics else None,
                "train_utilisation": metrics.train_utilisation if metrics else None,
                # Table 4's measure: against each job alone on its in-group GPUs.
                "max_slowdown": max(m.slowdown) if metrics else 1.0,
                "meta_iteration_s": metrics.meta_iteration_s if metrics else None,
                "t_cycle_s": metrics.t_cycle_s if metrics else None,
                "t_load_s": metrics.t_load_s if metrics else None,
                "status": str(metrics.status) if metrics else "",
            })
        fluid = fluid_cost_usd_per_h(list(sc.solo_phases), pools)
        n = float(len(sc.jobs))
        rows.append({
            "scenario": name,
            "system": "fluid-bound",
            "jobs": job_names,
            "cost_usd_per_h": fluid,
            "normalised_throughput": n,
            "throughput_per_kusd_h": 1000.0 * n / fluid,
            "rollmux_gain": ours / (n / fluid),
            "max_slowdown": 1.0,
        })
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def gantt_phases(
    job_types: Sequence[str] = ("A", "A"),
    iterations: int = 3,
    hw: Hardware | None = None,
    definitions: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Per-phase timelines of jobs run Solo-D and woven on one node per pool (Fig. 1).

    Solo-D gives each job its own rollout and training node (its phases: rollout, then
    training plus sync); woven pins all jobs to rollout node 0 and training node 0 and
    runs the round-robin meta-iteration with warm switches (the group model's effective
    phases). Both are executed by the event simulation; a ``layout`` column tells them
    apart.
    """
    from rollmux.schedule.eventsim import simulate, to_frame
    from rollmux.schedule.graph import round_robin_schedule

    hw = hw or load_hardware()
    data = definitions or load_microbench()
    jobs = [job_type(t, data, job_id=f"{t}{i}") for i, t in enumerate(job_types)]
    phases = [resolve(job, hw).phases for job in jobs]
    n = len(jobs)
    solo = round_robin_schedule(
        [p.rollout_s for p in phases],
        [p.train_s + p.sync_s for p in phases],
        rollout_node=list(range(n)),
        train_node=list(range(n)),
    )
    group = CoExecutionGroup(
        jobs=tuple(GroupJob(phases=p, rollout_nodes=(0,), train_nodes=(0,)) for p in phases),
        rollout_node_ids=(0,),
        train_node_ids=(0,),
        pools=pools_from_hardware(hw),
        node_capacity=node_capacity_from_hardware(hw),
    )
    rollout, train = group.effective_phases_s()
    woven = round_robin_schedule(rollout, train)
    frames = []
    for layout, schedule in (("solo-d", solo), ("woven", woven)):
        frame = to_frame(simulate(schedule, iterations))
        frame.insert(0, "layout", layout)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
