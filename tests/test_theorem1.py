"""Theorem 1 property suite: where round-robin is (and is not) utilisation-optimal.

Asserted: what holds (round-robin period = T_cycle for every order when T_load <= T_cycle
with one shared training node; no schedule beats the per-node and per-job lower bounds;
two-job groups on one rollout and one training node admit no better schedule with
repetitions). Recorded as literal counterexamples, each confirmed by an independent
as-early-as-possible execution: what fails (three jobs on 1 + 1 nodes, several rollout
nodes, crossing pinnings, cost-weighted utilisation). See docs/theorem1.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_groups, profile_examples, saturated_groups, unsaturated_groups

from rollmux.schedule import round_robin_schedule, steady_state_period
from rollmux.schedule.graph import Schedule
from rollmux.schedule.search import (
    aggregate_utilisation,
    best_node_orders,
    best_schedule,
    cost_weighted_utilisation,
    enumerate_schedules,
)
from rollmux.theorem1 import (
    SUMMARY_COLUMNS,
    Instance,
    boundary_map,
    t_cycle_s,
    t_load_s,
)
from rollmux.theorem1.cli import main

REL = 1e-9


def _args(instance: Instance) -> tuple:
    return instance.rollout_s, instance.train_s, instance.rollout_node, instance.train_node


def _rr_util(instance: Instance, order: list[int] | None = None) -> tuple[float, float]:
    schedule = round_robin_schedule(*_args(instance), order=order)
    period = steady_state_period(schedule)
    return period, aggregate_utilisation(schedule, period)


def asap_period(schedule: Schedule, n_iterations: int = 240) -> float:
    """Period measured by executing ``schedule`` as early as possible (independent of max-plus).

    Start of phase p in meta-iteration k = max over its job predecessor and node
    predecessor (previous meta-iteration for the heads of chains and node sequences)
    of their finish times; slope over the second half of the run.
    """
    phases = schedule.phases
    preds: list[list[tuple[int, int]]] = [[] for _ in phases]
    for seq in [*schedule.job_chains, *(s for _, s in schedule.node_sequences)]:
        for i, p in enumerate(seq):
            preds[p].append((seq[i - 1], 1 if i == 0 else 0))
    prev = [0.0] * len(phases)
    history = []
    for _ in range(n_iterations):
        cur: list[float | None] = [None] * len(phases)
        while any(c is None for c in cur):
            for p in range(len(phases)):
                if cur[p] is not None:
                    continue
                times = []
                for q, back in preds[p]:
                    if back:
                        times.append(prev[q] + phases[q].duration_s if history else 0.0)
                    elif cur[q] is None:
                        break
                    else:
                        times.append(cur[q] + phases[q].duration_s)  # type: ignore[operator]
                else:
                    cur[p] = max(times, default=0.0)
        prev = [float(c) for c in cur]  # type: ignore[arg-type]
        history.append(prev[0])
    half = n_iterations // 2
    return (history[-1] - history[half]) / (n_iterations - 1 - half)


# --------------------------------------------------------------------------- (a) 1 + 1 nodes


@given(unsaturated_groups("one_one", 2, 5), st.randoms(use_true_random=False))
def test_one_one_round_robin_period_is_t_cycle(instance: Instance, rnd: object) -> None:
    """1 + 1 nodes, T_load <= T_cycle: every round-robin order has period T_cycle."""
    order = list(range(instance.n_jobs))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    period, _ = _rr_util(instance, order)
    assert t_load_s(*_args(instance)) <= t_cycle_s(instance.rollout_s, instance.train_s)
    assert period == pytest.approx(t_cycle_s(instance.rollout_s, instance.train_s), rel=REL)


@given(unsaturated_groups("one_one", 2, 2))
def test_one_one_two_jobs_no_repetition_beats_round_robin(instance: Instance) -> None:
    """Two jobs on 1 + 1 nodes: no schedule (multiplicities <= 3, any order) beats round-robin."""
    _, rr_util = _rr_util(instance)
    best = best_schedule(*_args(instance), max_multiplicity=3)
    assert best.utilisation <= rr_util * (1 + REL)


def test_one_one_three_jobs_counterexample() -> None:
    """Recorded: three jobs on 1 + 1 nodes, T_load <= T_cycle, repetition beats round-robin.

    r = (1, 5, 13), t = (6, 1, 9): T_cycle = 22, T_load = 19, round-robin utilisation
    35 / 22; running jobs 0 and 1 twice each gives 48 / 30 = 1.6. The period grows by 8,
    less than the added solo iterations 7 + 6: the two short jobs interleave with each other,
    which the proof's "repeating job k adds at least T_solo_k" step overlooks.
    """
    instance = Instance((1.0, 5.0, 13.0), (6.0, 1.0, 9.0), ((0,),) * 3, ((0,),) * 3)
    assert t_load_s(*_args(instance)) <= t_cycle_s(instance.rollout_s, instance.train_s)
    period, rr_util = _rr_util(instance)
    assert period == 22.0
    assert rr_util == pytest.approx(35 / 22, rel=REL)
    best = best_schedule(*_args(instance), max_multiplicity=2)
    assert best.multiplicity == (2, 2, 1)
    assert best.period_s == pytest.approx(30.0, rel=REL)
    assert best.utilisation == pytest.approx(48 / 30, rel=REL)
    assert asap_period(best.schedule) == pytest.approx(best.period_s, rel=1e-9)
    busy = sum(best.schedule.busy_s().values())
    assert best.utilisation == pytest.approx(busy / best.period_s, rel=REL)


# --------------------------------------------------------------------------- (b) shared training


@given(unsaturated_groups("shared_train", 2, 4), st.randoms(use_true_random=False))
def test_shared_train_round_robin_period_is_t_cycle(instance: Instance, rnd: object) -> None:
    """One shared training node, any rollout nodes: every round-robin order has period T_cycle."""
    order = list(range(instance.n_jobs))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    period, _ = _rr_util(instance, order)
    assert period == pytest.approx(t_cycle_s(instance.rollout_s, instance.train_s), rel=REL)


@given(unsaturated_groups("shared_train", 2, 3))
def test_shared_train_no_single_iteration_order_beats_round_robin(instance: Instance) -> None:
    """Among schedules with one iteration per job, no per-node order beats round-robin."""
    period, _ = _rr_util(instance)
    assert best_node_orders(*_args(instance)).period_s == pytest.approx(period, rel=REL)


def test_shared_train_counterexample() -> None:
    """Recorded: with two rollout nodes, a short job repeating inside a long rollout wins.

    r = (1, 10), t = (1, 1), rollout nodes 0 and 1, one training node: T_cycle = 11,
    T_load = 10; round-robin 11/22 + 2/11; job 0 five times per meta-iteration at the
    same period 11 gives 15/22 + 6/11.
    """
    instance = Instance((1.0, 10.0), (1.0, 1.0), ((0,), (1,)), ((0,), (0,)))
    period, rr_util = _rr_util(instance)
    assert period == 11.0
    best = best_schedule(*_args(instance), max_multiplicity=5)
    assert best.multiplicity == (5, 1)
    assert best.utilisation == pytest.approx(15 / 22 + 6 / 11, rel=REL)
    assert best.utilisation / rr_util == pytest.approx((15 / 22 + 6 / 11) / (11 / 22 + 2 / 11))
    assert asap_period(best.schedule) == pytest.approx(11.0, rel=1e-9)


# --------------------------------------------------------------- (c) crossing, (e) saturated


@profile_examples(0.5)
@given(
    st.one_of(
        any_groups("crossing", 2, 3, gang=False),
        saturated_groups("shared_train", 2, 3),
        unsaturated_groups("crossing", 2, 3),
    )
)
def test_no_schedule_beats_the_lower_bounds(instance: Instance) -> None:
    """No period is below max(node busy, m_j (r_j + t_j)); for m = 1, max(T_load, T_cycle)."""
    bound_1 = max(t_load_s(*_args(instance)), t_cycle_s(instance.rollout_s, instance.train_s))
    rr_period, _ = _rr_util(instance)
    assert rr_period >= bound_1 * (1 - REL)
    assert best_node_orders(*_args(instance)).period_s >= bound_1 * (1 - REL)
    max_m = 2 if sum(len(p) for p in instance.rollout_node) <= 3 else 1
    for cand in enumerate_schedules(*_args(instance), max_multiplicity=max_m):
        chains = max(
            m * (r + t)
            for m, r, t in zip(cand.multiplicity, instance.rollout_s, instance.train_s, strict=True)
        )
        assert cand.period_s >= max(max(cand.schedule.busy_s().values()), chains) * (1 - REL)


@given(saturated_groups("shared_train", 2, 4))
def test_saturated_round_robin_is_load_bound_or_worse(instance: Instance) -> None:
    """Saturated groups: every round-robin period is at least T_load > T_cycle."""
    period, _ = _rr_util(instance)
    load = t_load_s(*_args(instance))
    assert load > t_cycle_s(instance.rollout_s, instance.train_s)
    assert period >= load * (1 - REL)


def test_crossing_counterexample() -> None:
    """Recorded: jobs sharing a rollout node but on different training nodes; repetition wins.

    r = (5, 2), t = (7, 5), both on rollout node 0, training nodes 0 and 1: round-robin
    period 12, utilisation 7/12 + 12/24; job 1 twice, period 14: 9/14 + 17/28.
    """
    instance = Instance((5.0, 2.0), (7.0, 5.0), ((0,), (0,)), ((0,), (1,)))
    period, rr_util = _rr_util(instance)
    assert period == 12.0
    assert rr_util == pytest.approx(7 / 12 + 12 / 24, rel=REL)
    best = best_schedule(*_args(instance), max_multiplicity=3)
    assert best.multiplicity == (1, 2)
    assert best.utilisation == pytest.approx(9 / 14 + 17 / 28, rel=REL)
    assert asap_period(best.schedule) == pytest.approx(best.period_s, rel=1e-9)


# --------------------------------------------------------------------------- (d) cost-weighted


def test_cost_weighted_counterexample_on_one_one() -> None:
    """Recorded: cost-weighted utilisation (H800 = 2.85 x H20) on 1 + 1 nodes prefers repetition.

    r = (10, 1), t = (1, 1): round-robin period 11 with cost-weighted utilisation
    (11 + 2.85 x 2) / (3.85 x 11); running job 1 three times gives period 15 and
    (13 + 2.85 x 4) / (3.85 x 15), higher; aggregate utilisation still prefers round-robin.
    """
    instance = Instance((10.0, 1.0), (1.0, 1.0), ((0,),) * 2, ((0,),) * 2)
    rr = round_robin_schedule(*_args(instance))
    rr_weighted = cost_weighted_utilisation(rr, steady_state_period(rr))
    assert rr_weighted == pytest.approx((11 + 2.85 * 2) / (3.85 * 11), rel=REL)
    best = best_schedule(*_args(instance), max_multiplicity=3, objective="cost_weighted")
    assert best.multiplicity == (1, 3)
    assert best.period_s == pytest.approx(15.0, rel=REL)
    assert best.utilisation == pytest.approx((13 + 2.85 * 4) / (3.85 * 15), rel=REL)
    assert asap_period(best.schedule) == pytest.approx(15.0, rel=1e-9)
    aggregate = best_schedule(*_args(instance), max_multiplicity=3)
    assert aggregate.utilisation == pytest.approx(_rr_util(instance)[1], rel=REL)


# --------------------------------------------------------------------------- boundary map


def test_boundary_map_is_deterministic_and_well_formed() -> None:
    """Same seed, same table; fractions in [0, 1]; ratios >= 1; (a) round-robin period at bound."""
    first = boundary_map(3, seed=7)
    second = boundary_map(3, seed=7)
    pd.testing.assert_frame_equal(first, second)
    assert tuple(first.columns) == SUMMARY_COLUMNS
    assert len(first) == 5
    for column in ("rr_optimal_fraction", "rr_period_at_bound_fraction"):
        assert first[column].between(0.0, 1.0).all()
    assert (first["worst_util_ratio"] >= 1.0 - REL).all()
    assert (first["worst_period_ratio"] >= 1.0 - REL).all()
    row = first.set_index("family").loc["a_one_rollout_one_train"]
    assert row["rr_period_at_bound_fraction"] == 1.0
    assert math.isclose(row["worst_period_ratio"], 1.0)


def test_boundary_map_rejects_zero_instances() -> None:
    """n_instances must be positive."""
    with pytest.raises(ValueError, match="n_instances"):
        boundary_map(0, seed=0)


def test_main_writes_csv_atomically(tmp_path: Path) -> None:
    """The CLI creates the parent folder, writes the summary and leaves no temporary file."""
    out = tmp_path / "nested" / "summary.csv"
    assert main(["--instances", "2", "--seed", "1", "--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns) == list(SUMMARY_COLUMNS)
    assert sorted(p.name for p in out.parent.iterdir()) == ["summary.csv"]
