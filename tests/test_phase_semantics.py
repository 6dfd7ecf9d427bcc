"""The three simulators execute phases by one statement (rollmux.phases) and agree.

On fixed groups (jobs sharing nodes, jobs pinned to several nodes, jobs repeated in a
node's order) with per-iteration phase tables, with and without migrated long tails, the
cluster replay's event model (rollmux.sim.eventmodel.EventModel), the reference simulator
(rollmux.schedule.eventsim.simulate) and the micro-benchmark simulation
(rollmux.sim.stochastic.simulate_woven, round robin only) give the same start and end of
every rollout and training, hence the same periods and per-job finish times.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rollmux.closedform import JobPhases
from rollmux.group import GroupJob
from rollmux.phases import (
    Switch,
    rollout_release_s,
    switch_paid,
    switch_s,
    tail_gpus_per_node,
    training_occupancy_s,
)
from rollmux.phasetimes import PhaseTimes
from rollmux.schedule.eventsim import DeadlockError as ReferenceDeadlock
from rollmux.schedule.eventsim import measured_period, simulate, to_frame
from rollmux.schedule.graph import (
    build_schedule,
    order_events,
    repeated_layout,
    round_robin_node_orders,
)
from rollmux.schedule.maxplus import period_of_event_graph, steady_state_period
from rollmux.sim.analytic import AnalyticModel, group_cycle
from rollmux.sim.eventmodel import DeadlockError, EventModel
from rollmux.sim.progress import PhaseDraws
from rollmux.sim.stochastic import WovenTables, simulate_woven

GPN = 8
TRAIN_SERIAL = 100  # training node t has serial 100 + t (serials are unique across pools)


@dataclass(frozen=True)
class Group:
    """A fixed group: pinnings, node orders (job indices, repeats allowed) and tables."""

    rollout_pins: list[list[int]]
    train_pins: list[list[int]]
    orders: dict[tuple[str, int], list[int]]
    multiplicity: list[int]
    meta_iterations: int
    node_s: np.ndarray  # [job iteration][job], the rollout's full-capacity occupancy
    tail_s: np.ndarray
    tail_gpus: np.ndarray
    train_s: np.ndarray
    warm_s: float
    sync_s: float

    @property
    def n(self) -> int:
        """Jobs in the group."""
        return len(self.rollout_pins)

    def shared(self, pool: str, j: int) -> bool:
        """One of job ``j``'s nodes of ``pool`` hosts another job."""
        pins = self.rollout_pins if pool == "R" else self.train_pins
        return any(set(self.orders[(pool, x)]) != {j} for x in pins[j])

    def occupancy(self) -> tuple[list[list[float]], list[list[float]]]:
        """Rollout and training occupancy tables with the switch and sync of rollmux.phases."""
        rollout, train = [], []
        for k in range(self.node_s.shape[0]):
            r_row, t_row = [], []
            for j in range(self.n):
                r_sw = switch_s(switch_paid(False, False, self.shared("R", j)), self.warm_s,
                                self.warm_s)
                t_sw = switch_s(switch_paid(False, False, self.shared("T", j)), self.warm_s,
                                self.warm_s)
                r_row.append(r_sw + float(self.node_s[k, j]))
                t_row.append(training_occupancy_s(t_sw, float(self.train_s[k, j]),
                                                  self.sync_s))
            rollout.append(r_row)
            train.append(t_row)
        return rollout, train


