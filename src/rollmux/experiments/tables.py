"""The paper's Tables 1-6, computed from the defaults, the models and the results files.

* Table 1: GPU specs and prices (``data/defaults.yaml``; prices are estimates).
* Table 2: host memory per node to cache a job's rollout and training state vs model
  size (phase model, docs/model.md sec. 8).
* Table 3: micro-benchmark job types A-E (``data/microbench.yaml``, estimates).
* Table 4: per-iteration time solo / RollMux / ideal (``results/microbench/table4.csv``).
* Table 5: placement decision latency vs concurrent jobs
  (:func:`rollmux.experiments.placement_bench.bench_placement`) and the exact optimum vs brute force
  (:func:`rollmux.placement.optimum.bench_optimum`).
* Table 6: simulation job profiles (``traces/workloads.yaml``, estimates).

Each function returns a DataFrame; :func:`markdown` renders one with a title and notes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rollmux.anchors import to_markdown
from rollmux.hardware import Hardware, load_hardware, parameter_table
from rollmux.jobs import RLJob
from rollmux.jobtypes import job_type, load_microbench
from rollmux.model import resolve

__all__ = [
    "DEFAULT_TABLE2_LAYOUTS",
    "markdown",
    "table1_gpus",
    "table2_host_memory",
    "table3_job_types",
    "table4_iterations",
    "table5_latency",
    "table5_optimum",
    "table6_profiles",
]

DEFAULT_TABLE2_LAYOUTS: tuple[tuple[float, int, int], ...] = (
    (3.0, 8, 8), (7.0, 8, 8), (14.0, 8, 8), (32.0, 8, 8), (32.0, 16, 16), (70.0, 32, 32),
)
"""(model size B, rollout GPUs, training GPUs) rows of Table 2 by default."""


def markdown(frame: pd.DataFrame, title: str, notes: Sequence[str] = ()) -> str:
    """``# title``, the table as GitHub Markdown and one line per note."""
    body = to_markdown(frame)
    tail = "".join(f"\n{note}\n" for note in notes)
    return f"# {title}\n\n{body}{tail}"


def table1_gpus(hw_path: str | None = None, overrides: Mapping[str, Any] | None = None
                ) -> pd.DataFrame:
    """Table 1: per GPU type HBM, bandwidth, BF16 peak, price, price ratio to the cheapest.

    ``price_estimate`` is the ``estimate`` flag of the price in defaults.yaml (overrides
    replace the values but keep that flag).
    """
    hw = load_hardware(hw_path, overrides)
    params = parameter_table(hw_path).set_index("key")
    cheapest = min(g.price_usd_per_h for g in hw.gpus.values())
    rows = []
    for name, gpu in hw.gpus.items():
        key = f"gpus.{name}.price_usd_per_h"
        rows.append({
            "gpu": name,
            "hbm_gb": gpu.hbm_gb,
            "hbm_bw_tb_s": gpu.hbm_bw_gbps / 1000.0,
            "bf16_tflops": gpu.bf16_tflops,
            "price_usd_per_h": gpu.price_usd_per_h,
            "price_ratio": gpu.price_usd_per_h / cheapest,
            "price_estimate": bool(params.loc[key, "estimate"]) if key in params.index else True,
            "role": "rollout" if name == "H20" else "training" if name == "H800" else "",
        })
    return pd.DataFrame(rows)


