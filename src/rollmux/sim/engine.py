"""Trace replay: arrivals to a placement policy, groups running round-robin, departures.

:func:`simulate_trace` is the library entry. A *driver* owns the cluster: it hands each
arrival to the policy (a pure decision over a :class:`ClusterSnapshot`), applies the
decision, releases departing and killed jobs, re-partitions on regroupings and records
the provisioned GPUs as a step function of time. How admitted jobs progress is a
*progress model* (:class:`rollmux.sim.progress.ProgressModel`), the same calls on either:

* :class:`rollmux.sim.eventmodel.EventModel` (fidelity ``event``): every phase is an
  event on its nodes. Durations come from the phase sampler per iteration (stochastic)
  or are the expected ones (deterministic).
* :class:`rollmux.sim.analytic.AnalyticModel` (fidelity ``analytic``): groups progress
  at their exact steady-state rate between events.

Both take an admitted job as the group model's member (:class:`rollmux.group.GroupJob`,
pinned to node serials; :meth:`_Driver._member`). What a phase does (its switch, when its
nodes free, what a migrated long tail holds, the sync) is stated once in
:mod:`rollmux.phases`; the per-iteration phase draws and the drifted profiles come from
:mod:`rollmux.sim.sampling`.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rollmux.closedform import JobPhases, pools_from_hardware, verl
from rollmux.group import GroupJob
from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import resolve
from rollmux.model.cycle import cycle, handover_s
from rollmux.placement import (
    ClusterSnapshot,
    GroupKind,
    Placement,
    PlacementPolicy,
    Pool,
    Regrouping,
    Strategy,
    apply,
    empty_snapshot,
    get_policy,
    policy_options,
    release,
)
from rollmux.placement.base import group_model
from rollmux.placement.snapshot import GroupState
from rollmux.placement.timeslice import slice_member, slice_period_s
from rollmux.sim.analytic import AnalyticModel, colocation_ratio
from rollmux.sim.drift import DriftReach, parse_reach
from rollmux.sim.drift import FailureSpec as Failure
from rollmux.sim.eventmodel import DeadlockError, EventModel
from rollmux.sim.metrics import REL_TOL, slowdown_slo_met, summarize
from rollmux.sim.phasesink import PhaseSink
from rollmux.sim.progress import InFlight, ProgressModel
from rollmux.sim.records import (
    EVENT_COLUMNS,
    JOB_COLUMNS,
    SimulationResult,
    timeseries_columns,
)
from rollmux.sim.sampling import (
    DrawFactory,
    ProfileFactory,
    default_draw_factory,
    default_profile_factory,
    drift_templates,
    length_source,
)

__all__ = [
    "FIDELITIES",
    "SYNC_MODES",
    "DeadlockError",
    "DrawFactory",
    "EventModel",
    "Failure",
    "ProfileFactory",
    "SimConfig",
    "build_policy",
    "check_modes",
    "default_draw_factory",
    "default_profile_factory",
    "drift_templates",
    "length_source",
    "simulate_trace",
    "with_submitted_jobs",
]

FIDELITIES = ("event", "analytic")
SYNC_MODES = ("topology", "flat")


@dataclass(frozen=True)
class SimConfig:
    """Replay options (the resolved config is written beside every result).

    ``fidelity``: "event" (per-phase events) or "analytic" (steady-state rates).
    ``stochastic``: event path only; sample phase times per iteration (False: expected).
    ``migration``: long-tail migration in the sampler; ``migration_threshold``: fraction of
    a rollout's responses done before its tail migrates (None: the sampler's default,
    :class:`rollmux.sim.stochastic.StochasticConfig`). ``drift``: drift setting name
    passed to the sampler ("none": no drift); ``drift_reach``: "profile" (drift scales the
    job's whole profile, its worst case included) or "cap" (lengths stay below the maximum
    of admission), :class:`rollmux.sim.drift.DriftReach`. ``sync``: "topology" (RollMux)
    or "flat".
    ``regroup_interval_s``: period of the policy's re-solve (policies that regroup; the
    policy's own interval wins when it defines one). ``record_phases``: keep the
    per-phase table (event path). ``failures``: kills and resubmissions.
    ``policy_options``: extra keyword options for :func:`get_policy`. ``lengths``: a
    PolyTrace folder whose recorded steps replace the lognormal response lengths
    (:mod:`rollmux.sim.lengths`; None: the lognormal).
    """

    fidelity: str = "event"
    stochastic: bool = True
    migration: bool = True
    migration_threshold: float | None = None
    drift: str = "none"
    drift_reach: str = DriftReach.PROFILE.value
    sync: str = "topology"
    regroup_interval_s: float = 3600.0
    record_phases: bool = True
    failures: tuple[Failure, ...] = ()
    policy_options: tuple[tuple[str, Any], ...] = ()
    lengths: str | None = None

    def __post_init__(self) -> None:
        """Validate every option; ValueError names the option and the bad value."""
        if self.lengths is not None:
            if not isinstance(self.lengths, str) or not self.lengths:
                raise ValueError(f"lengths must be a folder path or None, got "
                                 f"{self.lengths!r}")
            if self.fidelity != "event" or not self.stochastic:
                raise ValueError("lengths: real response lengths need sampled phases "
                                 "(event fidelity, not deterministic)")
        check_modes(self.fidelity, self.sync, self.drift, stochastic=self.stochastic,
                    migration=self.migration, record_phases=self.record_phases)
        object.__setattr__(self, "drift_reach", parse_reach(self.drift_reach).value)
        q = self.migration_threshold
        if q is not None:
            if isinstance(q, bool) or not isinstance(q, int | float) or not 0 < q < 1:
                raise ValueError(f"migration_threshold must be a number in (0, 1) or None, "
                                 f"got {q!r}")
            object.__setattr__(self, "migration_threshold", float(q))
        r = self.regroup_interval_s
        if isinstance(r, bool) or not isinstance(r, int | float) or not (
            math.isfinite(r) and r > 0
        ):
            raise ValueError(f"regroup_interval_s must be a finite number > 0, got {r!r}")
        failures = tuple(_as_failure(f) for f in self.failures)
        object.__setattr__(self, "failures", failures)
        object.__setattr__(self, "policy_options", tuple(sorted(dict(self.policy_options)
                                                                .items())))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form of the config."""
        out = dataclasses.asdict(self)
        out["failures"] = [dataclasses.asdict(f) for f in self.failures]
        out["policy_options"] = dict(self.policy_options)
        if self.lengths is None:  # the lognormal: configs stay as they were
            del out["lengths"]
        return out


