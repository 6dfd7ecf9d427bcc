"""Data behind the paper's model-driven figures (Fig. 3, 4, 6, 7, 10, 12, 13) and the
claims metrics of the micro-benchmarks, ablations, Table 5, Theorem 1 and Fig. 4.

Every number comes from the library's models: the group model
(:class:`rollmux.group.CoExecutionGroup`) and its event simulation
(:mod:`rollmux.schedule.eventsim`), the phase-time model (:mod:`rollmux.phasetimes`:
switches, sync, response lengths), the stochastic simulator
(:mod:`rollmux.sim.stochastic`, :mod:`rollmux.experiments.microbench_sim`) and the results files
of the pipeline (``results/microbench/*.csv``, ``results/theorem1/summary.csv``, the
Table 5 benchmarks). Nothing is typed in; the figure scripts under ``analysis/`` only
draw what these functions return. Column definitions are in each function's docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rollmux.anchors import reference_job
from rollmux.experiments.metrics import metric_unit, metrics_frame
from rollmux.hardware import GB, Hardware, load_hardware

if TYPE_CHECKING:  # the model modules load scipy; import them where they are used, so
    # that the figure scripts (which only draw) start fast
    from rollmux.group import CoExecutionGroup

__all__ = [
    "MICROBENCH_METRICS",
    "THEOREM1_IN_SCOPE",
    "bad_case",
    "group_status_examples",
    "length_distribution",
    "migration_timeline",
    "models_metrics",
    "per_gpu_segments",
    "reference_job",
    "scenario_gantt",
    "switch_table",
    "sync_table",
]

#: The metrics of :func:`models_metrics` read from the simulated micro-benchmarks (phase
#: times drawn with the seed: C14-C25); the others are deterministic.
MICROBENCH_METRICS: tuple[str, ...] = (
    *(f"throughput_ratio_{scenario}_{base}" for scenario in ("temporal", "train", "spatial")
      for base in ("solod", "gavel", "verl")),
    "iteration_overhead_vs_solo",
    "iteration_slowdown_vs_ideal",
    "migration_speedup",
)

THEOREM1_IN_SCOPE: tuple[str, ...] = (
    "a_one_rollout_one_train",
    "b_shared_train",
    "c_crossing",
)
"""Boundary-map families inside Theorem 1's statement: aggregate utilisation and
``T_load <= T_cycle`` (the cost-weighted and the saturated families are outside it)."""


# --------------------------------------------------------------------------- helpers


def _nodes_needed(gpus: int, hw: Hardware) -> int:
    """Nodes holding ``gpus`` GPUs."""
    return math.ceil(gpus / hw.node.gpus_per_node)


def _timeline(group: CoExecutionGroup, iterations: int) -> pd.DataFrame:
    """Per-phase rows of a group's round-robin meta-iterations (effective phases)."""
    from rollmux.schedule.eventsim import simulate, to_frame
    from rollmux.schedule.graph import round_robin_schedule

    rollout, train = group.effective_phases_s()
    schedule = round_robin_schedule(
        rollout,
        train,
        rollout_node=[job.rollout_nodes for job in group.jobs],
        train_node=[job.train_nodes for job in group.jobs],
        order=group.order,
    )
    return to_frame(simulate(schedule, iterations))


