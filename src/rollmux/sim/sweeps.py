"""Trace-replay sweeps: run folders, trace windows, tidy tables, fluid bound.

The pipeline (``workflow/rules/simulate.smk``, one replay rule for the sweeps and the
robustness study) replays traces with :func:`rollmux.sim.replay.run_replay` into
key=value folders (:meth:`rollmux.sim.replay.ReplaySpec.path`)::

    results/sim/trace=<trace>/slo=<slo>/maxgroup=<n>/drift=<setting>/policy=<name>/seed=<s>/

and this module turns a set of those folders into the tidy CSVs under ``results/sim/``
that the figures and the claims metrics (:mod:`rollmux.experiments.production`,
:mod:`rollmux.experiments.sensitivity`) read. Every function here is
a pure function of the files it is given (definitions: docs/metrics.md, "Sweeps").

* :func:`sweep_plan` expands the config's ``sim`` section into the runs and settings;
* :func:`window_trace_text` keeps the first N arrivals of a trace (quick profile);
* :func:`run_keys`/:func:`run_row`/:func:`collect_runs`/:func:`collect_timeseries` read
  replays (their keys from ``config.json``, never from the folder's name);
* :func:`sensitivity_table` normalises each setting's costs by the reference policy;
* :func:`fluid_job_rates`, :func:`fluid_timeseries`, :func:`fluid_table`: the fluid
  lower bound of a trace and each replay's cost relative to it.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.closedform import (
    SECONDS_PER_HOUR,
    fluid_cost_usd_per_iteration,
)
from rollmux.model import resolve
from rollmux.sim.engine import FIDELITIES, SimConfig
from rollmux.sim.metrics import SLO_READINGS
from rollmux.sim.replay import ReplaySpec, parse_slo, replay_keys, wildcard_keys

__all__ = [
    "ADMISSION_STRATEGIES",
    "AVERAGE_COST_COLUMN",
    "COST_COLUMN",
    "KEY_COLUMNS",
    "READING_COLUMNS",
    "SETTING_KINDS",
    "RunKey",
    "Setting",
    "SweepPlan",
    "collect_runs",
    "collect_timeseries",
    "config_uses_seed",
    "failures_file",
    "fluid_job_rates",
    "fluid_table",
    "fluid_timeseries",
    "generated_trace_name",
    "replay_inputs",
    "run_files",
    "run_keys",
    "run_row",
    "seed_rows",
    "sensitivity_table",
    "slo_label",
    "spec_uses_seed",
    "sweep_plan",
    "trace_file",
    "window_name",
    "window_trace_text",
]

#: Keys of a replay (``config.json`` ``keys``; the segments of its folder, in order).
KEY_COLUMNS = ("trace", "slo", "maxgroup", "drift", "policy", "seed")
#: The three SLO readings of a replay (summary.json keys, docs/metrics.md), as run columns.
READING_COLUMNS: tuple[str, ...] = tuple(SLO_READINGS.values())

#: The three sensitivity dimensions: workload type, SLO setting, group-size limit.
SETTING_KINDS = ("workload", "slo", "maxgroup")

#: Admission strategies whose shares the tables carry (docs/metrics.md, "Admissions").
ADMISSION_STRATEGIES = ("direct-packing", "rollout-scaling", "new-group", "colocated",
                        "regroup")

#: The cost-over-optimal column the claims read (total cost of the same work; the paper's
#: $/h averages are over one span shared by every policy, so its ratios are these) and the
#: time average over each policy's own span kept beside it (docs/metrics.md, "Cost ratio").
COST_COLUMN = "total_cost_over_optimal"
AVERAGE_COST_COLUMN = "cost_over_optimal"


# --------------------------------------------------------------------------- run keys


def spec_uses_seed(spec: ReplaySpec) -> bool:
    """Whether the replay's seed changes its result: phase times sampled per iteration
    (``stochastic``), a policy that takes a seed (Random), SLOs drawn from a range, or
    drift (templates assigned per job with the seed). A replay without any of these gives
    the same bytes at every seed (tests/test_sim_sweeps.py checks it), so the sweeps run
    it once, at the first seed, and the tables copy it to every seed (:func:`seed_rows`).
    """
    return _uses_seed(spec.sim.stochastic, spec.policy, spec.slo, spec.sim.drift)


def _uses_seed(stochastic: bool, policy: str, slo: str | None, drift: str) -> bool:
    """:func:`spec_uses_seed` from the replay's fields; an unknown policy or a malformed
    SLO setting counts as seeded (the config checks report them, naming the key)."""
    from rollmux.placement import policy_options

    try:
        seeded_policy = "seed" in policy_options(policy)
        setting = parse_slo(slo or "trace")
    except ValueError:
        return True
    return bool(stochastic or seeded_policy or (setting is not None and setting.is_range)
                or drift != "none")


@dataclass(frozen=True, slots=True, order=True)
class RunKey:
    """One replay: trace name, SLO setting, group-size limit, policy, seed, drift, how far
    drift reaches (``drift_reach``), whether phase times are sampled (``stochastic``)
    or each job's fixed expected times, and the real-lengths folder (``lengths``, ``""``:
    the lognormal; ``simulate --lengths``)."""

    trace: str
    slo: str
    maxgroup: int
    policy: str
    seed: int
    drift: str = "none"
    stochastic: bool = True
    fidelity: str = "event"
    drift_reach: str = "profile"
    lengths: str = ""

    def spec(self, trace_path: str | Path | None = None) -> ReplaySpec:
        """The replay's spec (trace file: ``trace_path``, default :func:`trace_file`)."""
        sim = SimConfig(fidelity=self.fidelity, stochastic=self.stochastic, drift=self.drift,
                        drift_reach=self.drift_reach, record_phases=False,
                        lengths=self.lengths or None)
        return ReplaySpec(trace=str(trace_path or trace_file(self.trace)), policy=self.policy,
                          seed=self.seed, slo=self.slo, max_group_size=self.maxgroup, sim=sim)

    def path(self, root: str | Path = "results/sim") -> Path:
        """The replay's folder ``<root>/<ReplaySpec.path()>``."""
        return Path(root) / self.spec(f"{self.trace}.csv").path()

    def file(self, name: str, root: str | Path = "results/sim") -> str:
        """A file of the replay's folder, as a string (for Snakemake inputs)."""
        return str(self.path(root) / name)

    def uses_seed(self) -> bool:
        """Whether the seed changes this replay (:func:`spec_uses_seed`)."""
        return _uses_seed(self.stochastic, self.policy, self.slo, self.drift)


