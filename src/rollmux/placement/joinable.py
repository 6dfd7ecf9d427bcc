"""Which existing groups a baseline may join: the two readings of "can accommodate" (sec. 6.5).

The paper's Random "assigns arriving jobs to a random group (or a new one) that can
accommodate them" and its Greedy (Most-Idle) "assigns arriving jobs to the group with the
highest idle-time percentage"; both place the job on nodes "within this group". What a
group that "can accommodate" a job is has two readings (docs/placement.md, "Random and
Greedy: the readings"):

* ``"under-utilised"`` (reading S): the group has room for the job's state on enough of
  its nodes (host memory, GPU type; no new nodes), fewer than ``max_group_size`` jobs,
  and its status (paper Fig. 6, sec. 4.2) is under-utilised, ``T_load < T_cycle``: a full
  or saturated group "contain[s] no slack to absorb new work".
* ``"memory-only"`` (reading M): host memory, GPU type and group size only.

:class:`GroupModels` caches each group's model (:class:`rollmux.group.CoExecutionGroup`)
per group state, at worst-case (max-token) or expected phase times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeVar

from rollmux.group import CoExecutionGroup, GroupMetrics, GroupStatus
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.placement.base import feasible_nodes, group_model
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind, GroupState

__all__ = [
    "JOINABLE_READINGS",
    "Candidate",
    "GroupModels",
    "Joinable",
    "check_choice",
    "joinable_groups",
]

Joinable = Literal["under-utilised", "memory-only"]
JOINABLE_READINGS: tuple[Joinable, ...] = ("under-utilised", "memory-only")

C = TypeVar("C", bound=str)

_CACHE_MAX = 50_000


def check_choice(name: str, value: object, choices: tuple[C, ...]) -> C:
    """The element of ``choices`` equal to ``value``, else ValueError naming the option."""
    for choice in choices:
        if isinstance(value, str) and value == choice:
            return choice
    valid = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{name} must be one of {valid}, got {value!r}")


@dataclass(slots=True)
class _Entry:
    """One group state's model and the quantities derived from it on demand."""

    group: GroupState
    hw: Hardware
    model: CoExecutionGroup
    status: GroupStatus | None = None
    metrics: GroupMetrics | None = None
    node_load_s: dict[str, float] = field(default_factory=dict)


class GroupModels:
    """Group models of snapshot groups at one kind of phase times, cached per group state.

    A :class:`GroupState` is immutable and a changed group is a new object: the cache keeps
    one entry per group id, valid while it was built for that very state and hardware
    (a value key, never ``id()``; see rollmux.memo).
    """

    def __init__(self, worst_case: bool) -> None:
        """Use worst-case (max-token) phase times when ``worst_case``, else expected ones."""
        if not isinstance(worst_case, bool):
            raise ValueError(f"worst_case must be a bool, got {worst_case!r}")
        self.worst_case = worst_case
        self._cache: dict[str, _Entry] = {}

    def _entry(self, group: GroupState, snapshot: ClusterSnapshot) -> _Entry:
        """The cached entry of ``group`` (built on first use)."""
        hit = self._cache.get(group.group_id)
        if hit is not None and hit.group is group and hit.hw is snapshot.hw:
            return hit
        entry = _Entry(group, snapshot.hw, group_model(group, snapshot, self.worst_case))
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[group.group_id] = entry
        return entry

    def model(self, group: GroupState, snapshot: ClusterSnapshot) -> CoExecutionGroup:
        """The group model of ``group``."""
        return self._entry(group, snapshot).model

    def status(self, group: GroupState, snapshot: ClusterSnapshot) -> GroupStatus:
        """Under-utilised, full or saturated: T_load against T_cycle (paper Fig. 6)."""
        entry = self._entry(group, snapshot)
        if entry.status is None:
            entry.status = entry.model.status()
        return entry.status

    def metrics(self, group: GroupState, snapshot: ClusterSnapshot) -> GroupMetrics:
        """Steady-state metrics of the group's round-robin meta-iteration."""
        entry = self._entry(group, snapshot)
        if entry.metrics is None:
            entry.metrics = entry.model.metrics()
        return entry.metrics

    def node_load_s(self, group: GroupState, snapshot: ClusterSnapshot) -> dict[str, float]:
        """Summed phase time (with switches) per node of the group, by node id."""
        entry = self._entry(group, snapshot)
        if not entry.node_load_s:
            entry.node_load_s = {str(n): load for (_, n), load in entry.model.node_load_s().items()}
        return entry.node_load_s


@dataclass(frozen=True, slots=True)
class Candidate:
    """A group a baseline may join and its nodes with room for the job's state."""

    group: GroupState
    rollout_nodes: tuple[str, ...]
    train_nodes: tuple[str, ...]


def joinable_groups(
    job: RLJob,
    profile: ResolvedJob,
    snapshot: ClusterSnapshot,
    *,
    max_group_size: int,
    joinable: Joinable,
    models: GroupModels,
) -> list[Candidate]:
    """The shared groups that can accommodate ``job`` under the ``joinable`` reading.

    In creation order. A group qualifies when it has fewer than ``max_group_size`` jobs
    and at least as many rollout and training nodes with room for the job's state (and
    of its GPU types) as the job needs, since a baseline places the job "within this
    group" and provisions no node; under ``"under-utilised"`` its status must also be
    under-utilised (``T_load < T_cycle`` at the times of ``models``).
    """
    out = []
    for group in sorted(snapshot.groups.values(), key=lambda g: g.serial):
        if group.kind is not GroupKind.SHARED or len(group.jobs) >= max_group_size:
            continue
        roll_ok, train_ok = feasible_nodes(group, snapshot, job, profile)
        if len(roll_ok) < profile.rollout_nodes or len(train_ok) < profile.train_nodes:
            continue
        if joinable == "under-utilised" and (
            models.status(group, snapshot) is not GroupStatus.UNDER_UTILISED
        ):
            continue
        out.append(Candidate(group, tuple(roll_ok), tuple(train_ok)))
    return out
