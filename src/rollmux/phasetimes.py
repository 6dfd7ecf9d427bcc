"""Analytical phase-time model of an RL job: rollout, training, sync, switches, memory.

Every equation is written out in docs/model.md with the paper section it
comes from. Expected times use the job's response-length distribution; worst-case
times (``*_max_s``, used for admission, paper sec. 3) put every response at the
maximum length. Values given directly on the job override the model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from rollmux.hardware import GB, Hardware
from rollmux.jobs import ResponseLengthDist, RLJob, length_dist

__all__ = [
    "FLAT_SYNC_COPIES",
    "PhaseTimes",
    "RolloutShape",
    "SwitchTimes",
    "SyncTimes",
    "phase_times",
    "resolved_mean_response_tokens",
    "resolved_prompt_tokens",
    "resolved_prompts_per_iter",
    "resolved_responses_per_prompt",
    "resolved_sigma",
    "response_length_dist",
    "responses_per_iter",
    "rollout_mem_gb_per_node",
    "rollout_shape",
    "rollout_time_ratio",
    "rollout_time_s",
    "switch_times",
    "sync_times",
    "train_mem_gb_per_node",
    "train_time_s",
]


@dataclass(frozen=True)
class PhaseTimes:
    """Per-iteration phase durations of one job (seconds)."""

    rollout_s: float
    train_s: float
    sync_s: float  # topology-aware (RollMux)
    sync_flat_s: float  # every rollout GPU pulls a full copy (veRL-style)
    warm_switch_s: float
    cold_switch_s: float
    rollout_max_s: float
    train_max_s: float

    def __post_init__(self) -> None:
        """Check non-negative finite times and worst case >= expected, cold >= warm."""
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, float | int) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
        for lo, hi in (
            ("rollout_s", "rollout_max_s"),
            ("train_s", "train_max_s"),
            ("warm_switch_s", "cold_switch_s"),
        ):
            if getattr(self, hi) < getattr(self, lo):
                raise ValueError(f"{hi} must be >= {lo} ({getattr(self, lo)!r}), got "
                                 f"{getattr(self, hi)!r}")

    @property
    def solo_iteration_s(self) -> float:
        """Expected iteration time alone: rollout + training + topology-aware sync."""
        return self.rollout_s + self.train_s + self.sync_s

    @property
    def solo_iteration_max_s(self) -> float:
        """Worst-case iteration time alone (every response at max length)."""
        return self.rollout_max_s + self.train_max_s + self.sync_s


@dataclass(frozen=True)
class RolloutShape:
    """How a job's rollout is laid out: tensor-parallel degree, replicas, nodes."""

    tensor_parallel: int
    replicas: int
    nodes: int


#: Readings of flat (veRL) sync: one model copy over the cross link per rollout ``gpu``
#: (§6.3: "veRL redundantly fetches independent copies for each rollout GPU"; the default)
#: or per rollout ``replica`` (tensor-parallel group; our earlier reading).
FLAT_SYNC_COPIES = ("gpu", "replica")


@dataclass(frozen=True)
class SyncTimes:
    """Weight-sync time of one iteration, flat (veRL-style) and topology-aware."""

    flat_s: float
    topology_s: float
    cross_copy_s: float  # one model copy over the cross-cluster link
    intra_s: float  # the intra-cluster all-gather after the cross step


@dataclass(frozen=True)
class SwitchTimes:
    """Time to bring a phase's state onto its GPUs, warm (host DRAM) or cold."""

    rollout_warm_s: float
    rollout_cold_s: float
    train_warm_s: float
    train_cold_s: float



# --------------------------------------------------------------------------- workload


def resolved_mean_response_tokens(job: RLJob, hw: Hardware) -> float:
    """The job's mean response length, or the workload default fraction of the maximum."""
    if job.mean_response_tokens is not None:
        return job.mean_response_tokens
    return hw.workload.mean_response_fraction * job.max_response_tokens


def resolved_sigma(job: RLJob, hw: Hardware) -> float:
    """The lognormal shape of the job's response lengths, or the workload default."""
    if job.response_len_sigma is not None:
        return job.response_len_sigma
    return hw.workload.response_len_sigma


def resolved_prompt_tokens(job: RLJob, hw: Hardware) -> int:
    """The job's prompt length in tokens, or the workload default."""
    return job.prompt_tokens if job.prompt_tokens is not None else hw.workload.prompt_tokens


