"""Trace replay: arrivals to a placement policy, groups running round-robin, departures.

:func:`simulate_trace` is the library entry. A *driver* owns the cluster: it hands each
arrival to the policy (a pure decision over a :class:`ClusterSnapshot`), applies the
decision, releases departing and killed jobs, re-partitions on regroupings and records
the provisioned GPUs as a step function of time. How admitted jobs progress is a
*progress model* with the same five calls (``add_job``, ``remove_job``,
``set_node_orders``, ``run_until``, ``busy_gpu_s``):

* :class:`EventModel` (fidelity ``event``): every phase is an event on its nodes. A
  deterministic heap keyed on (time, priority, sequence). Each node serves its jobs in a
  fixed cyclic order (the group's round-robin order: jobs in the order they joined, or
  the group's ``node_orders``); a job joining a running group takes the last place of
  each of its nodes from the next round on. Durations come from the phase sampler per
  iteration (stochastic) or are the expected ones (deterministic).
* :class:`rollmux.sim.analytic.AnalyticModel` (fidelity ``analytic``): groups progress
  at their exact steady-state rate between events.

Switches (event path): a phase pays a cold switch on a node where the job's state is not
resident (after a regrouping moved it, or after a resubmission), otherwise a warm switch
when any of its nodes of that pool hosts another job, otherwise none (as in
:mod:`rollmux.group`). A co-located (veRL) job pays a warm switch per phase.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import time
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.phasetimes import PhaseTimes
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
    job_profile,
    policy_options,
    release,
)
from rollmux.sim.analytic import AnalyticModel, JobRuntime, colocation_ratio, gpus_per_node
from rollmux.sim.drift import DriftSetting, DriftTemplate, assign_templates, parse_template
from rollmux.sim.drift import FailureSpec as Failure
from rollmux.sim.metrics import slowdown_slo_met, summarize
from rollmux.sim.records import (
    EVENT_COLUMNS,
    JOB_COLUMNS,
    PHASE_COLUMNS,
    SimulationResult,
    timeseries_columns,
)

__all__ = [
    "FIDELITIES",
    "SYNC_MODES",
    "DeadlockError",
    "DrawFactory",
    "DrawTable",
    "EventModel",
    "Failure",
    "SimConfig",
    "build_policy",
    "default_draw_factory",
    "drift_templates",
    "simulate_trace",
]

FIDELITIES = ("event", "analytic")
SYNC_MODES = ("topology", "flat")

# Event kinds of the event model's heap; the kind is also the priority at equal times
# (nodes are freed before phases complete, phases complete before paused jobs resume).
_NODE_FREE, _ROLL_END, _TRAIN_END, _READY = 0, 1, 2, 3

# The hot loop buffers five numbers per released phase in a flat list (its layout id,
# iteration, start, end and work); every _BATCH_ROWS phases are expanded into one row
# per node (the layout gives job, phase, pool, nodes and GPUs) and packed into a block of
# _BLOCK_ROWS rows (about 40 MB). Blocks that large are memory-mapped by malloc, so the
# memory of each block goes back to the system when the final table has copied it.
_BATCH_ROWS = 1 << 16
_PHASE_FIELDS = 5  # numbers buffered per released phase
_BLOCK_ROWS = 1 << 20
_PHASE_DTYPE = np.dtype([
    ("job", "<i4"), ("phase", "i1"), ("iteration", "<i4"), ("node", "<i4"), ("pool", "i1"),
    ("start_s", "<f8"), ("end_s", "<f8"), ("work_s", "<f8"), ("gpus", "<i2"),
])


@dataclass(frozen=True)
class SimConfig:
    """Replay options (the resolved config is written beside every result).

    ``fidelity``: "event" (per-phase events) or "analytic" (steady-state rates).
    ``stochastic``: event path only; sample phase times per iteration (False: expected).
    ``migration``: long-tail migration in the sampler. ``drift``: drift setting name
    passed to the sampler ("none": no drift). ``sync``: "topology" (RollMux) or "flat".
    ``regroup_interval_s``: period of the policy's re-solve (policies that regroup; the
    policy's own interval wins when it defines one). ``record_phases``: keep the
    per-phase table (event path). ``failures``: kills and resubmissions.
    ``policy_options``: extra keyword options for :func:`get_policy`.
    """

    fidelity: str = "event"
    stochastic: bool = True
    migration: bool = True
    migration_threshold: float | None = None
    drift: str = "none"
    sync: str = "topology"
    regroup_interval_s: float = 3600.0
    record_phases: bool = True
    failures: tuple[Failure, ...] = ()
    policy_options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        """Validate every option; ValueError names the option and the bad value."""
        if self.fidelity not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {FIDELITIES}, got {self.fidelity!r}")
        if self.sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {SYNC_MODES}, got {self.sync!r}")
        for name in ("stochastic", "migration", "record_phases"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.drift, str) or not self.drift:
            raise ValueError(f"drift must be a non-empty string, got {self.drift!r}")
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
        return out


def _as_failure(value: Any) -> Failure:
    """A :class:`FailureSpec` from one (or from any object with the same three fields)."""
    if isinstance(value, Failure):
        return value
    try:
        return Failure(value.job_id, value.kill_at_s, value.resubmit_at_s)
    except AttributeError:
        raise ValueError(f"failures: expected objects with job_id, kill_at_s and "
                         f"resubmit_at_s, got {value!r}") from None


# --------------------------------------------------------------------------- sampling


#: A job's phase times for each of its iterations: (rollout_s, rollout node occupancy,
#: training_s) arrays of doubles indexed by iteration (``array('d')``: 8 bytes a value,
#: Python floats on indexing).
DrawTable = tuple["array[float]", "array[float]", "array[float]"]
DrawFactory = Callable[[RLJob, PhaseTimes], DrawTable]

# Memo of draw tables: the sampler is deterministic per (job, times, seed, options,
# template), so replays of one trace under several policies share its (costly) draws.
_DRAW_CACHE: dict[tuple[Any, ...], DrawTable] = {}
_DRAW_CACHE_MAX_ITERATIONS = 1_000_000  # 24 MB of tables
_draw_cache_iterations = 0


def drift_templates(setting: str, job_ids: Sequence[str], seed: int
                    ) -> dict[str, DriftTemplate]:
    """Each job's drift template: a setting (Increasing/Decreasing/Mixed) or one template."""
    names = {s.value.lower(): s for s in DriftSetting}
    if setting.lower() in names:
        return assign_templates(list(job_ids), names[setting.lower()], seed)
    try:
        template = parse_template(setting)
    except ValueError:
        valid = ", ".join(["none", *(s.value for s in DriftSetting), "increasing-1.0", "..."])
        raise ValueError(f"drift {setting!r}: unknown setting (valid: {valid})") from None
    return dict.fromkeys(job_ids, template)


