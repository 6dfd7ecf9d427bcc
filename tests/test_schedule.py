"""Exact meta-iteration time: literals, bad input, and Howard against Karp."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux import meta_iteration_time
from rollmux.schedule.graph import build_schedule, round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period


def test_two_complementary_jobs_weave_into_t_cycle() -> None:
    """Rollout-heavy plus training-heavy on one node per pool: period = T_cycle = 11."""
    assert meta_iteration_time([10, 1], [1, 10]) == pytest.approx(11.0)


def test_saturated_rollout_node_sets_the_period() -> None:
    """Two 5 s rollouts on one node with 1 s trainings: the node's load (10 s) dominates."""
    assert meta_iteration_time([5, 5], [1, 1]) == pytest.approx(10.0)


def test_single_job_period_is_its_solo_iteration() -> None:
    """One job alone: rollout plus training."""
    assert meta_iteration_time([7.5], [2.5]) == pytest.approx(10.0)


def test_separate_nodes_do_not_interact() -> None:
    """Jobs on disjoint nodes: the period is the slowest job's solo iteration."""
    assert meta_iteration_time([3, 4], [2, 9], rollout_node=[0, 1], train_node=[0, 1]) == 13.0


def test_crossing_pinning_hand_computed() -> None:
    """Three jobs, two rollout nodes, one training node; worked by hand.

    Loads: R0 = 3 + 5 = 8, R1 = 4, T0 = 6; job cycles 5, 6, 7. Every cycle of the
    event graph is at most 8 except R0's own sequence, so the period is 8.
    """
    assert meta_iteration_time([3, 4, 5], [2, 2, 2], rollout_node=[0, 1, 0]) == 8.0


def test_gang_phase_occupies_all_its_nodes() -> None:
    """A job spanning both rollout nodes blocks both, so its rollout adds to each load."""
    period = meta_iteration_time([4, 3, 3], [1, 1, 1], rollout_node=[(0, 1), 0, 1])
    assert period == pytest.approx(7.0)


def test_order_changes_the_period_of_a_crossing_group() -> None:
    """With crossing pinnings, the global order matters (the paper's proof does not cover it)."""
    args = ([1, 13, 18, 18], [15, 6, 19, 19], [1, 0, (0, 1), 1], [1, 1, 0, 1])
    periods = {
        meta_iteration_time(*args, order=order)
        for order in ([0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1])
    }
    assert len(periods) > 1


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"rollout_s": [1, 0], "train_s": [1, 1]}, "rollout_s[1] = 0.0"),
        ({"rollout_s": [1, 1], "train_s": [1, -2]}, "train_s[1] = -2.0"),
        ({"rollout_s": [1, math.nan], "train_s": [1, 1]}, "rollout_s[1] = nan"),
        ({"rollout_s": [1, 1], "train_s": [1, math.inf]}, "train_s[1] = inf"),
        ({"rollout_s": [], "train_s": []}, "rollout_s"),
        ({"rollout_s": [1, 1], "train_s": [1]}, "train_s: expected 2"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "order": [0, 0]}, "order = [0, 0]"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "order": [0, 2]}, "order = [0, 2]"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "order": [1.0, 0.0]}, "order = [1.0, 0.0]"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "order": 3}, "order = 3"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "rollout_node": [0, -1]}, "rollout_node[1]"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "train_node": [0, None]}, "train_node[1]"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "train_node": [0]}, "train_node: expected 2"),
        ({"rollout_s": [1, 1], "train_s": [1, 1], "rollout_node": [0, ()]}, "rollout_node[1]"),
        ({"rollout_s": ["a"], "train_s": [1]}, "rollout_s"),
    ],
)
def test_bad_input_names_argument_and_value(kwargs: dict, fragment: str) -> None:
    """Every kind of bad input raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        meta_iteration_time(**kwargs)


@given(
    st.lists(st.floats(1.0, 50.0), min_size=1, max_size=3),
    st.data(),
)
def test_methods_agree_on_schedules_with_repetitions(r: list[float], data: st.DataObject) -> None:
    """Schedules where jobs repeat (often above the simple bound) agree across methods."""
    n = len(r)
    t = data.draw(st.lists(st.floats(1.0, 50.0), min_size=n, max_size=n))
    mult = data.draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    r_seq = data.draw(st.permutations([j for j in range(n) for _ in range(mult[j])]))
    t_seq = data.draw(st.permutations([j for j in range(n) for _ in range(mult[j])]))
    sched = build_schedule(r, t, [(0,)] * n, [(0,)] * n, {("R", 0): r_seq, ("T", 0): t_seq})
    karp = steady_state_period(sched, "karp")
    if math.isinf(karp):
        assert math.isinf(steady_state_period(sched))
        return
    assert steady_state_period(sched, "auto") == pytest.approx(karp, rel=1e-9)
    assert steady_state_period(sched, "howard") == pytest.approx(karp, rel=1e-9)


def test_unknown_method_is_rejected() -> None:
    """steady_state_period names the valid methods."""
    with pytest.raises(ValueError, match="expected one of auto, howard, karp"):
        steady_state_period(round_robin_schedule([1], [1]), "fast")


def test_deadlocked_order_has_infinite_period() -> None:
    """Per-node orders that contradict job chains deadlock: period is inf."""
    # Job 1 runs twice; its second rollout waits for its first training, which the
    # training node serves only after job 0, whose rollout waits behind job 1's second.
    sched = build_schedule(
        [1.0, 1.0], [1.0, 1.0], [(0,), (0,)], [(0,), (0,)],
        {("R", 0): [1, 1, 0], ("T", 0): [0, 1, 1]},
    )
    assert steady_state_period(sched) == math.inf


durations = st.lists(st.integers(1, 40), min_size=1, max_size=7)


@given(
    data=st.data(),
    r=durations,
    n_roll=st.integers(1, 3),
    n_train=st.integers(1, 3),
)
def test_howard_matches_karp(data: st.DataObject, r: list[int], n_roll: int, n_train: int) -> None:
    """Three exact methods (certificate-or-Howard, Howard, Karp) give the same period."""
    n = len(r)
    t = data.draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    rn = data.draw(st.lists(st.integers(0, n_roll - 1), min_size=n, max_size=n))
    tn = data.draw(st.lists(st.integers(0, n_train - 1), min_size=n, max_size=n))
    order = data.draw(st.permutations(range(n)))
    sched = round_robin_schedule(r, t, rn, tn, order)
    karp = steady_state_period(sched, "karp")
    assert steady_state_period(sched, "howard") == pytest.approx(karp, rel=1e-9)
    assert steady_state_period(sched, "auto") == pytest.approx(karp, rel=1e-9)
    assert meta_iteration_time(r, t, rn, tn, order) == pytest.approx(karp, rel=1e-9)


@given(data=st.data(), r=durations)
def test_period_is_at_least_cycle_and_load(data: st.DataObject, r: list[int]) -> None:
    """No round-robin period is below max(T_cycle, T_load): both are cycles of the graph."""
    n = len(r)
    t = data.draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    rn = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    period = meta_iteration_time(r, t, rollout_node=rn)
    t_cycle = max(a + b for a, b in zip(r, t, strict=True))
    t_load = max(sum(t), *(sum(a for a, x in zip(r, rn, strict=True) if x == k) for k in set(rn)))
    assert period >= max(t_cycle, t_load) - 1e-9
    assert period <= sum(r) + sum(t) + 1e-9