def check_modes(fidelity: str, sync: str, drift: str, **flags: bool) -> None:
    """Validate the replay modes (of SimConfig and ReplaySpec); ValueError names the option."""
    if fidelity not in FIDELITIES:
        raise ValueError(f"fidelity must be one of {FIDELITIES}, got {fidelity!r}")
    if sync not in SYNC_MODES:
        raise ValueError(f"sync must be one of {SYNC_MODES}, got {sync!r}")
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be a bool, got {value!r}")
    if not isinstance(drift, str) or not drift:
        raise ValueError(f"drift must be a non-empty string, got {drift!r}")
    drift_templates(drift, (), 0)  # an unknown name or an overlong strength: now, not mid-run


def _as_failure(value: Any) -> Failure:
    """A :class:`FailureSpec` from one (or from any object with the same three fields)."""
    if isinstance(value, Failure):
        return value
    try:
        return Failure(value.job_id, value.kill_at_s, value.resubmit_at_s)
    except AttributeError:
        raise ValueError(f"failures: expected objects with job_id, kill_at_s and "
                         f"resubmit_at_s, got {value!r}") from None


def with_submitted_jobs(r: Regrouping, jobs: Mapping[str, RLJob], hw: Hardware
                        ) -> Regrouping:
    """``r`` with each placement's job as submitted (``jobs`` by id) and its profile.

    A re-solve under drifted profiles places re-profiled copies of the jobs; the snapshot
    keeps each job as submitted, whose phase draws carry the drift (applying a drifted
    profile to them would count the drift twice).
    """
    placements = []
    for p in r.placements:
        job = jobs[p.job.job_id]
        if p.job is not job:
            p = dataclasses.replace(p, job=job, profile=resolve(job, hw))
        placements.append(p)
    return dataclasses.replace(r, placements=tuple(placements))


# --------------------------------------------------------------------------- driver

_P_ARRIVAL, _P_KILL, _P_RESUBMIT, _P_REGROUP = 2, 1, 2, 3


def _serial(node_id: str) -> int:
    """The serial of a node id ``R12``/``T12``."""
    return int(node_id[1:])


