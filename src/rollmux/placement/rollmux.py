"""RollMux's inter-group placement, Algorithm 1 of the paper (notes section 3).

For an arriving job j and every co-execution group G of the snapshot:

1. *Skip* G when it is full (``max_group_size`` jobs) or, with saturation pruning, when
   its worst-case ``T_load >= T_cycle`` (paper Fig. 6: adding work stretches everyone).
2. *Cheap necessary conditions* (no meta-iteration is simulated): the job's GPU types
   match the group's nodes; enough nodes with free host memory (per-node residency);
   ``max(T_cycle', T_load') <= min_k SLO_k * T_solo_k`` over G + j, where ``T_cycle'``
   and ``T_load'`` are lower bounds of the new group's chain and bottleneck load
   (switch costs included where a node becomes shared). The meta-iteration is never
   shorter than either, so a candidate failing this bound cannot meet the SLOs.
3. *Candidates*: direct packing on every combination of existing rollout and training
   nodes with the memory; rollout scaling: the job on existing training nodes plus
   ``k = 1 .. n_r`` new rollout nodes (fewest first; the remaining ``n_r - k`` on
   existing ones); the isolated new group (always feasible, the fallback).
4. *Order*: candidates are sorted by the key (marginal cost, strategy rank [direct
   packing < rollout scaling], -fill, group serial, rollout node ids, training node ids)
   where ``fill = T_load' / max(T_load', T_cycle')`` is the lower-bound bottleneck share
   of the new group (tightest fit first, best-fit bin packing). The key needs no
   simulation, so the candidates are checked *lazily* in that order and the first one
   whose exact check passes wins: it is the minimum of the key over all feasible
   candidates. The new group wins when no cheaper candidate passes.
5. *Exact check*: the group model (:class:`rollmux.group.CoExecutionGroup`) with every
   member at its worst-case (max-token) phase times, the exact round-robin
   meta-iteration (max-plus), and ``T_meta <= SLO_k * T_solo_k`` for every member k.

Options (registered variants in :mod:`rollmux.placement.variants`): ``prune_saturated``
(step 1), ``worst_case`` (False: expected phase times), ``order_search`` (when round
robin fails but the lower bound passes, search per-node orders with
:func:`rollmux.schedule.search.best_node_orders`), ``objective`` ("marginal-cost", or
"cost-weighted": minimise marginal cost plus the change in idle GPU dollars per hour,
which evaluates every candidate exactly).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rollmux.closedform import JobPhases
from rollmux.group import CoExecutionGroup, GroupJob, NodeCapacity
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.model.cycle import member_phases_s, round_robin_period_s, steady_switch_s
from rollmux.phases import training_occupancy_s
from rollmux.placement.base import (
    NewNode,
    Placement,
    PlacementPolicy,
    Strategy,
    admissible_profile,
    group_member,
    group_pools,
    new_group_placement,
    node_price_usd_per_h,
)
from rollmux.placement.frozenmap import FrozenMap
from rollmux.placement.snapshot import (
    MEM_REL_TOL,
    ClusterSnapshot,
    GroupKind,
    GroupState,
    NodeState,
    PlacedJob,
    Pool,
)

__all__ = ["RollMuxPolicy"]

# Relative tolerance of SLO comparisons (the group model's REL_TOL).
REL_TOL = 1e-9
Objective = Literal["marginal-cost", "cost-weighted"]
_STRATEGY_RANK = {Strategy.DIRECT_PACKING: 0, Strategy.ROLLOUT_SCALING: 1}


@dataclass(frozen=True, slots=True)
class _GroupSummary:
    """Per-group quantities kept between decisions (by the group index, per group state)."""

    members: tuple[GroupJob, ...]
    t_cycle_s: float
    t_load_s: float
    slack_s: float  # min_k SLO_k * T_solo_k
    shared_load_s: dict[str, float]  # node -> summed phase + switch of its jobs
    chain_if_shared_s: dict[str, float]  # node -> longest member chain once node is shared
    rollout_type: str
    train_type: str
    busy_usd_per_h_s: float  # sum over nodes of node price x busy seconds (cost-weighted)

    @property
    def saturated(self) -> bool:
        """Paper Fig. 6: full or over-saturated (T_load >= T_cycle)."""
        return self.t_load_s >= self.t_cycle_s * (1.0 - REL_TOL)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A candidate placement in an existing group, before its exact check."""

    key: tuple[object, ...]
    group: GroupState
    rollout_existing: tuple[str, ...]
    n_new_rollout: int
    train_nodes: tuple[str, ...]
    marginal_cost_usd_per_h: float
    strategy: Strategy


