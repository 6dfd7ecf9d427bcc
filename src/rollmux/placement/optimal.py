"""The `optimal` policy: at each arrival, the minimum-cost partition of all active jobs.

An idealised lower bound (paper sec. 6.5, "Offline Optimal"): every decision re-solves
the optimum (:func:`rollmux.placement.optimum.optimal_partition`) over the active jobs
plus the arrival, and regroups for free (no migration pause). The decision is a
:class:`rollmux.placement.base.Regrouping`; :func:`regrouping_from_partition` turns a
partition into one (shared by the ``regroup`` policy, which charges pauses).

A group of the partition whose job set equals a current group's is *kept* as it stands
when the current group is no dearer; every other group is built on new nodes and its
previously admitted jobs count as moved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.placement.base import (
    Decision,
    Placement,
    PlacementPolicy,
    Regrouping,
    Strategy,
    admissible_profile,
    check_max_group_size,
)
from rollmux.placement.optimum import ColumnCache, Partition, optimal_partition
from rollmux.placement.optimum.partition import METHODS, Method
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind, Pool

__all__ = ["OptimalPolicy", "SolveStats", "regrouping_from_partition", "solve_regrouping"]

REL_TOL = 1e-9

# Everything optimal_partition reads (its orders and space are the defaults): the jobs
# (under drift, their drifted values), the hardware, the group-size limit and the time
# limit. The jobs are a set: the optimum of a job set does not depend on the order they
# are listed in (only which of several tied optima HiGHS returns does), and a regrouping
# reorders the snapshot's jobs, so the next hour's re-solve of the same jobs lists them
# in another order.
SolveInput = tuple[frozenset[RLJob], Hardware, int, float | None, str, float]


def check_method(value: object) -> Method:
    """``method`` of an optimum policy: exact, certified or auto; ValueError otherwise."""
    if value not in METHODS:
        raise ValueError(f"method = {value!r}: expected one of {', '.join(METHODS)}")
    return value  # type: ignore[return-value]


def check_mip_gap(value: object) -> float:
    """``mip_gap`` of an optimum policy: a number in [0, 0.05]; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
        0.0 <= value <= 0.05
    ):
        raise ValueError(f"mip_gap = {value!r}: expected a number in [0, 0.05]")
    return float(value)


def regrouping_from_partition(
    partition: Partition,
    jobs: Sequence[RLJob],
    snapshot: ClusterSnapshot,
    arrival: RLJob | None,
    time_s: float,
    pause_s: Callable[[RLJob], float],
) -> Regrouping:
    """The :class:`Regrouping` that realises ``partition`` (an optimum ``Partition``)."""
    from rollmux.placement.base import NewNode

    hw = snapshot.hw
    by_id = {job.job_id: job for job in jobs}
    old_sets = {frozenset(g.jobs): g for g in snapshot.groups.values()}
    kept: list[str] = []
    placements: list[Placement] = []
    moved: list[str] = []
    offset = 0
    cost_after = 0.0
    for plan in partition.groups:
        members = frozenset(plan.job_ids)
        old = old_sets.get(members)
        if old is not None:
            old_cost = snapshot.group_cost_usd_per_h(old.group_id)
            if old_cost <= plan.cost_usd_per_h * (1.0 + REL_TOL):
                kept.append(old.group_id)
                cost_after += old_cost
                continue
        cost_after += plan.cost_usd_per_h
        first = by_id[plan.job_ids[0]]
        (group_id,) = snapshot.new_ids("G", 1, offset)
        r_ids = snapshot.new_ids("R", plan.rollout_nodes, offset + 1)
        t_ids = snapshot.new_ids("T", plan.train_nodes, offset + 1 + plan.rollout_nodes)
        offset += 1 + plan.rollout_nodes + plan.train_nodes
        new_nodes = tuple(NewNode(n, Pool.ROLLOUT, first.rollout_gpu_type) for n in r_ids) + tuple(
            NewNode(n, Pool.TRAIN, first.train_gpu_type) for n in t_ids
        )
        for rank, k in enumerate(plan.order):
            job = by_id[plan.job_ids[k]]
            if job.job_id in snapshot.jobs:
                moved.append(job.job_id)
            placements.append(
                Placement(
                    job=job,
                    strategy=Strategy.REGROUP,
                    group_id=group_id,
                    rollout_nodes=tuple(r_ids[i] for i in plan.rollout_pinning[k]),
                    train_nodes=tuple(t_ids[i] for i in plan.train_pinning[k]),
                    new_nodes=new_nodes if rank == 0 else (),
                    marginal_cost_usd_per_h=plan.cost_usd_per_h if rank == 0 else 0.0,
                    new_group=rank == 0,
                    group_kind=GroupKind.SHARED,
                    profile=resolve(job, hw),
                    meta_iteration_s=plan.meta_iteration_s,
                )
            )
    moved_sorted = tuple(sorted(moved))
    return Regrouping(
        job=arrival,
        time_s=time_s,
        kept_groups=tuple(kept),
        placements=tuple(placements),
        moved_jobs=moved_sorted,
        pause_s={job_id: pause_s(by_id[job_id]) for job_id in moved_sorted},
        marginal_cost_usd_per_h=cost_after - snapshot.cost_usd_per_h(),
        cost_usd_per_h=cost_after,
        solver=partition.solver,
        solve_seconds=partition.seconds,
    )


