"""Event-level simulation: invariants, convergence to the exact period, FIFO vs static."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.schedule.eventsim import (
    TIMELINE_COLUMNS,
    DeadlockError,
    measured_period,
    simulate,
    simulate_fifo,
    to_frame,
)
from rollmux.schedule.graph import build_schedule, round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period


@st.composite
def groups(draw: st.DrawFn, max_jobs: int = 5, max_nodes: int = 2) -> tuple:
    """Random integer-duration groups with single- or multi-node (gang) rollout pinnings."""
    n = draw(st.integers(1, max_jobs))
    r = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    t = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    node_sets = [s for k in (1, 2) for s in itertools.combinations(range(max_nodes), k)]
    rn = draw(st.lists(st.sampled_from(node_sets), min_size=n, max_size=n))
    tn = draw(st.lists(st.integers(0, max_nodes - 1), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))
    return r, t, rn, tn, order


def _check_invariants(records: list, n_jobs: int) -> None:
    by_node: dict[str, list] = {}
    for rec in records:
        by_node.setdefault(rec.node, []).append(rec)
        assert rec.end_s > rec.start_s
    for recs in by_node.values():
        recs.sort(key=lambda r: r.start_s)
        for a, b in itertools.pairwise(recs):
            assert b.start_s >= a.end_s - 1e-9, f"overlap on {a.node}: {a} then {b}"
    for j in range(n_jobs):
        phases = sorted(
            {(r.iteration, r.phase, r.start_s, r.end_s) for r in records if r.job == j},
            key=lambda x: x[2],
        )
        kinds = [p[1] for p in phases]
        assert kinds == ["rollout", "train"] * (len(kinds) // 2)
        for a, b in itertools.pairwise(phases):
            assert b[2] >= a[3] - 1e-9, f"job {j}: {b} starts before {a} ends"


@given(groups())
def test_static_invariants_and_convergence(group: tuple) -> None:
    """No node overlap, rollout/training alternate, and the period converges to the exact one."""
    r, t, rn, tn, order = group
    sched = round_robin_schedule(r, t, rn, tn, order)
    records = simulate(sched, 60)
    _check_invariants(records, len(r))
    assert measured_period(records, sched, 30) == pytest.approx(
        steady_state_period(sched), rel=1e-9
    )


@given(groups())
def test_fifo_invariants(group: tuple) -> None:
    """The FIFO runtime form respects the same invariants and never beats the lower bound."""
    r, t, rn, tn, order = group
    sched = round_robin_schedule(r, t, rn, tn, order)
    records = simulate_fifo(sched, 40)
    _check_invariants(records, len(r))
    lower = max(a + b for a, b in zip(r, t, strict=True))
    assert measured_period(records, sched, 20) >= lower - 1e-9


@given(st.data(), st.integers(1, 5))
def test_fifo_equals_static_on_one_node_per_pool(data: st.DataObject, n: int) -> None:
    """With one rollout and one training node, FIFO queues reproduce the round-robin period."""
    r = data.draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    t = data.draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    sched = round_robin_schedule(r, t)
    fifo = measured_period(simulate_fifo(sched, 60), sched, 30)
    assert fifo == pytest.approx(steady_state_period(sched), rel=1e-9)


def test_two_complementary_jobs_literal_timeline() -> None:
    """A worked timeline: A = (10, 2), B = (2, 10) weave with period 12."""
    records = simulate(round_robin_schedule([10, 2], [2, 10]), 2)
    rows = [(r.job, r.phase, r.iteration, r.start_s, r.end_s) for r in records]
    assert rows[:5] == [
        (0, "rollout", 0, 0.0, 10.0),
        (1, "rollout", 0, 10.0, 12.0),
        (0, "train", 0, 10.0, 12.0),
        (0, "rollout", 1, 12.0, 22.0),
        (1, "train", 0, 12.0, 22.0),
    ]


def test_per_iteration_durations_are_used() -> None:
    """Per-iteration duration tables override the schedule's durations."""
    sched = round_robin_schedule([1, 1], [1, 1])
    records = simulate(sched, 2, rollout_s=[[5, 1], [2, 1]], train_s=[[1, 1], [1, 3]])
    job0 = [(r.phase, r.end_s - r.start_s) for r in records if r.job == 0]
    assert job0 == [("rollout", 5.0), ("train", 1.0), ("rollout", 2.0), ("train", 1.0)]
    with pytest.raises(ValueError, match=r"rollout_s\[1\]\[0\] = 0"):
        simulate(sched, 2, rollout_s=[[5, 1], [0, 1]])
    with pytest.raises(ValueError, match="needs at least 3 rows"):
        simulate(sched, 3, rollout_s=[[5, 1], [2, 1]])


def test_deadlock_is_reported() -> None:
    """A schedule whose node orders contradict its chains raises DeadlockError."""
    sched = build_schedule(
        [1.0, 1.0], [1.0, 1.0], [(0,), (0,)], [(0,), (0,)],
        {("R", 0): [1, 1, 0], ("T", 0): [0, 1, 1]},
    )
    with pytest.raises(DeadlockError):
        simulate(sched, 2)


def test_multiplicity_schedule_matches_exact_period() -> None:
    """A schedule that runs job 1 twice per meta-iteration converges to its exact period."""
    sched = build_schedule(
        [10.0, 1.0], [1.0, 1.0], [(0,), (0,)], [(0,), (0,)],
        {("R", 0): [0, 1, 1], ("T", 0): [0, 1, 1]},
    )
    records = simulate(sched, 40)
    _check_invariants(records, 2)
    assert measured_period(records, sched, 20) == pytest.approx(steady_state_period(sched))


def test_frame_columns_and_determinism() -> None:
    """The per-phase table has the documented columns and identical bytes on a rerun."""
    sched = round_robin_schedule([3, 4, 5], [2, 2, 2], [0, 1, 0])
    a = to_frame(simulate(sched, 5)).to_csv(index=False)
    b = to_frame(simulate(sched, 5)).to_csv(index=False)
    assert a == b
    assert tuple(to_frame(simulate(sched, 1)).columns) == TIMELINE_COLUMNS


def test_bad_arguments() -> None:
    """Bad iteration counts are rejected with the value named, by both disciplines."""
    sched = round_robin_schedule([1], [1])
    with pytest.raises(ValueError, match="iterations = 0"):
        simulate(sched, 0)
    with pytest.raises(ValueError, match="iterations = 0"):
        simulate_fifo(sched, 0)