# Margin of a refutation by monotonicity: far above the float error of a computed period.
_MONOTONE_REL = 1e-9
_KNOWN_MAX = 32


@dataclass(slots=True)
class _KnownMetas:
    """Exact meta-iterations computed for one group and one pinning of a new job.

    The period of a max-plus system never decreases when a duration grows, and with the
    group and the pinning fixed only the new job's durations vary with the job: its
    effective rollout and training time grow with ``(rollout_s, train_s + sync_s,
    warm_switch_s)``. So a job at least as long in all three as one whose meta-iteration
    already broke an SLO limit breaks it too (:meth:`refutes`), without a new max-plus run.
    """

    exact: dict[JobPhases, float] = field(default_factory=dict)
    known: list[tuple[float, float, float, float]] = field(default_factory=list)

    def add(self, phases: JobPhases, meta_s: float) -> None:
        """Record the exact meta-iteration with a new job of ``phases``."""
        self.exact[phases] = meta_s
        if len(self.known) >= _KNOWN_MAX:
            self.known.pop(0)
        self.known.append((phases.rollout_s, phases.train_s + phases.sync_s,
                           phases.warm_switch_s, meta_s))

    def refutes(self, phases: JobPhases, limit_s: float) -> bool:
        """Whether a recorded shorter job already had a meta-iteration beyond ``limit_s``."""
        rollout, train, switch = (phases.rollout_s, phases.train_s + phases.sync_s,
                                  phases.warm_switch_s)
        beyond = limit_s * (1.0 + _MONOTONE_REL)
        return any(
            meta > beyond and r <= rollout and t <= train and w <= switch
            for r, t, w, meta in self.known
        )


# The prefilter forms its sums in another order than the exact checks, so it keeps any
# group within this relative margin of a bound (a superset: it never drops a candidate).
_PREFILTER_REL = 1e-6
_PREFILTER_MEM_GB = 1e-6


