"""``timeslice``: one pool of training-class GPUs time-sliced across jobs (docs/designs.md).

A *slice* is a set of whole training-GPU nodes (H800 by default) that every job of the
slice holds: each job's rollout and training run on those GPUs (co-located, as veRL),
one phase at a time per GPU, and the GPUs are handed over at phase boundaries, first
come first served (llm-d's cooperative acquire/yield). A hand-over pays the restore of
the incoming phase's state (the warm switch of the phase model) and the snapshot of the
outgoing one (the same state over the same PCIe link, without the wake-up constant).

Admission packs an arriving job into an existing slice only when every member's SLO
holds at the slice's exact steady-state period (worst-case phase times, max-plus, the
machinery RollMux admits with); otherwise it opens a new slice of the job's own
training-node count (Δ = their price). Ties: the slice left with the least slack.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rollmux.closedform import JobPhases, colocated_rollout_s, pools_from_hardware
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
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

__all__ = ["SliceMember", "TimeslicePolicy", "slice_member", "slice_period_s"]

#: Relative tolerance of the SLO check (as RollMux's exact check).
_SLO_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class SliceMember:
    """A job as a slice plans with it: worst-case phases on the slice's GPUs (seconds).

    ``rollout_s``: its rollout on its training GPUs; ``train_s``: its training;
    ``restore_s``: the warm switch (state in from host DRAM); ``snapshot_s``: the state
    out to host DRAM; ``solo_s``: its synchronous Solo-D time, the SLO's reference.
    """

    rollout_s: float
    train_s: float
    restore_s: float
    snapshot_s: float
    solo_s: float
    slo: float


def snapshot_s(times: PhaseTimes, hw: Hardware) -> float:
    """Seconds to snapshot a phase's state to host DRAM: the warm switch minus its wake-up."""
    return max(0.0, times.warm_switch_s - hw.perf.warm_switch_const_s)


def slice_member(job: RLJob, times: PhaseTimes, hw: Hardware) -> SliceMember:
    """``job`` as a slice member (worst-case phases, the admission's conservative view)."""
    phases = JobPhases(times, job.rollout_gpus, job.train_gpus).worst_case()
    pools = pools_from_hardware(hw, job.rollout_gpu_type, job.train_gpu_type)
    return SliceMember(
        rollout_s=colocated_rollout_s(phases, pools),
        train_s=phases.train_s,
        restore_s=times.warm_switch_s,
        snapshot_s=snapshot_s(times, hw),
        solo_s=times.rollout_max_s + times.train_max_s + times.sync_s,
        slo=job.slo,
    )


def slice_period_s(members: list[SliceMember]) -> float:
    """Exact steady-state period of a slice (every member holds every node of it).

    One node sequence serves every rollout, then every training, once per cycle (the
    order first-come-first-served settles into when every member waits while another
    runs); each phase pays its restore, and with two or more members its snapshot.
    Computed with the max-plus period of the event graph, as RollMux's groups are.
    """
    if not members:
        raise ValueError("a slice holds at least one job")
    shared = len(members) > 1
    rollout = [m.rollout_s + m.restore_s + (m.snapshot_s if shared else 0.0) for m in members]
    train = [m.train_s + m.restore_s + (m.snapshot_s if shared else 0.0) for m in members]
    n = len(members)
    offsets, durations, chains = repeated_layout(rollout, train, [1] * n)
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
            members = [slice_member(p.job, p.times, hw)
                       for p in (snapshot.jobs[j] for j in group.jobs)] + [me]
            period = slice_period_s(members)
            slack = min(m.slo * m.solo_s - period for m in members)
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
