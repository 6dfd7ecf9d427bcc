"""Which reading of Theorem 1 each counterexample refutes (docs/theorem1.md, "Readings").

The paper's words, "maximizes the aggregate utilization of both rollout and training
pools" (§4.3), admit several readings: the sum ``U_R + U_T`` (aggregate), the
cost-weighted utilisation, or each pool on its own. For every counterexample of
docs/theorem1.md (:data:`COUNTEREXAMPLES`) :func:`readings_table` gives round-robin's and
the best schedule's utilisation under each reading, the best schedule being the one of
highest utilisation under the counterexample's objective (multiplicities ``1..M``), and
the best *both-pools* ratio ``min(U_R / U_R^RR, U_T / U_T^RR)`` over all schedules
(:func:`rollmux.theorem1.worst_case.both_pools_gain`): above 1, some schedule beats
round-robin on both pools at once and every reading is refuted.
"""

from __future__ import annotations

import pandas as pd

from rollmux.schedule.graph import round_robin_schedule
from rollmux.schedule.repeat import repeat_schedule
from rollmux.schedule.search import pool_utilisation, utilisation
from rollmux.theorem1.boundary import Instance

__all__ = ["COUNTEREXAMPLES", "READING_COLUMNS", "parse_instance", "readings_table"]

#: (name, instance ``r=..;t=..;R=..;T=..``, objective it was found under): the
#: counterexamples of docs/theorem1.md ("What fails" and "Where each statement stops").
COUNTEREXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("1+1, 3 jobs", "r=1,5,13;t=6,1,9;R=0,0,0;T=0,0,0", "aggregate"),
    ("1+1, 3 jobs, smallest", "r=1,1,2;t=1,1,5;R=0,0,0;T=0,0,0", "aggregate"),
    ("shared training, 2 rollout nodes", "r=1,10;t=1,1;R=0,1;T=0,0", "aggregate"),
    ("shared training, smallest", "r=1,2;t=1,1;R=0,1;T=0,0", "aggregate"),
    ("crossing", "r=5,2;t=7,5;R=0,0;T=0,1", "aggregate"),
    ("cost-weighted, 1+1", "r=10,1;t=1,1;R=0,0;T=0,0", "cost_weighted"),
    ("cost-weighted, 1+1, smallest", "r=1,6;t=1,1;R=0,0;T=0,0", "cost_weighted"),
)
READING_COLUMNS: tuple[str, ...] = (
    "name", "instance", "objective", "max_multiplicity", "best_multiplicity",
    "rr_period_s", "best_period_s",
    "rr_util_rollout", "best_util_rollout", "rr_util_train", "best_util_train",
    "rr_aggregate", "best_aggregate", "rr_cost_weighted", "best_cost_weighted",
    "refutes_aggregate", "refutes_cost_weighted", "refutes_rollout", "refutes_train",
    "both_pools_ratio", "both_pools_multiplicity", "both_pools_exact",
)
REL_TOL = 1e-9


def parse_instance(compact: str) -> Instance:
    """Inverse of :meth:`rollmux.theorem1.boundary.Instance.compact` (ValueError names it)."""
    try:
        fields = dict(part.split("=") for part in compact.split(";"))
        r = tuple(float(x) for x in fields["r"].split(","))
        t = tuple(float(x) for x in fields["t"].split(","))
        pins_r = tuple(tuple(int(x) for x in p.split("+")) for p in fields["R"].split(","))
        pins_t = tuple(tuple(int(x) for x in p.split("+")) for p in fields["T"].split(","))
    except (KeyError, ValueError) as exc:
        raise ValueError(f"instance {compact!r}: expected r=..;t=..;R=..;T=..") from exc
    return Instance(r, t, pins_r, pins_t)


def readings_table(max_multiplicity: int = 3,
                   examples: tuple[tuple[str, str, str], ...] = COUNTEREXAMPLES) -> pd.DataFrame:
    """One row per counterexample: every reading of round-robin and of the best schedule."""
    from rollmux.theorem1.worst_case import both_pools_gain

    rows = []
    for name, compact, objective in examples:
        inst = parse_instance(compact)
        best = repeat_schedule(inst.rollout_s, inst.train_s, inst.rollout_node, inst.train_node,
                               max_multiplicity=max_multiplicity,
                               objective=objective,  # type: ignore[arg-type]
                               exact_limit=20_000)
        assert best is not None  # no caps: round-robin is a candidate
        rr = round_robin_schedule(inst.rollout_s, inst.train_s, inst.rollout_node,
                                  inst.train_node)
        row: dict[str, object] = {
            "name": name, "instance": compact, "objective": objective,
            "max_multiplicity": max_multiplicity,
            "best_multiplicity": ",".join(str(m) for m in best.multiplicity),
            "rr_period_s": best.round_robin_period_s, "best_period_s": best.period_s,
        }
        pools = {"rr": pool_utilisation(rr, best.round_robin_period_s),
                 "best": pool_utilisation(best.schedule, best.period_s)}
        for who, pool in (("rr", "R"), ("best", "R"), ("rr", "T"), ("best", "T")):
            row[f"{who}_util_{'rollout' if pool == 'R' else 'train'}"] = pools[who][pool]
        for obj in ("aggregate", "cost_weighted"):
            row[f"rr_{obj}"] = utilisation(rr, best.round_robin_period_s, obj)  # type: ignore[arg-type]
            row[f"best_{obj}"] = utilisation(best.schedule, best.period_s, obj)  # type: ignore[arg-type]
        for reading in ("aggregate", "cost_weighted", "util_rollout", "util_train"):
            better = float(row[f"best_{reading}"]) > float(row[f"rr_{reading}"]) * (1 + REL_TOL)  # type: ignore[arg-type]
            key = reading.replace("util_", "")
            row[f"refutes_{key}"] = better
        both = both_pools_gain(inst, max_multiplicity)
        row["both_pools_ratio"] = both.ratio
        row["both_pools_multiplicity"] = ",".join(str(m) for m in both.multiplicity)
        row["both_pools_exact"] = both.exact
        rows.append(row)
    return pd.DataFrame(rows, columns=list(READING_COLUMNS))