def default_draw_factory(hw: Hardware, config: SimConfig, seed: int,
                         job_ids: Sequence[str] = ()) -> tuple[DrawFactory | None, str]:
    """Per-job draw tables from the stochastic sampler (None: expected times) and a label.

    Drift templates come from ``config.drift`` (seeded with ``seed``); long-tail migration
    from ``config.migration``. Tables are memoised across replays in this process.
    """
    templates = drift_templates(config.drift, job_ids, seed)
    if config.fidelity != "event" or not config.stochastic:
        return None, "expected"
    from rollmux.sim.stochastic import PhaseSampler, StochasticConfig

    options: dict[str, Any] = {"migration": config.migration}
    if config.migration_threshold is not None:
        options["migration_threshold"] = config.migration_threshold
    sconf = StochasticConfig(**options)

    hw_key = repr(hw)  # a value key: equal hardware loaded twice shares the tables

    def make(job: RLJob, times: PhaseTimes) -> DrawTable:
        global _draw_cache_iterations
        template = templates[job.job_id]
        key = (job, times, seed, sconf, template, hw_key)
        hit = _DRAW_CACHE.get(key)
        if hit is not None:
            return hit
        sampler = PhaseSampler(job, hw, root_seed=seed, config=sconf, drift=template,
                               times=times)
        draws = [sampler.sample(k) for k in range(job.iterations)]
        table = (array("d", [d.rollout_s for d in draws]),
                 array("d", [d.rollout_node_s for d in draws]),
                 array("d", [d.train_s for d in draws]))
        if _draw_cache_iterations + job.iterations > _DRAW_CACHE_MAX_ITERATIONS:
            _DRAW_CACHE.clear()
            _draw_cache_iterations = 0
        _DRAW_CACHE[key] = table
        _draw_cache_iterations += job.iterations
        return table

    return make, "stochastic"


# --------------------------------------------------------------------------- event model


class DeadlockError(RuntimeError):
    """The event model has active jobs but nothing can start (inconsistent node orders)."""