def run_files(keys: Iterable[RunKey], name: str, root: str | Path = "results/sim"
              ) -> list[str]:
    """The file ``name`` of each replay folder of ``keys`` (Snakemake inputs)."""
    return [key.file(name, root) for key in keys]


def trace_file(name: str, shipped: str | Path = "traces",
               derived: str | Path = "results/sim/traces") -> str:
    """The shipped trace ``<shipped>/<name>.csv`` if it exists, else a derived one
    (a window written by the pipeline) ``<derived>/<name>.csv``."""
    path = Path(shipped) / f"{name}.csv"
    return str(path) if path.exists() else str(Path(derived) / f"{name}.csv")


def failures_file(name: str, derived: str | Path = "results/sim/failures") -> str:
    """The kill list of a replay's ``failures=<name>`` segment: ``<derived>/<name>.csv``
    (written by the pipeline, as the failure replay's trace is a derived trace)."""
    return str(Path(derived) / f"{name}.csv")


def replay_inputs(wildcards: Mapping[str, str]) -> dict[str, str]:
    """The files a replay folder names by stem, from the replay rule's wildcards
    (:func:`rollmux.sim.replay.wildcard_template`): its trace (:func:`trace_file`) and,
    with a ``failures=`` segment, its kill list (:func:`failures_file`)."""
    keys = wildcard_keys(wildcards)
    files = {"trace": trace_file(keys["trace"])}
    if "failures" in keys:
        files["failures"] = failures_file(keys["failures"])
    return files


