"""The `regroup` policy: static RollMux placement between hourly optimal re-partitions.

Arrivals are placed by Algorithm 1 (:class:`rollmux.placement.rollmux.RollMuxPolicy`).
When the simulator asks (:meth:`RegroupPolicy.regroup`) and at least
``regroup_interval_s`` (default one hour) has passed since the last re-partition, the
optimum over all active jobs is re-solved. If it is cheaper than the current placement,
every moved job (its set of group-mates changed, or its group was rebuilt on other
nodes) pays a migration and restart pause of :func:`migration_pause_s` (paper sec. 6.6:
measured 197 s at 7B to 419 s at 32B); otherwise nothing moves.
"""

from __future__ import annotations

import math
from numbers import Real

from rollmux.jobs import RLJob
from rollmux.placement.base import (
    Placement,
    PlacementPolicy,
    Regrouping,
    check_max_group_size,
)
from rollmux.placement.optimal import SolveStats, check_method, check_mip_gap, solve_regrouping
from rollmux.placement.optimum.partition import Method
from rollmux.placement.rollmux import RollMuxPolicy
from rollmux.placement.snapshot import ClusterSnapshot

__all__ = ["MIGRATION_PAUSE_ANCHORS", "RegroupPolicy", "migration_pause_s"]

# (model size in billions of parameters, pause in seconds), paper sec. 6.6.
MIGRATION_PAUSE_ANCHORS = ((7.0, 197.0), (32.0, 419.0))


def _finite_positive(name: str, value: object) -> float:
    """``value`` as a float if it is a finite number > 0, else ValueError naming ``name``.

    ``value`` is typed ``object`` on purpose: narrowing a ``float`` with
    ``isinstance(..., numbers.Real)`` makes mypy treat the rest as unreachable (typeshed's
    float does not subclass Real), which hid the attribute types of RegroupPolicy.
    """
    out = float(value) if isinstance(value, Real) and not isinstance(value, bool) else math.nan
    if not (math.isfinite(out) and out > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return out


def migration_pause_s(model_size_b: float) -> float:
    """Migration + restart pause: 197 s (7B) to 419 s (32B), linear between, clamped."""
    size_b = _finite_positive("model_size_b", model_size_b)
    (x0, y0), (x1, y1) = MIGRATION_PAUSE_ANCHORS
    x = min(max(size_b, x0), x1)
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


class RegroupPolicy(PlacementPolicy):
    """RollMux between re-solves; hourly optimal regrouping with migration pauses."""

    name = "regroup"
    options = frozenset(
        {"regroup_interval_s", "max_group_size", "time_limit_s", "method", "mip_gap"}
    )

    def __init__(
        self,
        regroup_interval_s: float = 3600.0,
        max_group_size: int = 5,
        time_limit_s: float | None = None,
        method: Method = "auto",
        mip_gap: float = 0.0,
    ) -> None:
        """Set the re-solve interval, the group-size limit, the optimum's time budget,
        method (``"auto"``: exact where cheap, else certified; ``optimal_partition``) and
        the MILP's stopping gap (0: proven optimal)."""
        self.regroup_interval_s = _finite_positive("regroup_interval_s", regroup_interval_s)
        self.max_group_size = check_max_group_size(max_group_size)
        self.time_limit_s = time_limit_s
        self.method = check_method(method)
        self.mip_gap = check_mip_gap(mip_gap)
        self.static = RollMuxPolicy(max_group_size=max_group_size)
        # Column cache across re-solves and solve counters (unproven solves among them).
        self.stats = SolveStats()

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Algorithm 1 (placement is static between re-solves)."""
        return self.static.place(job, snapshot)

    def due(self, snapshot: ClusterSnapshot) -> bool:
        """Whether a re-partition is due at ``snapshot.time_s``."""
        return snapshot.time_s - snapshot.last_regroup_s >= self.regroup_interval_s * (1 - 1e-12)

    def regroup(self, snapshot: ClusterSnapshot) -> Regrouping | None:
        """The optimal re-partition of the active jobs when due (None otherwise or if empty)."""
        if not self.due(snapshot) or not snapshot.jobs:
            return None
        decision = solve_regrouping(
            snapshot,
            None,
            snapshot.time_s,
            lambda job: migration_pause_s(job.model_size_b),
            self.max_group_size,
            self.time_limit_s,
            self.stats,
            self.method,
            self.mip_gap,
        )
        current = snapshot.cost_usd_per_h()
        if decision.cost_usd_per_h < current * (1.0 - 1e-9):
            return decision
        # No cheaper partition: migrating would pause jobs for nothing. Keep every group
        # and record the re-solve, so the next one waits a full interval.
        return Regrouping(
            job=None,
            time_s=snapshot.time_s,
            kept_groups=tuple(snapshot.groups),
            placements=(),
            moved_jobs=(),
            pause_s={},
            marginal_cost_usd_per_h=0.0,
            cost_usd_per_h=current,
            solver=decision.solver,
            solve_seconds=decision.solve_seconds,
            reason="no cheaper partition than the current one; nothing moved",
        )