def resolved_prompts_per_iter(job: RLJob, hw: Hardware) -> int:
    """The job's prompts per iteration, or the workload default."""
    if job.prompts_per_iter is not None:
        return job.prompts_per_iter
    return hw.workload.prompts_per_iter


def resolved_responses_per_prompt(job: RLJob, hw: Hardware) -> int:
    """The job's responses sampled per prompt, or the workload default."""
    if job.responses_per_prompt is not None:
        return job.responses_per_prompt
    return hw.workload.responses_per_prompt


def responses_per_iter(job: RLJob, hw: Hardware) -> int:
    """Number of responses the job generates per iteration (prompts x responses per prompt)."""
    return resolved_prompts_per_iter(job, hw) * resolved_responses_per_prompt(job, hw)


def response_length_dist(job: RLJob, hw: Hardware) -> ResponseLengthDist:
    """The response-length distribution of ``job`` (defaults from ``hw.workload``)."""
    mean = resolved_mean_response_tokens(job, hw)
    if job.mean_response_tokens is None and mean <= 1.0:
        # The default mean is a fraction of the maximum; it must stay above one token.
        raise ValueError(
            f"max_response_tokens={job.max_response_tokens} is too small for the default mean "
            f"fraction {hw.workload.mean_response_fraction}; give mean_response_tokens"
        )
    return length_dist(float(job.max_response_tokens), mean, resolved_sigma(job, hw))


def _params(job: RLJob) -> float:
    """Number of model parameters."""
    return job.model_size_b * 1e9


def _weight_bytes(job: RLJob, hw: Hardware) -> float:
    """Bytes of one full copy of the BF16 weights."""
    return hw.perf.weight_bytes_per_param * _params(job)