def run_keys(folder: str | Path) -> dict[str, Any]:
    """A replay folder's keys (:data:`KEY_COLUMNS`), read from its ``config.json``.

    ValueError when the folder has no replay ``config.json`` (not a replay folder).
    """
    path = Path(folder) / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValueError(f"{folder}: not a replay folder (no readable config.json)") from None
    try:
        return replay_keys(config)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True, slots=True)
class Setting:
    """One sensitivity setting: its kind and label, and what it replays."""

    kind: str
    value: str
    trace: str
    slo: str
    maxgroup: int


@dataclass(frozen=True)
class SweepPlan:
    """Every replay the ``sim`` section asks for, grouped by the table that reads it."""

    seeds: tuple[int, ...]
    production: tuple[RunKey, ...]
    settings: tuple[Setting, ...]
    sensitivity: tuple[RunKey, ...]
    mixed_setting: Setting
    mixed: tuple[RunKey, ...]
    fluid: tuple[RunKey, ...]
    reference: str
    window: int
    repeat: tuple[RunKey, ...] = ()

    def runs(self) -> tuple[RunKey, ...]:
        """Every distinct replay, sorted."""
        return tuple(sorted(set(self.production + self.sensitivity + self.mixed + self.fluid
                                + self.repeat)))

    def traces(self) -> tuple[str, ...]:
        """Every trace name replayed, sorted."""
        return tuple(sorted({key.trace for key in self.runs()}))


def generated_trace_name(trace: str, seed: int) -> str:
    """The name of ``trace`` regenerated with ``seed`` by its own generator command."""
    return f"{trace}-gen{int(seed)}"


def window_name(trace: str, window: int) -> str:
    """The name of the trace's first-``window``-arrivals window (``window`` 0: the trace)."""
    return f"{trace}-first{window}" if window > 0 else trace


def slo_label(value: Any) -> str:
    """A config SLO setting as a path segment: ``trace``, ``1.2`` or ``1,2``."""
    text = str(value).strip().replace(" ", "")
    if text.lower() == "trace":
        return "trace"
    parts = [float(p) for p in text.split(",")]
    return ",".join(f"{p:g}" for p in parts)


def _stochastic(phases: Any, key: str) -> bool:
    """``phases`` of a config section (``stochastic`` or ``expected``) as a flag."""
    if phases not in ("stochastic", "expected"):
        raise ValueError(f"{key} must be 'stochastic' or 'expected', got {phases!r}")
    return phases == "stochastic"