def solve_regrouping(
    snapshot: ClusterSnapshot,
    arrival: RLJob | None,
    time_s: float,
    pause_s: Callable[[RLJob], float],
    max_group_size: int,
    time_limit_s: float | None,
    stats: SolveStats | None = None,
    method: Method = "auto",
    mip_gap: float = 0.0,
) -> Regrouping:
    """Re-solve the optimum over the snapshot's jobs (plus ``arrival``) as a Regrouping.

    With ``stats`` the solve reuses (and extends) ``stats.cache``, the columns of earlier
    solves, and is counted there (with its certified gap). ``method``: see
    :func:`optimal_partition` (``"auto"``: exact where cheap, else certified); ``mip_gap``
    the relative gap at which the exact method's MILP may stop (its dual bound is kept).
    """
    jobs = [placed.job for placed in snapshot.jobs.values()]
    if arrival is not None:
        jobs.append(arrival)
    key: SolveInput = (
        frozenset(jobs), snapshot.hw, max_group_size, time_limit_s, method, mip_gap
    )
    partition = None if stats is None else stats.last_partition(key)
    if partition is None:
        partition = optimal_partition(
            jobs,
            snapshot.hw,
            max_group_size,
            time_limit_s,
            cache=None if stats is None else stats.cache,
            method=method,
            mip_gap=mip_gap,
        )
        if stats is not None:
            stats.record(key, partition)
    if stats is not None:
        stats.decision(time_s, partition)
    return regrouping_from_partition(partition, jobs, snapshot, arrival, time_s, pause_s)



