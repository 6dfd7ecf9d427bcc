"""A job resolved on a hardware: everything the layers above read of ``(RLJob, Hardware)``.

:func:`resolve` is the one place the hardware meets a job: it derives the rollout shape,
the response-length distribution, the phase times (:func:`rollmux.phasetimes.phase_times`),
the nodes and host memory per node of each pool, the GPU types (as :class:`PoolSpec`) and
the rollout constants the phase sampler needs. Closed forms, the group model, placement,
the sampler and the simulators take the :class:`ResolvedJob`, never ``(job, hw)`` again.

Jobs equal in every field that changes phase times or memory (all but id, SLO, arrival,
iterations and workload label) share the derived values: the phase model costs
milliseconds per job, a trace holds thousands of jobs of a few shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from rollmux.closedform import JobPhases, PoolSpec
from rollmux.hardware import GB, Hardware
from rollmux.jobs import ResponseLengthDist, RLJob
from rollmux.memo import Memo
from rollmux.phasetimes import (
    PhaseTimes,
    RolloutShape,
    phase_times,
    resolved_prompt_tokens,
    resolved_prompts_per_iter,
    response_length_dist,
    responses_per_iter,
    rollout_mem_gb_per_node,
    rollout_shape,
    train_mem_gb_per_node,
)

__all__ = ["ResolvedJob", "resolve"]


@dataclass(frozen=True, slots=True)
class ResolvedJob:
    """One job on one hardware: its record and every value derived from the pair.

    ``times``: expected and worst-case phase times on the job's own GPUs;
    ``rollout_nodes``/``train_nodes``: nodes per pool; ``*_mem_gb``: host memory its
    resident state takes on each node of the pool; ``pools``: its rollout and training
    GPU types as priced; ``lengths``: its response-length distribution (None when the
    defaults cannot give one: ``lengths_error`` says why, and only the sampler needs it);
    ``rollout_fixed_s`` (prefill and tool latency) and the KV constants are the
    length-independent parts of the rollout model the sampler draws with.
    """

    job: RLJob
    times: PhaseTimes
    shape: RolloutShape
    pools: PoolSpec
    gpus_per_node: int
    host_mem_gb: float
    rollout_nodes: int
    train_nodes: int
    rollout_mem_gb: float
    train_mem_gb: float
    responses_per_iter: int
    prompt_tokens: int
    rollout_fixed_s: float
    kv_bytes_per_token: float
    kv_capacity_bytes: float
    nvlink_bytes_per_s: float
    intra_bytes_per_s: float
    lengths: ResponseLengthDist | None
    lengths_error: str = ""
    #: ``times`` with the GPU counts, as the closed forms and the group model take them,
    #: expected and worst case (built once; :meth:`with_times` rebuilds them).
    phases: JobPhases = None  # type: ignore[assignment]
    worst_phases: JobPhases = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        """Build the closed-form phases of ``times`` unless they were given."""
        if self.phases is None:
            phases = JobPhases(self.times, self.job.rollout_gpus, self.job.train_gpus)
            object.__setattr__(self, "phases", phases)
            object.__setattr__(self, "worst_phases", phases.worst_case())

    @property
    def job_id(self) -> str:
        """The job's id."""
        return self.job.job_id

    @property
    def slo(self) -> float:
        """The job's SLO (largest slowdown versus solo)."""
        return self.job.slo

    @property
    def rollout_gpus(self) -> int:
        """GPUs of its rollout."""
        return self.job.rollout_gpus

    @property
    def train_gpus(self) -> int:
        """GPUs of its training."""
        return self.job.train_gpus

    def length_dist(self) -> ResponseLengthDist:
        """The response-length distribution; ValueError when the defaults cannot give one."""
        if self.lengths is None:
            raise ValueError(self.lengths_error)
        return self.lengths

    def with_times(self, times: PhaseTimes) -> ResolvedJob:
        """The same job with other phase times (e.g. training on its in-group GPUs)."""
        phases = JobPhases(times, self.job.rollout_gpus, self.job.train_gpus)
        return replace(self, times=times, phases=phases, worst_phases=phases.worst_case())

    def admission_phases(self, worst_case: bool) -> JobPhases:
        """The phases placement plans with: worst case (max tokens) or expected."""
        return self.worst_phases if worst_case else self.phases


