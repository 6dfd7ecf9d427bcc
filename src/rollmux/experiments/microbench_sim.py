"""Micro-benchmark scenarios (paper sec. 6.2) simulated with stochastic phases: Table 4, Fig. 10.

Each scenario of :mod:`rollmux.experiments.microbench` (temporal: 2 x A; train: 2 x D + E
on 24 H20 and one shared H800 node; spatial: C + 2 x D, each D on its own H20 node and
C's H800 nodes) is executed phase by phase with
:func:`rollmux.sim.stochastic.simulate_woven`: stochastic rollout and training durations
(:class:`~rollmux.sim.stochastic.PhaseSampler`, fixed seed, ``iterations`` iterations),
warm switches on shared nodes, sync inside the training phase and, by default, long-tail
migration. The same draws give each job's solo iteration, on the GPUs it has in its group
(the Table 4 reference) and on the GPUs it requests (Table 3), and the ideal all-H800
co-location with a free network (the paper's "performance ceiling"). :func:`table4`
tabulates the per-iteration overheads, :func:`throughput_table` the throughput at equal
hourly provisioning cost against Solo-D and veRL (closed form) and Gavel+ (its placement
policy). Columns are defined in docs/stochastic.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from rollmux.closedform import (
    JobPhases,
    pools_from_hardware,
    solo_d_fleet,
    verl_fleet,
)
from rollmux.experiments.microbench import SCENARIOS, Scenario, build_scenario
from rollmux.hardware import Hardware, load_hardware
from rollmux.jobs import RLJob
from rollmux.jobtypes import job_type, load_microbench
from rollmux.model import resolve
from rollmux.sim.stochastic import (
    IterationDraw,
    PhaseSampler,
    StochasticConfig,
    WovenTables,
    iteration_end_times,
    migration_speedup,
    simulate_woven,
    steady_iteration_s,
)

__all__ = [
    "DEFAULT_PAIRS",
    "PAPER_GAINS",
    "SOLO_CONFIGS",
    "TABLE4_COLUMNS",
    "THROUGHPUT_COLUMNS",
    "ScenarioRun",
    "baseline_jobs",
    "gavel_plus_fleet",
    "migration_table",
    "run_scenario",
    "table4",
    "throughput_table",
]

PAPER_GAINS: dict[str, dict[str, float]] = {
    "temporal": {"solo-d": 1.82, "gavel-plus": 1.73, "verl": 1.47},
    "train": {"solo-d": 1.90, "gavel-plus": 1.43, "verl": 1.35},
    "spatial": {"solo-d": 1.99, "gavel-plus": 1.78, "verl": 1.43},
}
"""The paper's throughput ratios of RollMux over each baseline at equal cost (sec. 6.2)."""

TABLE4_COLUMNS: tuple[str, ...] = (
    "scenario", "job", "solo_s", "solo_requested_s", "rollmux_s", "rollmux_no_migration_s",
    "ideal_s", "ideal_rollout_s", "ideal_rollout_ratio", "closed_form_s", "overhead_vs_solo",
    "overhead_vs_requested_solo", "slower_than_ideal", "iterations", "seed",
)
"""Columns of :func:`table4` (definitions in docs/stochastic.md, "Table 4")."""

THROUGHPUT_COLUMNS: tuple[str, ...] = (
    "scenario", "system", "jobs", "h20_gpus", "h800_gpus", "cost_usd_per_h",
    "normalised_throughput", "throughput_per_kusd_h", "rollmux_gain", "paper_gain",
    "available", "note",
)
"""Columns of :func:`throughput_table` (definitions in docs/stochastic.md, "Fig. 10")."""


@dataclass(frozen=True)
class ScenarioRun:
    """One simulated scenario: its definition, per-phase tables and per-job iteration times.

    Per-job arrays are indexed like ``scenario.jobs``; ``frame`` is the woven group's
    per-phase table with migration as configured, ``frame_no_migration`` without.
    ``solo_s`` is the job alone on the GPUs it has in the group (Table 4's reference),
    ``solo_requested_s`` alone on the GPUs it requests (Table 3), ``ideal_s`` all phases on
    its in-group H800 GPUs with a free network, its rollout (``ideal_rollout_s``)
    ``ideal_rollout_ratio`` times the H20 one.
    """

    scenario: Scenario
    frame: pd.DataFrame
    frame_no_migration: pd.DataFrame
    rollmux_s: np.ndarray
    rollmux_no_migration_s: np.ndarray
    solo_s: np.ndarray
    solo_requested_s: np.ndarray
    ideal_s: np.ndarray
    ideal_rollout_s: np.ndarray
    ideal_rollout_ratio: np.ndarray