def sweep_plan(sim: Mapping[str, Any], default_seed: int = 0,
               seeds: Sequence[int] | None = None) -> SweepPlan:
    """Expand the config's ``sim`` section (workflow/schemas/sim.schema.yaml) into runs.

    Missing keys take the schema's defaults, so ``sweep_plan({})`` is the default plan.
    ``seeds`` (default: ``sim["seeds"]`` if given, else ``[default_seed]``; the pipeline
    passes the config's top-level ``seeds``) are the replay seeds: a replay the seed
    changes (:func:`spec_uses_seed`) runs at each, any other once, at the first seed.
    ValueError for no seed, a repeated one or a negative one.
    """
    seeds = tuple(int(s) for s in (seeds if seeds is not None
                                   else sim.get("seeds", [default_seed])))
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"seeds must be distinct integers >= 0, at least one; got "
                         f"{list(seeds)}")
    prod = dict(sim.get("production", {}))
    sens = dict(sim.get("sensitivity", {}))
    fluid = dict(sim.get("fluid", {}))
    window = int(sens.get("window", 0))

    prod_trace = str(prod.get("trace", "production-default"))
    prod_slo = slo_label(prod.get("slo", "trace"))
    prod_group = int(prod.get("max_group_size", 5))
    prod_policies = tuple(prod.get("policies", ("rollmux", "solo-d", "verl")))
    prod_stochastic = _stochastic(prod.get("phases", "stochastic"), "sim.production.phases")
    sens_stochastic = _stochastic(sens.get("phases", "expected"), "sim.sensitivity.phases")

    workloads = dict(sens.get("workloads", {
        "BL": "simulation-balanced", "RH": "simulation-rollout-heavy",
        "TH": "simulation-train-heavy", "Mixed": "simulation-mixed"}))
    default_workload = str(sens.get("default_workload", "Mixed"))
    if default_workload not in workloads:
        raise ValueError(f"sim.sensitivity.default_workload {default_workload!r} is not "
                         f"one of the workloads {sorted(workloads)}")
    base_trace = window_name(str(workloads[default_workload]), window)
    base_slo = slo_label(sens.get("default_slo", "trace"))
    base_group = int(sens.get("default_max_group_size", 5))
    policies = tuple(sens.get("policies", ("rollmux", "random", "greedy", "optimal")))
    reference = str(sens.get("reference", "optimal"))
    if reference not in policies:
        raise ValueError(f"sim.sensitivity.reference {reference!r} must be one of the "
                         f"policies {list(policies)}")
    # The paper's optimum is "a theoretical upper bound" (sec. 6.5): by default its groups
    # progress at their steady-state rates, with no round-robin start-up at its re-partitions.
    reference_fidelity = str(sens.get("reference_fidelity", "analytic"))
    if reference_fidelity not in FIDELITIES:
        raise ValueError(f"sim.sensitivity.reference_fidelity must be one of {FIDELITIES}, "
                         f"got {reference_fidelity!r}")

    settings: list[Setting] = []
    for label, trace in workloads.items():
        settings.append(Setting("workload", str(label), window_name(str(trace), window),
                                base_slo, base_group))
    for slo in sens.get("slos", ("1.2", "1.5", "2", "trace")):
        settings.append(Setting("slo", slo_label(slo), base_trace, slo_label(slo),
                                base_group))
    for size in sens.get("max_group_sizes", (2, 3, 4, 5)):
        settings.append(Setting("maxgroup", str(int(size)), base_trace, base_slo, int(size)))
    mixed_setting = Setting("workload", default_workload, base_trace, base_slo, base_group)

    def keys(trace: str, slo: str, group: int, names: Iterable[str], stochastic: bool
             ) -> tuple[RunKey, ...]:
        # a replay the seed does not change runs once, at the first seed (seed_rows)
        out: list[RunKey] = []
        for p in names:
            key = RunKey(trace, slo, group, p, seeds[0], stochastic=stochastic,
                         fidelity=reference_fidelity if p == reference else "event")
            out += ([dataclasses.replace(key, seed=s) for s in seeds] if key.uses_seed()
                    else [key])
        return tuple(out)

    production = keys(prod_trace, prod_slo, prod_group, prod_policies, prod_stochastic)
    sensitivity = tuple(k for st in settings
                        for k in keys(st.trace, st.slo, st.maxgroup, policies, sens_stochastic))
    mixed = keys(base_trace, base_slo, base_group, policies, sens_stochastic)
    fluid_runs = keys(prod_trace, prod_slo, prod_group,
                      fluid.get("production_policies", prod_policies), prod_stochastic)
    fluid_runs += keys(base_trace, base_slo, base_group,
                       fluid.get("mixed_policies", policies), sens_stochastic)
    beyond = dict(sim.get("beyond", {}))
    repeat_policies = tuple(beyond.get("repeat_policies", ("rollmux", "rollmux-repeat")))
    # rollmux-repeat against rollmux over every seed the replays use (issue 21 item 5:
    # every reading with intervals); decision latencies are recorded for the first seed.
    # The simulation trace fixes every job's phase times, so its replay gives the same
    # bytes at every seed; with beyond.simulation_traces "generated" each further seed s
    # replays the workload regenerated by the shipped trace's own generator command with
    # seed s (generated_trace_name; rule beyond_sim_trace), the first seed the shipped one.
    sim_traces = str(beyond.get("simulation_traces", "generated"))
    if sim_traces not in ("generated", "shipped"):
        raise ValueError(f"sim.beyond.simulation_traces must be 'generated' or 'shipped', "
                         f"got {sim_traces!r}")
    repeat = keys(prod_trace, prod_slo, prod_group, repeat_policies, prod_stochastic)
    repeat += keys(base_trace, base_slo, base_group, repeat_policies, sens_stochastic)
    if sim_traces == "generated":
        workload = str(workloads[default_workload])
        for s in seeds[1:]:
            trace = window_name(generated_trace_name(workload, s), window)
            repeat += tuple(dataclasses.replace(k, seed=s) for k in
                            keys(trace, base_slo, base_group, repeat_policies,
                                 sens_stochastic)
                            if k.seed == seeds[0])
    return SweepPlan(seeds=seeds, production=production, settings=tuple(settings),
                     sensitivity=sensitivity, mixed_setting=mixed_setting, mixed=mixed,
                     fluid=fluid_runs, reference=reference, window=window, repeat=repeat)


