"""Robustness experiments (paper sec. 6.6, Fig. 16-19): drift and failures.

The pipeline stage ``workflow/rules/robustness.smk`` replays the production trace of
sec. 6.4 (a window of its first arrivals in the quick profile) under the three drift
settings (Increasing, Decreasing, Mixed) with static RollMux, Random, Greedy (Most-Idle)
and ``regroup`` (hourly optimal regrouping under the jobs' drifted profiles, with
migration pauses), and replays a small micro-benchmark group in which one job is killed
and resubmitted. The compared policies and the reference every cost is normalised to come
from config (``robustness.policies``, ``robustness.reference``) as a :class:`DriftStudy`.
This module holds everything between the simulator's output files and the figures:

* inputs (the drift replays' trace window is cut by :func:`rollmux.sim.sweeps.window_trace_text`,
  rule ``sim_window``): :func:`failure_trace_text` and
  :func:`failures_text` (the failure replay's trace and kill list); each is validated (by
  the trace loader, :func:`rollmux.sim.drift.parse_failures`) before it is written;
* Fig. 16: :func:`template_curves`, per-iteration phase draws of one representative job
  per model size under each of the seven drift templates;
* Fig. 17 and 18: :func:`drift_table` (cost, cost over the reference, SLO attainment and
  pool utilisation of every replay), :func:`utilisation_table` (one row per pool) and
  :func:`migration_table` (the hours the reference, ``regroup``, pauses jobs to migrate
  and restart them);
* Fig. 19: :func:`failure_timeline`, the failure replay's per-phase table with job ids,
  node names, incarnations and the work the kill threw away;
* claims C47-C52: :func:`robustness_metrics`, rows of the metrics contract of
  :mod:`rollmux.experiments.metrics` (the evidence behind them:
  :mod:`rollmux.experiments.drift_evidence`).

The cost-ratio columns keep the default reference's name (``total_cost_over_regroup``,
``deficit_vs_regroup_pp``, ...) whatever ``robustness.reference`` names, so the files'
columns do not depend on the config.

Definitions: docs/metrics.md, section "Robustness".
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.closedform import SECONDS_PER_HOUR
from rollmux.experiments.metrics import (
    BESIDE_READING,
    METRIC_COLUMNS,
    STATUS_READING,
    with_reading,
)
from rollmux.experiments.optimum_gaps import gap_frame, gap_row
from rollmux.io import atomic_write
from rollmux.model import resolve
from rollmux.placement.regroup import migration_pause_s
from rollmux.sim.drift import (
    TEMPLATES,
    DriftReach,
    DriftSetting,
    parse_failures,
    parse_reach,
    parse_template,
)
from rollmux.sim.records import PHASE_CODES, POOL_CODES
from rollmux.sim.stochastic import PhaseSampler
from rollmux.traces import load_trace, read_trace_frame, trace_text

__all__ = [
    "BASELINE_METRIC",
    "CLAIM_POLICIES",
    "COST_METRICS",
    "DRIFT_COLUMNS",
    "EVIDENCE_POLICIES",
    "FAILURE_COLUMNS",
    "MIGRATION_COLUMNS",
    "NO_DRIFT_SETTING",
    "SETTINGS",
    "SLO_BLIND",
    "TEMPLATE_COLUMNS",
    "TIMELINE_COLUMNS",
    "UTILISATION_COLUMNS",
    "DriftStudy",
    "RunRef",
    "check_unique",
    "drift_table",
    "failure_timeline",
    "failure_trace_text",
    "failures_text",
    "migration_table",
    "replay_gap",
    "robustness_gaps",
    "robustness_metrics",
    "template_curves",
    "utilisation_table",
    "with_reference_ratios",
    "write_validated_trace",
]

#: Policies replayed only as evidence (config ``robustness.evidence.solo_d_settings``):
#: Solo-D, every job alone on its own GPUs.
EVIDENCE_POLICIES: tuple[str, ...] = ("solo-d",)

#: The paper's drift settings (sec. 6.6), in drawing order.
SETTINGS: tuple[str, ...] = tuple(s.value for s in DriftSetting)

#: The evidence replays' setting without drift (the `drift` key of a replay).
NO_DRIFT_SETTING = "none"

#: Columns of ``templates.csv`` (Fig. 16): one row per job, drift template and iteration.
TEMPLATE_COLUMNS: tuple[str, ...] = (
    "model_size_b", "workload", "job_id", "template", "direction", "strength", "drift_reach",
    "iteration", "progress", "length_factor", "rollout_s", "train_s", "sync_s",
    "iteration_s", "solo_max_s",
)

#: Columns of ``drift.csv`` (Fig. 17): one row per drift setting, policy and seed.
DRIFT_COLUMNS: tuple[str, ...] = (
    "setting", "drift_reach", "policy", "seed", "jobs", "jobs_completed", "span_h",
    "cost_usd_per_h", "total_cost_usd", "total_cost_over_regroup", "cost_over_regroup",
    "reference_gap", "slo_attainment_pct", "slo_attainment_realised_pct",
    "slo_attainment_planned_pct", "util_rollout_pct", "util_train_pct", "source",
)

#: Columns of ``utilisation.csv`` (Fig. 18): one row per setting, policy, seed and pool.
UTILISATION_COLUMNS: tuple[str, ...] = (
    "setting", "policy", "seed", "pool", "utilisation_pct", "regroup_utilisation_pct",
    "deficit_vs_regroup_pp",
)

#: Columns of ``migration.csv`` (Fig. 18): one row per drift setting and seed.
MIGRATION_COLUMNS: tuple[str, ...] = (
    "setting", "seed", "resolves", "regroupings", "moves", "jobs_moved", "pause_h",
    "cold_switch_extra_h", "span_h", "pause_per_span_pct", "source",
)

#: Columns of the failure timeline (Fig. 19): one row per phase and node it occupies.
TIMELINE_COLUMNS: tuple[str, ...] = (
    "job_id", "incarnation", "phase", "iteration", "node", "pool", "start_s", "end_s",
    "work_s", "lost",
)

#: Columns of the kill list read by ``rollmux simulate --failures``.
FAILURE_COLUMNS: tuple[str, ...] = ("job_id", "kill_at_s", "resubmit_at_s")

_POOLS: tuple[str, ...] = ("rollout", "train")
_PHASE_NAMES = {code: name for name, code in PHASE_CODES.items()}
_POOL_NAMES = {code: name for name, code in POOL_CODES.items()}
_NODE_PREFIX = {"rollout": "R", "train": "T"}


# --------------------------------------------------------------------------- inputs


def _check_count(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum``, else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def failure_trace_text(
    source: str | Path,
    jobs: Sequence[Mapping[str, Any]],
    slo: float | None = None,
    iterations: int | None = None,
    hw: Any = None,
) -> str:
    """A small trace of copies of ``source``'s jobs, for the failure replay (Fig. 19).

    ``jobs`` lists ``{"job_id": new id, "from": source job id}`` mappings, optionally with
    ``arrival_s``; ``slo`` and ``iterations`` (when given) replace every copy's values.
    """
    if isinstance(jobs, str | Mapping) or not jobs:
        raise ValueError(f"jobs must be a non-empty list of mappings, got {jobs!r}")
    if slo is not None and (isinstance(slo, bool) or not isinstance(slo, int | float)
                            or not math.isfinite(slo) or slo < 1.0):
        raise ValueError(f"slo must be a finite number >= 1, got {slo!r}")
    if iterations is not None:
        iterations = _check_count("iterations", iterations, 1)
    frame = read_trace_frame(source, hw)
    parts: list[pd.DataFrame] = []
    seen: set[str] = set()
    for i, spec in enumerate(jobs):
        if not isinstance(spec, Mapping):
            raise ValueError(f"jobs[{i}] must be a mapping, got {spec!r}")
        unknown = set(spec) - {"job_id", "from", "arrival_s"}
        if unknown:
            raise ValueError(f"jobs[{i}]: unknown key {sorted(unknown)[0]!r} "
                             "(valid: job_id, from, arrival_s)")
        new_id, src = str(spec.get("job_id", "")).strip(), str(spec.get("from", "")).strip()
        if not new_id or not src:
            raise ValueError(f"jobs[{i}] needs a non-empty job_id and from, got {dict(spec)!r}")
        if new_id in seen:
            raise ValueError(f"jobs[{i}]: job_id {new_id!r} listed twice")
        seen.add(new_id)
        row = frame[frame["job_id"] == src].copy()
        if len(row) != 1:
            raise ValueError(f"jobs[{i}]: job {src!r} not in {Path(source).name}")
        row["job_id"] = new_id
        if slo is not None:
            row["slo"] = float(slo)
        if iterations is not None:
            row["iterations"] = iterations
        if "arrival_s" in spec:
            row["arrival_s"] = float(spec["arrival_s"])
        parts.append(row)
    out = pd.concat(parts, ignore_index=True).sort_values("arrival_s", kind="stable")
    comment = (f"derived by rollmux.experiments.robustness.failure_trace_text from "
               f"{Path(source).name}: " + ", ".join(
                   f"{s['job_id']}={s['from']}" for s in jobs))
    return trace_text(out.reset_index(drop=True), comments=[comment])


def failures_text(rows: Iterable[Mapping[str, Any]], job_ids: Iterable[str]) -> str:
    """The CSV text of a kill list (``job_id,kill_at_s,resubmit_at_s``), validated.

    Rows are checked by :func:`rollmux.sim.drift.parse_failures` and every job id must be
    one of ``job_ids``; an empty resubmission cell means the job never comes back.
    """
    specs = parse_failures(list(rows))
    known = set(job_ids)
    for spec in specs:
        if spec.job_id not in known:
            raise ValueError(f"failures: job_id {spec.job_id!r} is not in the trace "
                             f"(jobs: {', '.join(sorted(known))})")
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(FAILURE_COLUMNS)
    for spec in specs:
        again = "" if spec.resubmit_at_s is None else f"{spec.resubmit_at_s:.10g}"
        writer.writerow((spec.job_id, f"{spec.kill_at_s:.10g}", again))
    return buffer.getvalue()


def write_validated_trace(text: str, path: str | Path, hw: Any = None) -> Path:
    """Write trace ``text`` atomically, after the trace loader accepted the written bytes."""

    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8", newline="")
        load_trace(tmp, hw)

    return atomic_write(path, write)


# --------------------------------------------------------------------------- Fig. 16


def template_curves(
    trace: str | Path,
    model_sizes_b: Sequence[float],
    iterations: int,
    seed: int = 0,
    hw: Any = None,
    drift_reach: DriftReach | str = DriftReach.PROFILE,
) -> pd.DataFrame:
    """Per-iteration phase draws under each drift template (Fig. 16).

    For each model size in ``model_sizes_b`` (the paper draws "representative 7B-32B
    examples") the first job of ``trace`` of that size is drawn for ``iterations``
    iterations (training progress ``i / iterations``) by
    :class:`rollmux.sim.stochastic.PhaseSampler` under each of the seven templates of
    :data:`rollmux.sim.drift.TEMPLATES` with ``drift_reach``, from the same raw draws, so
    the curves differ by drift only. ``iteration_s`` = rollout (job-side, tail included)
    + training + sync; ``solo_max_s`` is the job's admission profile, its worst-case solo
    iteration at its maximum token limit (the SLO reference).
    """
    iterations = _check_count("iterations", iterations, 2)
    seed = _check_count("seed", seed, 0)
    reach = parse_reach(drift_reach)
    if isinstance(model_sizes_b, str) or not model_sizes_b:
        raise ValueError(f"model_sizes_b must be a non-empty list, got {model_sizes_b!r}")
    if hw is None:
        from rollmux.hardware import load_hardware

        hw = load_hardware()
    jobs = load_trace(trace, hw)
    frames = []
    for size in model_sizes_b:
        if isinstance(size, bool) or not isinstance(size, int | float):
            raise ValueError(f"model_sizes_b must list numbers (B), got {size!r}")
        job = next((j for j in jobs if j.model_size_b == size), None)
        if job is None:
            raise ValueError(f"model size {size!r} B: no job of that size in {trace}")
        for template in TEMPLATES:
            sampler = PhaseSampler(resolve(job, hw), root_seed=seed, drift=template,
                                   drift_reach=reach, total_iterations=iterations)
            cols = sampler.arrays(iterations)
            sync = float(sampler.times.sync_s)
            frames.append(pd.DataFrame({
                "model_size_b": float(job.model_size_b),
                "workload": job.workload,
                "job_id": job.job_id,
                "template": template.name,
                "direction": template.direction.value,
                "strength": template.strength,
                "drift_reach": reach.value,
                "iteration": np.arange(iterations),
                "progress": cols["progress"],
                "length_factor": cols["length_factor"],
                "rollout_s": cols["rollout_s"],
                "train_s": cols["train_s"],
                "sync_s": sync,
                "iteration_s": cols["rollout_s"] + cols["train_s"] + sync,
                "solo_max_s": sampler.times.solo_iteration_max_s,
            }))
    return pd.concat(frames, ignore_index=True).loc[:, list(TEMPLATE_COLUMNS)]


# --------------------------------------------------------------------------- Fig. 17, 18


#: Policies the claims C47-C52 read (:func:`robustness_metrics`), so ``robustness.policies``
#: must list them: static RollMux and the SLO-blind baselines.
SLO_BLIND: tuple[str, ...] = ("random", "greedy")
CLAIM_POLICIES: tuple[str, ...] = ("rollmux", *SLO_BLIND)


@dataclass(frozen=True, slots=True)
class DriftStudy:
    """The drift study's compared policies, in drawing order, and the reference policy
    every cost is normalised to (config ``robustness.policies``, ``robustness.reference``)."""

    policies: tuple[str, ...]
    reference: str

    def __post_init__(self) -> None:
        """Validate the lists: unique names, the reference among them, no evidence policy."""
        policies = self.policies
        if isinstance(policies, str) or not policies or not all(
                isinstance(p, str) and p for p in policies):
            raise ValueError(f"robustness.policies must be a non-empty list of policy names, "
                             f"got {policies!r}")
        object.__setattr__(self, "policies", tuple(policies))
        if len(set(self.policies)) != len(self.policies):
            raise ValueError(f"robustness.policies lists a policy twice: {list(policies)}")
        if self.reference not in self.policies:
            raise ValueError(f"robustness.reference {self.reference!r} is not one of "
                             f"robustness.policies {list(policies)}")
        both = sorted(set(self.policies) & set(EVIDENCE_POLICIES))
        if both:
            raise ValueError(f"robustness.policies: {both} are replayed as evidence only "
                             "(robustness.evidence)")

    @classmethod
    def from_config(cls, robustness: Mapping[str, Any]) -> DriftStudy:
        """The study of config section ``robustness`` (its ``policies`` and ``reference``)."""
        return cls(tuple(robustness["policies"]), str(robustness["reference"]))

    @property
    def drawing_order(self) -> tuple[str, ...]:
        """Every policy a drift replay may use: the compared ones, then the evidence ones."""
        return (*self.policies, *EVIDENCE_POLICIES)

    def order_key(self, setting: str, policy: str, seed: int) -> tuple[int, float, int, int]:
        """Drawing order: settings (no drift, then single templates by strength, last), then
        policies (:attr:`drawing_order`), then seeds."""
        settings = (*SETTINGS, NO_DRIFT_SETTING)
        policies = self.drawing_order
        if policy not in policies:
            raise ValueError(f"policy {policy!r} is not one of the drift study's "
                             f"{list(policies)}")
        if setting in settings:
            return settings.index(setting), 0.0, policies.index(policy), seed
        return len(settings), parse_template(setting).strength, policies.index(policy), seed

    def split_runs(self, runs: Iterable[RunRef],
                   drift_reach: DriftReach | str = DriftReach.PROFILE
                   ) -> tuple[list[RunRef], list[RunRef]]:
        """The replays of Fig. 17 and 18 (a drift setting, a compared policy,
        ``drift_reach``) and the evidence replays (every other one)."""
        reach = parse_reach(drift_reach).value
        figure: list[RunRef] = []
        evidence: list[RunRef] = []
        for run in runs:
            main = (run.setting in SETTINGS and run.policy in self.policies
                    and run.drift_reach == reach)
            (figure if main else evidence).append(run)
        return figure, evidence

    def sorted_runs(self, runs: Iterable[RunRef]) -> list[RunRef]:
        """``runs`` in drawing order (:meth:`order_key`)."""
        return sorted(runs, key=lambda r: self.order_key(r.setting, r.policy, r.seed))


@dataclass(frozen=True, slots=True)
class RunRef:
    """One replay of the drift experiments: setting, policy, seed, folder and drift reach.

    ``setting`` is a drift setting of :data:`SETTINGS`, or, for an evidence replay,
    :data:`NO_DRIFT_SETTING` or one template every job follows (its canonical name, e.g.
    ``increasing-3.0``); ``policy`` a placement policy's name (a :class:`DriftStudy`
    decides which ones it compares).
    """

    setting: str
    policy: str
    seed: int
    directory: Path
    drift_reach: str = DriftReach.PROFILE.value

    def __post_init__(self) -> None:
        """Validate the setting, policy, seed and reach; make ``directory`` a Path."""
        if self.setting not in (*SETTINGS, NO_DRIFT_SETTING) and not _is_template(
                self.setting):
            raise ValueError(f"setting must be one of {[*SETTINGS, NO_DRIFT_SETTING]} or a "
                             f"template name such as increasing-3.0, got {self.setting!r}")
        if not isinstance(self.policy, str) or not self.policy:
            raise ValueError(f"policy must be a non-empty policy name, got {self.policy!r}")
        object.__setattr__(self, "seed", _check_count("seed", self.seed, 0))
        object.__setattr__(self, "directory", Path(self.directory))
        object.__setattr__(self, "drift_reach", parse_reach(self.drift_reach).value)

    @classmethod
    def from_folder(cls, directory: str | Path) -> RunRef:
        """The replay in ``directory``, its keys read from its config.json (drift: setting)."""
        from rollmux.sim.sweeps import run_keys

        keys = run_keys(directory)
        config = json.loads((Path(directory) / "config.json").read_text(encoding="utf-8"))
        return cls(str(keys["drift"]), str(keys["policy"]), int(keys["seed"]), Path(directory),
                   str(config.get("drift_reach", DriftReach.PROFILE.value)))

    @property
    def summary_path(self) -> Path:
        """The replay's summary.json."""
        return self.directory / "summary.json"

    @property
    def events_path(self) -> Path:
        """The replay's events.csv."""
        return self.directory / "events.csv"

    @property
    def jobs_path(self) -> Path:
        """The replay's jobs.csv."""
        return self.directory / "jobs.csv"

    def summary(self) -> dict[str, Any]:
        """The replay's summary (summary.json)."""
        return json.loads(self.summary_path.read_text(encoding="utf-8"))