class _GroupIndex:
    """The open groups of the last snapshot seen, as arrays for a vectorised prefilter.

    A group is *open* when some job could still join it (:meth:`RollMuxPolicy._open`). Per
    open group the index keeps the job-independent parts of the cheap necessary conditions
    (steps 1-2 and the training-node bounds of step 3); :meth:`prefilter` returns the
    groups where they can all hold for one job, so a decision costs O(open groups) in
    numpy plus exact work on a few groups instead of a Python scan of every group. It
    follows the snapshots with :meth:`FrozenMap.changed_keys` (only groups whose state,
    nodes or jobs changed are re-examined) and is rebuilt for a snapshot of another lineage.
    """

    def __init__(self, policy: RollMuxPolicy) -> None:
        """An empty index for ``policy`` (its options decide which groups are open)."""
        self._policy = policy
        self._hw: Hardware | None = None
        self._maps: tuple[FrozenMap[str, GroupState], FrozenMap[str, NodeState],
                          FrozenMap[str, PlacedJob]] | None = None
        self._slot_of: dict[str, int] = {}
        self._group_at: list[GroupState | None] = []
        # Per slot: the open group's summary, and the exact meta-iterations of candidates
        # tried on it, per pinning of the new job (both dropped when the group changes).
        self._summary_at: list[_GroupSummary | None] = []
        # Per slot: the group's (node id, used host memory, capacity with tolerance) of
        # its rollout and training nodes, so a candidate's memory check reads no node map
        # (NodeState.fits: used + mem <= host x (1 + tol), the same floats).
        self._rollout_mem_at: list[tuple[tuple[str, float, float], ...]] = []
        self._train_mem_at: list[tuple[tuple[str, float, float], ...]] = []
        self._metas_at: list[dict[tuple[object, ...], _KnownMetas]] = []
        self._free_slots: list[int] = []
        self._type_code: dict[str, int] = {}
        self._train_code = np.full(0, -1, dtype=np.int64)  # -1: slot unused
        self._load_bound = np.zeros(0)  # max(T_cycle, T_load) <= limit <= bound_j
        self._slack_tol = np.zeros(0)  # min_k SLO_k T_solo_k x (1 + tol)
        self._train_load = np.zeros(0)  # least shared load among training nodes
        self._train_chain = np.zeros(0)  # least chain-if-shared among training nodes
        self._train_free_gb = np.zeros(0)  # most host memory free on a training node

    def sync(self, snapshot: ClusterSnapshot) -> None:
        """Bring the index to ``snapshot`` (incrementally when it is of the same lineage)."""
        maps = (snapshot.groups, snapshot.nodes, snapshot.jobs)
        if self._maps is not None and snapshot.hw is self._hw:
            if all(new is old for new, old in zip(maps, self._maps, strict=True)):
                return
            old_groups, old_nodes, old_jobs = self._maps
            groups, nodes, jobs = maps
            if (isinstance(groups, FrozenMap) and isinstance(nodes, FrozenMap)
                    and isinstance(jobs, FrozenMap)):
                changed = groups.changed_keys(old_groups)
                changed_nodes = nodes.changed_keys(old_nodes)
                changed_jobs = jobs.changed_keys(old_jobs)
                if changed is not None and changed_nodes is not None and (
                    changed_jobs is not None
                ):
                    for owners, keys in (((old_nodes, nodes), changed_nodes),
                                         ((old_jobs, jobs), changed_jobs)):
                        for key in keys:
                            for owner in owners:
                                item = owner.get(key)
                                if item is not None:
                                    changed.add(item.group_id)
                    for group_id in sorted(changed):
                        self._update(group_id, old_groups.get(group_id), groups.get(group_id),
                                     snapshot)
                    self._maps = (groups, nodes, jobs)
                    return
        self._rebuild(snapshot)

    def _rebuild(self, snapshot: ClusterSnapshot) -> None:
        """Index every group of ``snapshot`` from scratch."""
        self._slot_of.clear()
        self._group_at.clear()
        self._free_slots.clear()
        self._train_code[:] = -1
        for group_id, group in snapshot.groups.items():
            self._update(group_id, None, group, snapshot)
        self._hw = snapshot.hw
        groups, nodes, jobs = snapshot.groups, snapshot.nodes, snapshot.jobs
        self._maps = None
        if (isinstance(groups, FrozenMap) and isinstance(nodes, FrozenMap)
                and isinstance(jobs, FrozenMap)):
            self._maps = (groups, nodes, jobs)

    def _update(
        self, group_id: str, old: GroupState | None, new: GroupState | None,
        snapshot: ClusterSnapshot,
    ) -> None:
        """Re-examine one group whose state, nodes or jobs may have changed."""
        slot = self._slot_of.get(group_id)
        s = None if new is None else self._policy._open(new, snapshot)
        if new is None or s is None:
            if slot is not None:
                self._train_code[slot] = -1
                self._group_at[slot] = None
                self._summary_at[slot] = None
                self._metas_at[slot] = {}
                self._free_slots.append(slot)
                del self._slot_of[group_id]
            return
        if slot is None:
            slot = self._free_slots.pop() if self._free_slots else self._new_slot()
            self._slot_of[group_id] = slot
        nodes = snapshot.nodes
        train = new.train_nodes
        if self._group_at[slot] is not new:
            self._metas_at[slot] = {}
        self._group_at[slot] = new
        self._summary_at[slot] = s
        self._rollout_mem_at[slot] = tuple(
            (n, nodes[n].used_mem_gb, nodes[n].host_mem_gb * (1.0 + MEM_REL_TOL))
            for n in new.rollout_nodes)
        self._train_mem_at[slot] = tuple(
            (n, nodes[n].used_mem_gb, nodes[n].host_mem_gb * (1.0 + MEM_REL_TOL))
            for n in train)
        self._train_code[slot] = self._type_code.setdefault(s.train_type, len(self._type_code))
        self._load_bound[slot] = max(s.t_cycle_s, s.t_load_s)
        self._slack_tol[slot] = s.slack_s * (1.0 + REL_TOL)
        self._train_load[slot] = min(s.shared_load_s[n] for n in train)
        self._train_chain[slot] = min(s.chain_if_shared_s[n] for n in train)
        self._train_free_gb[slot] = max(
            nodes[n].host_mem_gb * (1.0 + MEM_REL_TOL) - nodes[n].used_mem_gb for n in train
        )

    def _new_slot(self) -> int:
        """A fresh slot at the end (the arrays double when full)."""
        slot = len(self._group_at)
        self._group_at.append(None)
        self._summary_at.append(None)
        self._rollout_mem_at.append(())
        self._train_mem_at.append(())
        self._metas_at.append({})
        if slot == len(self._train_code):
            grow = max(64, slot)
            self._train_code = np.concatenate([self._train_code, np.full(grow, -1, np.int64)])
            for name in ("_load_bound", "_slack_tol", "_train_load", "_train_chain",
                         "_train_free_gb"):
                setattr(self, name, np.concatenate([getattr(self, name), np.zeros(grow)]))
        return slot

    def summary(self, group: GroupState) -> _GroupSummary:
        """The summary of ``group``, an open group of the snapshot last synced."""
        slot = self._slot_of[group.group_id]
        s = self._summary_at[slot]
        assert s is not None and self._group_at[slot] is group, "group not indexed"
        return s

    def node_memory(self, group: GroupState
                    ) -> tuple[tuple[tuple[str, float, float], ...],
                               tuple[tuple[str, float, float], ...]]:
        """(node id, used host memory, capacity) of an indexed group's rollout and training
        nodes, in the group's order."""
        slot = self._slot_of[group.group_id]
        return self._rollout_mem_at[slot], self._train_mem_at[slot]

    def metas(self, group: GroupState) -> dict[tuple[object, ...], _KnownMetas]:
        """Exact meta-iterations tried on ``group`` (an indexed group), per new job's pins."""
        return self._metas_at[self._slot_of[group.group_id]]

    def prefilter(
        self, job: RLJob, profile: ResolvedJob, phases: JobPhases
    ) -> list[GroupState]:
        """Open groups where the job may pass steps 1-3 (every group that can, maybe more)."""
        code = self._type_code.get(job.train_gpu_type)
        if code is None or not self._slot_of:
            return []
        n = len(self._group_at)
        bound = job.slo * phases.solo_iteration_s * (1.0 + REL_TOL)
        own_train = training_occupancy_s(steady_switch_s(phases.times, shared=True),
                                         phases.train_s, phases.sync_s)
        own_chain = max(phases.solo_iteration_s, phases.rollout_s + own_train)
        # The two cheapest, most selective tests over every slot; the rest over the few left.
        idx = np.flatnonzero((self._train_code[:n] == code) & (self._load_bound[:n] <= bound))
        if not len(idx):
            return []
        loose = np.minimum(self._slack_tol[idx], bound) * (1.0 + _PREFILTER_REL)
        mask = own_chain <= loose
        mask &= self._train_load[idx] + own_train <= loose
        mask &= self._train_chain[idx] <= loose
        mask &= self._train_free_gb[idx] >= profile.train_mem_gb - _PREFILTER_MEM_GB
        found = [self._group_at[i] for i in idx[mask]]
        return sorted((g for g in found if g is not None), key=lambda g: g.serial)