def build_policy(name: str | PlacementPolicy, seed: int,
                 options: Mapping[str, Any] | None = None) -> PlacementPolicy:
    """The policy ``name`` with ``options``, seeded with ``seed`` when it takes a seed."""
    if isinstance(name, PlacementPolicy):
        return name
    opts = dict(options or {})
    if "seed" in policy_options(name):
        opts.setdefault("seed", seed)
    return get_policy(name, **opts)


@dataclass
class _JobState:
    """The driver's bookkeeping of one trace job."""

    job: RLJob
    planned_slowdown: float = math.nan
    status: str = "pending"
    strategy: str = ""
    group_id: str = ""
    admitted_s: float = math.nan
    finish_s: float = math.nan
    running_s: float = 0.0
    since_s: float = math.nan
    incarnations: int = 0
    done: int = 0
    reason: str = ""
    failures: list[Failure] = field(default_factory=list)


class _Driver:
    """Cluster-level replay: policy decisions, snapshot updates, time series, events."""

    def __init__(self, jobs: Sequence[RLJob], policy: PlacementPolicy, hw: Hardware,
                 config: SimConfig, model: ProgressModel, draw_factory: DrawFactory | None,
                 progress: Callable[[int], None] | None,
                 profile_factory: ProfileFactory | None = None) -> None:
        """Index the jobs (by arrival, then id) and set up the external event heap."""
        order = sorted(range(len(jobs)), key=lambda k: (jobs[k].arrival_s, jobs[k].job_id))
        self.jobs = [jobs[k] for k in order]
        self.index = {j.job_id: k for k, j in enumerate(self.jobs)}
        if len(self.index) != len(self.jobs):
            seen: set[str] = set()
            for j in self.jobs:
                if j.job_id in seen:
                    raise ValueError(f"jobs: job_id {j.job_id!r} appears twice")
                seen.add(j.job_id)
        self.policy = policy
        self.hw = hw
        self.config = config
        self.model = model
        self.draw_factory = draw_factory
        self.profile_factory = profile_factory
        self.progress = progress
        self.state = [_JobState(job=j) for j in self.jobs]
        self.snapshot = empty_snapshot(hw)
        self.gpu_types = tuple(sorted(hw.gpus))
        self.ts_rows: list[tuple[Any, ...]] = []
        self.event_rows: list[tuple[Any, ...]] = []
        self.heap: list[tuple[float, int, int, str, int]] = []
        self.seq = 0
        self.pending = 0  # arrivals, kills and resubmissions not yet handled
        self.planned: set[str] = set()  # groups the progress model runs in planned orders
        for k, job in enumerate(self.jobs):
            self._push(job.arrival_s, _P_ARRIVAL, "arrival", k)
        for f in sorted(config.failures, key=lambda f: (f.kill_at_s, f.job_id)):
            if f.job_id not in self.index:
                raise ValueError(f"failures: unknown job_id {f.job_id!r}")
            self._push(f.kill_at_s, _P_KILL, "kill", self.index[f.job_id])
            self.state[self.index[f.job_id]].failures.append(f)
        self.regroup_interval_s = self._regroup_interval()

    @property
    def snapshot(self) -> ClusterSnapshot:
        """The cluster as the policy sees it now."""
        return self._snapshot

    @snapshot.setter
    def snapshot(self, snap: ClusterSnapshot) -> None:
        """Set the cluster; every group that changed updates its members' planned slowdowns."""
        old = getattr(self, "_snapshot", None)
        self._snapshot = snap
        for gid, group in snap.groups.items():
            if old is not None and old.groups.get(gid) == group:
                continue
            for job_id, slowdown in self._planned_slowdowns(group, snap).items():
                st = self.state[self.index[job_id]]
                if not slowdown <= st.planned_slowdown:  # NaN (first plan) or larger
                    st.planned_slowdown = slowdown

    @staticmethod
    def _planned_slowdowns(group: GroupState, snap: ClusterSnapshot) -> dict[str, float]:
        """Each member's planned slowdown: worst-case co-execution over worst-case solo.

        What Algorithm 1 checks at admission (sec. 4.2): the group's meta-iteration with
        every job at its maximum token limit over the job's worst-case solo iteration. A
        co-located (veRL) job: its worst-case co-located iteration over the same solo; a
        dedicated one (Solo-D, Gavel+): its allocation's worst-case iteration over the
        worst-case solo on the GPUs it asked for; an asynchronous one (``async-solo-d``): its
        worst-case overlapped period over the same solo; a time slice (``timeslice``): the slice's
        worst-case period over the member's worst-case solo, as that policy admits.
        """
        if group.kind is GroupKind.DEDICATED:  # Solo-D, Gavel+: its allocation, alone
            out: dict[str, float] = {}
            for job_id in group.jobs:
                placed = snap.jobs[job_id]
                solo = resolve(placed.job, snap.hw).times.solo_iteration_max_s
                out[job_id] = placed.times.solo_iteration_max_s / solo
            return out
        if group.kind is GroupKind.COLOCATED:
            out = {}
            for job_id in group.jobs:
                placed = snap.jobs[job_id]
                phases = placed.resolved.admission_phases(True)
                t_type = snap.nodes[placed.train_nodes[0]].gpu_type
                pools = pools_from_hardware(snap.hw, placed.job.rollout_gpu_type, t_type)
                out[job_id] = verl(phases, pools).iteration_s / phases.solo_iteration_s
            return out
        if group.kind is GroupKind.ASYNC:  # one job, rollout overlapping training
            out = {}
            for job_id in group.jobs:
                times = snap.jobs[job_id].times
                out[job_id] = max(times.rollout_max_s, times.train_max_s + times.sync_s) / (
                    times.rollout_max_s + times.train_max_s + times.sync_s)
            return out
        if group.kind is GroupKind.TIMESLICE:  # the slice's exact period, as it admits
            members = [slice_member(snap.jobs[j].job, snap.jobs[j].times, snap.hw)
                       for j in group.jobs]
            period = slice_period_s(members)
            return {j: period / snap.jobs[j].times.solo_iteration_max_s for j in group.jobs}
        model = group_model(group, snap, worst_case=True)
        if group.node_orders is not None:
            # Planned orders (rollmux-repeat): member j's average iteration P / m_j of the
            # orders' exact cycle, what the planner checks against SLO_j x T_solo_j.
            rollout, train = model.effective_phases_s()
            index = {job_id: i for i, job_id in enumerate(group.jobs)}
            orders: dict[str, list[int]] = {node: [index[j] for j in seq]
                                            for node, seq in group.node_orders}
            period, mult = cycle(rollout, train,
                                 [tuple(map(str, m.rollout_nodes)) for m in model.jobs],
                                 [tuple(map(str, m.train_nodes)) for m in model.jobs], orders)
            return {job_id: period / mult[i] / model.jobs[i].phases.solo_iteration_s
                    for job_id, i in index.items()}
        metrics = model.metrics()
        return dict(zip(group.jobs, metrics.slowdown, strict=True))

    def _regroup_interval(self) -> float | None:
        """The re-solve period when the policy regroups periodically, else None."""
        if type(self.policy).regroup is PlacementPolicy.regroup:
            return None
        return float(getattr(self.policy, "regroup_interval_s", self.config.regroup_interval_s))

    def _push(self, t: float, prio: int, kind: str, k: int) -> None:
        """Schedule an external event."""
        heapq.heappush(self.heap, (t, prio, self.seq, kind, k))
        self.seq += 1
        if kind != "regroup":
            self.pending += 1

    # ------------------------------------------------------------------ records

    def _record_ts(self, t: float) -> None:
        """Append the provisioned GPUs at ``t`` (a step function; same-time rows merge)."""
        snap = self.snapshot
        by_type = dict.fromkeys(self.gpu_types, 0)
        pools = [0, 0]
        cost = 0.0
        for node in snap.nodes.values():
            by_type[node.gpu_type] += node.gpus
            pools[0 if node.pool is Pool.ROLLOUT else 1] += node.gpus
            cost += node.gpus * self.hw.gpus[node.gpu_type].price_usd_per_h
        row = (t, cost, pools[0], pools[1], *(by_type[g] for g in self.gpu_types),
               len(snap.jobs), len(snap.groups))
        if self.ts_rows and self.ts_rows[-1][0] == t:
            self.ts_rows[-1] = row
        else:
            self.ts_rows.append(row)

    def _event(self, t: float, kind: str, job_id: str, group_id: str = "",
               strategy: str = "", cost: float = 0.0, detail: str = "") -> None:
        """Append one row to the event log."""
        self.event_rows.append((t, kind, job_id, group_id, strategy, cost, detail))

    # ------------------------------------------------------------------ runtime

    def _member(self, k: int, snap: ClusterSnapshot) -> GroupJob:
        """Admitted job ``k`` of ``snap`` as the progress models take it: pinned to serials.

        A co-located job (veRL, a time slice) runs its rollout on its training nodes and
        GPUs; Gavel+ may give a job other node counts than it asked for: GPUs follow them.
        """
        job = self.jobs[k]
        placed = snap.jobs[job.job_id]
        kind = snap.groups[placed.group_id].kind
        colocated = kind in (GroupKind.COLOCATED, GroupKind.TIMESLICE)
        gpn = self.hw.node.gpus_per_node
        rnodes = tuple(_serial(n) for n in placed.rollout_nodes)
        tnodes = tuple(_serial(n) for n in placed.train_nodes)
        t_gpus = job.train_gpus if len(tnodes) == math.ceil(job.train_gpus / gpn) else \
            len(tnodes) * gpn
        times = placed.times
        if colocated:
            r_type = snap.nodes[placed.rollout_nodes[0]].gpu_type if rnodes else \
                job.rollout_gpu_type
            t_type = snap.nodes[placed.train_nodes[0]].gpu_type
            return GroupJob(
                JobPhases(times, t_gpus, t_gpus), tnodes, tnodes, job.slo,
                placed.rollout_mem_gb, placed.train_mem_gb, job.job_id,
                flat_sync=self.config.sync == "flat", colocated=True,
                coloc_ratio=colocation_ratio(self.hw, r_type, job.rollout_gpus, t_type, t_gpus),
                handover_s=handover_s(times, self.hw.perf.warm_switch_const_s)
                if kind is GroupKind.TIMESLICE else 0.0, staleness=placed.staleness)
        r_gpus = job.rollout_gpus if len(rnodes) == math.ceil(job.rollout_gpus / gpn) else \
            len(rnodes) * gpn
        return GroupJob(JobPhases(times, r_gpus, t_gpus), rnodes, tnodes, job.slo,
                        placed.rollout_mem_gb, placed.train_mem_gb, job.job_id,
                        flat_sync=self.config.sync == "flat", staleness=placed.staleness)

    def _solo_s(self, job: RLJob) -> float:
        """The job's estimated solo iteration time: the paper's SLO reference (sec. 4.2).

        "T_solo_k is the estimated iteration time when job k is running alone", estimated by
        the one-shot profiler "at the job's configured maximum token limit" (sec. 4.2, 5): the
        worst-case rollout and training of its phase profile plus sync, on its own GPUs.
        """
        times = resolve(job, self.hw).times
        sync = times.sync_flat_s if self.config.sync == "flat" else times.sync_s
        return times.rollout_max_s + times.train_max_s + sync

    def _solo_realised_s(self, job: RLJob, done: int = 0) -> float:
        """The job's Solo-D iteration time over the iterations it completed, same draws.

        Our earlier reference, kept as ``slowdown_realised``: with stochastic phase draws,
        solo uses the job's own draws of its first ``done`` iterations, so a job that drew
        long responses is not counted as slowed down by them; with expected times (or
        before any iteration), the phase model's expected Solo-D iteration.
        """
        times = resolve(job, self.hw).times
        sync = times.sync_flat_s if self.config.sync == "flat" else times.sync_s
        if self.draw_factory is None or done <= 0:
            return times.rollout_s + times.train_s + sync
        draws = self.draw_factory(job, times)
        n = min(done, len(draws.rollout_s))
        return (math.fsum(draws.rollout_s[:n]) + math.fsum(draws.train_s[:n])) / n + sync

    def _add(self, k: int, t: float, snap: ClusterSnapshot, ready_s: float, resident: bool,
             in_flight: InFlight | None = None) -> None:
        """Hand admitted job ``k`` to the progress model (resuming ``in_flight``)."""
        st = self.state[k]
        group_id = snap.jobs[st.job.job_id].group_id
        member = self._member(k, snap)
        draws = None if self.draw_factory is None else self.draw_factory(
            st.job, snap.jobs[st.job.job_id].times)
        self.model.add_job(k, group_id, member, t, st.done, st.job.iterations, ready_s,
                           resident, draws, in_flight,
                           st.job.slo * self._solo_s(st.job) * (1.0 + REL_TOL))
        st.group_id = group_id
        st.status = "running"
        st.since_s = t
        st.incarnations += 1
        if math.isnan(st.admitted_s):
            st.admitted_s = t

    def _set_orders(self, group_id: str, snap: ClusterSnapshot) -> None:
        """Pass a group's per-node orders (if any) to the progress model.

        A group whose orders a policy planned and then dropped (``None``: round robin)
        gets the round-robin orders of its members explicitly: the model would otherwise
        keep the planned ones.
        """
        group = snap.groups.get(group_id)
        if group is None:
            return
        node_orders = group.node_orders
        if node_orders is None:
            if group_id not in self.planned:
                return
            self.planned.discard(group_id)
            placed = [snap.jobs[j] for j in group.jobs]
            node_orders = tuple(
                (n, tuple(p.job.job_id for p in placed if n in (*p.rollout_nodes,
                                                                 *p.train_nodes)))
                for n in (*group.rollout_nodes, *group.train_nodes))
        else:
            self.planned.add(group_id)
        orders = {_serial(n): [self.index[j] for j in seq] for n, seq in node_orders}
        self.model.set_node_orders(group_id, orders)

    # ------------------------------------------------------------------ handlers

    def _place(self, k: int, t: float, kind: str) -> None:
        """Ask the policy about job ``k`` (arrival or resubmission) and apply the decision."""
        st = self.state[k]
        job = st.job
        if kind == "resubmit":
            job = dataclasses.replace(job, iterations=st.job.iterations - st.done, arrival_s=t)
        snap = dataclasses.replace(self.snapshot, time_s=t)
        decision = self.policy.place(job, snap)
        if isinstance(decision, Placement):
            if decision.strategy is Strategy.REJECTED:
                st.status = "rejected" if kind == "arrival" else "rejected-resubmit"
                st.reason = decision.reason
                self._event(t, kind, job.job_id, "", Strategy.REJECTED.value, 0.0,
                            decision.reason)
                if self.progress:
                    self.progress(1)
                return
            self.snapshot = apply(snap, decision)
            if kind == "arrival":
                st.strategy = decision.strategy.value
            self._add(k, t, self.snapshot, t, resident=kind == "arrival")
            self._set_orders(decision.group_id, self.snapshot)
            self._event(t, kind, job.job_id, decision.group_id, decision.strategy.value,
                        decision.marginal_cost_usd_per_h,
                        f"staleness={decision.staleness}" if decision.staleness else "")
        else:
            self._regroup(decision, t, arrival=(k, kind))
        self._record_ts(t)

    def _regroup(self, r: Regrouping, t: float, arrival: tuple[int, str] | None) -> None:
        """Apply a re-partition: dissolved groups' jobs restart on their new nodes.

        A move with a pause (regrouping's migration and restart) loses the iteration in
        flight; a free move (zero pause: the optimum's idealised regrouping) carries it.
        """
        old = dataclasses.replace(self.snapshot, time_s=t)
        kept = set(r.kept_groups)
        moved: list[int] = []
        carried: dict[int, InFlight | None] = {}
        for group in sorted(old.groups.values(), key=lambda g: g.serial):
            if group.group_id in kept:
                continue
            for job_id in group.jobs:
                k = self.index[job_id]
                st = self.state[k]
                if float(r.pause_s.get(job_id, 0.0)) == 0.0:
                    carried[k] = self.model.in_flight(k, t)
                st.done = self.model.remove_job(k, t)
                st.running_s += t - st.since_s
                moved.append(k)
        self.snapshot = apply(old, r)
        for p in r.placements:
            k = self.index[p.job.job_id]
            if arrival is not None and k == arrival[0]:
                if arrival[1] == "arrival":
                    self.state[k].strategy = r.strategy.value
                self._add(k, t, self.snapshot, t, resident=arrival[1] == "arrival")
            else:
                pause = float(r.pause_s.get(p.job.job_id, 0.0))
                # A zero pause marks an idealised move (the optimum): no cold switch either.
                self._add(k, t, self.snapshot, t + pause, resident=pause == 0.0,
                          in_flight=carried.get(k))
            self._set_orders(p.group_id, self.snapshot)
        if arrival is not None:
            k, kind = arrival
            self._event(t, kind, self.jobs[k].job_id, self.state[k].group_id,
                        r.strategy.value, r.marginal_cost_usd_per_h)
        self._event(t, "regroup", r.job_id, "", r.strategy.value, r.marginal_cost_usd_per_h,
                    " ".join(sorted(r.moved_jobs)))

    def _complete(self, k: int, t: float) -> None:
        """Job ``k`` finished its iterations: release it."""
        st = self.state[k]
        st.done = self.model.remove_job(k, t)
        st.running_s += t - st.since_s
        st.finish_s = t
        st.status = "completed"
        self.snapshot = release(dataclasses.replace(self.snapshot, time_s=t), st.job.job_id)
        self._event(t, "complete", st.job.job_id, st.group_id)
        self._record_ts(t)
        if self.progress:
            self.progress(1)

    def _kill(self, k: int, t: float) -> None:
        """Kill job ``k`` if running; schedule its resubmission."""
        st = self.state[k]
        failure = st.failures.pop(0)
        if st.status != "running":
            return
        st.done = self.model.remove_job(k, t)
        st.running_s += t - st.since_s
        st.status = "killed"
        self.snapshot = release(dataclasses.replace(self.snapshot, time_s=t), st.job.job_id)
        self._event(t, "kill", st.job.job_id, st.group_id, "", 0.0,
                    f"iterations_done={st.done}")
        self._record_ts(t)
        if failure.resubmit_at_s is not None:
            self._push(max(t, failure.resubmit_at_s), _P_RESUBMIT, "resubmit", k)
        elif self.progress:
            self.progress(1)

    def _periodic_regroup(self, t: float) -> None:
        """Ask the policy for its periodic re-partition, under the jobs' drifted profiles."""
        snap = dataclasses.replace(self.snapshot, time_s=t)
        decision = self.policy.regroup(self._drifted_view(snap))
        if decision is not None:
            self._regroup(self._admission_jobs(decision), t, None)
            self._record_ts(t)

    def _drifted_view(self, snap: ClusterSnapshot) -> ClusterSnapshot:
        """``snap`` with every admitted job re-profiled at its current training progress.

        Sec. 6.6: the regrouping baseline finds "the exact optimal grouping under the jobs'
        current drifted profiles". A job's progress is its completed iterations over its
        iterations (the phase sampler's progress). Identity when no profile drifts.
        """
        if self.profile_factory is None:
            return snap
        jobs = {}
        for job_id, placed in snap.jobs.items():
            k = self.index[job_id]
            job = self.state[k].job
            progress = min(1.0, self.model.iterations_done(k) / job.iterations)
            drifted = self.profile_factory(job, progress)
            if drifted is not job:
                placed = dataclasses.replace(placed, job=drifted,
                                             resolved=resolve(drifted, self.hw))
            jobs[job_id] = placed
        return dataclasses.replace(snap, jobs=jobs)

    def _admission_jobs(self, r: Regrouping) -> Regrouping:
        """``r`` with the trace's jobs (:func:`with_submitted_jobs`)."""
        return with_submitted_jobs(r, {st.job.job_id: st.job for st in self.state}, self.hw)

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        """Replay until every job has finished, been rejected or been killed for good."""
        if self.regroup_interval_s is not None and self.jobs:
            first = self.jobs[0].arrival_s
            self._push(first + self.regroup_interval_s, _P_REGROUP, "regroup", -1)
        while True:
            t_ext = self.heap[0][0] if self.heap else math.inf
            done = self.model.run_until(t_ext)
            if done:
                for k, t in done:
                    self._complete(k, t)
                continue
            if not self.heap:
                break
            t, _prio, _seq, kind, k = heapq.heappop(self.heap)
            if kind == "regroup":
                if self.pending == 0 and not self.snapshot.jobs:
                    continue
                self._periodic_regroup(t)
                assert self.regroup_interval_s is not None
                self._push(t + self.regroup_interval_s, _P_REGROUP, "regroup", -1)
                continue
            self.pending -= 1
            if kind == "kill":
                self._kill(k, t)
            else:
                self._place(k, t, kind)

    # ------------------------------------------------------------------ tables

    def job_table(self) -> pd.DataFrame:
        """The per-job table (columns :data:`JOB_COLUMNS`)."""
        rows = []
        for k, st in enumerate(self.state):
            job = st.job
            done = st.done if st.status != "running" else self.model.iterations_done(k)
            try:
                solo = self._solo_s(job)
                solo_realised = self._solo_realised_s(job, done)
            except ValueError:  # the phase model cannot run it (a rejected job)
                solo = solo_realised = math.nan
            achieved = st.running_s / done if done > 0 else math.nan
            slowdown = achieved / solo if done > 0 else math.nan
            slowdown_realised = achieved / solo_realised if done > 0 else math.nan
            planned = st.planned_slowdown
            completed = st.status == "completed"
            met = completed and slowdown_slo_met(slowdown, job.slo)
            met_realised = completed and slowdown_slo_met(slowdown_realised, job.slo)
            met_planned = completed and slowdown_slo_met(planned, job.slo)
            busy = self.model.busy_gpu_s(k) if st.incarnations else (0.0, 0.0)
            rows.append((k, job.job_id, job.arrival_s, job.slo, job.iterations, done, st.status,
                         st.strategy, st.group_id, st.admitted_s, st.finish_s, st.running_s,
                         st.incarnations, solo, achieved, slowdown, met, solo_realised,
                         slowdown_realised, met_realised, planned, met_planned, busy[0],
                         busy[1], st.reason))
        return pd.DataFrame(rows, columns=list(JOB_COLUMNS))

    def timeseries(self) -> pd.DataFrame:
        """The provisioned-GPU time series (columns :func:`timeseries_columns`)."""
        return pd.DataFrame(self.ts_rows, columns=list(timeseries_columns(self.gpu_types)))

    def event_table(self) -> pd.DataFrame:
        """The cluster event log (columns :data:`EVENT_COLUMNS`)."""
        return pd.DataFrame(self.event_rows, columns=list(EVENT_COLUMNS))