def _is_template(setting: str) -> bool:
    """Whether ``setting`` is a drift template's canonical name (``increasing-3.0``)."""
    try:
        return parse_template(setting).name == setting and setting != NO_DRIFT_SETTING
    except ValueError:
        return False


def _util_pct(summary: Mapping[str, Any], pool: str) -> float:
    """Utilisation of ``pool`` in percent, 100 (1 - bubble fraction); nan if never provisioned."""
    bubble = (summary.get("bubble_fraction") or {}).get(pool)
    return math.nan if bubble is None else 100.0 * (1.0 - float(bubble))


def replay_gap(summary: Mapping[str, Any]) -> float:
    """A replay's certified optimum gap (``optimum_gap`` of its summary; docs/optimum.md,
    section 6): NaN for a policy without one or a decision without a bound."""
    gap = summary.get("optimum_gap")
    return math.nan if gap is None else float(gap)


def with_reference_ratios(table: pd.DataFrame, what: str, reference: str) -> pd.DataFrame:
    """``table`` (one row per setting, policy, seed) with ``total_cost_over_regroup`` (total
    cost over the same setting's and seed's ``reference`` replay, the primary ratio) and
    ``cost_over_regroup`` (the time-average hourly cost ratio kept beside it); with an
    ``optimum_gap`` column (:func:`replay_gap`), also ``reference_gap``: the reference
    replay's certified gap, so the ratios to the true optimum are at most these over
    (1 - gap)."""
    ref = table[table["policy"] == reference].set_index(["setting", "seed"])
    for setting, seed in table[["setting", "seed"]].drop_duplicates().itertuples(index=False):
        if (setting, seed) not in ref.index:
            raise ValueError(f"{what}: no {reference!r} replay for setting "
                             f"{setting!r}, seed {seed}")
    idx = pd.MultiIndex.from_frame(table[["setting", "seed"]])
    out = table.copy()
    out["total_cost_over_regroup"] = (
        out["total_cost_usd"].to_numpy() / ref["total_cost_usd"].reindex(idx).to_numpy())
    out["cost_over_regroup"] = (
        out["cost_usd_per_h"].to_numpy() / ref["cost_usd_per_h"].reindex(idx).to_numpy())
    if "optimum_gap" in out.columns:
        out["reference_gap"] = ref["optimum_gap"].reindex(idx).to_numpy()
    return out