def _check_iterations(name: str, value: int, minimum: int = 1) -> int:
    """Validate an iteration count (ValueError naming it)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


# --------------------------------------------------------------------------- Fig. 3


def bad_case(
    job_types: Sequence[str] = ("D", "E"),
    iterations: int = 3,
    hw: Hardware | None = None,
    definitions: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 3: rollout-heavy micro-benchmark jobs sharing one rollout node.

    Layout ``solo``: every job alone on its own rollout and training nodes. Layout
    ``shared``: all jobs pinned to rollout node 0, each keeps its own training nodes
    (so only the rollout node is contended), run as the round-robin meta-iteration of
    the group model with warm switches. Returns ``(phases, slowdowns)``: the per-phase
    table (columns of :func:`rollmux.schedule.eventsim.to_frame` plus ``layout`` and
    ``job_type``) and one row per job with ``job``, ``job_type``, ``rollout_s``,
    ``train_s`` (incl. sync), ``solo_s``, ``shared_s`` (the exact meta-iteration),
    ``slowdown`` = shared / solo, ``t_load_s``, ``t_cycle_s`` and ``status``.
    """
    from rollmux.closedform import pools_from_hardware
    from rollmux.group import CoExecutionGroup, group_job_of, node_capacity_from_hardware
    from rollmux.jobtypes import job_type, load_microbench
    from rollmux.model import resolve

    _check_iterations("iterations", iterations)
    if len(job_types) < 2:
        raise ValueError(f"job_types must name at least two jobs, got {list(job_types)!r}")
    hw = hw or load_hardware()
    data = definitions or load_microbench()
    jobs = [job_type(t, data, job_id=f"{t}{i}") for i, t in enumerate(job_types)]
    members, solo_members = [], []
    next_train = 0
    for i, job in enumerate(jobs):
        t_nodes = tuple(range(next_train, next_train + _nodes_needed(job.train_gpus, hw)))
        next_train += len(t_nodes)
        resolved = resolve(job, hw)
        members.append(group_job_of(resolved, 0, t_nodes))
        solo_members.append(group_job_of(resolved, i, t_nodes))
    groups = {
        layout: CoExecutionGroup(
            jobs=tuple(pinned),
            rollout_node_ids=tuple(sorted({n for m in pinned for n in m.rollout_nodes})),
            train_node_ids=tuple(range(next_train)),
            pools=pools_from_hardware(hw),
            node_capacity=node_capacity_from_hardware(hw),
        )
        for layout, pinned in (("solo", solo_members), ("shared", members))
    }
    frames = []
    for layout, group in groups.items():
        frame = _timeline(group, iterations)
        frame.insert(0, "layout", layout)
        frame["job_type"] = [job_types[j] for j in frame["job"]]
        frames.append(frame)
    metrics = groups["shared"].metrics()
    rollout, train = groups["shared"].effective_phases_s()
    rows = []
    for j in range(len(jobs)):
        solo_s = members[j].phases.solo_iteration_s
        rows.append({
            "job": j,
            "job_type": job_types[j],
            "rollout_s": rollout[j],
            "train_s": train[j],
            "solo_s": solo_s,
            "shared_s": metrics.meta_iteration_s,
            "slowdown": metrics.meta_iteration_s / solo_s,
            "t_load_s": metrics.t_load_s,
            "t_cycle_s": metrics.t_cycle_s,
            "status": str(metrics.status),
        })
    return pd.concat(frames, ignore_index=True), pd.DataFrame(rows)


# --------------------------------------------------------------------------- Fig. 4


