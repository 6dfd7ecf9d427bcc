"""Tests of the analytical phase-time, sync, switch and memory model (rollmux.phasetimes)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.phasetimes import (
    PhaseTimes,
    phase_times,
    rollout_mem_gb_per_node,
    rollout_shape,
    rollout_time_ratio,
    rollout_time_s,
    switch_times,
    sync_times,
    train_mem_gb_per_node,
    train_time_s,
)

HW = load_hardware()


def test_train_worst_case_literal() -> None:
    """7B on 8 H800, all 1024 responses at 8192 tokens: 6 N D / (8 x 989T x 0.35) = 135.2 s."""
    tokens = 1024 * (512 + 8192)
    expected_s = 6 * 7e9 * tokens / (8 * 989e12 * 0.35)
    assert train_time_s(RLJob("a", 7, 8192), HW, worst_case=True) == pytest.approx(expected_s)
    assert expected_s == pytest.approx(135.18, abs=0.01)


def test_train_expected_scales_with_expected_tokens() -> None:
    """Expected training uses mean length: ratio to worst case = (p + E[L]) / (p + max)."""
    job = RLJob("a", 7, 8192, mean_response_tokens=2000)
    ratio = train_time_s(job, HW) / train_time_s(job, HW, worst_case=True)
    assert ratio == pytest.approx((512 + 2000) / (512 + 8192), rel=1e-9)


def test_rollout_worst_case_single_sequence_literal() -> None:
    """1B on one H20, one 1000-token response: (1000 x 2 GB + KV reads) / (4 TB/s x 0.6)."""
    job = RLJob("a", 1, 1000, prompt_tokens=1, prompts_per_iter=1, responses_per_prompt=1,
                rollout_gpus=1)
    weights_bytes = 2e9
    kv_bytes = 8e3 * (1 * 1000 + 1000**2 / 2)  # 8 KB/token for 1B; prompt x L + L^2 / 2
    memory_s = (1000 * weights_bytes + kv_bytes) / (4000e9 * 0.6)
    prefill_s = 2 * 1e9 * 1 / (148e12 * 0.5)
    assert rollout_time_s(job, HW, worst_case=True) == pytest.approx(memory_s + prefill_s)
    assert memory_s == pytest.approx(0.83500, abs=1e-5)


def test_multi_turn_adds_tool_latency_per_turn_boundary() -> None:
    """Three turns add two tool round trips (2 x 35 s) to the rollout and nothing to training."""
    one, three = RLJob("a", 7, 8192), RLJob("a", 7, 8192, turns=3)
    assert rollout_time_s(three, HW) - rollout_time_s(one, HW) == pytest.approx(70.0)
    assert train_time_s(three, HW) == train_time_s(one, HW)


@pytest.mark.parametrize(("size_b", "tp"), [(3, 1), (7, 1), (14, 1), (32, 4), (70, 8)])
def test_rollout_tensor_parallel_by_model_size(size_b: float, tp: int) -> None:
    """Weight shard <= 30% of 96 GB: TP1 up to 14B, TP4 for 32B, TP8 for 70B."""
    shape = rollout_shape(RLJob("a", size_b, 8192), HW)
    assert shape.tensor_parallel == tp
    assert shape.replicas == 8 // tp
    assert shape.nodes == 1


def test_too_few_rollout_gpus_named() -> None:
    """A 32B model on 2 H20 cannot hold its weights; the error names rollout_gpus."""
    with pytest.raises(ValueError, match="rollout_gpus=2"):
        phase_times(RLJob("a", 32, 8192, rollout_gpus=2), HW)


def test_unknown_gpu_type_named() -> None:
    """A GPU type missing from the hardware is reported with the valid names."""
    with pytest.raises(ValueError, match="'B200'"):
        phase_times(RLJob("a", 7, 8192, train_gpu_type="B200"), HW)


def test_sync_literal_7b_8_to_8() -> None:
    """7B: one copy (14 GB) over 2.25 GB/s is 6.22 s; flat sends 8 copies; topo adds NVLink."""
    sync = sync_times(RLJob("a", 7, 8192), HW)
    copy_s = 14e9 / 2.25e9
    assert sync.cross_copy_s == pytest.approx(copy_s)
    assert sync.flat_s == pytest.approx(8 * copy_s)
    assert sync.topology_s == pytest.approx(copy_s + 14e9 / 300e9)


def test_sync_literal_32b_16_to_16() -> None:
    """32B TP4 on two nodes: 16 copies flat (4 per replica); topo adds half a copy over IB
    and a TP slice."""
    job = RLJob("a", 32, 8192, rollout_gpus=16, train_gpus=16)
    sync = sync_times(job, HW)
    copy_s = 64e9 / 2.25e9
    assert sync.flat_s == pytest.approx(16 * copy_s)
    assert sync_times(job, HW, flat_copies="replica").flat_s == pytest.approx(4 * copy_s)
    assert sync.topology_s == pytest.approx(copy_s + 32e9 / 45e9 + 16e9 / 300e9)
    with pytest.raises(ValueError, match="flat_copies"):
        sync_times(job, HW, flat_copies="node")


def test_switch_literal_14b() -> None:
    """14B training: 28 GB per GPU -> warm 28/25 + 0.3 s; cold 30 + 224/5 + 28/25 s."""
    sw = switch_times(RLJob("a", 14, 8192), HW)
    assert sw.train_warm_s == pytest.approx(1.42)
    assert sw.train_cold_s == pytest.approx(30 + 44.8 + 1.12)
    assert sw.rollout_warm_s == pytest.approx(1.42)  # TP1 shard is also 28 GB


@pytest.mark.parametrize(
    ("size_b", "gpus", "rollout_gb", "train_gb"),
    [(7, 8, 112.0, 112.0), (32, 8, 128.0, 512.0), (70, 32, 140.0, 280.0), (3, 4, 24.0, 48.0)],
)
def test_memory_per_node_literals(size_b: float, gpus: int, rollout_gb: float,
                                  train_gb: float) -> None:
    """Per-node state = per-GPU state x GPUs on the node (16 B/param sharded for training)."""
    job = RLJob("a", size_b, 8192, rollout_gpus=gpus, train_gpus=gpus)
    assert rollout_mem_gb_per_node(job, HW) == pytest.approx(rollout_gb)
    assert train_mem_gb_per_node(job, HW) == pytest.approx(train_gb)


def test_memory_values_on_job_override() -> None:
    """Footprints given on the job are returned unchanged."""
    job = RLJob("a", 7, 8192, rollout_mem_gb_per_node=50, train_mem_gb_per_node=300)
    assert rollout_mem_gb_per_node(job, HW) == 50.0
    assert train_mem_gb_per_node(job, HW) == 300.0


def test_direct_times_override_and_clamp() -> None:
    """Direct times win; a lone expected value lifts the modelled worst case to match."""
    modelled = phase_times(RLJob("a", 7, 8192), HW)
    job = RLJob("a", 7, 8192, rollout_s=1e5, train_s=10.0, train_max_s=20.0, sync_s=1e4,
                warm_switch_s=500.0)
    pt = phase_times(job, HW)
    assert (pt.rollout_s, pt.rollout_max_s) == (1e5, 1e5)
    assert (pt.train_s, pt.train_max_s) == (10.0, 20.0)
    assert (pt.sync_s, pt.sync_flat_s) == (1e4, 1e4)
    assert (pt.warm_switch_s, pt.cold_switch_s) == (500.0, 500.0)
    only_max = phase_times(RLJob("a", 7, 8192, rollout_max_s=1.0, cold_switch_s=0.5), HW)
    assert only_max.rollout_s == 1.0 and only_max.rollout_max_s == 1.0
    assert only_max.warm_switch_s == 0.5 and only_max.cold_switch_s == 0.5
    assert modelled.rollout_s < 1e5


def test_solo_iteration_sums_phases() -> None:
    """solo_iteration_s = rollout + train + sync; the worst case uses the max phases."""
    pt = PhaseTimes(10.0, 20.0, 3.0, 9.0, 1.0, 50.0, 40.0, 60.0)
    assert pt.solo_iteration_s == 33.0
    assert pt.solo_iteration_max_s == 103.0


@pytest.mark.parametrize(
    ("field", "value"),
    [("rollout_s", -1.0), ("train_s", float("nan")), ("rollout_max_s", 5.0),
     ("train_max_s", 10.0), ("cold_switch_s", 0.5)],
)
def test_phase_times_validation_names_field(field: str, value: float) -> None:
    """Negative/NaN times or a worst case below expected raise ValueError naming the field."""
    base = PhaseTimes(10.0, 20.0, 3.0, 9.0, 1.0, 50.0, 40.0, 60.0)
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(base, **{field: value})


def test_modelled_phases_span_paper_range() -> None:
    """A 32B/32k job's expected phase exceeds 900 s (paper Fig. 2); a 3B/4k one is short."""
    big = phase_times(RLJob("a", 32, 32768), HW)
    small = phase_times(RLJob("a", 3, 4096), HW)
    assert max(big.rollout_s, big.train_s) > 900
    assert max(small.rollout_s, small.train_s) < 60