# Fields of RLJob that do not change phase times or memory: jobs equal on all the
# others share one resolution (the phase model costs ~4 ms per call).
_FREE_FIELDS = frozenset({"job_id", "slo", "arrival_s", "iterations", "workload"})
_SHAPE_FIELDS = tuple(f.name for f in fields(RLJob) if f.name not in _FREE_FIELDS)
_RESOLVED: Memo[tuple[Hardware, tuple[Any, ...]], ResolvedJob] = Memo(
    "rollmux.model.resolved.resolve", 50_000)


def resolve(job: RLJob, hw: Hardware) -> ResolvedJob:
    """``job`` resolved on ``hw`` (memoised on the fields that matter).

    Raises ValueError (from the phase model) when the job cannot run on its GPUs, e.g. an
    unknown GPU type or too few GPUs for its model's tensor parallelism.
    """
    key = (hw, tuple(getattr(job, name) for name in _SHAPE_FIELDS))
    hit = _RESOLVED.get(key)
    if hit is None:
        hit = _RESOLVED.put(key, _resolve(job, hw))
    return hit if hit.job is job else replace(hit, job=job)


def _resolve(job: RLJob, hw: Hardware) -> ResolvedJob:
    """Every derived value of ``job`` on ``hw`` (uncached)."""
    times = phase_times(job, hw)
    shape = rollout_shape(job, hw)
    gpu = hw.gpu(job.rollout_gpu_type)
    pools = PoolSpec(rollout=gpu, train=hw.gpu(job.train_gpu_type),
                     colocated_rollout_speedup=hw.perf.colocated_rollout_speedup)
    gpn = hw.node.gpus_per_node
    perf = hw.perf
    prompt_tokens = resolved_prompt_tokens(job, hw)
    # Length-independent rollout time: prefill of each prompt once, tool latency per turn.
    flops = shape.tensor_parallel * gpu.bf16_tflops * 1e12 * perf.prefill_mfu
    prompts = resolved_prompts_per_iter(job, hw) / shape.replicas
    prefill_s = 2.0 * job.model_size_b * 1e9 * prompts * float(prompt_tokens) / flops
    fixed_s = prefill_s + (job.turns - 1) * hw.workload.tool_latency_s_per_turn
    weights = perf.weight_bytes_per_param * job.model_size_b * 1e9
    try:
        lengths: ResponseLengthDist | None = response_length_dist(job, hw)
        error = ""
    except ValueError as exc:
        lengths, error = None, str(exc)
    return ResolvedJob(
        job=job,
        times=times,
        shape=shape,
        pools=pools,
        gpus_per_node=gpn,
        host_mem_gb=hw.node.host_mem_gb,
        rollout_nodes=math.ceil(job.rollout_gpus / gpn),
        train_nodes=math.ceil(job.train_gpus / gpn),
        rollout_mem_gb=rollout_mem_gb_per_node(job, hw),
        train_mem_gb=train_mem_gb_per_node(job, hw),
        responses_per_iter=responses_per_iter(job, hw),
        prompt_tokens=prompt_tokens,
        rollout_fixed_s=fixed_s,
        kv_bytes_per_token=perf.kv_kb_per_token_per_b * 1e3 * job.model_size_b,
        kv_capacity_bytes=shape.tensor_parallel * gpu.hbm_gb * GB * perf.rollout_hbm_utilization
        - weights,
        # One node: replicas exchange KV over NVLink (per receiving GPU); several nodes:
        # the intra-cluster fabric of the receiving node.
        nvlink_bytes_per_s=hw.node.nvlink_gbps * GB,
        intra_bytes_per_s=hw.network.intra_bytes_per_s,
        lengths=lengths,
        lengths_error=error,
    )