class RollMuxPolicy(PlacementPolicy):
    """Algorithm 1: least marginal provisioning cost subject to memory and every SLO."""

    name = "rollmux"
    options = frozenset({"max_group_size", "prune_saturated", "worst_case", "order_search",
                         "objective", "order_search_limit"})

    def __init__(
        self,
        max_group_size: int = 5,
        prune_saturated: bool = True,
        worst_case: bool = True,
        order_search: bool = False,
        objective: Objective = "marginal-cost",
        order_search_limit: int = 720,
    ) -> None:
        """Validate the options (ValueError names the option and the bad value)."""
        if isinstance(max_group_size, bool) or not isinstance(max_group_size, int) or (
            max_group_size < 1
        ):
            raise ValueError(f"max_group_size must be an integer >= 1, got {max_group_size!r}")
        for name, flag in (("prune_saturated", prune_saturated), ("worst_case", worst_case),
                           ("order_search", order_search)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be a bool, got {flag!r}")
        if objective not in ("marginal-cost", "cost-weighted"):
            raise ValueError(
                f"objective must be 'marginal-cost' or 'cost-weighted', got {objective!r}"
            )
        if isinstance(order_search_limit, bool) or not isinstance(order_search_limit, int) or (
            order_search_limit < 1
        ):
            raise ValueError(
                f"order_search_limit must be an integer >= 1, got {order_search_limit!r}"
            )
        self.max_group_size = max_group_size
        self.prune_saturated = prune_saturated
        self.worst_case = worst_case
        self.order_search = order_search
        self.objective: Objective = objective
        self.order_search_limit = order_search_limit
        # Per-group summaries and the candidates' exact meta-iterations live in the group
        # index, slot by slot, and follow the snapshots with it (no memo by object id).
        self._index = _GroupIndex(self)

    # ------------------------------------------------------------------- summaries

    def _open(self, group: GroupState, snapshot: ClusterSnapshot) -> _GroupSummary | None:
        """The group's summary if it can take another job of some kind, else None.

        Job-independent part of step 1-2: shared, not full, not pruned as saturated, and
        its own loads within its members' SLO slack (``limit <= slack`` for any job).
        """
        if group.kind is not GroupKind.SHARED or len(group.jobs) >= self.max_group_size:
            return None
        s = self._summarise(group, snapshot)
        if self.prune_saturated and s.saturated:
            return None
        slack_tol = s.slack_s * (1.0 + REL_TOL)
        # min(slack, bound) * (1 + tol) == min(slack * (1 + tol), bound * (1 + tol)) in
        # floating point (rounding is monotone), so this is the exact test of step 2.
        if s.t_cycle_s > slack_tol or s.t_load_s > slack_tol:
            return None
        return s

    def _summarise(self, group: GroupState, snapshot: ClusterSnapshot) -> _GroupSummary:
        """Compute a group's loads, chains and SLO slack under the admission estimates."""
        hw = snapshot.hw
        placed_jobs = [snapshot.jobs[job_id] for job_id in group.jobs]
        members = tuple(group_member(p, p.resolved.admission_phases(self.worst_case))
                        for p in placed_jobs)
        nodes = snapshot.nodes
        shared = {n for n in (*group.rollout_nodes, *group.train_nodes) if len(nodes[n].jobs) > 1}
        load: dict[str, float] = {}
        shared_load: dict[str, float] = {}
        chain_if_shared: dict[str, float] = {}
        chains = []
        busy_usd = 0.0
        for m, job_id in zip(members, group.jobs, strict=True):
            # The snapshot's pins (node ids are str there; the group model accepts int too).
            placed = snapshot.jobs[job_id]
            p = m.phases
            # The group model's switches (rollmux.model.cycle): paid where a node of the
            # phase is shared, and what each phase would pay once its node is shared.
            r_sw = steady_switch_s(p.times, shared=not shared.isdisjoint(placed.rollout_nodes))
            t_sw = steady_switch_s(p.times, shared=not shared.isdisjoint(placed.train_nodes))
            sw = steady_switch_s(p.times, shared=True)
            r_eff, t_eff = member_phases_s(
                p.times, p.sync_s, rollout_shared=not shared.isdisjoint(placed.rollout_nodes),
                train_shared=not shared.isdisjoint(placed.train_nodes))
            chain = r_eff + t_eff
            chains.append(chain)
            for pins, eff, base, extra_if_shared in (
                (placed.rollout_nodes, r_eff, p.rollout_s, sw - r_sw),
                (placed.train_nodes, t_eff, p.train_s + p.sync_s, sw - t_sw),
            ):
                for n in pins:
                    load[n] = load.get(n, 0.0) + eff
                    shared_load[n] = shared_load.get(n, 0.0) + base + sw
                    chain_if_shared[n] = max(chain_if_shared.get(n, 0.0), chain + extra_if_shared)
            price_r = node_price_usd_per_h(hw, nodes[placed.rollout_nodes[0]].gpu_type)
            price_t = node_price_usd_per_h(hw, nodes[placed.train_nodes[0]].gpu_type)
            busy_usd += price_r * p.rollout_s * len(placed.rollout_nodes)
            busy_usd += price_t * p.train_s * len(placed.train_nodes)
        return _GroupSummary(
            members=members,
            t_cycle_s=max(chains),
            t_load_s=max(load.values()),
            slack_s=min(m.slo * m.phases.solo_iteration_s for m in members),
            shared_load_s=shared_load,
            chain_if_shared_s=chain_if_shared,
            rollout_type=nodes[group.rollout_nodes[0]].gpu_type,
            train_type=nodes[group.train_nodes[0]].gpu_type,
            busy_usd_per_h_s=busy_usd,
        )

    # ------------------------------------------------------------------- decision

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> Placement:
        """Algorithm 1 over ``snapshot``; a job that fits no node gets a rejected record."""
        profile = admissible_profile(job, snapshot)
        if isinstance(profile, Placement):
            return profile
        phases = profile.admission_phases(self.worst_case)
        fallback_meta = phases.solo_iteration_s
        fallback = new_group_placement(job, profile, snapshot, meta_iteration_s=fallback_meta)
        candidates = self._candidates(job, profile, phases, snapshot)
        if self.objective == "cost-weighted":
            return self._best_cost_weighted(job, profile, phases, snapshot, candidates, fallback)
        candidates.sort(key=lambda c: c.key)
        for cand in candidates:
            if cand.marginal_cost_usd_per_h >= fallback.marginal_cost_usd_per_h:
                break
            placement = self._exact(job, profile, phases, snapshot, cand)
            if placement is not None:
                return placement
        return fallback

    def _candidates(
        self, job: RLJob, profile: ResolvedJob, phases: JobPhases, snapshot: ClusterSnapshot
    ) -> list[_Candidate]:
        """Every candidate in an existing group that passes the cheap necessary conditions.

        The group index hands over only the groups that can pass them (a superset); each
        is then checked here exactly as if every group of the snapshot were scanned.
        """
        hw = snapshot.hw
        n_r, n_t = profile.rollout_nodes, profile.train_nodes
        mem_r, mem_t = profile.rollout_mem_gb, profile.train_mem_gb
        # The switch the job pays where it shares a node (rollmux.model.cycle).
        sw_j = steady_switch_s(phases.times, shared=True)
        r_j, t_j = phases.rollout_s, phases.train_s + phases.sync_s
        bound_j = job.slo * phases.solo_iteration_s
        price_r = node_price_usd_per_h(hw, job.rollout_gpu_type)
        out: list[_Candidate] = []
        self._index.sync(snapshot)
        for group in self._index.prefilter(job, profile, phases):
            if group.kind is not GroupKind.SHARED or len(group.jobs) >= self.max_group_size:
                continue
            s = self._index.summary(group)
            if self.prune_saturated and s.saturated:
                continue
            limit = min(s.slack_s, bound_j) * (1.0 + REL_TOL)
            if max(s.t_cycle_s, phases.solo_iteration_s) > limit or s.t_load_s > limit:
                continue
            if s.train_type != job.train_gpu_type:
                continue
            roll_mem, train_mem = self._index.node_memory(group)
            train_ok = [n for n, used, cap in train_mem if used + mem_t <= cap]
            if len(train_ok) < n_t:
                continue
            train_parts = []
            shared_load, chain_if_shared = s.shared_load_s, s.chain_if_shared_s
            for combo in itertools.combinations(train_ok, n_t):
                if n_t == 1:
                    load = shared_load[combo[0]] + t_j + sw_j
                    chain = chain_if_shared[combo[0]]
                else:
                    load = max(shared_load[n] for n in combo) + t_j + sw_j
                    chain = max(chain_if_shared[n] for n in combo)
                if max(load, chain) <= limit:
                    train_parts.append((combo, load, chain))
            if not train_parts:
                continue
            same_type = s.rollout_type == job.rollout_gpu_type
            roll_ok = [n for n, used, cap in roll_mem if used + mem_r <= cap] if same_type \
                else []
            base = max(s.t_load_s, s.t_cycle_s)
            for k_new in range(0, n_r + 1):
                if n_r - k_new > len(roll_ok):
                    continue
                strategy = Strategy.DIRECT_PACKING if k_new == 0 else Strategy.ROLLOUT_SCALING
                cost = k_new * price_r
                for r_combo in itertools.combinations(roll_ok, n_r - k_new):
                    if r_combo:
                        r_load = max(s.shared_load_s[n] for n in r_combo) + r_j + sw_j
                        r_chain = max(s.chain_if_shared_s[n] for n in r_combo)
                        own_r = r_j + sw_j
                    else:
                        r_load, r_chain, own_r = r_j, 0.0, r_j
                    for combo, t_load, t_chain in train_parts:
                        own_chain = own_r + t_j + sw_j
                        load_lb = max(s.t_load_s, r_load, t_load)
                        lb = max(base, load_lb, r_chain, t_chain, own_chain)
                        if lb > limit:
                            continue
                        fill = load_lb / lb
                        key = (cost, _STRATEGY_RANK[strategy], -fill, group.serial, r_combo,
                               k_new, combo)
                        out.append(_Candidate(key, group, r_combo, k_new, combo, cost, strategy))
        return out

    def _exact(
        self,
        job: RLJob,
        profile: ResolvedJob,
        phases: JobPhases,
        snapshot: ClusterSnapshot,
        cand: _Candidate,
    ) -> Placement | None:
        """The placement if the group model's exact meta-iteration meets every SLO."""
        s = self._index.summary(cand.group)
        hw = snapshot.hw
        # _slo_ok over the members and the new job (a GroupJob keeps float(slo), phases):
        # min(x_k) (1 + tol) == min(x_k (1 + tol)) in floating point (monotone rounding).
        limit = min(s.slack_s * (1.0 + REL_TOL),
                    float(job.slo) * phases.solo_iteration_s * (1.0 + REL_TOL))
        # The meta-iteration depends on the members, the new job's phases and its pins, not
        # on its SLO, so jobs of one shape trying one group reuse it. New rollout nodes hold
        # only the new job and the event graph numbers nodes by first use, not by id: their
        # count, not their ids, is what matters (the same floats, bit for bit).
        # The index keeps them per group state (a changed group starts afresh).
        metas = self._index.metas(cand.group)
        key = (cand.rollout_existing, cand.n_new_rollout, cand.train_nodes)
        known = metas.get(key)
        if known is None:
            known = metas[key] = _KnownMetas()
        meta = known.exact.get(phases)
        if not self.order_search and (
            known.refutes(phases, limit) if meta is None else meta > limit
        ):
            return None
        new_ids = snapshot.new_ids("R", cand.n_new_rollout)
        rollout_pins = (*cand.rollout_existing, *new_ids)

        def candidate_group() -> CoExecutionGroup:
            new_job = GroupJob(
                phases=phases,
                rollout_nodes=rollout_pins,
                train_nodes=cand.train_nodes,
                slo=job.slo,
                rollout_mem_gb_per_node=profile.rollout_mem_gb,
                train_mem_gb_per_node=profile.train_mem_gb,
                job_id=job.job_id,
            )
            return CoExecutionGroup(
                jobs=(*s.members, new_job),
                rollout_node_ids=(*cand.group.rollout_nodes, *new_ids),
                train_node_ids=cand.group.train_nodes,
                pools=group_pools(cand.group, snapshot),
                node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
            )

        group = None
        if meta is None:
            # The group model's round-robin period of the members and the new job (what
            # candidate_group().meta_iteration_s() gives, bit for bit, without building and
            # validating a group: the candidate's pins and memory are checked above).
            members = s.members
            meta = round_robin_period_s(
                [*(m.phases.times for m in members), phases.times],
                [*(m.phases.sync_s for m in members), phases.sync_s],
                [*(m.rollout_nodes for m in members), rollout_pins],
                [*(m.train_nodes for m in members), cand.train_nodes])
            known.add(phases, meta)
        node_orders = None
        if meta > limit:
            if not self.order_search:
                return None
            searched = self._search_orders(candidate_group() if group is None else group)
            if searched is None:
                return None
            meta, node_orders = searched
        return Placement(
            job=job,
            strategy=cand.strategy,
            group_id=cand.group.group_id,
            rollout_nodes=rollout_pins,
            train_nodes=cand.train_nodes,
            new_nodes=tuple(NewNode(n, Pool.ROLLOUT, job.rollout_gpu_type) for n in new_ids),
            marginal_cost_usd_per_h=cand.marginal_cost_usd_per_h,
            profile=profile,
            meta_iteration_s=meta,
            node_orders=node_orders,
        )

    def _search_orders(
        self, group: CoExecutionGroup
    ) -> tuple[float, tuple[tuple[str, tuple[str, ...]], ...]] | None:
        """Per-node orders meeting every SLO, by the order search (None if none found)."""
        try:
            from rollmux.schedule.search import best_node_orders
        except ImportError:  # pragma: no cover - the search module ships with the package
            return None
        rollout, train = group.effective_phases_s()
        result = best_node_orders(
            rollout,
            train,
            [j.rollout_nodes for j in group.jobs],
            [j.train_nodes for j in group.jobs],
            exact_limit=self.order_search_limit,
        )
        if not _slo_ok(group.jobs, result.period_s):
            return None
        ids = [j.job_id for j in group.jobs]
        orders = tuple(
            (str(node[1]), tuple(ids[i] for i in seq))
            for node, seq in sorted(result.node_orders.items(), key=lambda kv: str(kv[0]))
        )
        return result.period_s, orders

    def _best_cost_weighted(
        self,
        job: RLJob,
        profile: ResolvedJob,
        phases: JobPhases,
        snapshot: ClusterSnapshot,
        candidates: list[_Candidate],
        fallback: Placement,
    ) -> Placement:
        """Minimise marginal cost + change in idle GPU dollars per hour over all candidates."""
        hw = snapshot.hw
        price_r = node_price_usd_per_h(hw, job.rollout_gpu_type)
        price_t = node_price_usd_per_h(hw, job.train_gpu_type)
        own_busy = (
            price_r * phases.rollout_s * profile.rollout_nodes
            + price_t * phases.train_s * profile.train_nodes
        )
        # A new group: idle dollars = its cost minus its busy dollars at the solo rate.
        best = fallback
        best_score = 2 * fallback.marginal_cost_usd_per_h - own_busy / fallback.meta_iteration_s
        best_key: tuple[object, ...] = (best_score, 2)
        for cand in sorted(candidates, key=lambda c: c.key):
            placement = self._exact(job, profile, phases, snapshot, cand)
            if placement is None:
                continue
            s = self._index.summary(cand.group)
            before_meta = _group_meta(s, cand.group, snapshot)
            busy_before = s.busy_usd_per_h_s / before_meta
            busy_after = (s.busy_usd_per_h_s + own_busy) / placement.meta_iteration_s
            score = 2 * cand.marginal_cost_usd_per_h - (busy_after - busy_before)
            key = (score, _STRATEGY_RANK[cand.strategy])
            if key < best_key:
                best, best_key = placement, key
        return best


def _group_meta(s: _GroupSummary, group: GroupState, snapshot: ClusterSnapshot) -> float:
    """Exact meta-iteration of a group as it stands (admission estimates)."""
    hw = snapshot.hw
    return CoExecutionGroup(
        jobs=s.members,
        rollout_node_ids=group.rollout_nodes,
        train_node_ids=group.train_nodes,
        pools=group_pools(group, snapshot),
        node_capacity=NodeCapacity(hw.node.gpus_per_node, hw.node.host_mem_gb),
    ).meta_iteration_s()


def _slo_ok(jobs: Sequence[GroupJob], meta_iteration_s: float) -> bool:
    """Whether every job's slowdown ``T_meta / T_solo`` is within its SLO."""
    return all(
        meta_iteration_s <= j.slo * j.phases.solo_iteration_s * (1.0 + REL_TOL) for j in jobs
    )