# --------------------------------------------------------------------------- windows


def window_trace_text(text: str, n: int, source: str = "") -> str:
    """The trace ``text`` cut to its first ``n`` arrivals (rows kept verbatim, in order).

    Comment lines and the header are kept, one comment recording the window is added
    before the header; ties in ``arrival_s`` are broken by row order. ValueError when
    ``n`` < 1, there is no ``arrival_s`` column, or a row has the wrong number of cells.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"window must be an integer >= 1, got {n!r}")
    lines = text.splitlines()
    comments: list[str] = []
    k = 0
    while k < len(lines) and (lines[k].startswith("#") or not lines[k].strip()):
        if lines[k].strip():
            comments.append(lines[k])
        k += 1
    if k == len(lines):
        raise ValueError("trace has no header line")
    header = lines[k]
    names = next(csv.reader([header]))
    if "arrival_s" not in names:
        raise ValueError("trace has no arrival_s column")
    col = names.index("arrival_s")
    rows = [line for line in lines[k + 1:] if line.strip()]
    arrivals = []
    for i, line in enumerate(rows):
        cells = next(csv.reader([line]))
        if len(cells) != len(names):
            raise ValueError(f"row {i + 1} has {len(cells)} cells, the header {len(names)}")
        arrivals.append(float(cells[col]) if cells[col].strip() else 0.0)
    order = sorted(range(len(rows)), key=lambda i: (arrivals[i], i))[:n]
    kept = [rows[i] for i in sorted(order)]
    note = f"# window: first {min(n, len(rows))} arrivals" + (f" of {source}" if source
                                                              else "")
    return "\n".join([*comments, note, header, *kept]) + "\n"


# --------------------------------------------------------------------------- reading runs


def _peak_total_gpus(timeseries: pd.DataFrame) -> int:
    """Largest number of provisioned GPUs of all types together at any time."""
    cols = [c for c in timeseries.columns if c.startswith("gpus_")
            and c not in ("gpus_rollout", "gpus_train")]
    if not len(timeseries) or not cols:
        return 0
    return int(timeseries[cols].sum(axis=1).max())


def run_row(folder: str | Path) -> dict[str, Any]:
    """One replay as a flat row: its keys, summary metrics and peak GPUs (all types).

    Reads ``config.json`` (keys), ``summary.json`` and ``timeseries.csv`` of ``folder``.
    """
    folder = Path(folder)
    row: dict[str, Any] = run_keys(folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    ts = pd.read_csv(folder / "timeseries.csv")
    for name in ("jobs", "jobs_completed", "jobs_rejected", "cost_usd_per_h",
                 "total_cost_usd", "peak_cost_usd_per_h", "span_h", "slo_attainment",
                 *READING_COLUMNS, "mean_slowdown", "max_slowdown"):
        row[name] = summary.get(name)
    if row["slo_attainment_reference"] is None:  # a summary written before the readings
        row["slo_attainment_reference"] = summary.get("slo_attainment")
    for gpu_type, count in sorted(summary.get("peak_gpus", {}).items()):
        row[f"peak_gpus_{gpu_type}"] = count
    row["peak_gpus_total"] = _peak_total_gpus(ts)
    for group in ("bubble_fraction", "idle_gpu_h"):
        for pool in ("rollout", "train"):
            row[f"{group}_{pool}"] = (summary.get(group) or {}).get(pool)
    shares = summary.get("admission_shares") or {}
    for strategy in ADMISSION_STRATEGIES:
        row[f"share_{strategy.replace('-', '_')}"] = float(shares.get(strategy, 0.0))
    # The optimum policies' certified gap (docs/optimum.md, section 6); NaN for the others.
    gap = summary.get("optimum_gap")
    row["optimum_gap"] = math.nan if gap is None else float(gap)
    return row


def config_uses_seed(config: Mapping[str, Any]) -> bool:
    """:func:`spec_uses_seed` of the replay whose resolved configuration (``config.json``)
    is ``config``."""
    return _uses_seed(bool(config.get("stochastic", True)), str(config["policy"]),
                      config.get("slo_override"), str(config.get("drift", "none")))


def seed_rows(frame: pd.DataFrame, seeds: Sequence[int], uses_seed: Sequence[bool]
              ) -> pd.DataFrame:
    """``frame`` (one row per replay, a ``seed`` column) with each row whose replay the
    seed does not change (``uses_seed`` False, row by row) copied to every seed of
    ``seeds``: a table per seed then pairs it with the seeded replays of that seed."""
    flags = list(uses_seed)
    if len(flags) != len(frame):
        raise ValueError(f"{len(flags)} flags for {len(frame)} rows")
    parts = [frame[flags]] if any(flags) else []
    fixed = frame[[not f for f in flags]]
    for seed in seeds:
        parts.append(fixed.assign(seed=int(seed)))
    if not parts:
        return frame.iloc[0:0]
    return pd.concat(parts, ignore_index=True)


def collect_runs(folders: Iterable[str | Path], seeds: Sequence[int] | None = None
                 ) -> pd.DataFrame:
    """One row per replay folder (:func:`run_row`), sorted by the key columns.

    With ``seeds``, a replay the seed does not change (:func:`config_uses_seed`, run once
    by the sweep plan) gives one row per seed (:func:`seed_rows`).
    """
    folders = list(folders)
    rows = [run_row(f) for f in folders]
    if not rows:
        return pd.DataFrame(columns=list(KEY_COLUMNS))
    frame = pd.DataFrame(rows)
    if seeds is not None:
        flags = [config_uses_seed(json.loads((Path(f) / "config.json").read_text(
            encoding="utf-8"))) for f in folders]
        frame = seed_rows(frame, seeds, flags)
    frame = frame.drop_duplicates(subset=list(KEY_COLUMNS))
    return frame.sort_values(list(KEY_COLUMNS), kind="mergesort").reset_index(drop=True)


def collect_timeseries(folders: Iterable[str | Path]) -> pd.DataFrame:
    """The replays' provisioned-cluster time series stacked, with key columns and hours.

    Columns: the key columns, ``time_h`` (hours since the trace's time origin),
    ``cost_usd_per_h``, ``gpus_<type>`` per GPU type, ``gpus_total``, ``jobs_active``.
    """
    parts = []
    for folder in sorted({str(f) for f in folders}):
        keys = run_keys(folder)
        ts = pd.read_csv(Path(folder) / "timeseries.csv")
        types = [c for c in ts.columns if c.startswith("gpus_")
                 and c not in ("gpus_rollout", "gpus_train")]
        part = pd.DataFrame({k: [keys[k]] * len(ts) for k in KEY_COLUMNS})
        part["time_h"] = ts["time_s"].to_numpy(dtype=float) / SECONDS_PER_HOUR
        part["cost_usd_per_h"] = ts["cost_usd_per_h"].to_numpy(dtype=float)
        for col in types:
            part[col] = ts[col].to_numpy()
        part["gpus_total"] = ts[types].sum(axis=1).to_numpy() if types else 0
        part["jobs_active"] = ts["jobs_active"].to_numpy()
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=[*KEY_COLUMNS, "time_h", "cost_usd_per_h", "gpus_total"])
    frame = pd.concat(parts, ignore_index=True)
    return frame.fillna(0)


# --------------------------------------------------------------------------- sensitivity


def sensitivity_table(runs: pd.DataFrame, settings: Sequence[Setting],
                      reference: str = "optimal") -> pd.DataFrame:
    """One row per (setting, policy, seed): costs normalised by the reference policy.

    ``cost_over_optimal`` is the time-average cost over the reference's on the same
    trace, SLO setting, group-size limit and seed (docs/metrics.md);
    ``total_cost_over_optimal`` the same for total cost. ValueError when a setting
    lacks the reference replay.
    """
    index = runs.set_index(list(KEY_COLUMNS))
    rows = []
    for st in settings:
        part = runs[(runs["trace"] == st.trace) & (runs["slo"] == st.slo)
                    & (runs["maxgroup"] == st.maxgroup)]
        for rec in part.itertuples(index=False):
            ref_key = (st.trace, st.slo, st.maxgroup, rec.drift, reference, rec.seed)
            if ref_key not in index.index:
                raise ValueError(f"setting {st.kind}={st.value}: no {reference!r} replay "
                                 f"for seed {rec.seed}")
            ref = index.loc[ref_key]
            rows.append({
                "kind": st.kind, "value": st.value, "trace": st.trace, "slo": st.slo,
                "maxgroup": st.maxgroup, "policy": rec.policy, "seed": rec.seed,
                "cost_usd_per_h": rec.cost_usd_per_h, "total_cost_usd": rec.total_cost_usd,
                "optimal_cost_usd_per_h": float(ref["cost_usd_per_h"]),
                "cost_over_optimal": rec.cost_usd_per_h / float(ref["cost_usd_per_h"]),
                "total_cost_over_optimal": rec.total_cost_usd / float(ref["total_cost_usd"]),
                # The reference's certified gap: the ratios above may be up to this much
                # high (its cost is within this fraction above the proven bound).
                "reference_gap": float(ref["optimum_gap"]) if "optimum_gap" in ref.index
                else math.nan,
                "slo_attainment": rec.slo_attainment,
                **{c: getattr(rec, c) for c in READING_COLUMNS},
                "peak_gpus_total": rec.peak_gpus_total,
                "peak_cost_usd_per_h": rec.peak_cost_usd_per_h,
                "jobs": rec.jobs, "jobs_completed": rec.jobs_completed,
            })
    return pd.DataFrame(rows, columns=[
        "kind", "value", "trace", "slo", "maxgroup", "policy", "seed", "cost_usd_per_h",
        "total_cost_usd", "optimal_cost_usd_per_h", "cost_over_optimal",
        "total_cost_over_optimal", "reference_gap", "slo_attainment", *READING_COLUMNS,
        "peak_gpus_total",
        "peak_cost_usd_per_h", "jobs", "jobs_completed"])


# --------------------------------------------------------------------------- fluid bound


def fluid_job_rates(jobs: Sequence[Any], hw: Any) -> pd.DataFrame:
    """Per trace job: its solo iteration, fluid cost per iteration and solo-speed window.

    The fluid cost of one iteration is its useful GPU-seconds priced at the job's own
    GPU types (:func:`rollmux.closedform.fluid_cost_usd_per_iteration`); the job is
    *active* in the bound from its arrival for ``iterations`` solo iterations.
    """
    rows = []
    for job in jobs:
        resolved = resolve(job, hw)
        phases, pools = resolved.phases, resolved.pools
        per_iter = fluid_cost_usd_per_iteration(phases, pools)
        solo = phases.solo_iteration_s
        rows.append({
            "job_id": job.job_id, "arrival_s": float(job.arrival_s),
            "iterations": int(job.iterations), "solo_iteration_s": solo,
            "fluid_usd_per_iteration": per_iter,
            "fluid_usd_per_h": per_iter * SECONDS_PER_HOUR / solo,
            "end_s": float(job.arrival_s) + job.iterations * solo,
        })
    return pd.DataFrame(rows, columns=["job_id", "arrival_s", "iterations",
                                       "solo_iteration_s", "fluid_usd_per_iteration",
                                       "fluid_usd_per_h", "end_s"])


def fluid_timeseries(rates: pd.DataFrame) -> pd.DataFrame:
    """The fluid bound's hourly cost as a step function of time (active jobs at solo speed).

    Rows ``time_s``, ``fluid_cost_usd_per_h``: the value holds from a row to the next;
    the last row (the last solo completion) is 0. Its integral is the trace's fluid cost.
    """
    if not len(rates):
        return pd.DataFrame({"time_s": [], "fluid_cost_usd_per_h": []})
    times = np.concatenate([rates["arrival_s"].to_numpy(float), rates["end_s"].to_numpy(float)])
    deltas = np.concatenate([rates["fluid_usd_per_h"].to_numpy(float),
                             -rates["fluid_usd_per_h"].to_numpy(float)])
    order = np.argsort(times, kind="mergesort")
    times, deltas = times[order], deltas[order]
    uniq, first = np.unique(times, return_index=True)
    sums = np.add.reduceat(deltas, first)
    level = np.cumsum(sums)
    level[np.abs(level) < 1e-9 * max(1.0, float(np.abs(deltas).max()))] = 0.0
    level[-1] = 0.0
    return pd.DataFrame({"time_s": uniq, "fluid_cost_usd_per_h": level})


def fluid_table(runs: pd.DataFrame, rates_by_trace: Mapping[str, pd.DataFrame],
                done_by_run: Mapping[tuple[Any, ...], Mapping[str, float]]) -> pd.DataFrame:
    """Each replay's total cost over the fluid bound of the work it completed.

    ``rates_by_trace[trace]`` is :func:`fluid_job_rates` of the trace;
    ``done_by_run[key]`` maps job id to iterations completed in the replay ``key``
    (a :data:`KEY_COLUMNS` tuple). ``fluid_cost_usd`` = sum over jobs of completed
    iterations times the fluid cost per iteration; ``cost_over_fluid`` = total cost /
    that; ``fluid_trace_cost_usd`` is the bound of the whole trace (every iteration).
    """
    rows = []
    for rec in runs.itertuples(index=False):
        key = tuple(getattr(rec, k) for k in KEY_COLUMNS)
        rates = rates_by_trace[rec.trace]
        done = done_by_run[key]
        per_iter = dict(zip(rates["job_id"], rates["fluid_usd_per_iteration"], strict=True))
        fluid = float(sum(per_iter[j] * float(k) for j, k in sorted(done.items())))
        trace_bound = float((rates["iterations"] * rates["fluid_usd_per_iteration"]).sum())
        span_h = float((rates["end_s"].max() - rates["arrival_s"].min()) / SECONDS_PER_HOUR)
        rows.append({
            **{k: getattr(rec, k) for k in KEY_COLUMNS},
            "total_cost_usd": rec.total_cost_usd, "cost_usd_per_h": rec.cost_usd_per_h,
            "fluid_cost_usd": fluid, "fluid_trace_cost_usd": trace_bound,
            "fluid_span_h": span_h,
            "fluid_cost_usd_per_h": trace_bound / span_h if span_h > 0 else math.nan,
            "cost_over_fluid": rec.total_cost_usd / fluid if fluid > 0 else math.nan,
            "slo_attainment": rec.slo_attainment,
            **{c: getattr(rec, c) for c in READING_COLUMNS},
            "jobs": rec.jobs, "jobs_completed": rec.jobs_completed,
        })
    return pd.DataFrame(rows)