def switch_table(
    model_sizes_b: Sequence[float] = (3.0, 7.0, 14.0, 32.0),
    gpus: int = 8,
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Fig. 4: warm and cold start of each phase vs model size (switch model, docs/model.md 7).

    One row per model size and phase: ``model_size_b``, ``phase`` (rollout | train),
    ``gpu_type`` (H20 | H800), ``gpus``, ``state_gb_per_node`` (the per-node state a
    cold start reads from disk), ``warm_s``, ``cold_s``, ``speedup`` = cold / warm.
    """
    from rollmux.phasetimes import rollout_shape, switch_times

    hw = hw or load_hardware()
    rows = []
    for size in model_sizes_b:
        job = reference_job(float(size), gpus)
        sw = switch_times(job, hw)
        shape = rollout_shape(job, hw)
        per_node = min(gpus, hw.node.gpus_per_node)
        roll_gb = hw.perf.weight_bytes_per_param * job.model_size_b * 1e9 / (
            shape.tensor_parallel * GB) * per_node
        train_gb = hw.perf.train_state_bytes_per_param * job.model_size_b * 1e9 / (
            job.train_gpus * GB) * per_node
        for phase, gpu, state, warm, cold in (
            ("rollout", job.rollout_gpu_type, roll_gb, sw.rollout_warm_s, sw.rollout_cold_s),
            ("train", job.train_gpu_type, train_gb, sw.train_warm_s, sw.train_cold_s),
        ):
            rows.append({
                "model_size_b": float(size),
                "phase": phase,
                "gpu_type": gpu,
                "gpus": gpus,
                "state_gb_per_node": state,
                "warm_s": warm,
                "cold_s": cold,
                "speedup": cold / warm,
            })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Fig. 6


def group_status_examples(
    groups: Sequence[Sequence[Sequence[float]]], iterations: int = 2,
    hw: Hardware | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 6: example groups on one rollout and one training node, and their status.

    ``groups`` lists each group's jobs as ``(rollout_s, train_s)`` pairs (illustrative
    durations from the config; no switches or sync). Returns ``(phases, status)``: the
    per-phase table of each group's round-robin execution (``group`` column added) and
    one row per group with ``group``, ``jobs``, ``t_load_s``, ``t_cycle_s``,
    ``meta_iteration_s``, ``status``, ``rollout_utilisation`` and ``train_utilisation``.
    ``hw`` prices the pools (default: the packaged hardware; no column reads a price).
    """
    from rollmux.closedform import JobPhases, pools_from_hardware
    from rollmux.group import CoExecutionGroup, GroupJob

    pools = pools_from_hardware(hw or load_hardware())

    _check_iterations("iterations", iterations)
    frames, rows = [], []
    for g, jobs in enumerate(groups):
        members = []
        for j, pair in enumerate(jobs):
            if len(pair) != 2:
                raise ValueError(f"groups[{g}][{j}] = {pair!r}: expected (rollout_s, train_s)")
            members.append(GroupJob(phases=JobPhases.of(float(pair[0]), float(pair[1])),
                                    rollout_nodes=(0,), train_nodes=(0,), job_id=f"J{j}"))
        group = CoExecutionGroup(jobs=tuple(members), rollout_node_ids=(0,), train_node_ids=(0,),
                                 pools=pools)
        m = group.metrics()
        frame = _timeline(group, iterations)
        frame.insert(0, "group", g)
        frames.append(frame)
        rows.append({
            "group": g,
            "jobs": ";".join(f"{p[0]:g}/{p[1]:g}" for p in jobs),
            "t_load_s": m.t_load_s,
            "t_cycle_s": m.t_cycle_s,
            "meta_iteration_s": m.meta_iteration_s,
            "status": str(m.status),
            "rollout_utilisation": m.rollout_utilisation,
            "train_utilisation": m.train_utilisation,
        })
    return pd.concat(frames, ignore_index=True), pd.DataFrame(rows)


# --------------------------------------------------------------------------- Fig. 7


def migration_timeline(
    job_types: Sequence[str] = ("A", "E"),
    iterations: int = 3,
    seed: int = 0,
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Fig. 7: a pair woven on one rollout and one training node, with and without migration.

    The same stochastic draws (:func:`rollmux.sim.stochastic.pair_tables`) run through
    :func:`rollmux.sim.stochastic.simulate_woven` twice. Columns: ``migration`` (bool),
    the phase table's ``job, phase, node, iteration, start_s, end_s``, ``job_type`` and
    ``gpus`` (GPUs the row holds: the whole node, or the tail's GPUs).
    """
    from rollmux.jobtypes import job_type, load_microbench
    from rollmux.model import resolve
    from rollmux.sim.stochastic import StochasticConfig, pair_tables, simulate_woven

    _check_iterations("iterations", iterations)
    hw = hw or load_hardware()
    data = load_microbench()
    jobs = [job_type(t, data, job_id=f"{t}{i}") for i, t in enumerate(job_types)]
    gpn = hw.node.gpus_per_node
    pins = [[0]] * len(jobs)
    frames = []
    for migration in (False, True):
        tables = pair_tables([resolve(job, hw) for job in jobs], seed=seed, iterations=iterations,
                             config=StochasticConfig(migration=migration))
        frame = simulate_woven(tables, pins, pins, gpus_per_node=gpn)
        gpus = [
            int(tables.tail_gpus[k, j]) if phase == "tail" else gpn
            for j, phase, k in zip(frame["job"], frame["phase"], frame["iteration"], strict=True)
        ]
        frame = frame.assign(job_type=[job_types[j] for j in frame["job"]], gpus=gpus)
        frame.insert(0, "migration", migration)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def per_gpu_segments(frame: pd.DataFrame, gpus_per_node: int) -> pd.DataFrame:
    """Expand one rollout node's phase rows to per-GPU busy segments.

    A tail holds the lowest-numbered GPUs not held by another tail when it starts; a
    rollout holds every GPU of the node except, while they last, those of running tails
    (it progresses at the free share, as in ``simulate_woven``). Training rows are
    returned unchanged on row ``"T"``. Columns: ``gpu`` (int, or ``"T<id>"`` for a training
    node), ``job``, ``phase``, ``iteration``, ``start_s``, ``end_s``.
    """
    rows: list[dict[str, Any]] = []
    tails: list[tuple[float, float, int, tuple[int, ...], int]] = []
    rollout_rows = frame[frame["node"].astype(str).str.startswith("R")]
    for rec in rollout_rows.sort_values(["start_s", "job"], kind="stable").itertuples():
        if rec.phase != "tail":
            continue
        busy = {g for s, e, _, held, _ in tails for g in held if s < rec.end_s and e > rec.start_s}
        held = tuple(g for g in range(gpus_per_node) if g not in busy)[: int(rec.gpus)]
        tails.append((float(rec.start_s), float(rec.end_s), int(rec.job), held,
                      int(rec.iteration)))
        for g in held:
            rows.append({"gpu": g, "job": int(rec.job), "phase": "tail",
                         "iteration": int(rec.iteration), "start_s": float(rec.start_s),
                         "end_s": float(rec.end_s)})
    for rec in rollout_rows[rollout_rows["phase"] == "rollout"].itertuples():
        start, end = float(rec.start_s), float(rec.end_s)
        for g in range(gpus_per_node):
            cuts = sorted((max(s, start), min(e, end)) for s, e, _, held, _ in tails
                          if g in held and s < end and e > start)
            now = start
            for lo, hi in [*cuts, (end, end)]:
                if lo > now:
                    rows.append({"gpu": g, "job": int(rec.job), "phase": "rollout",
                                 "iteration": int(rec.iteration), "start_s": now,
                                 "end_s": lo})
                now = max(now, hi)
    for rec in frame[frame["node"].astype(str).str.startswith("T")].itertuples():
        rows.append({"gpu": str(rec.node), "job": int(rec.job), "phase": str(rec.phase),
                     "iteration": int(rec.iteration), "start_s": float(rec.start_s),
                     "end_s": float(rec.end_s)})
    out = pd.DataFrame(rows, columns=["gpu", "job", "phase", "iteration", "start_s", "end_s"])
    return out.sort_values(["start_s", "job"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- Fig. 10


def scenario_gantt(
    names: Sequence[str] = ("temporal", "train", "spatial"),
    seed: int = 0,
    iterations: int = 10,
    shown_iterations: int = 3,
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Fig. 10 Gantt charts: each scenario's woven group simulated with stochastic phases.

    :func:`rollmux.experiments.microbench_sim.run_scenario` (long-tail migration on) for
    ``iterations`` iterations; the rows of the first ``shown_iterations`` are returned
    with ``scenario`` and ``job_id`` columns.
    """
    from rollmux.experiments.microbench_sim import run_scenario

    _check_iterations("shown_iterations", shown_iterations)
    if shown_iterations > iterations:
        raise ValueError(f"shown_iterations must be <= iterations ({iterations}), "
                         f"got {shown_iterations!r}")
    hw = hw or load_hardware()
    frames = []
    for name in names:
        run = run_scenario(name, seed, iterations, hw)
        frame = run.frame[run.frame["iteration"] < shown_iterations].copy()
        ids = [job.job_id for job in run.scenario.jobs]
        frame["job_id"] = [ids[j] for j in frame["job"]]
        frame.insert(0, "scenario", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- Fig. 12


def length_distribution(
    job_types: Sequence[str] = ("A", "B"),
    bins: int = 60,
    hw: Hardware | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 12 (left): each job type's response-length distribution (truncated lognormal).

    Exact bin probabilities from the CDF (no sampling): ``job_type``, ``bin_lo``,
    ``bin_hi`` (tokens), ``probability``, ``density`` (per 1k tokens). The second frame
    has per job type ``max_tokens``, ``mean_tokens``, ``median_tokens``, ``p99_tokens``,
    ``responses`` per iteration and ``expected_longest_tokens`` (the batch's expected
    maximum, which sets a tail-bound rollout).
    """
    from rollmux.jobtypes import job_type, load_microbench
    from rollmux.model import resolve

    _check_iterations("bins", bins, 2)
    hw = hw or load_hardware()
    data = load_microbench()
    hist, stats = [], []
    for name in job_types:
        resolved = resolve(job_type(name, data), hw)
        dist = resolved.length_dist()
        edges = np.linspace(dist.min_tokens, dist.max_tokens, bins + 1)
        prob = np.diff(dist.cdf(edges))
        width_k = np.diff(edges) / 1000.0
        for lo, hi, p, w in zip(edges[:-1], edges[1:], prob, width_k, strict=True):
            hist.append({"job_type": name, "bin_lo": lo, "bin_hi": hi, "probability": p,
                         "density": p / w})
        n = resolved.responses_per_iter
        stats.append({
            "job_type": name,
            "max_tokens": dist.max_tokens,
            "mean_tokens": dist.mean(),
            "median_tokens": float(dist.quantile(0.5)),
            "p99_tokens": float(dist.quantile(0.99)),
            "responses": n,
            "expected_longest_tokens": dist.expected_max(n),
        })
    return pd.DataFrame(hist), pd.DataFrame(stats)


# --------------------------------------------------------------------------- Fig. 13


def sync_table(
    model_sizes_b: Sequence[float] = (7.0, 14.0, 32.0),
    gpus: Sequence[int] = (8, 16),
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Fig. 13: weight-sync time, topology-aware vs flat (veRL), per size and GPU count.

    Columns: ``model_size_b``, ``gpus`` (training = rollout GPUs), ``tensor_parallel``,
    ``replicas``, ``flat_s`` (one copy per rollout GPU, the paper's words), ``topology_s``,
    ``cross_copy_s``, ``speedup`` = flat / topology-aware, and the per-replica reading of
    flat sync beside it (``flat_per_replica_s``, ``speedup_per_replica``).
    """
    from rollmux.phasetimes import rollout_shape, sync_times

    hw = hw or load_hardware()
    rows = []
    for n in gpus:
        for size in model_sizes_b:
            job = reference_job(float(size), int(n))
            shape = rollout_shape(job, hw)
            sync = sync_times(job, hw)
            per_replica = sync_times(job, hw, flat_copies="replica")
            rows.append({
                "model_size_b": float(size),
                "gpus": int(n),
                "tensor_parallel": shape.tensor_parallel,
                "replicas": shape.replicas,
                "flat_s": sync.flat_s,
                "topology_s": sync.topology_s,
                "cross_copy_s": sync.cross_copy_s,
                "speedup": sync.flat_s / sync.topology_s,
                "flat_per_replica_s": per_replica.flat_s,
                "speedup_per_replica": per_replica.flat_s / sync.topology_s,
            })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- metrics


def _row(metric: str, source: str | Sequence[str], note: str, *,
         value: float | None = None, low: float | None = None,
         high: float | None = None) -> dict[str, Any]:
    """One metrics row, its unit from the contract; ``source`` paths are joined with ';'."""
    src = source if isinstance(source, str) else ";".join(source)
    return {"metric": metric, "value": value, "low": low, "high": high,
            "unit": metric_unit(metric), "source": src, "note": note}


def models_metrics(
    paths: Mapping[str, str],
    theorem1_scope: Sequence[str] = THEOREM1_IN_SCOPE,
) -> pd.DataFrame:
    """Claims C14-C27, C45-C46, C53-C55 from the results files named in ``paths``.

    Keys of ``paths``: ``throughput``, ``table4``, ``migration`` (results/microbench/),
    ``sync`` (:func:`sync_table`), ``switch`` (:func:`switch_table`), ``latency`` and
    ``optimum`` (Table 5 benchmarks) and ``theorem1`` (the boundary map).
    """
    rows: list[dict[str, Any]] = []
    thr = pd.read_csv(paths["throughput"])
    baselines = {"solod": "solo-d", "gavel": "gavel-plus", "verl": "verl"}
    for scenario in ("temporal", "train", "spatial"):
        for short, system in baselines.items():
            hit = thr[(thr["scenario"] == scenario) & (thr["system"] == system)]
            value = float(hit["rollmux_gain"].iloc[0]) if len(hit) and bool(
                hit["available"].iloc[0]) else None
            rows.append(_row(
                f"throughput_ratio_{scenario}_{short}", paths["throughput"],
                f"RollMux (simulated, migration) throughput per USD/h over {system} "
                f"({'missing' if value is None else 'rollmux_gain'}), {scenario} scenario",
                value=value))
    t4 = pd.read_csv(paths["table4"])
    for metric, column, what in (
        ("iteration_overhead_vs_solo", "overhead_vs_solo", "RollMux over solo"),
        ("iteration_slowdown_vs_ideal", "slower_than_ideal", "RollMux over ideal all-H800"),
    ):
        pct = 100.0 * t4[column]
        rows.append(_row(metric, paths["table4"],
                         f"min..max over the {len(t4)} jobs of Table 4 ({what} - 1)",
                         low=float(pct.min()), high=float(pct.max())))
    mig = pd.read_csv(paths["migration"])
    rows.append(_row("migration_speedup", paths["migration"],
                     f"min..max over pairs {', '.join(mig['pair'])}",
                     low=float(mig["speedup"].min()), high=float(mig["speedup"].max())))
    sync = pd.read_csv(paths["sync"])
    for n, metric in ((8, "sync_speedup_8to8"), (16, "sync_speedup_16to16")):
        part = sync[sync["gpus"] == n]
        if part.empty:
            rows.append(_row(metric, paths["sync"], f"no {n}->{n} rows"))
            continue
        sizes = "/".join(f"{s:g}B" for s in part["model_size_b"])
        note = (f"flat (a copy per rollout GPU) / topology-aware sync, min..max over {sizes} "
                f"on {n}->{n} GPUs")
        if "speedup_per_replica" in part:
            note += (f" (a copy per replica: {part['speedup_per_replica'].min():.4g}-"
                     f"{part['speedup_per_replica'].max():.4g})")
        rows.append(_row(metric, paths["sync"], note,
                         low=float(part["speedup"].min()), high=float(part["speedup"].max())))
    lat = pd.read_csv(paths["latency"])
    largest = lat.loc[lat["jobs"].idxmax()]
    rows.append(_row("decision_latency_2000_jobs", paths["latency"],
                     f"median over {int(largest['decisions'])} rollmux decisions at "
                     f"{int(largest['jobs'])} concurrent jobs (Python; machine: Table 5 note)",
                     value=float(largest["median_ms"])))
    opt = pd.read_csv(paths["optimum"])
    done = opt[opt["bruteforce_finished"].astype(str) == "True"]
    if len(done):
        top = done.loc[done["jobs"].idxmax()]
        n_jobs = int(top["jobs"])
        same = bool(np.isclose(top["bruteforce_cost_usd_per_h"], top["optimal_cost_usd_per_h"]))
        note = (f"brute-force optimum wall time at {n_jobs} jobs (the largest size run"
                + ("" if n_jobs == 13 else "; not 13 jobs, see the paper profile") + "); "
                f"exact optimum {float(top['seconds']):.3g} s, same cost {same}")
        rows.append(_row("bruteforce_time_13_jobs", paths["optimum"], note,
                         value=float(top["bruteforce_seconds"])))
    else:
        rows.append(_row("bruteforce_time_13_jobs", paths["optimum"],
                         "no brute-force run finished within its time limit"))
    th = pd.read_csv(paths["theorem1"])
    scope = th[th["family"].isin(list(theorem1_scope))]
    n_counter = int(scope["n_counterexamples"].sum())
    rows.append(_row("theorem1_holds", paths["theorem1"],
                     f"1 if no counterexample in families {', '.join(scope['family'])} "
                     f"({int(scope['n_instances'].sum())} instances); found {n_counter}",
                     value=float(n_counter == 0)))
    sw = pd.read_csv(paths["switch"])
    best = sw.loc[sw["speedup"].idxmax()]
    rows.append(_row("warm_start_speedup", paths["switch"],
                     f"max cold/warm over {len(sw)} (size, phase) pairs; at "
                     f"{best['model_size_b']:g}B {best['phase']}",
                     value=float(best["speedup"])))
    cold = sw.loc[sw["cold_s"].idxmax()]
    sizes = "/".join(f"{s:g}B" for s in sorted(set(sw["model_size_b"])))
    rows.append(_row("cold_start_seconds", paths["switch"],
                     f"max cold start over sizes {sizes} on {int(cold['gpus'])}-GPU nodes; "
                     f"at {cold['model_size_b']:g}B {cold['phase']}",
                     value=float(cold["cold_s"])))
    return metrics_frame(rows, "models")