def check_unique(runs: Sequence[RunRef], what: str) -> None:
    """ValueError when ``runs`` is empty or lists a (setting, policy, seed, reach) twice."""
    if not runs:
        raise ValueError(f"{what}: empty")
    keys = [(r.setting, r.policy, r.seed, r.drift_reach) for r in runs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{what}: a (setting, policy, seed, drift reach) is listed twice")


def drift_table(runs: Iterable[RunRef], study: DriftStudy) -> pd.DataFrame:
    """One row per replay of Fig. 17 (:data:`DRIFT_COLUMNS`), costs normalised to the
    study's reference.

    ``total_cost_over_regroup`` is the total cost of completing the trace's work over that
    of the reference (``regroup``) replay of the same setting and seed (docs/metrics.md,
    "Normalised cost": the figure's and the claims' ratio); ``cost_over_regroup`` the same
    for the time-average hourly cost, kept beside it. Every run must be a drift setting's
    replay of one of the study's policies under one drift reach, and every (setting, seed)
    needs a reference replay.
    """
    runs = list(runs)
    for run in runs:
        if run.setting not in SETTINGS or run.policy not in study.policies:
            raise ValueError(f"runs: {run.setting}/{run.policy} is not a replay of Fig. 17 "
                             "(use DriftStudy.split_runs)")
    runs = study.sorted_runs(runs)
    check_unique(runs, "runs")
    if len({r.drift_reach for r in runs}) != 1:
        raise ValueError("runs: replays of more than one drift reach")
    rows = []
    for run in runs:
        s = run.summary()
        rows.append({
            "setting": run.setting, "drift_reach": run.drift_reach, "policy": run.policy,
            "seed": run.seed, "jobs": int(s["jobs"]), "jobs_completed": int(s["jobs_completed"]),
            "span_h": float(s["span_h"]), "cost_usd_per_h": float(s["cost_usd_per_h"]),
            "total_cost_usd": float(s["total_cost_usd"]),
            "slo_attainment_pct": 100.0 * float(s["slo_attainment"]),
            "slo_attainment_realised_pct": 100.0 * float(s["slo_attainment_realised"]),
            "slo_attainment_planned_pct": 100.0 * float(s.get("slo_attainment_planned",
                                                              math.nan)),
            "util_rollout_pct": _util_pct(s, "rollout"), "util_train_pct": _util_pct(s, "train"),
            "optimum_gap": replay_gap(s), "source": str(run.summary_path),
        })
    table = with_reference_ratios(pd.DataFrame(rows), "runs", study.reference)
    return table.loc[:, list(DRIFT_COLUMNS)]


def utilisation_table(drift: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Pool utilisation of every replay, one row per pool (:data:`UTILISATION_COLUMNS`).

    ``deficit_vs_regroup_pp`` = the ``reference`` replay's utilisation minus this
    replay's, in percentage points (positive: lower than the reference), same setting and
    seed.
    """
    ref = drift[drift["policy"] == reference].set_index(["setting", "seed"])
    rows = []
    for rec in drift.itertuples(index=False):
        for pool in _POOLS:
            util = float(getattr(rec, f"util_{pool}_pct"))
            base = float(ref.loc[(rec.setting, rec.seed), f"util_{pool}_pct"])
            rows.append({
                "setting": rec.setting, "policy": rec.policy, "seed": int(rec.seed),
                "pool": pool, "utilisation_pct": util, "regroup_utilisation_pct": base,
                "deficit_vs_regroup_pp": base - util,
            })
    return pd.DataFrame(rows, columns=list(UTILISATION_COLUMNS))


def _read_events(path: str | Path) -> pd.DataFrame:
    """events.csv with text columns kept as strings (empty cells as '')."""
    return pd.read_csv(path, dtype={"job_id": str, "group_id": str, "strategy": str,
                                    "detail": str, "kind": str}, keep_default_na=False)


def migration_table(runs: Iterable[RunRef], trace: str | Path, study: DriftStudy,
                    hw: Any = None) -> pd.DataFrame:
    """Migration and restart hours of the reference (``regroup``) replays
    (:data:`MIGRATION_COLUMNS`).

    From each replay's events.csv: ``resolves`` counts the periodic re-solves (``regroup``
    events), ``regroupings`` those that moved jobs, ``moves`` the moved jobs summed over
    them. Each move pauses the job for
    :func:`rollmux.placement.regroup.migration_pause_s` of its model size (197-419 s, the
    paper's measured migration + restart), summed in ``pause_h``; ``cold_switch_extra_h``
    bounds the extra cold-over-warm switch time the simulator charges on the job's first
    rollout and training after the move (one per pool).
    """
    jobs = {job.job_id: job for job in load_trace(trace, hw)}
    hw_used = hw
    if hw_used is None:
        from rollmux.hardware import load_hardware

        hw_used = load_hardware()
    rows = []
    for run in study.sorted_runs(runs):
        if run.policy != study.reference:
            raise ValueError(f"migration_table: run {run} is not a {study.reference!r} replay")
        events = _read_events(run.events_path)
        resolves = events[events["kind"] == "regroup"]
        moved_lists = [detail.split() for detail in resolves["detail"]]
        moved = [job_id for ids in moved_lists for job_id in ids]
        unknown = sorted(set(moved) - set(jobs))
        if unknown:
            raise ValueError(f"{run.events_path}: moved job {unknown[0]!r} not in {trace}")
        pause_s = sum(migration_pause_s(jobs[j].model_size_b) for j in moved)
        extra_s = 0.0
        for job_id in moved:
            times = resolve(jobs[job_id], hw_used).times
            extra_s += 2.0 * (times.cold_switch_s - times.warm_switch_s)
        span_h = float(run.summary()["span_h"])
        pause_h = pause_s / SECONDS_PER_HOUR
        rows.append({
            "setting": run.setting, "seed": run.seed, "resolves": len(resolves),
            "regroupings": sum(1 for ids in moved_lists if ids), "moves": len(moved),
            "jobs_moved": len(set(moved)), "pause_h": pause_h,
            "cold_switch_extra_h": extra_s / SECONDS_PER_HOUR, "span_h": span_h,
            "pause_per_span_pct": 100.0 * pause_h / span_h if span_h > 0 else math.nan,
            "source": f"{run.events_path};{run.summary_path}",
        })
    return pd.DataFrame(rows, columns=list(MIGRATION_COLUMNS))


# --------------------------------------------------------------------------- Fig. 19


def failure_timeline(
    phases: pd.DataFrame, jobs: pd.DataFrame, events: pd.DataFrame
) -> pd.DataFrame:
    """The failure replay's phases with names (:data:`TIMELINE_COLUMNS`), for Fig. 19.

    ``phases``, ``jobs`` and ``events`` are the replay's phases.csv, jobs.csv and
    events.csv. ``incarnation`` is 1 before the job's first resubmission, 2 after it, ...;
    ``lost`` marks work the kill threw away: rows of an incarnation that ended in a kill
    whose iteration is not below the iterations completed at the kill (the ``kill`` event's
    ``iterations_done``), so the resubmitted job redoes them.
    """
    names = dict(zip(jobs["job"].astype(int), jobs["job_id"].astype(str), strict=True))
    ev = events.copy()
    ev["detail"] = ev["detail"].fillna("").astype(str)
    resubmits: dict[str, list[float]] = {}
    kills: dict[str, list[int]] = {}
    for rec in ev.sort_values("time_s", kind="stable").itertuples(index=False):
        if rec.kind == "resubmit":
            resubmits.setdefault(str(rec.job_id), []).append(float(rec.time_s))
        elif rec.kind == "kill":
            done = dict(part.split("=", 1) for part in rec.detail.split() if "=" in part)
            if "iterations_done" not in done:
                raise ValueError(f"kill event of {rec.job_id!r} at {rec.time_s}: no "
                                 "iterations_done in its detail")
            kills.setdefault(str(rec.job_id), []).append(int(done["iterations_done"]))
    rows = []
    for rec in phases.itertuples(index=False):
        job_id = names[int(rec.job)]
        incarnation = 1 + int(np.searchsorted(resubmits.get(job_id, []),
                                              float(rec.start_s), side="right"))
        killed = kills.get(job_id, [])
        lost = incarnation <= len(killed) and int(rec.iteration) >= killed[incarnation - 1]
        pool = _POOL_NAMES[int(rec.pool)]
        rows.append({
            "job_id": job_id, "incarnation": incarnation,
            "phase": _PHASE_NAMES[int(rec.phase)], "iteration": int(rec.iteration),
            "node": f"{_NODE_PREFIX[pool]}{int(rec.node)}", "pool": pool,
            "start_s": float(rec.start_s), "end_s": float(rec.end_s),
            "work_s": float(rec.work_s), "lost": bool(lost),
        })
    out = pd.DataFrame(rows, columns=list(TIMELINE_COLUMNS))
    return out.sort_values(["start_s", "pool", "node", "job_id", "iteration"],
                           kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- claims


#: The claim metric of static RollMux's normalised cost per drift setting (C47-C49).
COST_METRICS: dict[str, str] = {s: f"cost_over_regroup_{s.lower()}" for s in SETTINGS}
#: The claim metric of the SLO-blind baselines' normalised cost (C51).
BASELINE_METRIC = "cost_over_regroup_baselines"


def _mean_by(drift: pd.DataFrame, policy: str, column: str) -> pd.Series:
    """Mean over seeds of ``column`` for ``policy``, per setting (every setting required)."""
    part = drift[drift["policy"] == policy]
    means = part.groupby("setting")[column].mean()
    missing = [s for s in SETTINGS if s not in means.index]
    if missing:
        raise ValueError(f"drift table: no {policy!r} replay for setting(s) {missing}")
    return means.reindex(list(SETTINGS))


def robustness_gaps(drift: pd.DataFrame, drift_source: str, reference: str = "regroup"
                     ) -> pd.DataFrame:
    """The certified gap of the reference (``regroup``) behind each cost ratio of
    :func:`robustness_metrics` (rows of :mod:`rollmux.experiments.optimum_gaps`): every
    (setting, seed) the metric spans, from ``drift``'s ``reference_gap``."""
    def readings(policies: Sequence[str], settings: Sequence[str]) -> list[float]:
        part = drift[drift["policy"].isin(policies) & drift["setting"].isin(settings)]
        part = part.drop_duplicates(subset=["setting", "seed"])
        if not len(part):
            raise ValueError(f"drift table: no {'/'.join(policies)} replay for {settings}")
        return part["reference_gap"].tolist() if "reference_gap" in part.columns \
            else [math.nan] * len(part)
    rows = [gap_row(COST_METRICS[s], reference, readings(["rollmux"], [s]), drift_source)
            for s in SETTINGS]
    rows.append(gap_row(BASELINE_METRIC, reference, readings(SLO_BLIND, SETTINGS),
                        drift_source))
    return gap_frame(rows)


def robustness_metrics(
    drift: pd.DataFrame,
    utilisation: pd.DataFrame,
    drift_source: str,
    utilisation_source: str,
    context: str = "",
) -> pd.DataFrame:
    """Claims C47-C52 as rows of the metrics contract (:data:`METRIC_COLUMNS`).

    Every value is a mean over the seeds of a setting; ``context`` (e.g. the trace) ends
    every note.
    """
    seeds = sorted(int(s) for s in drift["seed"].unique())
    tail = f"; mean over seeds {seeds}" + (f"; {context}" if context else "")
    ratio = _mean_by(drift, "rollmux", "total_cost_over_regroup")
    hourly = _mean_by(drift, "rollmux", "cost_over_regroup")
    rows: list[dict[str, Any]] = []
    for setting in SETTINGS:
        rows.append({
            "metric": COST_METRICS[setting], "value": float(ratio[setting]),
            "low": math.nan, "high": math.nan, "unit": "x", "source": drift_source,
            "note": f"static RollMux total cost of the trace's work over regroup's, {setting} "
                    f"drift (time-average hourly cost ratio {hourly[setting]:.3f})" + tail,
        })
    for reading, column in ((STATUS_READING, "slo_attainment_realised_pct"),
                            (BESIDE_READING, "slo_attainment_pct")):
        slo = _mean_by(drift, "rollmux", column)
        rows.append({
            "metric": "slo_rollmux_drift" if reading == STATUS_READING
            else with_reading("slo_rollmux_drift", reading),
            "value": math.nan, "low": float(slo.min()),
            "high": float(slo.max()), "unit": "%", "source": drift_source,
            "note": f"min..max of static RollMux SLO attainment, {reading} reading, over "
                    + ", ".join(f"{s} {slo[s]:.1f}" for s in SETTINGS) + tail,
        })
    base = pd.concat([_mean_by(drift, p, "total_cost_over_regroup") for p in SLO_BLIND])
    base_hourly = pd.concat([_mean_by(drift, p, "cost_over_regroup") for p in SLO_BLIND])
    rows.append({
        "metric": BASELINE_METRIC, "value": math.nan, "low": float(base.min()),
        "high": float(base.max()), "unit": "x", "source": drift_source,
        "note": "min..max of Random's and Most-Idle's total cost over regroup's in "
                + ", ".join(SETTINGS) + f" (time-average hourly cost ratios "
                f"{base_hourly.min():.3f}..{base_hourly.max():.3f})" + tail,
    })
    roll = utilisation[(utilisation["policy"] == "rollmux") & (utilisation["pool"] == "rollout")]
    deficit = roll.groupby("setting")["deficit_vs_regroup_pp"].mean()
    missing = [s for s in SETTINGS if s not in deficit.index]
    if missing:
        raise ValueError(f"utilisation table: no rollmux rollout rows for {missing}")
    deficit = deficit.reindex(list(SETTINGS))
    rows.append({
        "metric": "rollout_util_deficit_vs_regroup", "value": float(deficit.max()),
        "low": math.nan, "high": math.nan, "unit": "%", "source": utilisation_source,
        "note": "max over settings of regroup minus static RollMux rollout utilisation, "
                "percentage points (" + ", ".join(f"{s} {deficit[s]:+.2f}" for s in SETTINGS)
                + ")" + tail,
    })
    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