class SolveStats:
    """A policy's optimum solves: the persistent column cache and what the solves did.

    ``solves`` counts the re-solves, ``unproven_solves`` those not proven optimal (the
    per-solve ``time_limit_s`` ran out), ``seconds`` their total wall time,
    ``columns_searched`` the job sets searched (the rest came from the cache),
    ``reused_solves`` the calls answered by the last solve's partition because their
    input was equal to its input, the same set of job values in any order (a ``regroup``
    re-solve with no arrival, departure or profile change since the previous one); those
    are not counted in ``solves``. ``certified_solves`` counts the solves made by the
    certified method (column generation with a proven lower bound), and ``decisions``
    keeps one row per decision (reused or not): its time, job count, cost, proven lower
    bound, certified gap and method (:meth:`summary`).
    """

    def __init__(self) -> None:
        """No solves yet; an empty column cache."""
        self.cache = ColumnCache()
        self.solves = 0
        self.unproven_solves = 0
        self.seconds = 0.0
        self.columns_searched = 0
        self.reused_solves = 0
        self.certified_solves = 0
        self.decisions: list[dict[str, float | int | str]] = []
        self._last: tuple[SolveInput, Partition] | None = None

    def last_partition(self, key: SolveInput) -> Partition | None:
        """The last solve's partition if its input equals ``key`` and it may be reused.

        Reused: a proven optimum, or any partition found without a time limit (the
        certified method counts work, not seconds, so the same input gives the same
        partition and bound). A partition cut short by the time limit is not reused:
        with more time a re-solve may find a better one.
        """
        if self._last is None or self._last[0] != key:
            return None
        if not self._last[1].proven_optimal and key[3] is not None:
            return None
        self.reused_solves += 1
        return self._last[1]

    def record(self, key: SolveInput, partition: Partition) -> None:
        """Count one solve of input ``key``, kept for :meth:`last_partition`."""
        self.solves += 1
        self.unproven_solves += not partition.proven_optimal
        self.seconds += partition.seconds
        self.columns_searched += partition.n_searched
        self.certified_solves += partition.method == "certified"
        self._last = (key, partition)

    def decision(self, time_s: float, partition: Partition) -> None:
        """Record the partition a decision at ``time_s`` took, with its certified gap."""
        self.decisions.append({
            "time_s": float(time_s),
            "jobs": sum(len(g.job_ids) for g in partition.groups),
            "cost_usd_per_h": partition.cost_usd_per_h,
            "lower_bound_usd_per_h": partition.bound_usd_per_h,
            "gap": partition.gap,
            "method": partition.method,
        })

    def summary(self) -> dict[str, object]:
        """The optimum's keys of a replay's summary.json (docs/optimum.md, section 6).

        ``optimum_gap``: the largest certified gap over the decisions (0: every decision
        proven optimal; NaN: some decision has no bound, its time limit ran out);
        ``optimum_gap_mean`` their mean; ``optimum_decisions`` the per-decision rows.
        """
        gaps = [float(row["gap"]) for row in self.decisions]
        return {
            "optimum_gap": max(gaps, default=0.0) if not any(map(math.isnan, gaps))
            else math.nan,
            "optimum_gap_mean": sum(gaps) / len(gaps) if gaps else 0.0,
            # Counts only (no wall times: a replay's outputs are byte-identical).
            "optimum_solves": {
                **{k: v for k, v in self.as_dict().items() if k != "solve_seconds"},
                "certified_solves": self.certified_solves,
            },
            "optimum_decisions": list(self.decisions),
        }

    def as_dict(self) -> dict[str, float]:
        """The counters (for reports)."""
        return {
            "solves": self.solves,
            "unproven_solves": self.unproven_solves,
            "solve_seconds": self.seconds,
            "columns_searched": self.columns_searched,
            "reused_solves": self.reused_solves,
        }


class OptimalPolicy(PlacementPolicy):
    """Free regrouping to the minimum-cost partition at every arrival (a lower bound)."""

    name = "optimal"
    options = frozenset({"max_group_size", "time_limit_s", "method", "mip_gap"})

    def __init__(
        self,
        max_group_size: int = 5,
        time_limit_s: float | None = None,
        method: Method = "auto",
        mip_gap: float = 0.0,
    ) -> None:
        """Set the group-size limit, the optimum's time budget per decision and its method.

        ``self.stats`` (:class:`SolveStats`) keeps the columns across decisions and counts
        the solves, among them those not proven optimal within ``time_limit_s``, and each
        decision's certified gap. ``method``: ``"auto"`` (exact where cheap, else
        certified), ``"exact"`` or ``"certified"`` (:func:`optimal_partition`); ``mip_gap``
        the relative gap at which the MILP may stop (0: proven optimal).
        """
        self.max_group_size = check_max_group_size(max_group_size)
        self.time_limit_s = time_limit_s
        self.method = check_method(method)
        self.mip_gap = check_mip_gap(mip_gap)
        self.stats = SolveStats()

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Decision:
        """The minimum-cost partition of the active jobs plus ``job`` (no pauses)."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        if any(g.kind is not GroupKind.SHARED for g in snapshot.groups.values()):
            raise ValueError("snapshot holds non-shared groups; optimal needs its own cluster")
        time_s = max(snapshot.time_s, job.arrival_s)
        return solve_regrouping(
            snapshot,
            job,
            time_s,
            lambda _job: 0.0,
            self.max_group_size,
            self.time_limit_s,
            self.stats,
            self.method,
            self.mip_gap,
        )