@st.composite
def groups(draw: st.DrawFn, tails: bool) -> Group:
    """Groups of 1-3 jobs on up to 2 rollout and 2 training nodes, tables of whole seconds."""
    n = draw(st.integers(1, 3))
    r_pins = [draw(st.sampled_from([[0], [1], [0, 1]])) for _ in range(n)]
    t_pins = [draw(st.sampled_from([[0], [1], [0, 1]])) for _ in range(n)]
    mult = [draw(st.integers(1, 2)) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    orders = round_robin_node_orders(r_pins, t_pins, list(order), mult)
    orders = {node: draw(st.permutations(seq)) for node, seq in sorted(orders.items())}
    meta = draw(st.integers(1, 3))
    rows = meta * max(mult)
    seconds = st.integers(1, 9).map(float)
    node_s = np.array([[draw(seconds) for _ in range(n)] for _ in range(rows)])
    train_s = np.array([[draw(seconds) for _ in range(n)] for _ in range(rows)])
    tail_s = np.zeros((rows, n))
    tail_gpus = np.zeros((rows, n), dtype=int)
    if tails:
        for k in range(rows):
            for j in range(n):
                if draw(st.booleans()):
                    tail_s[k, j] = draw(seconds)
                    tail_gpus[k, j] = draw(st.integers(1, GPN * len(r_pins[j])))
    warm = draw(st.sampled_from([0.0, 0.5]))
    sync = draw(st.sampled_from([0.0, 1.0]))
    return Group(r_pins, t_pins, dict(orders), mult, meta, node_s, tail_s, tail_gpus,
                 train_s, warm, sync)


def reference(g: Group) -> dict[tuple[int, str, int], tuple[float, float]]:
    """(job, phase, iteration) -> (start, end) from the reference simulator."""
    rollout, train = g.occupancy()
    schedule = build_schedule(rollout[0], train[0], g.rollout_pins, g.train_pins, g.orders)
    records = simulate(schedule, g.meta_iterations, rollout_s=rollout,
                       train_s=train, tail_s=g.tail_s.tolist(), tail_gpus=g.tail_gpus.tolist(),
                       gpus_per_node=GPN)
    return _spans(to_frame(records))


def woven(g: Group) -> dict[tuple[int, str, int], tuple[float, float]]:
    """The same from the micro-benchmark simulation (round robin, one iteration per round)."""
    rollout, train = g.occupancy()
    frame = simulate_woven(WovenTables(np.array(rollout), g.tail_s, g.tail_gpus,
                                       np.array(train)),
                           g.rollout_pins, g.train_pins, gpus_per_node=GPN)
    return _spans(frame)


def _members(g: Group) -> list[GroupJob]:
    """The group's jobs as both replay models see them (expected times: the tables' row 0;
    the event model takes each phase's time from the draws)."""
    out = []
    for j in range(g.n):
        times = PhaseTimes(rollout_s=float(g.node_s[0, j]), train_s=float(g.train_s[0, j]),
                           sync_s=g.sync_s, sync_flat_s=g.sync_s, warm_switch_s=g.warm_s,
                           cold_switch_s=g.warm_s, rollout_max_s=float(g.node_s[0, j]),
                           train_max_s=float(g.train_s[0, j]))
        out.append(GroupJob(
            JobPhases(times, GPN * len(g.rollout_pins[j]), GPN * len(g.train_pins[j])),
            rollout_nodes=tuple(g.rollout_pins[j]),
            train_nodes=tuple(TRAIN_SERIAL + x for x in g.train_pins[j]),
        ))
    return out


def event_model(g: Group) -> dict[tuple[int, str, int], tuple[float, float]]:
    """The same from the cluster replay's event model, driven as the replay driver does."""
    model = EventModel(g.n, record_phases=True, gpus_per_node=GPN)
    for j, member in enumerate(_members(g)):
        rows = g.meta_iterations * g.multiplicity[j]
        node_s = g.node_s[:rows, j]
        draws = PhaseDraws(array("d", (node_s + g.tail_s[:rows, j]).tolist()),
                           array("d", node_s.tolist()), array("d", g.train_s[:rows, j].tolist()),
                           array("i", g.tail_gpus[:rows, j].tolist()))
        # Admitted just before time 0 and ready at 0, so the orders are set before any start.
        model.add_job(j, "G", member, -1.0, 0, rows, 0.0, True, draws)
    model.set_node_orders("G", {
        (x if pool == "R" else TRAIN_SERIAL + x): seq for (pool, x), seq in g.orders.items()})
    # Finished jobs stay in the orders (every job runs the same rounds, so no node waits
    # for one): the replay driver would remove them, lifting their co-members' warm
    # switch, which the reference's fixed tables cannot follow.
    left = g.n
    while left:
        left -= len(model.run_until(math.inf))
    table = model.phase_table()
    names = {0: "rollout", 1: "train", 2: "tail"}
    frame = table.assign(phase=table.phase.map(names))
    return _spans(frame)


def _spans(frame: object) -> dict[tuple[int, str, int], tuple[float, float]]:
    """(job, phase, iteration) -> (earliest start, latest end) over the phase's rows."""
    out: dict[tuple[int, str, int], tuple[float, float]] = {}
    for rec in frame.itertuples(index=False):  # type: ignore[attr-defined]
        key = (int(rec.job), str(rec.phase), int(rec.iteration))
        lo, hi = out.get(key, (math.inf, -math.inf))
        out[key] = (min(lo, float(rec.start_s)), max(hi, float(rec.end_s)))
    return out


def _agree(a: dict, b: dict) -> None:
    """Same phases, same start and end times (to rounding)."""
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-9), key


def _finish_times(spans: dict) -> dict[int, float]:
    """Each job's finish: the end of its last training."""
    out: dict[int, float] = {}
    for (j, phase, _k), (_s, e) in spans.items():
        if phase == "train":
            out[j] = max(out.get(j, 0.0), e)
    return out


