"""``timeslice``: one pool of training-class GPUs time-sliced across jobs (docs/designs.md).

A *slice* is a set of whole training-GPU nodes (H800 by default) that every job of the
slice holds: each job's rollout and training run on those GPUs (co-located, as veRL),
one phase at a time per GPU, and the GPUs are handed over at phase boundaries, first
come first served (llm-d's cooperative acquire/yield). What a phase pays is the one
switch model of every design (:func:`rollmux.model.cycle.member_phases_s`): a co-located
phase's warm switch (its state restored from host DRAM), and, when the slice holds
another job, the hand-over's snapshot of its state back to host DRAM
(:func:`rollmux.model.cycle.handover_s`).

Admission packs an arriving job into an existing slice only when every member's SLO
holds at the slice's exact steady-state period (worst-case phase times, max-plus, the
machinery RollMux admits with); otherwise it opens a new slice of the job's own
training-node count (Δ = their price). Ties: the slice left with the least slack.
"""

from __future__ import annotations

import math
from dataclasses import replace

from rollmux.closedform import JobPhases, colocated_rollout_s, pools_from_hardware
from rollmux.group import GroupJob
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model.cycle import handover_s
from rollmux.phasetimes import PhaseTimes
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    check_max_group_size,
    new_group_placement,
    rejected,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind
from rollmux.schedule.graph import order_events, repeated_layout
from rollmux.schedule.maxplus import period_of_event_graph

__all__ = ["TimeslicePolicy", "slice_member", "slice_period_s"]

#: Relative tolerance of the SLO check (as RollMux's exact check).
_SLO_TOL = 1e-9


def slice_member(job: RLJob, times: PhaseTimes, hw: Hardware) -> GroupJob:
    """``job`` as a slice member (worst-case phases, the admission's conservative view).

    A co-located :class:`rollmux.group.GroupJob` on its training GPUs and nodes (every
    member holds every node of the slice): ``phases.times`` has its co-located rollout
    and its training, expected = worst case; ``handover_s`` the snapshot a phase pays at
    a hand-over (:func:`rollmux.model.cycle.handover_s`). Its SLO's reference is its
    synchronous Solo-D time, ``times.solo_iteration_max_s`` of the ``times`` given.
    """
    phases = JobPhases(times, job.rollout_gpus, job.train_gpus).worst_case()
    pools = pools_from_hardware(hw, job.rollout_gpu_type, job.train_gpu_type)
    rollout = colocated_rollout_s(phases, pools)
    nodes = tuple(range(math.ceil(job.train_gpus / hw.node.gpus_per_node)))
    return GroupJob(
        JobPhases(replace(times, rollout_s=rollout, rollout_max_s=rollout,
                          train_s=phases.train_s, train_max_s=phases.train_s),
                  job.train_gpus, job.train_gpus),
        nodes, nodes, slo=job.slo, job_id=job.job_id, colocated=True,
        handover_s=handover_s(times, hw.perf.warm_switch_const_s),
    )


def slice_period_s(members: list[GroupJob]) -> float:
    """Exact steady-state period of a slice (every member holds every node of it).

    One node sequence serves every rollout, then every training, once per cycle (the
    order first-come-first-served settles into when every member waits while another
    runs); each phase holds the nodes for its effective phase
    (:meth:`rollmux.group.GroupJob.effective_phases_s`: its switch, and with two or more
    members its hand-over). Computed with the max-plus period of the event graph, as
    RollMux's groups are.
    """
    if not members:
        raise ValueError("a slice holds at least one job")
    shared = len(members) > 1
    phases = [m.effective_phases_s(rollout_shared=shared, train_shared=shared)
              for m in members]
    n = len(members)
    offsets, durations, chains = repeated_layout([r for r, _ in phases],
                                                 [t for _, t in phases], [1] * n)
    sequence = order_events(offsets, range(n), False) + order_events(offsets, range(n), True)
    return period_of_event_graph(durations, chains, [0.0] * n, [sequence])


class TimeslicePolicy(PlacementPolicy):
    """Pack jobs into co-located slices of training GPUs when every member's SLO holds."""

    name = "timeslice"
    options = frozenset({"max_group_size"})
    shares_nodes = True

    def __init__(self, max_group_size: int = 5) -> None:
        """``max_group_size``: most jobs per slice."""
        self.max_group_size = check_max_group_size(max_group_size)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Join the fullest slice whose members all keep their SLO, else a new slice."""
        hw = snapshot.hw
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        # Both phases' state is snapshotted to the host DRAM of the slice's nodes.
        resident = profile.train_mem_gb + profile.rollout_mem_gb
        if resident > hw.node.host_mem_gb:
            return rejected(job, f"job {job.job_id!r} needs {resident:g} GB of host memory per "
                                 f"node for its rollout and training state, more than a node "
                                 f"holds ({hw.node.host_mem_gb:g} GB)")
        # As the slice holds it: no rollout node, both phases' state on its training nodes.
        slice_profile = replace(profile, rollout_nodes=0, rollout_mem_gb=0.0,
                                train_mem_gb=resident)
        me = slice_member(job, profile.times, hw)
        my_solo = profile.times.solo_iteration_max_s
        best: tuple[float, int, str] | None = None
        best_period = 0.0
        for group in snapshot.groups.values():
            if group.kind is not GroupKind.TIMESLICE or len(group.jobs) >= self.max_group_size:
                continue
            nodes = [snapshot.nodes[n] for n in group.train_nodes]
            if (len(nodes) != profile.train_nodes
                    or any(n.gpu_type != job.train_gpu_type or not n.fits(resident)
                           for n in nodes)):
                continue
            placed = [snapshot.jobs[j] for j in group.jobs]
            members = [slice_member(p.job, p.times, hw) for p in placed] + [me]
            solos = [p.times.solo_iteration_max_s for p in placed] + [my_solo]
            period = slice_period_s(members)
            slack = min(m.slo * solo - period for m, solo in zip(members, solos, strict=True))
            if slack < -_SLO_TOL * period:
                continue
            key = (slack, group.serial, group.group_id)
            if best is None or key < best:
                best, best_period = key, period
        if best is not None:
            group = snapshot.groups[best[2]]
            return Placement(
                job=job,
                strategy=Strategy.DIRECT_PACKING,
                group_id=group.group_id,
                train_nodes=group.train_nodes,
                group_kind=GroupKind.TIMESLICE,
                profile=slice_profile,
                meta_iteration_s=best_period,
            )
        return new_group_placement(
            job, slice_profile, snapshot, kind=GroupKind.TIMESLICE, rollout_nodes=0,
            meta_iteration_s=slice_period_s([me]))