def _check_run_args(seed: int, iterations: int) -> None:
    """Validate the seed and the iteration count (ValueError naming them)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 10:
        raise ValueError(f"iterations must be an integer >= 10, got {iterations!r}")


def _tables(draws: Sequence[Sequence[IterationDraw]], rollout_extra_s: Sequence[float],
            train_extra_s: Sequence[float]) -> WovenTables:
    """Woven tables from per-job draws plus each job's switch (rollout) and sync+switch."""
    rows = list(zip(*draws, strict=True))
    return WovenTables(
        node_s=np.array([[d.rollout_node_s + rollout_extra_s[j] for j, d in enumerate(r)]
                         for r in rows]),
        tail_s=np.array([[d.tail_s for d in r] for r in rows]),
        tail_gpus=np.array([[d.tail_gpus for d in r] for r in rows]),
        train_s=np.array([[d.train_s + train_extra_s[j] for j, d in enumerate(r)]
                          for r in rows]),
    )


def run_scenario(
    name: str,
    seed: int = 0,
    iterations: int = 60,
    hw: Hardware | None = None,
    config: StochasticConfig | None = None,
    definitions: Mapping[str, Any] | None = None,
) -> ScenarioRun:
    """Simulate scenario ``name`` for ``iterations`` iterations with stochastic phases.

    ``definitions`` replaces the packaged job types and scenarios (``load_microbench()``).
    Long-tail migration (``config.migration``) applies to the jobs whose rollout nodes
    serve another job too: elsewhere no next rollout waits for the freed GPUs.
    """
    _check_run_args(seed, iterations)
    hw = hw or load_hardware()
    cfg = config or StochasticConfig()
    sc = build_scenario(name, hw, definitions)
    group = sc.group
    eff_rollout, eff_train = group.effective_phases_s()
    gpn = group.node_capacity.gpus_per_node
    group_draws: list[list[IterationDraw]] = []
    plain_draws: list[list[IterationDraw]] = []
    requested_draws: list[list[IterationDraw]] = []
    r_extra, t_extra, ratios = [], [], []
    off = replace(cfg, migration=False)
    # Long-tail migration frees GPUs so that "the next job's rollout phase" starts on them
    # (paper sec. 4.3): only a job whose rollout nodes serve another job migrates its tail.
    shared = {n for n in group.rollout_node_ids if len(group.jobs_on("rollout", n)) > 1}
    for j, job in enumerate(sc.jobs):
        member = group.jobs[j].phases
        resolved = sc.resolved[j]
        base = resolved.times
        in_group = replace(base, train_s=member.train_s,
                           train_max_s=member.worst_case().train_s)
        kwargs: dict[str, Any] = {"root_seed": seed, "total_iterations": iterations}
        migrates = cfg if shared.intersection(group.jobs[j].rollout_nodes) else off
        group_draws.append(PhaseSampler(resolved, config=migrates, times=in_group,
                                        **kwargs).table(iterations))
        plain_draws.append(PhaseSampler(resolved, config=off, times=in_group,
                                        **kwargs).table(iterations))
        requested_draws.append(PhaseSampler(resolved, config=off, times=base,
                                            **kwargs).table(iterations))
        r_extra.append(eff_rollout[j] - member.rollout_s)
        t_extra.append(eff_train[j] - member.train_s)
        if math.isnan(sc.ideal_rollout_ratio[j]):
            raise ValueError(f"scenario {name!r}: job {job.job_id!r} cannot run its rollout on "
                             f"its {member.train_gpus} in-group {job.train_gpu_type} GPUs "
                             f"(Table 4's ideal co-location)")
        ratios.append(sc.ideal_rollout_ratio[j])
    r_pins = [job.rollout_nodes for job in group.jobs]
    t_pins = [job.train_nodes for job in group.jobs]
    frames = []
    per_job = []
    for draws in (group_draws, plain_draws):
        frame = simulate_woven(_tables(draws, r_extra, t_extra), r_pins, t_pins,
                               order=group.order, gpus_per_node=gpn)
        frames.append(frame)
        per_job.append(steady_iteration_s(iteration_end_times(frame, len(sc.jobs))))
    skip = max(1, iterations // 10)

    def mean_solo(draws: list[list[IterationDraw]]) -> np.ndarray:
        """Each job's mean solo iteration (rollout, training, sync) after the warm-up."""
        return np.array([np.mean([d.rollout_s + d.train_s + sc.solo_phases[j].sync_s
                                  for d in col[skip:]]) for j, col in enumerate(draws)])

    # The ceiling: the same draws with every phase on the job's in-group H800 GPUs, its
    # rollout scaled by the phase model's roofline, no sync and no switch (free network).
    ideal_rollout = np.array([ratios[j] * np.mean([d.rollout_s for d in col[skip:]])
                              for j, col in enumerate(plain_draws)])
    ideal = ideal_rollout + np.array([np.mean([d.train_s for d in col[skip:]])
                                      for col in plain_draws])
    return ScenarioRun(sc, frames[0], frames[1], per_job[0], per_job[1], mean_solo(plain_draws),
                       mean_solo(requested_draws), ideal, ideal_rollout, np.array(ratios))


def table4(
    seed: int = 0,
    iterations: int = 60,
    hw: Hardware | None = None,
    config: StochasticConfig | None = None,
    names: Sequence[str] = SCENARIOS,
    definitions: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Paper Table 4: per-iteration time per job, solo vs RollMux vs ideal co-location.

    One row per job of each scenario (columns :data:`TABLE4_COLUMNS`). The overhead is
    measured against the job alone on the GPUs it has in its group (``solo_s``): Table 4
    quantifies "per-iteration slowdown from inter-job contention" (paper sec. 6.2).
    """
    hw = hw or load_hardware()
    rows: list[dict[str, Any]] = []
    for name in names:
        run = run_scenario(name, seed, iterations, hw, config, definitions)
        closed = run.scenario.group.metrics().meta_iteration_s
        for j, job in enumerate(run.scenario.jobs):
            rows.append({
                "scenario": name,
                "job": job.job_id,
                "solo_s": float(run.solo_s[j]),
                "solo_requested_s": float(run.solo_requested_s[j]),
                "rollmux_s": float(run.rollmux_s[j]),
                "rollmux_no_migration_s": float(run.rollmux_no_migration_s[j]),
                "ideal_s": float(run.ideal_s[j]),
                "ideal_rollout_s": float(run.ideal_rollout_s[j]),
                "ideal_rollout_ratio": float(run.ideal_rollout_ratio[j]),
                "closed_form_s": float(closed),
                "overhead_vs_solo": float(run.rollmux_s[j] / run.solo_s[j] - 1.0),
                "overhead_vs_requested_solo": float(
                    run.rollmux_s[j] / run.solo_requested_s[j] - 1.0),
                "slower_than_ideal": float(run.rollmux_s[j] / run.ideal_s[j] - 1.0),
                "iterations": iterations,
                "seed": seed,
            })
    return pd.DataFrame(rows, columns=list(TABLE4_COLUMNS))


SOLO_CONFIGS: tuple[str, ...] = ("requested", "in_group")
"""Where the baselines run each job: on the GPUs it requests (Table 3: Type-D "requiring
8 x H20 + 16 x H800") or on those it has in its group (one H800 node in the train mux)."""


def baseline_jobs(
    scenario: Scenario, solo_config: str = "requested"
) -> tuple[list[RLJob], list[JobPhases]]:
    """The scenario's jobs and their solo phases as the baselines run them (:data:`SOLO_CONFIGS`).

    ``in_group`` gives each job the training GPUs it has in the group, its training time
    scaled as inside the group (compute-bound).
    """
    if solo_config not in SOLO_CONFIGS:
        raise ValueError(f"solo_config {solo_config!r}: expected one of {', '.join(SOLO_CONFIGS)}")
    if solo_config == "requested":
        return list(scenario.jobs), list(scenario.solo_phases)
    phases = [member.phases for member in scenario.group.jobs]
    jobs = [replace(job, train_gpus=p.train_gpus, train_s=p.train_s,
                    train_max_s=p.worst_case().train_s)
            for job, p in zip(scenario.jobs, phases, strict=True)]
    return jobs, phases


def gavel_plus_fleet(
    jobs: Sequence[RLJob], phases: Sequence[JobPhases], hw: Hardware
) -> tuple[int, int, float, float] | str:
    """Gavel+ allocations of ``jobs`` (solo ``phases``): (H20 GPUs, H800 GPUs, USD/h,
    normalised throughput), or the reason it is not available."""
    try:
        from rollmux.placement.gavel_plus import GavelPlusPolicy
        from rollmux.placement.snapshot import empty_snapshot
    except ImportError as exc:  # the placement package is optional for this module
        return f"not available: {exc}"
    policy = GavelPlusPolicy()
    gpn = hw.node.gpus_per_node
    h20 = h800 = 0
    cost = throughput = 0.0
    for job, solo in zip(jobs, phases, strict=True):
        placement = policy.place(job, empty_snapshot(hw))
        if not getattr(placement, "admitted", False) or not np.isfinite(
                placement.meta_iteration_s):
            return f"not available: Gavel+ did not place {job.job_id}"
        for node in placement.new_nodes:
            if node.gpu_type == "H20":
                h20 += gpn
            else:
                h800 += gpn
        cost += placement.marginal_cost_usd_per_h
        throughput += solo.solo_iteration_s / placement.meta_iteration_s
    return h20, h800, cost, throughput


def throughput_table(
    seed: int = 0,
    iterations: int = 60,
    hw: Hardware | None = None,
    config: StochasticConfig | None = None,
    names: Sequence[str] = SCENARIOS,
    definitions: Mapping[str, Any] | None = None,
    solo_config: str = "requested",
) -> pd.DataFrame:
    """Paper Fig. 10: throughput per hourly dollar of RollMux (simulated) and baselines.

    Normalised throughput counts solo-equivalent jobs, ``sum_j T_solo_j / T_j`` with the
    closed-form expected solo iteration ``T_solo_j`` on the GPUs the baselines give each job
    (``solo_config``, :func:`baseline_jobs`); ``rollmux_gain`` is RollMux's throughput per
    dollar-hour over the row's (columns :data:`THROUGHPUT_COLUMNS`).
    """
    hw = hw or load_hardware()
    pools = pools_from_hardware(hw)
    gpn = hw.node.gpus_per_node
    rows: list[dict[str, Any]] = []
    for name in names:
        run = run_scenario(name, seed, iterations, hw, config, definitions)
        sc = run.scenario
        jobs_b, phases_b = baseline_jobs(sc, solo_config)
        solo = np.array([p.solo_iteration_s for p in phases_b])
        jobs = "+".join(j.job_id for j in sc.jobs)
        group_cost = sc.group.cost_usd_per_h()
        group_gpus = (len(sc.group.rollout_node_ids) * gpn, len(sc.group.train_node_ids) * gpn)
        systems: list[tuple[str, tuple[int, int, float, float] | str, str]] = [
            ("rollmux", (*group_gpus, group_cost, float(np.sum(solo / run.rollmux_s))),
             "stochastic simulation, long-tail migration"),
            ("rollmux-no-migration",
             (*group_gpus, group_cost, float(np.sum(solo / run.rollmux_no_migration_s))),
             "stochastic simulation"),
            ("rollmux-closed-form",
             (*group_gpus, group_cost,
              float(np.sum(solo / sc.group.metrics().meta_iteration_s))),
             "expected phases, exact steady state"),
        ]
        for system, fleet in (("solo-d", solo_d_fleet(phases_b, pools)),
                              ("verl", verl_fleet(phases_b, pools))):
            h20 = sum(p.rollout_gpus for p in phases_b) if system == "solo-d" else 0
            h800 = sum(p.train_gpus for p in phases_b)
            systems.append((system, (h20, h800, fleet.cost_usd_per_h,
                                     fleet.normalised_throughput), "closed form"))
        systems.append(("gavel-plus", gavel_plus_fleet(jobs_b, phases_b, hw),
                        "placement policy gavel-plus"))
        ours = systems[0][1]
        assert not isinstance(ours, str)
        ours_per_usd = ours[3] / ours[2]
        for system, value, note in systems:
            row: dict[str, Any] = {"scenario": name, "system": system, "jobs": jobs,
                                   "paper_gain": PAPER_GAINS.get(name, {}).get(system, np.nan)}
            if isinstance(value, str):
                row.update(available=False, note=value)
            else:
                h20, h800, cost, thr = value
                row.update(h20_gpus=h20, h800_gpus=h800, cost_usd_per_h=cost,
                           normalised_throughput=thr,
                           throughput_per_kusd_h=1000.0 * thr / cost,
                           rollmux_gain=ours_per_usd / (thr / cost), available=True, note=note)
            rows.append(row)
    return pd.DataFrame(rows, columns=list(THROUGHPUT_COLUMNS))


# --------------------------------------------------------------------------- Fig. 12


DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("A", "A"), ("B", "B"), ("D", "D"), ("E", "E"), ("A", "D"), ("A", "E"),
)
"""Fig. 12 pairs from the micro-benchmark job types (data/microbench.yaml): identical
pairs of single-turn (A 7B-8k, B 14B-16k) and multi-turn (D 14B-8k, E 7B-8k) jobs, and
pairs with dissimilar phases."""


def migration_table(
    pairs: Sequence[Sequence[str]] = DEFAULT_PAIRS,
    hw: Hardware | None = None,
    *,
    seed: int = 0,
    iterations: int = 60,
    config: StochasticConfig | None = None,
) -> pd.DataFrame:
    """Fig. 12: migration speedup per pair of micro-benchmark job types.

    Columns: ``pair`` (e.g. ``A+D``), ``rollout_s`` and ``train_s`` (expected, per job,
    ``/``-joined), ``migrated_share`` (share of iterations whose tail moved),
    ``node_release_share`` (mean rollout_node_s / rollout_s without migration),
    ``speedup`` (:func:`migration_speedup`).
    """
    hw = hw or load_hardware()
    cfg = config or StochasticConfig()
    data = load_microbench()
    rows: list[dict[str, Any]] = []
    for names in pairs:
        jobs = [resolve(job_type(t, data, job_id=f"{t}{i}"), hw) for i, t in enumerate(names)]
        draws = [PhaseSampler(j, root_seed=seed, config=replace(cfg, migration=True),
                              total_iterations=iterations).table(iterations) for j in jobs]
        flat = [d for col in draws for d in col]
        times = [j.times for j in jobs]
        rows.append({
            "pair": "+".join(names),
            "rollout_s": "/".join(f"{t.rollout_s:.0f}" for t in times),
            "train_s": "/".join(f"{t.train_s:.0f}" for t in times),
            "migrated_share": float(np.mean([d.migrated for d in flat])),
            "node_release_share": float(np.mean(
                [d.rollout_node_s / (d.rollout_s - d.migration_overhead_s) for d in flat])),
            "speedup": migration_speedup(jobs, seed=seed, iterations=iterations,
                                         config=cfg),
        })
    return pd.DataFrame(rows, columns=["pair", "rollout_s", "train_s", "migrated_share",
                                       "node_release_share", "speedup"])


def main(argv: Sequence[str] | None = None) -> None:
    """Print Table 4, the throughput table and Fig. 12's migration table (CLI)."""
    import argparse


    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="root seed of the draws")
    parser.add_argument("--iterations", type=int, default=60, help="iterations per job")
    args = parser.parse_args(argv)
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.float_format", "{:.3f}".format):
        print(table4(args.seed, args.iterations).to_string(index=False))
        print()
        print(throughput_table(args.seed, args.iterations).drop(columns=["jobs"])
              .to_string(index=False))
        print()
        print(migration_table(seed=args.seed, iterations=args.iterations).to_string(index=False))


if __name__ == "__main__":  # pragma: no cover
    main()
