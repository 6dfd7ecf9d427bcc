"""Gavel+ baseline: job-level, heterogeneity-aware static allocation, no phase interleaving.

Gavel (OSDI '20) picks GPU types per job from their measured throughput; adapted to RL
("Gavel+", paper sec. 6.1) each job gets its own static allocation and the phases of
different jobs never interleave. The allocation space, for each job:

* rollout GPU type in ``rollout_gpu_types`` (default: every GPU type of the hardware,
  i.e. {H20, H800}) x rollout nodes in ``node_counts`` (default {1, 2, 4});
* training on the job's training GPU type x training nodes in ``node_counts``;
* plus the job's own request (so a feasible allocation always exists).

Phase times of an allocation are the job's phase times rescaled by the hardware model:
each of expected/worst-case rollout and training is multiplied by the model's time on
the new allocation over the model's time on the requested one (so times given directly
on the job keep their meaning); sync comes from the model for the new allocation. An
allocation whose model cannot run (too few GPUs for the tensor parallelism, host memory)
is skipped. The chosen allocation is the cheapest per hour whose worst-case iteration
(``rollout_max + train_max + sync``) is within the job's SLO times its worst-case solo
iteration on the requested GPUs; ties: fewer nodes, then shorter iteration, then the
enumeration order above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob, resolve
from rollmux.phasetimes import PhaseTimes
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    admissible_profile,
    new_group_placement,
    node_price_usd_per_h,
    rejected,
)
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind

__all__ = ["GavelPlusPolicy", "rescaled_times"]

REL_TOL = 1e-9
_MODEL_FIELDS = ("rollout_s", "train_s", "rollout_max_s", "train_max_s", "rollout_mem_gb_per_node",
                 "train_mem_gb_per_node")


def _modelled(job: RLJob) -> RLJob:
    """The job with every directly given phase time and memory cleared (model values)."""
    cleared: dict[str, Any] = dict.fromkeys(_MODEL_FIELDS)
    return replace(job, **cleared)


def rescaled_times(reference: PhaseTimes, model_ref: PhaseTimes, model_new: PhaseTimes,
                   sync_given: bool) -> PhaseTimes:
    """``reference`` scaled by the model's new/requested ratio per phase (sync from the model)."""
    def scale(name: str) -> float:
        return getattr(reference, name) * getattr(model_new, name) / getattr(model_ref, name)

    rollout_s, train_s = scale("rollout_s"), scale("train_s")
    return PhaseTimes(
        rollout_s=rollout_s,
        train_s=train_s,
        sync_s=reference.sync_s if sync_given else model_new.sync_s,
        sync_flat_s=max(model_new.sync_flat_s, reference.sync_s if sync_given else 0.0),
        warm_switch_s=model_new.warm_switch_s,
        cold_switch_s=model_new.cold_switch_s,
        rollout_max_s=max(scale("rollout_max_s"), rollout_s),
        train_max_s=max(scale("train_max_s"), train_s),
    )


class GavelPlusPolicy(PlacementPolicy):
    """The cheapest static per-job allocation meeting the job's SLO; no sharing."""

    name = "gavel-plus"
    options = frozenset({"node_counts", "rollout_gpu_types"})
    shares_nodes = False

    def __init__(
        self,
        node_counts: Sequence[int] = (1, 2, 4),
        rollout_gpu_types: Sequence[str] | None = None,
    ) -> None:
        """Set the allocation space (node counts per pool, rollout GPU types)."""
        counts = tuple(node_counts)
        if not counts or any(isinstance(c, bool) or not isinstance(c, int) or c < 1
                             for c in counts):
            raise ValueError(f"node_counts must be integers >= 1, got {node_counts!r}")
        self.node_counts = counts
        self.rollout_gpu_types = None if rollout_gpu_types is None else tuple(rollout_gpu_types)

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Enumerate the allocation space; keep the cheapest SLO-feasible allocation."""
        hw = snapshot.hw
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        gpn = hw.node.gpus_per_node
        types = tuple(hw.gpus) if self.rollout_gpu_types is None else self.rollout_gpu_types
        for gpu_type in types:
            hw.gpu(gpu_type)  # unknown names raise ValueError listing the valid ones
        budget = job.slo * profile.times.solo_iteration_max_s * (1.0 + REL_TOL)
        ref_model = resolve(_modelled(job), hw).times
        allocations = [(job.rollout_gpu_type, profile.rollout_nodes, profile.train_nodes)]
        allocations += [(t, a, b) for t in types for a in self.node_counts
                        for b in self.node_counts]
        best: tuple[tuple[float, int, float, int], ResolvedJob, str] | None = None
        for index, (r_type, n_r, n_t) in enumerate(allocations):
            candidate = replace(_modelled(job), rollout_gpu_type=r_type, rollout_gpus=n_r * gpn,
                                train_gpus=n_t * gpn)
            try:
                model = resolve(candidate, hw)
            except ValueError:
                continue
            times = rescaled_times(profile.times, ref_model, model.times, job.sync_s is not None)
            if times.solo_iteration_max_s > budget:
                continue
            mem_r = job.rollout_mem_gb_per_node or model.rollout_mem_gb
            mem_t = job.train_mem_gb_per_node or model.train_mem_gb
            if max(mem_r, mem_t) > hw.node.host_mem_gb:
                continue
            cost = n_r * node_price_usd_per_h(hw, r_type) + n_t * node_price_usd_per_h(
                hw, job.train_gpu_type
            )
            key = (cost, n_r + n_t, times.solo_iteration_max_s, index)
            if best is None or key < best[0]:
                # The job as allocated: the candidate's shape and GPU types, its times.
                alloc = replace(replace(model, job=job).with_times(times),
                                rollout_mem_gb=mem_r, train_mem_gb=mem_t)
                best = (key, alloc, r_type)
        if best is None:
            return rejected(job, f"job {job.job_id!r}: no allocation meets its SLO")
        _, alloc, r_type = best
        return new_group_placement(
            job,
            alloc,
            snapshot,
            kind=GroupKind.DEDICATED,
            rollout_gpu_type=r_type,
            meta_iteration_s=alloc.times.solo_iteration_s,
        )