def _reference_or_deadlock(g: Group) -> dict | None:
    """The reference's spans; None (after checking the event model deadlocks too) if none."""
    try:
        return reference(g)
    except ReferenceDeadlock:
        with pytest.raises(DeadlockError):
            event_model(g)
        return None


@given(g=groups(tails=False))
def test_three_simulators_agree_without_tails(g: Group) -> None:
    """Without migration: identical phase times, finish times and periods."""
    ref = _reference_or_deadlock(g)
    if ref is None:
        return
    _agree(event_model(g), ref)
    if g.multiplicity == [1] * g.n and g.orders == round_robin_node_orders(
            g.rollout_pins, g.train_pins, list(range(g.n))):
        _agree(woven(g), ref)


@given(g=groups(tails=True))
def test_three_simulators_agree_with_migrated_tails(g: Group) -> None:
    """With migrated tails holding GPUs of their nodes: the same agreement."""
    ref = _reference_or_deadlock(g)
    if ref is None:
        return
    ev = event_model(g)
    _agree(ev, ref)
    assert _finish_times(ev) == pytest.approx(_finish_times(ref))
    if g.multiplicity == [1] * g.n and g.orders == round_robin_node_orders(
            g.rollout_pins, g.train_pins, list(range(g.n))):
        _agree(woven(g), ref)


def test_round_robin_groups_reach_the_woven_simulation() -> None:
    """The strategy draws plain round-robin groups too (woven is really compared)."""
    g = Group([[0], [0]], [[0], [0]], {("R", 0): [0, 1], ("T", 0): [0, 1]}, [1, 1], 2,
              np.full((2, 2), 4.0), np.array([[2.0, 0.0], [0.0, 0.0]]),
              np.array([[4, 0], [0, 0]]), np.full((2, 2), 3.0), 0.5, 1.0)
    ref = reference(g)
    _agree(woven(g), ref)
    _agree(event_model(g), ref)
    # Job 1's first rollout starts when job 0 releases the node (4.5 s) and runs on the
    # 4 GPUs job 0's tail leaves free until 6.5 s: 2 s at half rate, then full rate.
    assert ref[(1, "rollout", 0)] == pytest.approx((4.5, 4.5 + 2.0 + 3.5))


def test_phase_rules() -> None:
    """The switch rule, the tail's GPU fill and the capacity-share release time."""
    assert switch_paid(True, False, False) is Switch.COLD
    assert switch_paid(False, True, False) is Switch.WARM
    assert switch_paid(False, False, True) is Switch.WARM
    assert switch_paid(False, False, False) is Switch.NONE
    assert switch_s(Switch.COLD, 1.0, 5.0) == 5.0 and switch_s(Switch.NONE, 1.0, 5.0) == 0.0
    assert tail_gpus_per_node(10, [8, 8]) == [8, 2]
    assert tail_gpus_per_node(3, [4, 4]) == [3, 0]
    assert rollout_release_s(0.0, 10.0, [[]]) == 10.0
    # A tail holding half the node for 5 s: 2.5 s of work done by then, 7.5 s after.
    assert rollout_release_s(0.0, 10.0, [[(5.0, 0.5)]]) == 12.5
    # A tail holding the whole node: nothing runs until it ends.
    assert rollout_release_s(0.0, 10.0, [[(4.0, 1.0)], []]) == 14.0
    # Tails that ended before the start do not count.
    assert rollout_release_s(6.0, 10.0, [[(5.0, 0.5)]]) == 16.0


# ----------------------------------------------------------- steady state: periods and rates

STEADY_CYCLES = 40  # cycles simulated: the transient of these small groups ends well before
STEADY_SKIP = 20  # cycles measured_period skips as warm-up


@st.composite
def steady_groups(draw: st.DrawFn) -> Group:
    """Connected groups of :func:`groups` with expected (constant) phase times, no tails."""
    g = draw(groups(tails=False))
    edges = {(j, ("R", x)) for j in range(g.n) for x in g.rollout_pins[j]}
    edges |= {(j, ("T", x)) for j in range(g.n) for x in g.train_pins[j]}
    reached, frontier = {0}, [0]
    while frontier:
        j = frontier.pop()
        for k in range(g.n):
            if k not in reached and any((k, node) in edges for (i, node) in edges if i == j):
                reached.add(k)
                frontier.append(k)
    # A group whose jobs share no node is two groups: the replay never builds one.
    assume(len(reached) == g.n)
    rows = STEADY_CYCLES * max(g.multiplicity)

    def constant(table: np.ndarray) -> np.ndarray:
        return np.repeat(table[:1], rows, axis=0)

    return replace(g, meta_iterations=STEADY_CYCLES, node_s=constant(g.node_s),
                   train_s=constant(g.train_s), tail_s=np.zeros((rows, g.n)),
                   tail_gpus=np.zeros((rows, g.n), dtype=int))


