"""Hypothesis strategies: co-execution groups (durations, pinnings, (un)saturated groups)
and small job sets for the optimum.

Durations are small integers (as floats) so that exact periods are exactly representable
and equalities such as ``period == T_cycle`` can be checked to 1e-9.
"""

from __future__ import annotations

from typing import Literal

from hypothesis import assume, settings
from hypothesis import strategies as st

from rollmux.jobs import RLJob
from rollmux.theorem1 import Instance, t_cycle_s, t_load_s, unsaturate

MAX_DURATION_S = 9
Layout = Literal["one_one", "shared_train", "crossing"]

durations_s = st.integers(1, MAX_DURATION_S).map(float)


def profile_examples(fraction: float) -> settings:
    """Settings running ``fraction`` of the active profile's ``max_examples`` (at least 1).

    The one way a property whose every example is expensive takes a smaller budget: the
    budget still follows the profile (tests/conftest.py), so ``@profile_examples(0.2)``
    runs 12 examples under ``ci`` (60) and 400 under ``thorough`` (2000).
    """
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    return settings(max_examples=max(1, round(settings.default.max_examples * fraction)))


@st.composite
def phase_durations(draw: st.DrawFn, n_jobs: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Rollout and training durations (s) of ``n_jobs`` jobs."""
    rollout = tuple(draw(st.lists(durations_s, min_size=n_jobs, max_size=n_jobs)))
    train = tuple(draw(st.lists(durations_s, min_size=n_jobs, max_size=n_jobs)))
    return rollout, train


@st.composite
def node_subset(draw: st.DrawFn, n_nodes: int, gang: bool) -> tuple[int, ...]:
    """One job's nodes in a pool of ``n_nodes``: one node, or (``gang``) possibly several."""
    if gang and n_nodes > 1 and draw(st.booleans()):
        return tuple(sorted(draw(st.sets(st.integers(0, n_nodes - 1), min_size=2))))
    return (draw(st.integers(0, n_nodes - 1)),)


@st.composite
def pinnings(
    draw: st.DrawFn, n_jobs: int, layout: Layout, max_rollout_nodes: int = 3, gang: bool = True
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Rollout and training pinnings of ``n_jobs`` jobs for a layout.

    ``one_one``: all on rollout node 0 and training node 0; ``shared_train``: training
    node 0 shared, any rollout node among ``max_rollout_nodes``; ``crossing``: 2 + 2
    nodes, jobs on one or (``gang``) both nodes of each pool, both training nodes used.
    """
    if layout == "one_one":
        return ((0,),) * n_jobs, ((0,),) * n_jobs
    if layout == "shared_train":
        rollout = tuple(
            draw(st.lists(st.integers(0, max_rollout_nodes - 1), min_size=n_jobs, max_size=n_jobs))
        )
        return tuple((x,) for x in rollout), ((0,),) * n_jobs
    rollout = tuple(draw(node_subset(2, gang)) for _ in range(n_jobs))
    train = tuple(draw(node_subset(2, gang)) for _ in range(n_jobs))
    if {x for pins in train for x in pins} != {0, 1}:
        # Force a crossing: the last job moves to the training node nobody uses.
        unused = 1 - train[0][0]
        train = (*train[:-1], (unused,))
    return rollout, train


@st.composite
def unsaturated_groups(
    draw: st.DrawFn, layout: Layout, min_jobs: int = 2, max_jobs: int = 3
) -> Instance:
    """A group with ``T_load <= T_cycle`` (unsaturated or full), built by :func:`unsaturate`."""
    n = draw(st.integers(min_jobs, max_jobs))
    rollout, train = draw(phase_durations(n))
    rollout_node, train_node = draw(pinnings(n, layout))
    anchor = draw(st.integers(0, n - 1))
    extra_r = float(draw(st.integers(0, MAX_DURATION_S)))
    extra_t = float(draw(st.integers(0, MAX_DURATION_S)))
    r, t = unsaturate(rollout, train, rollout_node, train_node, anchor, extra_r, extra_t)
    return Instance(r, t, rollout_node, train_node)


@st.composite
def saturated_groups(
    draw: st.DrawFn, layout: Layout = "shared_train", min_jobs: int = 2, max_jobs: int = 3
) -> Instance:
    """A group with ``T_load > T_cycle`` (rejection-sampled; about half of random groups)."""
    n = draw(st.integers(min_jobs, max_jobs))
    rollout, train = draw(phase_durations(n))
    rollout_node, train_node = draw(pinnings(n, layout, max_rollout_nodes=2))
    assume(t_load_s(rollout, train, rollout_node, train_node) > t_cycle_s(rollout, train))
    return Instance(rollout, train, rollout_node, train_node)


@st.composite
def any_groups(
    draw: st.DrawFn, layout: Layout, min_jobs: int = 2, max_jobs: int = 3, gang: bool = True
) -> Instance:
    """A group with arbitrary durations (saturated or not); ``gang`` as in :func:`pinnings`."""
    n = draw(st.integers(min_jobs, max_jobs))
    rollout, train = draw(phase_durations(n))
    rollout_node, train_node = draw(pinnings(n, layout, gang=gang))
    return Instance(rollout, train, rollout_node, train_node)


# --------------------------------------------------------------------------- job sets


def direct_job(
    job_id: str,
    rollout_s: float,
    train_s: float,
    *,
    slo: float = 1.5,
    rollout_gpus: int = 8,
    train_gpus: int = 8,
    max_factor: float = 1.0,
    sync_s: float = 0.0,
    warm_s: float = 0.0,
    rollout_mem_gb: float = 100.0,
    train_mem_gb: float = 100.0,
) -> RLJob:
    """A job whose phase times and memory are given directly (no phase model)."""
    return RLJob(
        job_id=job_id,
        model_size_b=7.0,
        max_response_tokens=4096,
        rollout_gpus=rollout_gpus,
        train_gpus=train_gpus,
        slo=slo,
        rollout_s=rollout_s,
        train_s=train_s,
        rollout_max_s=rollout_s * max_factor,
        train_max_s=train_s * max_factor,
        sync_s=sync_s,
        warm_switch_s=warm_s,
        rollout_mem_gb_per_node=rollout_mem_gb,
        train_mem_gb_per_node=train_mem_gb,
    )


@st.composite
def job_sets(
    draw: st.DrawFn, min_jobs: int = 1, max_jobs: int = 5, gpus: tuple[int, ...] = (8, 8, 16)
) -> list[RLJob]:
    """Small random job sets: integer phases, SLO in [1, 2], memory; GPUs per pool from ``gpus``.

    With 8-GPU nodes the default gives each job one or two nodes per pool.
    """
    n = draw(st.integers(min_jobs, max_jobs))
    jobs = []
    for i in range(n):
        jobs.append(
            direct_job(
                f"j{i}",
                float(draw(st.integers(20, 400))),
                float(draw(st.integers(20, 400))),
                slo=draw(st.integers(100, 200)) / 100,
                rollout_gpus=draw(st.sampled_from(gpus)),
                train_gpus=draw(st.sampled_from(gpus)),
                max_factor=draw(st.sampled_from([1.0, 1.25])),
                sync_s=float(draw(st.sampled_from([0, 5]))),
                warm_s=float(draw(st.sampled_from([0, 2]))),
                rollout_mem_gb=float(draw(st.integers(100, 1100))),
                train_mem_gb=float(draw(st.integers(100, 1100))),
            )
        )
    return jobs