class EventModel:
    """Per-phase event simulation of every admitted job on its pinned nodes.

    The hot loop works on plain lists: per job (indexed 0..n-1) a static tuple of its
    nodes and phase constants plus a few mutable lists; per node (keyed by serial) a list
    ``[cyclic order of job indices, position, round, holding job or -1, pool, serial]``;
    a job keeps references to the state lists of its nodes, so the hot path does no
    dictionary lookup. A job's phase times for all its iterations are fetched once, at
    admission, from the draw factory (or are its expected times).
    """

    def __init__(self, n_jobs: int, draw_factory: DrawFactory | None,
                 record_phases: bool = True) -> None:
        """Allocate per-job state for ``n_jobs`` jobs (indexed 0..n_jobs-1)."""
        self.now = 0.0
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.counter = itertools.count()
        self.events = 0
        self.loop_s = 0.0
        self.draw_factory = draw_factory
        self.record_phases = record_phases
        n = n_jobs
        self.epoch = [0] * n
        self.state = [-1] * n  # -1 out, 0 wants rollout, 1 wants train, 2 rollout, 3 train
        self.iter = [0] * n
        self.target = [0] * n
        self.round = [0] * n
        self.ready = [0.0] * n
        self.holding = [False] * n
        # (rollout node states, train node states, GPUs per rollout node, GPUs per train
        #  node, co-located, warm switch, cold switch, sync, co-location ratio, expected
        #  rollout, expected training, layout id of the rollout phase, layout id of the
        #  training phase, GPUs of the rollout phase, GPUs of the training phase); a node
        #  state is the node's list in self.node
        self.info: list[tuple[Any, ...]] = [()] * n
        self.tab: list[DrawTable | None] = [None] * n
        self.cold_left: list[set[int]] = [set() for _ in range(n)]
        self.ph: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * n  # start, switch, work
        self.ph_train = [0.0] * n
        self.busy_r = [0.0] * n
        self.busy_t = [0.0] * n
        # serial -> [order, pos, round, holder, pool, serial]
        self.node: dict[int, list[Any]] = {}
        # Flat: layout id, iteration, start, end, work of each released phase in turn.
        # (Extending by a short-lived tuple keeps no tuple alive: cheaper to build, to
        # convert and to free, and no work for the cyclic garbage collector.)
        self.rows: list[float] = []
        # Phase layouts, one per phase kind of each admission (see _layout): job, phase
        # code, pool code, number of nodes, offset into the flat node/GPU lists; and
        # their numpy copies for _flush (rebuilt when layouts were added since).
        self.lay_cols: tuple[list[int], ...] = ([], [], [], [], [])
        self.lay_nodes: list[int] = []
        self.lay_gpus: list[int] = []
        self.lay_np: tuple[np.ndarray, ...] = ()
        self.chunks: list[np.ndarray] = []
        self.block_used = 0
        self._build_hot_path()

    # ------------------------------------------------------------------ membership

    def add_job(self, rt: JobRuntime, t: float, done: int, target: int, ready_s: float,
                resident: bool, job: RLJob | None = None) -> None:
        """Admit job ``rt.index`` at ``t`` with ``done`` of ``target`` iterations done."""
        self.now = max(self.now, t)
        i = rt.index
        self.iter[i] = done
        self.target[i] = target
        self.state[i] = 0
        self.ready[i] = ready_s
        self.holding[i] = False
        times = rt.times
        coloc = rt.colocated
        self.tab[i] = None
        if self.draw_factory is not None and job is not None:
            self.tab[i] = self.draw_factory(job, times)
        nodes = rt.train_nodes if coloc else (*rt.rollout_nodes, *rt.train_nodes)
        self.cold_left[i] = set() if resident else set(nodes)
        for n in nodes:
            state = self.node.get(n)
            if state is None:
                pool = 1 if coloc or n in rt.train_nodes else 0
                self.node[n] = state = [[], 0, 0, -1, pool, n]
            state[0].append(i)
        r_nodes = rt.train_nodes if coloc else rt.rollout_nodes
        r_gpus = rt.train_gpus_per_node if coloc else rt.rollout_gpus_per_node
        self.info[i] = (
            tuple(self.node[n] for n in r_nodes),
            tuple(self.node[n] for n in rt.train_nodes),
            r_gpus,
            rt.train_gpus_per_node,
            coloc,
            times.warm_switch_s,
            times.cold_switch_s,
            0.0 if coloc else rt.sync_s,
            rt.coloc_ratio,
            times.rollout_s,
            times.train_s,
            self._layout(i, 0, 1 if coloc else 0, r_nodes, r_gpus),
            self._layout(i, 1, 1, rt.train_nodes, rt.train_gpus_per_node),
            sum(r_gpus),
            sum(rt.train_gpus_per_node),
        )
        # The job joins every node at the end of the node's order, from the latest of
        # its nodes' current rounds on.
        self.round[i] = max(self.node[n][2] for n in nodes)
        for n in nodes:
            self._normalise(n)
        if ready_s > t:
            self._push(ready_s, _READY, i)
        self._try(i, t)

    def remove_job(self, i: int, t: float, aborted: bool) -> int:
        """Take job ``i`` out at ``t`` (aborting a running phase); returns iterations done."""
        self.now = max(self.now, t)
        if self.holding[i]:
            self._release(i, t, truncate=True)
        self.epoch[i] += 1
        self.state[i] = -1
        self.tab[i] = None
        del aborted  # a running phase is lost either way; whole iterations are kept
        rn, tn = self.info[i][0], self.info[i][1]
        nodes = [s[5] for s in (tn if self.info[i][4] else (*rn, *tn))]
        touched = []
        for n in nodes:
            state = self.node.get(n)
            if state is None or i not in state[0]:
                continue
            order = state[0]
            k = order.index(i)
            order.pop(k)
            if not order:
                del self.node[n]
                continue
            if state[1] > k:
                state[1] -= 1
            if state[1] >= len(order):
                state[1] = 0
                state[2] += 1
            self._normalise(n)
            touched.append(n)
        for n in touched:
            self._try_node(n, t)
        return self.iter[i]

    def set_node_orders(self, orders: Mapping[int, Sequence[int]]) -> None:
        """Replace nodes' cyclic orders (job indices); each node restarts its round's scan."""
        for n, seq in orders.items():
            state = self.node.get(n)
            if state is None or sorted(state[0]) != sorted(seq):
                continue
            state[0] = list(seq)
            state[1] = 0
            self._normalise(n)

    # ------------------------------------------------------------------ internals

    def _layout(self, i: int, phase: int, pool: int, nodes: Sequence[int],
                gpus: Sequence[int]) -> int:
        """Register the rows a phase of job ``i`` on ``nodes`` writes; returns its id.

        A released phase is buffered as its layout id plus its own times; _flush turns
        it into one row per node, in the order of ``nodes``.
        """
        if len(nodes) != len(gpus):
            raise ValueError("one GPU count per node expected")
        jobs, phases, pools, counts, offsets = self.lay_cols
        jobs.append(i)
        phases.append(phase)
        pools.append(pool)
        counts.append(len(nodes))
        offsets.append(len(self.lay_nodes))
        self.lay_nodes.extend(nodes)
        self.lay_gpus.extend(gpus)
        return len(jobs) - 1

    def _push(self, t: float, kind: int, i: int) -> None:
        """Schedule an event of job ``i`` (stale once the job's epoch changes)."""
        heapq.heappush(self.heap, (t, kind, next(self.counter), i, self.epoch[i]))

    def _next_round(self, j: int, pool: int) -> int:
        """The round of job ``j``'s next phase on a node of ``pool`` (0 rollout, 1 train)."""
        st = self.state[j]
        if st < 0:
            return self.round[j]
        if pool == 0:
            return self.round[j] if st == 0 else self.round[j] + 1
        return self.round[j] + 1 if st == 3 else self.round[j]

    def _normalise(self, n: int) -> None:
        """Move node ``n``'s pointer past jobs whose next phase here is in a later round.

        A job joining a running group starts in a later round than some of its nodes;
        after a reorder a node may point at a job it already served this round. Such
        jobs are skipped for the node's current round (they are not members of it).
        """
        state = self.node[n]
        order, pos, rnd, pool = state[0], state[1], state[2], state[4]
        nxt = self._next_round
        for _ in range(len(order) * 2 + 2):
            if nxt(order[pos], pool) <= rnd:
                break
            pos += 1
            if pos == len(order):
                pos = 0
                rnd += 1
        else:
            rnd = min(nxt(j, pool) for j in order)
            pos = next(k for k, j in enumerate(order) if nxt(j, pool) <= rnd)
        state[1] = pos
        state[2] = rnd

    def _try_node(self, n: int, t: float) -> None:
        """Try to start the phase of the job node ``n`` serves next."""
        state = self.node.get(n)
        if state is not None:
            self._try(state[0][state[1]], t)

    def _build_hot_path(self) -> None:
        """Bind :meth:`_try` and :meth:`_release` as closures over the state lists.

        Closures read their free variables from cells, which is markedly faster than
        ``self.<list>`` lookups in the two functions every phase runs through. The lists
        are only ever mutated in place, never rebound.
        """
        state, ready, rounds, iters = self.state, self.ready, self.round, self.iter
        info, tab_of, cold_left_of = self.info, self.tab, self.cold_left
        holding, ph, ph_train, epoch = self.holding, self.ph, self.ph_train, self.epoch
        busy_r, busy_t, heap, rows = self.busy_r, self.busy_t, self.heap, self.rows
        put = rows.extend
        batch_len = _BATCH_ROWS * _PHASE_FIELDS
        counter = self.counter
        push = heapq.heappush
        record = self.record_phases
        normalise = self._normalise
        flush = self._flush

        def try_(i: int, t: float) -> None:
            """Start job ``i``'s next phase at ``t`` if it is ready and next on its nodes."""
            st = state[i]
            if st > 1 or st < 0 or ready[i] > t:
                return
            (rn, tn, _rg, _tg, coloc, warm, cold, sync, ratio, exp_r, exp_t,
             _rl, _tl, _rgs, _tgs) = info[i]
            nodes = rn if st == 0 else tn
            if coloc:
                for s in nodes:
                    if s[3] != -1:
                        return
            else:
                r = rounds[i]
                for s in nodes:
                    if s[3] != -1 or s[2] != r or s[0][s[1]] != i:
                        return
            cold_left = cold_left_of[i]
            if cold_left and not cold_left.isdisjoint([s[5] for s in nodes]):
                switch = cold
                cold_left.difference_update([s[5] for s in nodes])
            elif coloc:
                switch = warm
            else:
                switch = 0.0
                for s in nodes:
                    if len(s[0]) > 1:
                        switch = warm
                        break
            holding[i] = True
            ep = epoch[i]
            if st == 0:
                tab = tab_of[i]
                if tab is None:
                    roll = roll_node = exp_r
                    ph_train[i] = exp_t
                else:
                    k = iters[i]
                    roll, roll_node, ph_train[i] = tab[0][k], tab[1][k], tab[2][k]
                state[i] = 2
                if coloc:
                    work = roll * ratio
                    push(heap, (t + switch + work, _ROLL_END, next(counter), i, ep))
                else:
                    work = roll_node
                    if roll_node < roll:
                        push(heap, (t + switch + roll_node, _NODE_FREE, next(counter), i, ep))
                    push(heap, (t + switch + roll, _ROLL_END, next(counter), i, ep))
            else:
                work = ph_train[i]
                state[i] = 3
                push(heap, (t + switch + work + sync, _TRAIN_END, next(counter), i, ep))
            ph[i] = (t, switch, work)
            if coloc:
                for s in nodes:
                    s[3] = i
                return
            for s in nodes:
                s[3] = i
                order = s[0]
                pos = s[1] + 1
                if pos == len(order):
                    pos = 0
                    s[2] += 1
                s[1] = pos
                if len(order) > 1:
                    # The next job's next phase here must be in this round (else skip it):
                    # _next_round inlined.
                    j = order[pos]
                    sj = state[j]
                    later = sj > 0 if s[4] == 0 else sj == 3
                    if rounds[j] + later > s[2]:
                        normalise(s[5])

        def release(i: int, t: float, truncate: bool = False) -> tuple[list[Any], ...]:
            """Free the nodes job ``i`` holds at ``t``; record rows and busy time.

            Returns the released nodes' state lists.
            """
            inf = info[i]
            start, switch, work = ph[i]
            if truncate:
                work = min(work, max(0.0, t - start - switch))
            if state[i] == 2:
                nodes = inf[0]
                if record:
                    # One record per phase, not per node: _flush expands it (layout).
                    put((inf[11], iters[i], start, t, work))
                if inf[4]:  # a co-located rollout runs on the training pool
                    busy_t[i] += work * inf[13]
                else:
                    busy_r[i] += work * inf[13]
            else:
                nodes = inf[1]
                if record:
                    put((inf[12], iters[i], start, t, work))
                busy_t[i] += work * inf[14]
            if record and len(rows) >= batch_len:
                flush()
            for s in nodes:
                s[3] = -1
            holding[i] = False
            return nodes

        self._try = try_  # type: ignore[method-assign]
        self._release = release  # type: ignore[method-assign]

    def _flush(self) -> None:
        """Expand the buffered phases into rows; pack them into the current block.

        Each buffered phase becomes one row per node of its layout, in the layout's node
        order, so the rows are those the loop would have written one by one. Iterations
        and layout ids are far below 2**53, so the float64 batch holds them exactly.
        """
        rows = self.rows
        if not rows:
            return
        batch = np.fromiter(rows, dtype=np.float64, count=len(rows))
        batch = batch.reshape(-1, _PHASE_FIELDS)
        rows.clear()
        jobs, phases, pools, counts, offsets = self.lay_cols
        if not self.lay_np or len(self.lay_np[0]) != len(jobs):
            self.lay_np = (
                np.array(jobs, dtype=_PHASE_DTYPE["job"]),
                np.array(phases, dtype=_PHASE_DTYPE["phase"]),
                np.array(pools, dtype=_PHASE_DTYPE["pool"]),
                np.array(counts, dtype=np.intp),
                np.array(offsets, dtype=np.intp),
                np.array(self.lay_nodes, dtype=_PHASE_DTYPE["node"]),
                np.array(self.lay_gpus, dtype=_PHASE_DTYPE["gpus"]),
            )
        l_job, l_phase, l_pool, l_count, l_off, l_nodes, l_gpus = self.lay_np
        lid = batch[:, 0].astype(np.intp)
        n_rows = l_count[lid]
        # The phase of each row, and the row's node: its layout's offset plus its rank
        # among the phase's rows.
        of_row = np.repeat(np.arange(len(lid)), n_rows)
        first = np.cumsum(n_rows) - n_rows
        at = l_off[lid][of_row] + (np.arange(len(of_row)) - first[of_row])
        lid = lid[of_row]
        flat = np.empty(len(of_row), dtype=_PHASE_DTYPE)
        flat["job"] = l_job[lid]
        flat["phase"] = l_phase[lid]
        flat["iteration"] = batch[of_row, 1].astype(_PHASE_DTYPE["iteration"])
        flat["node"] = l_nodes[at]
        flat["pool"] = l_pool[lid]
        flat["start_s"] = batch[of_row, 2]
        flat["end_s"] = batch[of_row, 3]
        flat["work_s"] = batch[of_row, 4]
        flat["gpus"] = l_gpus[at]
        del batch
        done = 0
        while done < len(flat):
            if not self.chunks or self.block_used == len(self.chunks[-1]):
                self.chunks.append(np.empty(_BLOCK_ROWS, dtype=_PHASE_DTYPE))
                self.block_used = 0
            block = self.chunks[-1]
            take = min(len(flat) - done, len(block) - self.block_used)
            block[self.block_used:self.block_used + take] = flat[done:done + take]
            self.block_used += take
            done += take

    # ------------------------------------------------------------------ the loop

    def run_until(self, t_limit: float) -> list[tuple[int, float]]:
        """Process events up to ``t_limit``; stop early at the first job completion."""
        clock = time.thread_time()
        try:
            return self._loop(t_limit)
        finally:
            self.loop_s += time.thread_time() - clock

    def _loop(self, t_limit: float) -> list[tuple[int, float]]:
        """The event loop of :meth:`run_until`."""
        heap = self.heap
        epoch = self.epoch
        state = self.state
        iters, target, rounds, holding = self.iter, self.target, self.round, self.holding
        pop = heapq.heappop
        release = self._release
        try_ = self._try
        count = 0
        try:
            while heap:
                event = pop(heap)
                t, kind, _seq, i, ep = event
                if t > t_limit:
                    heapq.heappush(heap, event)  # not due yet: put it back
                    break
                if ep != epoch[i]:
                    continue
                count += 1
                if kind == _TRAIN_END:
                    freed = release(i, t)
                    iters[i] += 1
                    if iters[i] >= target[i]:
                        state[i] = -1
                        for s in freed:
                            j = s[0][s[1]]
                            if 0 <= state[j] <= 1:
                                try_(j, t)
                        self.now = t
                        return [(i, t)]
                    state[i] = 0
                    rounds[i] += 1
                    try_(i, t)
                elif kind == _ROLL_END:
                    freed = release(i, t) if holding[i] else ()
                    state[i] = 1
                    try_(i, t)
                elif kind == _NODE_FREE:
                    freed = release(i, t)
                else:
                    try_(i, t)
                    continue
                for s in freed:
                    j = s[0][s[1]]
                    if 0 <= state[j] <= 1:
                        try_(j, t)
        finally:
            self.events += count
        if not heap and math.isinf(t_limit) and any(s >= 0 for s in state):
            waiting = [k for k, s in enumerate(state) if s >= 0]
            raise DeadlockError(f"no phase can start; waiting jobs (indices): {waiting[:10]}")
        if math.isfinite(t_limit):
            self.now = max(self.now, t_limit)
        return []

    def iterations_done(self, i: int) -> int:
        """Whole iterations job ``i`` has completed."""
        return self.iter[i]

    def busy_gpu_s(self, i: int) -> tuple[float, float]:
        """Useful (rollout-pool, training-pool) GPU-seconds of job ``i`` so far."""
        return self.busy_r[i], self.busy_t[i]

    def phase_table(self) -> pd.DataFrame:
        """The per-phase table (columns :data:`PHASE_COLUMNS`), rows in order of release.

        Chunks are copied column by column into preallocated arrays and dropped as they
        go, so the peak memory is one table plus one chunk.
        """
        self._flush()
        chunks = self.chunks
        if chunks:
            chunks[-1] = chunks[-1][:self.block_used]
        self.chunks = []
        self.block_used = 0
        total = sum(len(c) for c in chunks)
        columns = {name: np.empty(total, dtype=_PHASE_DTYPE[name]) for name in PHASE_COLUMNS}
        at = 0
        chunks.reverse()
        while chunks:
            chunk = chunks.pop()
            for name in PHASE_COLUMNS:
                columns[name][at:at + len(chunk)] = chunk[name]
            at += len(chunk)
            del chunk
        return pd.DataFrame(columns, columns=list(PHASE_COLUMNS), copy=False)


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
    solo_iteration_s: float = math.nan
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
                 config: SimConfig, model: Any, progress: Callable[[int], None] | None
                 ) -> None:
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
        self.progress = progress
        self.snapshot = empty_snapshot(hw)
        self.state = [_JobState(job=j) for j in self.jobs]
        self.gpu_types = tuple(sorted(hw.gpus))
        self.ts_rows: list[tuple[Any, ...]] = []
        self.event_rows: list[tuple[Any, ...]] = []
        self.heap: list[tuple[float, int, int, str, int]] = []
        self.seq = 0
        self.pending = 0  # arrivals, kills and resubmissions not yet handled
        for k, job in enumerate(self.jobs):
            self._push(job.arrival_s, _P_ARRIVAL, "arrival", k)
        for f in sorted(config.failures, key=lambda f: (f.kill_at_s, f.job_id)):
            if f.job_id not in self.index:
                raise ValueError(f"failures: unknown job_id {f.job_id!r}")
            self._push(f.kill_at_s, _P_KILL, "kill", self.index[f.job_id])
            self.state[self.index[f.job_id]].failures.append(f)
        self.regroup_interval_s = self._regroup_interval()

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

    def _runtime(self, k: int, snap: ClusterSnapshot) -> JobRuntime:
        """The progress models' view of admitted job ``k`` in ``snap``."""
        job = self.jobs[k]
        placed = snap.jobs[job.job_id]
        group = snap.groups[placed.group_id]
        colocated = group.kind is GroupKind.COLOCATED
        gpn = self.hw.node.gpus_per_node
        rnodes = tuple(_serial(n) for n in placed.rollout_nodes)
        tnodes = tuple(_serial(n) for n in placed.train_nodes)
        r_type = snap.nodes[placed.rollout_nodes[0]].gpu_type if rnodes else \
            job.rollout_gpu_type
        t_type = snap.nodes[placed.train_nodes[0]].gpu_type
        # Gavel+ may give a job other node counts than it asked for: GPUs follow the nodes.
        r_gpus = job.rollout_gpus if len(rnodes) == math.ceil(job.rollout_gpus / gpn) else \
            len(rnodes) * gpn
        t_gpus = job.train_gpus if len(tnodes) == math.ceil(job.train_gpus / gpn) else \
            len(tnodes) * gpn
        times = placed.times
        sync = times.sync_flat_s if self.config.sync == "flat" else times.sync_s
        return JobRuntime(
            index=k,
            group_id=placed.group_id,
            colocated=colocated,
            times=times,
            sync_s=sync,
            coloc_ratio=colocation_ratio(self.hw, r_type, job.rollout_gpus, t_type, t_gpus)
            if colocated else 1.0,
            rollout_nodes=tnodes if colocated else rnodes,
            train_nodes=tnodes,
            rollout_gpus=r_gpus,
            train_gpus=t_gpus,
            rollout_gpus_per_node=gpus_per_node(t_gpus if colocated else r_gpus,
                                                len(tnodes if colocated else rnodes), gpn),
            train_gpus_per_node=gpus_per_node(t_gpus, len(tnodes), gpn),
        )

    def _solo_s(self, job: RLJob, done: int = 0) -> float:
        """The job's Solo-D iteration time over the iterations it completed.

        With stochastic phase draws, solo uses the same draws (the job's own phase times,
        its first ``done`` iterations), so a slowdown compares like with like: a job that
        drew long responses would have been slow alone too. With expected times (or
        before any iteration), the phase model's expected Solo-D iteration.
        """
        times = job_profile(job, self.hw).times
        sync = times.sync_flat_s if self.config.sync == "flat" else times.sync_s
        factory = getattr(self.model, "draw_factory", None)
        if factory is None or done <= 0:
            return times.rollout_s + times.train_s + sync
        rollout, _, train = factory(job, times)
        n = min(done, len(rollout))
        return (math.fsum(rollout[:n]) + math.fsum(train[:n])) / n + sync

    def _add(self, k: int, t: float, snap: ClusterSnapshot, ready_s: float, resident: bool
             ) -> None:
        """Hand admitted job ``k`` to the progress model."""
        st = self.state[k]
        rt = self._runtime(k, snap)
        if isinstance(self.model, EventModel):
            self.model.add_job(rt, t, st.done, st.job.iterations, ready_s, resident, st.job)
        else:
            self.model.add_job(rt, t, st.done, st.job.iterations, ready_s, resident)
        st.group_id = rt.group_id
        st.status = "running"
        st.since_s = t
        st.incarnations += 1
        if math.isnan(st.admitted_s):
            st.admitted_s = t

    def _set_orders(self, group_id: str, snap: ClusterSnapshot) -> None:
        """Pass a group's per-node orders (if any) to the progress model."""
        group = snap.groups.get(group_id)
        if group is None or group.node_orders is None:
            return
        orders = {_serial(n): [self.index[j] for j in seq] for n, seq in group.node_orders}
        if isinstance(self.model, EventModel):
            self.model.set_node_orders(orders)
        else:
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
                        decision.marginal_cost_usd_per_h)
        else:
            self._regroup(decision, t, arrival=(k, kind))
        self._record_ts(t)

    def _regroup(self, r: Regrouping, t: float, arrival: tuple[int, str] | None) -> None:
        """Apply a re-partition: dissolved groups' jobs restart on their new nodes."""
        old = dataclasses.replace(self.snapshot, time_s=t)
        kept = set(r.kept_groups)
        moved: list[int] = []
        for group in sorted(old.groups.values(), key=lambda g: g.serial):
            if group.group_id in kept:
                continue
            for job_id in group.jobs:
                k = self.index[job_id]
                st = self.state[k]
                st.done = self.model.remove_job(k, t, True)
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
                self._add(k, t, self.snapshot, t + pause, resident=pause == 0.0)
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
        st.done = self.model.remove_job(k, t, False)
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
        st.done = self.model.remove_job(k, t, True)
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
        """Ask the policy for its periodic re-partition."""
        snap = dataclasses.replace(self.snapshot, time_s=t)
        decision = self.policy.regroup(snap)
        if decision is not None:
            self._regroup(decision, t, None)
            self._record_ts(t)

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
                solo = self._solo_s(job, done)
            except ValueError:  # the phase model cannot run it (a rejected job)
                solo = math.nan
            achieved = st.running_s / done if done > 0 else math.nan
            slowdown = achieved / solo if done > 0 else math.nan
            met = st.status == "completed" and slowdown_slo_met(slowdown, job.slo)
            busy = self.model.busy_gpu_s(k) if st.incarnations else (0.0, 0.0)
            rows.append((k, job.job_id, job.arrival_s, job.slo, job.iterations, done, st.status,
                         st.strategy, st.group_id, st.admitted_s, st.finish_s, st.running_s,
                         st.incarnations, solo, achieved, slowdown, met, busy[0], busy[1],
                         st.reason))
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
) -> SimulationResult:
    """Replay ``jobs`` under ``policy`` on ``hw``; tables, summary and resolved config.

    ``policy`` is a registered name (built with :func:`build_policy`, seeded with
    ``seed`` when it takes one) or a policy object. ``progress(n)`` is called as jobs
    finish, are rejected or are killed for good. ``draw_factory(job, times)`` overrides
    the phase draws (event path; default from ``config``: stochastic or expected).
    Same inputs and seed give identical tables.
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
    if draw_factory is None:
        draw_factory, label = default_draw_factory(hw, config, seed, [j.job_id for j in jobs])
    model: Any
    if config.fidelity == "event":
        model = EventModel(len(jobs), draw_factory, config.record_phases)
    else:
        model = AnalyticModel()
        label = "expected"
    driver = _Driver(jobs, policy_obj, hw, config, model, progress)
    clock = time.perf_counter()
    driver.run()
    run_s = time.perf_counter() - clock
    jobs_df = driver.job_table()
    ts = driver.timeseries()
    events = driver.event_table()
    phases = model.phase_table() if isinstance(model, EventModel) else pd.DataFrame(
        columns=list(PHASE_COLUMNS))
    extra = {
        "policy": getattr(policy_obj, "name", str(policy)),
        "fidelity": config.fidelity,
        "seed": seed,
        "phase_sampler": label,
        "phase_events": int(getattr(model, "events", 0)),
        "phase_rows": len(phases),
    }
    summary = summarize(jobs_df, ts, events, driver.gpu_types, extra)
    resolved = {**config.to_dict(), "policy": extra["policy"], "seed": seed,
                "phase_sampler": label}
    return SimulationResult(phases=phases, events=events, timeseries=ts, jobs=jobs_df,
                            summary=summary, config=resolved,
                            timings={"replay_s": run_s,
                                     "event_loop_cpu_s": float(getattr(model, "loop_s", 0.0)),
                                     "phase_events": float(getattr(model, "events", 0))})