def _serial_orders(g: Group) -> dict[int, list[int]]:
    """The group's node orders keyed by node serial (the replay's keys)."""
    return {(x if pool == "R" else TRAIN_SERIAL + x): list(seq)
            for (pool, x), seq in g.orders.items()}


def _max_plus_period_s(g: Group) -> float:
    """The period as schedule/repeat.py computes it: its event lists, the exact max-plus."""
    rollout, train = g.occupancy()
    offsets, durations, chains = repeated_layout(rollout[0], train[0], g.multiplicity)
    sequences = [order_events(offsets, seq, pool == "T")
                 for (pool, _x), seq in sorted(g.orders.items())]
    return period_of_event_graph(durations, chains, [0.0] * g.n, sequences)


def _analytic_finish_times(g: Group) -> dict[int, float]:
    """Each job's finish in the analytic model, driven as the replay driver drives it."""
    model = AnalyticModel()
    for j, (member, m) in enumerate(zip(_members(g), g.multiplicity, strict=True)):
        model.add_job(j, "G", member, 0.0, 0, STEADY_CYCLES * m, 0.0, True)
    model.set_node_orders("G", _serial_orders(g))
    out: dict[int, float] = {}
    while len(out) < g.n:
        out.update(model.run_until(math.inf))
    return out


@settings(max_examples=max(20, settings.default.max_examples // 2))
@given(g=steady_groups())
def test_simulators_run_at_the_exact_max_plus_period(g: Group) -> None:
    """Expected phase times, repeated orders included: every simulator runs at repeat.py's
    exact max-plus period, job j at m_j iterations per period, and finishes agree."""
    period = _max_plus_period_s(g)
    rollout, train = g.occupancy()
    schedule = build_schedule(rollout[0], train[0], g.rollout_pins, g.train_pins, g.orders)
    assert steady_state_period(schedule) == pytest.approx(period, rel=1e-9)
    ref = _reference_or_deadlock(g)
    if ref is None:  # deadlocking orders: no finite period, and the analytic model refuses
        assert math.isinf(period)
        with pytest.raises(DeadlockError):
            _analytic_finish_times(g)
        return
    assert math.isfinite(period)
    records = simulate(schedule, STEADY_CYCLES)
    assert measured_period(records, schedule, STEADY_SKIP) == pytest.approx(period, rel=1e-9)
    ev = event_model(g)
    _agree(ev, ref)
    cycle_s, mult = group_cycle(_members(g), _serial_orders(g))
    assert cycle_s == pytest.approx(period, rel=1e-9)
    assert mult == g.multiplicity
    # The analytic model runs every cycle at the steady state from time 0; the event model
    # settles after a transient that is shorter than two cycles' worth of all phases.
    work_s = sum(m * (r + t) for m, r, t in zip(g.multiplicity, rollout[0], train[0],
                                                  strict=True))
    analytic = _analytic_finish_times(g)
    for j, finish_s in _finish_times(ev).items():
        assert analytic[j] == pytest.approx(STEADY_CYCLES * period, rel=1e-9)
        assert abs(finish_s - analytic[j]) <= 2 * work_s


def test_a_short_job_repeated_runs_at_the_max_plus_period() -> None:
    """Paper-style example: a short job repeated beside a long one (shared training node).

    Job 0 (rollout 1 s, train 1 s) runs three iterations per cycle beside job 1 (rollout
    10 s, train 1 s): the training node's order 0,0,1,0 lets job 0 train while job 1 rolls
    out, so the cycle is job 1's 11 s and job 0 iterates every 11/3 s.
    """
    g = Group([[0], [1]], [[0], [0]], {("R", 0): [0, 0, 0], ("R", 1): [1],
                                       ("T", 0): [0, 0, 1, 0]}, [3, 1], STEADY_CYCLES,
              np.tile([1.0, 10.0], (3 * STEADY_CYCLES, 1)), np.zeros((3 * STEADY_CYCLES, 2)),
              np.zeros((3 * STEADY_CYCLES, 2), dtype=int), np.ones((3 * STEADY_CYCLES, 2)),
              0.0, 0.0)
    assert _max_plus_period_s(g) == pytest.approx(11.0)
    assert group_cycle(_members(g), _serial_orders(g)) == (pytest.approx(11.0), [3, 1])
    finish = _finish_times(event_model(g))
    assert finish == _finish_times(reference(g))
    assert _analytic_finish_times(g) == pytest.approx({0: 440.0, 1: 440.0})
    assert finish[1] == pytest.approx(440.0)  # job 1 is never delayed: it is the cycle