def table2_host_memory(
    layouts: Sequence[Sequence[float]] = DEFAULT_TABLE2_LAYOUTS,
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Table 2: host DRAM per node to keep a job's state resident, per model size.

    One row per ``(model_size_b, rollout_gpus, train_gpus)``: ``rollout_tp``,
    ``rollout_gb_per_node``, ``train_gb_per_node``, and how many such states fit one
    node's DRAM (``rollout_resident_jobs``, ``train_resident_jobs``, at
    ``host_mem_gb``). All values are model estimates (docs/model.md sec. 8).
    """
    hw = hw or load_hardware()
    rows = []
    for size, r_gpus, t_gpus in layouts:
        job = RLJob(job_id=f"t2-{size:g}b", model_size_b=float(size), max_response_tokens=8192,
                    rollout_gpus=int(r_gpus), train_gpus=int(t_gpus))
        resolved = resolve(job, hw)
        roll, train = resolved.rollout_mem_gb, resolved.train_mem_gb
        rows.append({
            "model_size_b": float(size),
            "rollout_gpus": int(r_gpus),
            "train_gpus": int(t_gpus),
            "rollout_tp": resolved.shape.tensor_parallel,
            "rollout_gb_per_node": roll,
            "train_gb_per_node": train,
            "host_mem_gb": hw.node.host_mem_gb,
            "rollout_resident_jobs": math.floor(hw.node.host_mem_gb / roll),
            "train_resident_jobs": math.floor(hw.node.host_mem_gb / train),
            "estimate": True,
        })
    return pd.DataFrame(rows)


def table3_job_types(hw: Hardware | None = None) -> pd.DataFrame:
    """Table 3: micro-benchmark job types A-E (data/microbench.yaml).

    Phase times are the types' expected inputs; ``sync_s`` and ``solo_iteration_s`` come
    from the phase model. ``fitted`` names the fields fit ``microbench_types`` sets (C's
    and E's phase times); every other value is an estimate.
    """
    from rollmux.experiments.microbench_fit import FITTED_FIELDS

    hw = hw or load_hardware()
    data = load_microbench()
    rows = []
    for name, spec in data["job_types"].items():
        job = job_type(name, data)
        pt = resolve(job, hw).times
        rows.append({
            "type": name,
            "description": str(spec.get("description", "")),
            "model_size_b": job.model_size_b,
            "max_response_tokens": job.max_response_tokens,
            "turns": job.turns,
            "h20_gpus": job.rollout_gpus,
            "h800_gpus": job.train_gpus,
            "rollout_s": pt.rollout_s,
            "train_s": pt.train_s,
            "rollout_over_train": pt.rollout_s / pt.train_s,
            "sync_s": pt.sync_s,
            "solo_iteration_s": pt.solo_iteration_s,
            "fitted": " ".join(FITTED_FIELDS.get(name, ())),
            "estimate": True,
        })
    return pd.DataFrame(rows)


def table4_iterations(table4: pd.DataFrame) -> pd.DataFrame:
    """Table 4 from results/microbench/table4.csv: times (s) and overheads in percent."""
    out = table4[["scenario", "job", "solo_s", "rollmux_s", "ideal_s"]].copy()
    out["overhead_vs_solo_pct"] = 100.0 * table4["overhead_vs_solo"]
    out["slower_than_ideal_pct"] = 100.0 * table4["slower_than_ideal"]
    return out


def table5_latency(
    jobs: Sequence[int], seed: int = 0, decisions: int = 50, hw: Hardware | None = None
) -> pd.DataFrame:
    """Table 5 (left): RollMux decision latency at each number of concurrent jobs.

    Runs :func:`rollmux.experiments.placement_bench.bench_placement` per size (wall-clock timings:
    they vary from run to run and machine to machine).
    """
    from rollmux.experiments.placement_bench import bench_placement
    from rollmux.placement.base import Strategy

    hw = hw or load_hardware()
    rows = []
    for n in jobs:
        res = bench_placement(int(n), seed, decisions=decisions, hw=hw)
        mix = res["admission_mix"]
        rows.append({
            "jobs": res["jobs"],
            "decisions": res["decisions"],
            "groups": res["groups"],
            "median_ms": res["median_ms"],
            "p95_ms": res["p95_ms"],
            "max_ms": res["max_ms"],
            "direct_pct": 100.0 * mix.get(Strategy.DIRECT_PACKING.value, 0.0),
            "scaling_pct": 100.0 * mix.get(Strategy.ROLLOUT_SCALING.value, 0.0),
            "new_group_pct": 100.0 * mix.get(Strategy.NEW_GROUP.value, 0.0),
            "build_s": res["build_s"],
            "seed": seed,
        })
    return pd.DataFrame(rows)


def table5_optimum(
    jobs: Sequence[int],
    seed: int = 0,
    bruteforce_time_limit_s: float = 120.0,
    hw: Hardware | None = None,
) -> pd.DataFrame:
    """Table 5 (right): exact optimum vs brute force on production mixes of small sizes.

    Times :func:`rollmux.placement.optimum.compare_solvers` with brute force on, on
    :func:`rollmux.experiments.jobmix.production_mix` ``(n, seed)``; ``bruteforce_finished``
    is False when it hit its time limit.
    """
    from rollmux.experiments.jobmix import production_mix
    from rollmux.placement.optimum import compare_solvers

    hw = hw or load_hardware()
    rows = []
    for n in jobs:
        res = {"jobs": int(n), "seed": seed, **compare_solvers(
            production_mix(int(n), seed, hw), hw, bruteforce=True,
            bruteforce_time_limit_s=bruteforce_time_limit_s)}
        rows.append({key: res[key] for key in (
            "jobs", "seed", "seconds", "optimal_cost_usd_per_h", "bruteforce_seconds",
            "bruteforce_cost_usd_per_h", "bruteforce_finished", "bruteforce_time_limit_s",
            "solo_cost_usd_per_h", "groups")})
    return pd.DataFrame(rows)


TABLE5_COLUMNS = {
    "latency": ("jobs", "decisions", "median_ms", "p95_ms"),
    "optimum": ("jobs", "seconds", "optimal_cost_usd_per_h", "bruteforce_seconds",
                "bruteforce_finished"),
}


def recorded_table5(path: str | Path, part: str) -> pd.DataFrame:
    """A Table 5 half recorded by ``benchmarks/record_table5.py``, its columns checked.

    ``part`` is ``"latency"`` or ``"optimum"``; a missing column raises ValueError naming
    the file and the column.
    """
    if part not in TABLE5_COLUMNS:
        raise ValueError(f"part must be one of {sorted(TABLE5_COLUMNS)}, got {part!r}")
    frame = pd.read_csv(path)
    for column in TABLE5_COLUMNS[part]:
        if column not in frame.columns:
            raise ValueError(f"{path}: recorded Table 5 ({part}) has no column {column!r}")
    if frame.empty:
        raise ValueError(f"{path}: recorded Table 5 ({part}) has no rows")
    return frame


def recorded_machine(path: str | Path) -> str:
    """One line naming the machine and time of a recorded Table 5 (table5_machine.json)."""
    info = json.loads(Path(path).read_text(encoding="utf-8"))
    return (f"{info['cores']}-core {info['cpu']}, Python {info['python']}, "
            f"load {info['load_average_1m']:.1f}, {info['recorded_utc']} UTC")


def table6_profiles(workloads_path: str | None = None) -> pd.DataFrame:
    """Table 6: the simulation's job profiles (traces/workloads.yaml, all estimates).

    Class ``BL`` balanced, ``RH`` rollout-heavy, ``TH`` train-heavy; size ``S/M/L``;
    phase durations are drawn from the given uniform ranges (s).
    """
    from rollmux.traces.generate import load_workloads

    classes = {"BL": "balanced", "RH": "rollout-heavy", "TH": "train-heavy"}
    sizes = {"S": "small", "M": "medium", "L": "large"}
    rows = []
    for name, spec in load_workloads(workloads_path)["profiles"].items():
        kind, _, size = name.partition("-")
        rows.append({
            "profile": name,
            "class": classes.get(kind, kind),
            "size": sizes.get(size, size),
            "model_size_b": float(spec["model_size_b"]),
            "h20_gpus": int(spec["rollout_gpus"]),
            "h800_gpus": int(spec["train_gpus"]),
            "max_response_tokens": int(spec["max_response_tokens"]),
            "turns": int(spec["turns"]),
            "rollout_s_low": float(spec["rollout_s"][0]),
            "rollout_s_high": float(spec["rollout_s"][1]),
            "train_s_low": float(spec["train_s"][0]),
            "train_s_high": float(spec["train_s"][1]),
            "estimate": True,
        })
    return pd.DataFrame(rows)
