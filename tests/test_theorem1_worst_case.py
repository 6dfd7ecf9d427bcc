"""Round-robin's worst case (rollmux.theorem1.worst_case) and the smallest counterexamples.

The search is checked on its own terms: deterministic, every reported ratio achieved by a
recorded schedule (re-executed independently), never above its proven bound, and equal to
the exhaustive maximum on a small domain. The smallest counterexamples of docs/theorem1.md
are literals here, each re-decided and (where cheap) shown minimal.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import settings

from rollmux.cli import main
from rollmux.schedule.eventsim import measured_period, simulate
from rollmux.schedule.graph import build_schedule
from rollmux.schedule.search import utilisation
from rollmux.theorem1 import Instance
from rollmux.theorem1.counterexamples import compositions, smallest_counterexample
from rollmux.theorem1.worst_case import (
    CHECK_COLUMNS,
    WORST_CASE_COLUMNS,
    Budget,
    Domain,
    Genome,
    cells,
    check_table,
    search_cell,
    worst_case_table,
)

REL = 1e-9
TINY = Budget(examples=8, optimizer_generations=1, optimizer_popsize=1, optimizer_starts=1,
              polish_evaluations=4, max_vectors=3, local_evaluations=15)


def _parse(compact: str) -> Instance:
    """Inverse of Instance.compact."""
    fields = dict(part.split("=") for part in compact.split(";"))

    def nums(text: str) -> tuple[float, ...]:
        return tuple(float(x) for x in text.split(","))

    def pins(text: str) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(int(n) for n in p.split("+")) for p in text.split(","))

    return Instance(nums(fields["r"]), nums(fields["t"]), pins(fields["R"]), pins(fields["T"]))


def _orders(text: str) -> dict[tuple[str, int], list[int]]:
    """``R0:0 1|T0:1 0`` -> {("R", 0): [0, 1], ("T", 0): [1, 0]}."""
    out = {}
    for part in text.split("|"):
        node, seq = part.split(":")
        out[(node[0], int(node[1:]))] = [int(j) for j in seq.split()]
    return out


# --------------------------------------------------------------------------- domains


def test_domain_decodes_each_family() -> None:
    """Unsaturated families raise the anchor; crossing needs both training nodes and one group."""
    one = Domain("a_one_rollout_one_train", 3, 9)
    inst = one.decode(Genome(2, (0, 0, 0), (0, 0, 0), (1, 5, 6, 1, 0, 0)))
    assert inst is not None and inst.rollout_s == (1.0, 5.0, 7.0)  # 7 = trainings of 0 and 1
    assert inst.train_s[2] >= 6.0
    sat = Domain("e_saturated", 2, 9)
    assert sat.decode(Genome(0, (0, 0), (0, 0), (1, 1, 2, 2))) is not None
    assert sat.decode(Genome(0, (0, 0), (0, 0), (5, 5, 1, 1))) is not None
    assert sat.decode(Genome(0, (0, 1), (0, 0), (5, 1, 1, 5))) is None  # T_load < T_cycle
    cross = Domain("c_crossing", 2, 9)
    # job 0 on R0/T0, job 1 on R1/T1: two separate groups, not one
    assert cross.decode(Genome(0, (0, 1), (0, 1), (1, 1, 0, 0))) is None
    assert cross.decode(Genome(0, (0, 1), (0, 2), (1, 1, 0, 0))) is not None
    assert len(list(Domain("a_one_rollout_one_train", 2, 2).genomes())) == 2 * 2 * 2 * 9


def test_cells_cover_each_family_once_per_objective() -> None:
    """(a) and (d) one objective each; (b), (c), (e) both."""
    pairs = cells()
    assert len(pairs) == 8 and len(set(pairs)) == 8
    assert ("d_cost_weighted", "cost_weighted") in pairs
    with pytest.raises(ValueError, match="family"):
        cells(["z_bogus"])
    with pytest.raises(ValueError, match="n_jobs"):
        Domain("b_shared_train", 1, 9)
    with pytest.raises(ValueError, match="examples"):
        Budget(examples=0)


# --------------------------------------------------------------------------- search


def test_search_cell_is_deterministic_and_witnessed() -> None:
    """Same seed, same row; the ratio is achieved by the recorded schedule, within its bound."""
    first = search_cell("b_shared_train", "aggregate", 3, 9, TINY, seed=5)
    second = search_cell("b_shared_train", "aggregate", 3, 9, TINY, seed=5)
    assert first == second
    assert set(first) == set(WORST_CASE_COLUMNS)
    ratio = float(first["ratio"])  # type: ignore[arg-type]
    assert 1.0 <= ratio <= float(first["upper_bound_ratio"]) * (1 + REL)  # type: ignore[arg-type]
    instance = _parse(str(first["instance"]))
    schedule = build_schedule(instance.rollout_s, instance.train_s, instance.rollout_node,
                              instance.train_node, _orders(str(first["best_node_orders"])))
    assert measured_period(simulate(schedule, 40), schedule, 10) == pytest.approx(
        float(first["best_period_s"]), rel=1e-9)  # type: ignore[arg-type]
    util = utilisation(schedule, float(first["best_period_s"]))  # type: ignore[arg-type]
    assert util == pytest.approx(float(first["best_utilisation"]), rel=REL)  # type: ignore[arg-type]


def test_search_reaches_the_exhaustive_maximum_on_a_small_domain() -> None:
    """Shared training, 2 jobs, durations 1..2: the search finds the true maximum, 11/8."""
    budget = Budget(examples=40, optimizer_generations=2, optimizer_popsize=2,
                    optimizer_starts=2, polish_evaluations=16, max_vectors=6,
                    local_evaluations=30)
    table = check_table(["b_shared_train"], [2], 2, budget)
    assert tuple(table.columns) == CHECK_COLUMNS
    row = table[table["objective"] == "aggregate"].iloc[0]
    assert row["n_inexact"] == 0
    assert row["exhaustive_ratio"] == pytest.approx(11 / 8, rel=REL)
    assert bool(table["search_reaches_exhaustive"].all())


def test_worst_case_table_and_cli(tmp_path: Path) -> None:
    """One row per cell with every column; the CLI writes the same table atomically."""
    table = worst_case_table(["e_saturated"], [2], 5, TINY, seed=1)
    assert tuple(table.columns) == WORST_CASE_COLUMNS
    assert len(table) == 2 and (table["ratio"] >= 1.0).all()
    out = tmp_path / "nested" / "worst.csv"
    assert main(["theorem1-worst-case", "--families", "e_saturated", "--sizes", "2",
                 "--max-duration", "5", "--examples", "8", "--generations", "1", "--popsize", "1",
                 "--starts", "1",
                 "--polish", "4", "--vectors", "3", "--local-evaluations", "15", "--seed", "1",
                 "--out", str(out)]) == 0
    written = pd.read_csv(out)
    assert written["instance"].tolist() == table["instance"].tolist()
    assert sorted(p.name for p in out.parent.iterdir()) == ["worst.csv"]


# --------------------------------------------------------------------------- counterexamples


def test_compositions_enumerate_every_split() -> None:
    """Positive compositions of 5 into 3 parts: C(4, 2) = 6, each summing to 5."""
    parts = list(compositions(5, 3))
    assert len(parts) == 6 and all(sum(p) == 5 and min(p) >= 1 for p in parts)


@pytest.mark.parametrize(
    ("layout", "jobs", "predicate", "objective", "compact", "total"),
    [
        ("shared_train", 2, "repetition_beats_round_robin", "aggregate",
         "r=1,2;t=1,1;R=0,1;T=0,0", 5),
        ("one_one", 2, "repetition_beats_round_robin", "cost_weighted",
         "r=1,6;t=1,1;R=0,0;T=0,0", 9),
        ("gang", 3, "round_robin_above_bound", "aggregate",
         "r=2,1,2;t=1,1,1;R=0,0+1,1;T=0,0,0", 8),
        ("crossing_single", 4, "round_robin_above_bound", "aggregate",
         "r=1,1,1,1;t=1,1,1,1;R=0,0,1,1;T=0,1,0,1", 8),
    ],
)
def test_smallest_counterexamples(layout: str, jobs: int, predicate: str, objective: str,
                                  compact: str, total: int) -> None:
    """Each statement's smallest counterexample (by total duration), every smaller one decided."""
    found = smallest_counterexample(layout, jobs, predicate, objective=objective,  # type: ignore[arg-type]
                                    max_total_s=total)
    assert found.instance is not None
    assert found.instance.compact() == compact
    assert found.total_s == total
    assert found.undecided == ()


