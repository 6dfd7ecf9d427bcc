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
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
from rollmux.schedule.eventsim import simulate, to_frame
from rollmux.schedule.graph import build_schedule, round_robin_node_orders
from rollmux.sim.analytic import JobRuntime
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
    records = simulate(schedule, g.meta_iterations, "static", rollout_s=rollout,
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


def event_model(g: Group) -> dict[tuple[int, str, int], tuple[float, float]]:
    """The same from the cluster replay's event model, driven as the replay driver does."""
    model = EventModel(g.n, record_phases=True, gpus_per_node=GPN)
    for j in range(g.n):
        rows = g.meta_iterations * g.multiplicity[j]
        times = PhaseTimes(rollout_s=1.0, train_s=1.0, sync_s=g.sync_s, sync_flat_s=g.sync_s,
                           warm_switch_s=g.warm_s, cold_switch_s=g.warm_s, rollout_max_s=1.0,
                           train_max_s=1.0)
        rt = JobRuntime(
            index=j, group_id="G", colocated=False, times=times, sync_s=g.sync_s,
            coloc_ratio=1.0, rollout_nodes=tuple(g.rollout_pins[j]),
            train_nodes=tuple(TRAIN_SERIAL + x for x in g.train_pins[j]),
            rollout_gpus=GPN * len(g.rollout_pins[j]), train_gpus=GPN * len(g.train_pins[j]),
            rollout_gpus_per_node=(GPN,) * len(g.rollout_pins[j]),
            train_gpus_per_node=(GPN,) * len(g.train_pins[j]),
        )
        node_s = g.node_s[:rows, j]
        draws = PhaseDraws(array("d", (node_s + g.tail_s[:rows, j]).tolist()),
                           array("d", node_s.tolist()), array("d", g.train_s[:rows, j].tolist()),
                           array("i", g.tail_gpus[:rows, j].tolist()))
        # Admitted just before time 0 and ready at 0, so the orders are set before any start.
        model.add_job(rt, -1.0, 0, rows, 0.0, True, draws)
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
