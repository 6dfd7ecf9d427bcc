"""The 1 + 1 supremum over all multiplicities (rollmux.theorem1.supremum) and the readings.

docs/theorem1.md proves the supremum; here its closed form, its witness and the
ping-pong schedules approaching it are checked against exact max-plus periods, and the
readings of the documented counterexamples against their utilisations.
"""

from __future__ import annotations

import pytest

from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.graph import build_schedule
from rollmux.theorem1.readings import parse_instance, readings_table
from rollmux.theorem1.supremum import ping_pong, supremum, supremum_table, witness
from rollmux.theorem1.worst_case import Domain, both_pools_gain, genome_of

REL = 1e-9


def test_supremum_closed_forms() -> None:
    """Aggregate: 2 (n-1+D) / (2 (n-1) + D), e.g. 22/13 at 3 jobs; 2 jobs: 1 (Theorem C)."""
    sup = supremum("a_one_rollout_one_train", "aggregate", 3, 9)
    assert sup is not None and sup.value == pytest.approx(22 / 13, rel=REL)
    assert sup.instance is not None
    assert sup.instance.compact() == "r=11,1,1;t=11,1,1;R=0,0,0;T=0,0,0"
    for n in (3, 4, 5, 6):
        got = supremum("a_one_rollout_one_train", "aggregate", n, 9)
        assert got is not None
        assert got.value == pytest.approx(2 * (n - 1 + 9) / (2 * (n - 1) + 9), rel=REL)
    two = supremum("a_one_rollout_one_train", "aggregate", 2, 9)
    assert two is not None and two.value == 1.0
    assert supremum("d_cost_weighted", "cost_weighted", 2, 9) is None  # not derived
    assert supremum("b_shared_train", "aggregate", 3, 9) is None  # not a 1 + 1 family
    cost = supremum("d_cost_weighted", "cost_weighted", 3, 9)
    assert cost is not None and cost.instance is not None
    # anchor extras (D, 0): U_RR = 1 - 2.85 * 9 / (3.85 * 13)
    assert cost.value == pytest.approx(1 / (1 - 2.85 * 9 / (3.85 * 13)), rel=REL)


def test_witness_lies_in_the_domain_and_minimises_round_robin() -> None:
    """The witness decodes from a genome of the worst-case domain; no instance beats its U_RR."""
    from rollmux.theorem1.exhaustive import batches, ratio_bounds

    for family, objective in (("a_one_rollout_one_train", "aggregate"),
                              ("d_cost_weighted", "cost_weighted")):
        domain = Domain(family, 3, 4)
        inst = witness(3, 4, objective)
        assert genome_of(domain, inst) is not None
        lowest = min(float(ratio_bounds(part, objective, 1)[2].min())
                     for part in batches(domain))
        sup = supremum(family, objective, 3, 4)
        assert sup is not None
        top = 2.0 if objective == "aggregate" else 1.0
        assert top / lowest == pytest.approx(sup.value, rel=REL)


def test_ping_pong_approaches_the_supremum() -> None:
    """Exact periods meet the proof's timetable; the ratio rises towards the supremum."""
    inst = witness(3, 9, "aggregate")
    ratios = []
    for k in (2, 3, 10, 40):
        pp = ping_pong(inst, k, "aggregate")
        assert pp.period_s <= pp.closed_form_period_s * (1 + REL)
        ratios.append(pp.ratio)
    assert ratios == sorted(ratios) and ratios[-1] < 22 / 13
    assert ratios[-1] > 1.5  # k = 40: (22 + 160) / 101 over 26 / 22
    # the schedule really runs at that period (independent event simulation)
    seq = [0] + [1, 2] * 3
    schedule = build_schedule(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node,
                              {("R", 0): seq, ("T", 0): seq})
    assert measured_period(simulate(schedule, 40), schedule, 10) == pytest.approx(
        ping_pong(inst, 3, "aggregate").period_s, rel=1e-9)


def test_supremum_table_rows() -> None:
    """One row per k for proven cells, one 'open' row otherwise."""
    table = supremum_table([2, 3], 9, (1, 2))
    assert set(table["status"]) == {"proven", "proven (Theorem C)", "open"}
    assert len(table[table["n_jobs"] == 3]) == 4


def test_readings_of_the_documented_counterexample() -> None:
    """(1,5,13)/(6,1,9): the sum rises, rollout utilisation falls; no schedule raises both."""
    table = readings_table(2, (("x", "r=1,5,13;t=6,1,9;R=0,0,0;T=0,0,0", "aggregate"),))
    row = table.iloc[0]
    assert row["best_multiplicity"] == "2,2,1"
    assert row["rr_aggregate"] == pytest.approx(35 / 22, rel=REL)
    assert row["best_aggregate"] == pytest.approx(48 / 30, rel=REL)
    assert row["rr_util_rollout"] == pytest.approx(19 / 22, rel=REL)
    assert row["best_util_rollout"] == pytest.approx(25 / 30, rel=REL)
    assert bool(row["refutes_aggregate"]) and not bool(row["refutes_rollout"])
    assert row["both_pools_ratio"] == pytest.approx(1.0)


def test_both_pools_gain_finds_a_schedule_better_on_both() -> None:
    """Shared training, r = (3, 9), t = (1, 3): three iterations of the short job raise both."""
    gain = both_pools_gain(parse_instance("r=3,9;t=1,3;R=0,1;T=0,0"), 3)
    assert gain.ratio == pytest.approx(1.5, rel=REL) and gain.exact
    assert gain.multiplicity == (3, 1)
    with pytest.raises(ValueError, match="instance"):
        parse_instance("r=1;t=")