sizes = st.floats(0.5, 14.0)  # one rollout TP class (TP1) on H20; see the next test
max_tokens = st.integers(256, 32768)
gpu_counts = st.sampled_from([8, 16, 32])


@given(size=sizes, grow=st.floats(1.01, 2.0), tokens=max_tokens, gpus=gpu_counts)
def test_larger_model_longer_phases(size: float, grow: float, tokens: int, gpus: int) -> None:
    """Within a TP class a larger model has longer rollout, training and sync."""
    bigger = min(size * grow, 14.0)
    a = phase_times(RLJob("a", size, tokens, rollout_gpus=gpus, train_gpus=gpus), HW)
    b = phase_times(RLJob("a", bigger, tokens, rollout_gpus=gpus, train_gpus=gpus), HW)
    for f in ("rollout_s", "rollout_max_s", "train_s", "train_max_s", "sync_s", "sync_flat_s",
              "warm_switch_s", "cold_switch_s"):
        assert getattr(b, f) >= getattr(a, f) * (1 - 1e-9), f


def test_tensor_parallel_jump_can_shorten_memory_bound_rollout() -> None:
    """Documented model feature: crossing into TP2 halves each GPU's weight reads.

    On 16 H20 a 15B model (TP2, 8 replicas) decodes its tail faster than a 14B
    model (TP1, 16 replicas), so model-size monotonicity holds only within a TP class.
    """
    a = RLJob("a", 14.0, 32768, rollout_gpus=16, train_gpus=16)
    b = RLJob("a", 15.0, 32768, rollout_gpus=16, train_gpus=16)
    assert rollout_shape(a, HW).tensor_parallel == 1
    assert rollout_shape(b, HW).tensor_parallel == 2
    assert rollout_time_s(b, HW) < rollout_time_s(a, HW)
    assert train_time_s(b, HW) > train_time_s(a, HW)