def simulate_trace(
    jobs: Iterable[RLJob],
    policy: str | PlacementPolicy,
    hw: Hardware,
    seed: int = 0,
    config: SimConfig | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    draw_factory: DrawFactory | None = None,
    phase_sink: PhaseSink | None = None,
) -> SimulationResult:
    """Replay ``jobs`` under ``policy`` on ``hw``; tables, summary and resolved config.

    ``policy`` is a registered name (built with :func:`build_policy`, seeded with
    ``seed`` when it takes one) or a policy object. ``progress(n)`` is called as jobs
    finish, are rejected or are killed for good. ``draw_factory(job, times)`` overrides
    the phase draws (event path; default from ``config``: stochastic or expected).
    ``phase_sink`` takes the per-phase rows as they are released (event path with
    ``config.record_phases``; the result's ``phases`` is then empty). Same inputs and
    seed give identical tables.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    config = config or SimConfig()
    jobs = list(jobs)
    for k, job in enumerate(jobs):
        if not isinstance(job, RLJob):
            raise ValueError(f"jobs[{k}] must be an RLJob, got {job!r}")
    policy_obj = build_policy(policy, seed, dict(config.policy_options)) if isinstance(
        policy, str) else policy
    label = "custom"
    profile_factory = None
    if draw_factory is None:
        job_ids = [j.job_id for j in jobs]
        draw_factory, label = default_draw_factory(hw, config, seed, job_ids)
        profile_factory = default_profile_factory(hw, config, seed, job_ids)
    model: ProgressModel
    if config.fidelity == "event":
        model = EventModel(len(jobs), config.record_phases, hw.node.gpus_per_node, phase_sink)
    else:
        model = AnalyticModel()
        draw_factory = None
        label = "expected"
    driver = _Driver(jobs, policy_obj, hw, config, model, draw_factory, progress,
                     profile_factory)
    clock = time.perf_counter()
    driver.run()
    run_s = time.perf_counter() - clock
    jobs_df = driver.job_table()
    ts = driver.timeseries()
    events = driver.event_table()
    phases = model.phase_table()
    extra = {
        "policy": getattr(policy_obj, "name", str(policy)),
        "fidelity": config.fidelity,
        "seed": seed,
        "phase_sampler": label,
        "phase_events": model.events,
        "phase_rows": len(phases) if phase_sink is None else phase_sink.rows,
    }
    # The per-iteration tail (event fidelity; the analytic model has no iterations).
    tail = model.iteration_tail() if isinstance(model, EventModel) else (None, None)
    extra["iterations_above_slo"], extra["jobs_above_slo"] = tail
    # The optimum policies' certified gaps (optimum_gap, ...; docs/optimum.md, section 6).
    solve_stats = getattr(policy_obj, "stats", None)
    if callable(getattr(solve_stats, "summary", None)):
        extra.update(solve_stats.summary())  # type: ignore[union-attr]
    summary = summarize(jobs_df, ts, events, driver.gpu_types, extra)
    resolved = {**config.to_dict(), "policy": extra["policy"], "seed": seed,
                "phase_sampler": label}
    return SimulationResult(phases=phases, events=events, timeseries=ts, jobs=jobs_df,
                            summary=summary, config=resolved,
                            timings={"replay_s": run_s,
                                     "event_loop_cpu_s": model.loop_s,
                                     "phase_events": float(model.events)})