def test_no_small_counterexample_within_theorem_scope() -> None:
    """Two jobs: saturated 1 + 1 and gang groups stay at the bound (up to small totals)."""
    saturated = smallest_counterexample("one_one", 2, "repetition_beats_round_robin",
                                        condition="saturated", max_total_s=14)
    assert saturated.instance is None and saturated.undecided == ()
    gang = smallest_counterexample("gang", 2, "round_robin_above_bound", condition="any",
                                   max_total_s=12)
    assert gang.instance is None and gang.n_checked > 100


@pytest.mark.slow
@pytest.mark.skipif(settings.default.max_examples < 1000,
                    reason="exhaustive minimality (about 40 s CPU): HYPOTHESIS_PROFILE=thorough")
def test_three_job_one_one_counterexample_is_smallest() -> None:
    """No unsaturated 3-job 1 + 1 group of total duration <= 10 gains by repetition (<= 3).

    Two total-10 groups need every order of the vector (3, 3, 2): about 15 s each. The
    counterexample itself is checked in tests/test_bounds.py.
    """
    found = smallest_counterexample("one_one", 3, "repetition_beats_round_robin",
                                    max_total_s=11)
    assert found.instance is not None
    assert found.instance.compact() == "r=1,1,2;t=1,1,5;R=0,0,0;T=0,0,0"
    assert found.undecided == ()