@given(size=st.floats(0.5, 60.0), tokens=max_tokens, grow=st.integers(1, 4096),
       gpus=gpu_counts)
def test_longer_max_tokens_longer_phases(size: float, tokens: int, grow: int, gpus: int) -> None:
    """Raising max_response_tokens (mean at the default fraction) lengthens every phase."""
    a = phase_times(RLJob("a", size, tokens, rollout_gpus=gpus, train_gpus=gpus), HW)
    b = phase_times(RLJob("a", size, tokens + grow, rollout_gpus=gpus, train_gpus=gpus), HW)
    for f in ("rollout_s", "rollout_max_s", "train_s", "train_max_s"):
        assert getattr(b, f) >= getattr(a, f) * (1 - 1e-9), f


@given(size=st.floats(0.5, 60.0), tokens=max_tokens, frac=st.floats(0.01, 0.9),
       sigma=st.floats(0.1, 2.0), turns=st.integers(1, 8), gpus=gpu_counts)
def test_model_invariants(size: float, tokens: int, frac: float, sigma: float, turns: int,
                          gpus: int) -> None:
    """Worst case >= expected, warm < cold, topology-aware sync <= flat, all positive."""
    mean = 1 + frac * (tokens - 1)
    job = RLJob("a", size, tokens, mean_response_tokens=mean, response_len_sigma=sigma,
                turns=turns, rollout_gpus=gpus, train_gpus=gpus)
    pt = phase_times(job, HW)
    assert pt.rollout_max_s >= pt.rollout_s > 0
    assert pt.train_max_s >= pt.train_s > 0
    assert 0 < pt.warm_switch_s < pt.cold_switch_s
    assert 0 < pt.sync_s <= pt.sync_flat_s
    sw = switch_times(job, HW)
    assert sw.rollout_warm_s < sw.rollout_cold_s and sw.train_warm_s < sw.train_cold_s
    assert pt.solo_iteration_max_s >= pt.solo_iteration_s


@given(size=st.floats(0.5, 60.0), tokens=max_tokens)
def test_phase_times_deterministic(size: float, tokens: int) -> None:
    """The same job and hardware always give identical phase times."""
    job = RLJob("a", size, tokens)
    assert phase_times(job, HW) == phase_times(job, HW)


def test_rollout_time_ratio_follows_the_roofline() -> None:
    """Same GPUs give 1; a compute-bound H20 batch speeds up on H800, a memory-bound one
    slows down by about the HBM bandwidths (3.35 vs 4.0 TB/s); bad GPU counts are named."""
    hw = load_hardware()
    job = RLJob(job_id="r", model_size_b=7, max_response_tokens=8192)
    assert rollout_time_ratio(job, hw, "H20", job.rollout_gpus) == pytest.approx(1.0)
    small = dataclasses.replace(job, prompts_per_iter=16)
    big = dataclasses.replace(job, prompts_per_iter=1024)
    assert rollout_time_ratio(big, hw, "H800", 8) < 0.8
    assert 1.0 < rollout_time_ratio(small, hw, "H800", 8) < 4000.0 / 3350.0 * 1.1
    assert rollout_time_ratio(job, hw, "H800", 16) < rollout_time_ratio(job, hw, "H800", 8)
    with pytest.raises(ValueError, match="gpus"):
        rollout_time_ratio(job, hw, "H800", 0)