def rollout_shape(job: RLJob, hw: Hardware) -> RolloutShape:
    """Tensor-parallel degree (smallest power of two whose weight shard fits the HBM share).

    Raises ValueError when the job has too few rollout GPUs for that degree.
    """
    gpu = hw.gpu(job.rollout_gpu_type)
    budget_bytes = hw.perf.rollout_weight_hbm_fraction * gpu.hbm_gb * GB
    weights = _weight_bytes(job, hw)
    tp = 1
    while weights / tp > budget_bytes:
        tp *= 2
    if tp > job.rollout_gpus:
        raise ValueError(
            f"rollout_gpus={job.rollout_gpus} is too few for a {job.model_size_b:g}B model on "
            f"{gpu.name}: its weights need tensor parallelism {tp}"
        )
    nodes = math.ceil(job.rollout_gpus / hw.node.gpus_per_node)
    return RolloutShape(tensor_parallel=tp, replicas=job.rollout_gpus // tp, nodes=nodes)


def rollout_time_s(job: RLJob, hw: Hardware, *, worst_case: bool = False) -> float:
    """Modelled rollout duration (expected, or worst case with every response at max length).

    Decode is a roofline over a replica: the larger of HBM traffic (weights once per step,
    plus every KV-cache read) over bandwidth x decode efficiency, and 2 x params FLOPs per
    generated token over peak x decode MFU. The step count is tail-bound: at least the
    expected longest response of the batch, or the KV-capacity-limited step count.
    """
    gpu = hw.gpu(job.rollout_gpu_type)
    shape = rollout_shape(job, hw)
    perf = hw.perf
    params = _params(job)
    weights = _weight_bytes(job, hw)
    prompt = float(resolved_prompt_tokens(job, hw))
    n_seq = responses_per_iter(job, hw) / shape.replicas
    n_prompts = resolved_prompts_per_iter(job, hw) / shape.replicas
    if worst_case:
        length = longest = float(job.max_response_tokens)
        length_sq = length**2
    else:
        dist = response_length_dist(job, hw)
        length = dist.mean()
        length_sq = dist.moment(2)
        longest = dist.expected_max(responses_per_iter(job, hw))
    kv_bytes_per_token = perf.kv_kb_per_token_per_b * 1e3 * job.model_size_b
    kv_capacity = shape.tensor_parallel * gpu.hbm_gb * GB * perf.rollout_hbm_utilization - weights
    # A sequence's KV footprint grows linearly, so its time-averaged size is p + E[L^2]/(2E[L]).
    avg_footprint = kv_bytes_per_token * (prompt + length_sq / (2.0 * length))
    concurrency = min(n_seq, max(1.0, kv_capacity / avg_footprint))
    tokens = n_seq * length
    steps = max(longest, tokens / concurrency)
    kv_read_bytes = n_seq * kv_bytes_per_token * (prompt * length + length_sq / 2.0)
    bandwidth = shape.tensor_parallel * gpu.hbm_bw_gbps * GB * perf.decode_efficiency
    memory_s = (steps * weights + kv_read_bytes) / bandwidth
    flops = shape.tensor_parallel * gpu.bf16_tflops * 1e12
    compute_s = 2.0 * params * tokens / (flops * perf.decode_mfu)
    # Responses to one prompt share its prefix, so each prompt is prefilled once.
    prefill_s = 2.0 * params * n_prompts * prompt / (flops * perf.prefill_mfu)
    tool_s = (job.turns - 1) * hw.workload.tool_latency_s_per_turn
    return prefill_s + max(memory_s, compute_s) + tool_s


def rollout_time_ratio(job: RLJob, hw: Hardware, gpu_type: str, gpus: int) -> float:
    """Modelled expected rollout time on ``gpus`` GPUs of ``gpu_type`` over that on the job's own.

    Both times come from the roofline of :func:`rollout_time_s` (memory traffic or compute,
    whichever is slower, with the tensor-parallel degree and KV capacity of each GPU type),
    so a rollout that is compute-bound on H20 speeds up on H800 while a memory-bound one
    follows the HBM bandwidths. Phase times given directly on the job are scaled by this.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus must be an integer >= 1, got {gpus!r}")
    moved = replace(job, rollout_gpu_type=gpu_type, rollout_gpus=gpus)
    return rollout_time_s(moved, hw) / rollout_time_s(job, hw)


def train_time_s(job: RLJob, hw: Hardware, *, worst_case: bool = False) -> float:
    """Modelled training duration: k x params x tokens / (GPUs x peak x MFU), k = 6.

    Tokens are prompt plus generated tokens of the iteration (expected, or all at max).
    """
    gpu = hw.gpu(job.train_gpu_type)
    length = float(job.max_response_tokens) if worst_case else response_length_dist(job, hw).mean()
    tokens = responses_per_iter(job, hw) * (resolved_prompt_tokens(job, hw) + length)
    flops = job.train_gpus * gpu.bf16_tflops * 1e12 * hw.perf.train_mfu
    return hw.perf.train_flops_per_param_token * _params(job) * tokens / flops


def sync_times(job: RLJob, hw: Hardware, flat_copies: str = "gpu") -> SyncTimes:
    """Flat versus topology-aware weight sync (paper sec. 5, Fig. 9 and 13).

    Flat: a full copy crosses the cross link for each rollout GPU (``flat_copies="gpu"``,
    the paper's words) or each rollout replica (``"replica"``). Topology-aware: one copy
    crosses as parallel shards, then each rollout node fetches the shards it lacks over
    the intra-cluster fabric and each GPU gathers its tensor-parallel slice over NVLink.
    """
    if flat_copies not in FLAT_SYNC_COPIES:
        raise ValueError(f"flat_copies must be one of {FLAT_SYNC_COPIES}, got {flat_copies!r}")
    shape = rollout_shape(job, hw)
    gpu_check = hw.gpu(job.train_gpu_type)  # unknown training GPU types are errors here too
    del gpu_check
    weights = _weight_bytes(job, hw)
    cross_copy_s = weights / hw.network.cross_bytes_per_s
    missing_fraction = (shape.nodes - 1) / shape.nodes
    intra_s = (
        weights * missing_fraction / hw.network.intra_bytes_per_s
        + weights / shape.tensor_parallel / (hw.node.nvlink_gbps * GB)
    )
    copies = job.rollout_gpus if flat_copies == "gpu" else shape.replicas
    return SyncTimes(
        flat_s=copies * cross_copy_s,
        topology_s=cross_copy_s + intra_s,
        cross_copy_s=cross_copy_s,
        intra_s=intra_s,
    )


def _rollout_state_gb_per_gpu(job: RLJob, hw: Hardware) -> float:
    """Rollout state per GPU: its tensor-parallel shard of the BF16 weights."""
    return _weight_bytes(job, hw) / rollout_shape(job, hw).tensor_parallel / GB


def _train_state_gb_per_gpu(job: RLJob, hw: Hardware) -> float:
    """Training state per GPU: weights, grads and optimizer states sharded over all GPUs."""
    return hw.perf.train_state_bytes_per_param * _params(job) / job.train_gpus / GB


def rollout_mem_gb_per_node(job: RLJob, hw: Hardware) -> float:
    """Host DRAM per rollout node to cache the job's rollout state (job value overrides)."""
    if job.rollout_mem_gb_per_node is not None:
        return job.rollout_mem_gb_per_node
    gpus_here = min(job.rollout_gpus, hw.node.gpus_per_node)
    return _rollout_state_gb_per_gpu(job, hw) * gpus_here


def train_mem_gb_per_node(job: RLJob, hw: Hardware) -> float:
    """Host DRAM per training node to cache the job's training state (job value overrides)."""
    if job.train_mem_gb_per_node is not None:
        return job.train_mem_gb_per_node
    gpus_here = min(job.train_gpus, hw.node.gpus_per_node)
    return _train_state_gb_per_gpu(job, hw) * gpus_here


def switch_times(job: RLJob, hw: Hardware) -> SwitchTimes:
    """Warm (host DRAM over PCIe) and cold (disk + control-plane start) switch per phase."""
    hw.gpu(job.train_gpu_type)
    perf, node = hw.perf, hw.node

    def warm(per_gpu_gb: float) -> float:
        return per_gpu_gb / node.pcie_gbps + perf.warm_switch_const_s

    def cold(per_gpu_gb: float, per_node_gb: float) -> float:
        load_s = per_node_gb / node.disk_gbps + per_gpu_gb / node.pcie_gbps
        return perf.control_plane_start_s + load_s

    roll_gpu = _rollout_state_gb_per_gpu(job, hw)
    train_gpu = _train_state_gb_per_gpu(job, hw)
    roll_node = roll_gpu * min(job.rollout_gpus, node.gpus_per_node)
    train_node = train_gpu * min(job.train_gpus, node.gpus_per_node)
    return SwitchTimes(
        rollout_warm_s=warm(roll_gpu),
        rollout_cold_s=cold(roll_gpu, roll_node),
        train_warm_s=warm(train_gpu),
        train_cold_s=cold(train_gpu, train_node),
    )


def _expected_and_worst(
    given: float | None, given_max: float | None, model: Callable[[bool], float]
) -> tuple[float, float]:
    """A phase's (expected, worst-case) time: given values win, the model fills the rest.

    A modelled value is clamped against a given one so that worst case >= expected.
    """
    expected = model(False) if given is None else given
    worst = max(model(True), expected) if given_max is None else given_max
    if given is None:
        expected = min(expected, worst)
    return expected, worst


def phase_times(job: RLJob, hw: Hardware) -> PhaseTimes:
    """All phase times of ``job`` on ``hw``; times given on the job override the model.

    When only one of an expected/worst-case pair is given, the other is clamped so that
    worst case >= expected (likewise cold >= warm and flat sync >= topology-aware sync).
    """
    roll_s, roll_max_s = _expected_and_worst(
        job.rollout_s, job.rollout_max_s, lambda worst: rollout_time_s(job, hw, worst_case=worst)
    )
    train_s, train_max_s = _expected_and_worst(
        job.train_s, job.train_max_s, lambda worst: train_time_s(job, hw, worst_case=worst)
    )
    sync = sync_times(job, hw)
    sync_s = sync.topology_s if job.sync_s is None else job.sync_s
    switches = switch_times(job, hw)
    warm_s = max(switches.rollout_warm_s, switches.train_warm_s)
    cold_s = max(switches.rollout_cold_s, switches.train_cold_s)
    if job.warm_switch_s is not None:
        warm_s = job.warm_switch_s
        cold_s = max(cold_s, warm_s)
    if job.cold_switch_s is not None:
        cold_s = job.cold_switch_s
        warm_s = min(warm_s, cold_s)
    return PhaseTimes(
        rollout_s=roll_s,
        train_s=train_s,
        sync_s=sync_s,
        sync_flat_s=max(sync.flat_s, sync_s),
        warm_switch_s=warm_s,
        cold_switch_s=cold_s,
        rollout_max_s=roll_max_s,
        train_max_s=train_max_s,
    )
