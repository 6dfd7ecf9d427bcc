"""Benchmark: the theorem1 and what-it-would-take jobs, this checkout against a reference.

Each job runs its rule's own script (``workflow/scripts/<script>.py`` of each checkout,
given the rule's parameters from the config through a stand-in ``snakemake`` object), in
a fresh process with that checkout's ``src`` first on the path; the process's CPU time
(imports included, as the pipeline pays it) is measured by the parent. Outputs of both
codes are compared byte for byte (``cmp``); a difference stops the run.

    .venv/bin/python benchmarks/bench_theorem1_jobs.py --reference /tmp/old-checkout \
        [--jobs summary slo_optimum worst_case:c_crossing migration near_edge] \
        [--configfile config/paper.yaml] [--results DIR] [--rounds 2]

``--results DIR``: a folder holding the quick pipeline's ``results/sim`` and
``results/microbench`` (the ``near_edge`` job's inputs; that job is skipped without it).
``--rounds R`` runs every code R times per job, in turn and in reversed order every other
round (so load drifting during the run favours no code); each cell is the median.
``--set KEY=VALUE`` overrides a setting of the merged config (e.g.
``theorem1.slo_optimum.groups=25``).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parents[1]
JOBS = ("summary", "slo_optimum", "worst_case:c_crossing", "migration", "near_edge")

# The child: run one rule script with a stand-in snakemake object (argv: code root, the job
# spec as JSON).
_CHILD = r'''
import json, sys, types, runpy
root, spec = sys.argv[1], json.loads(sys.argv[2])
ns = lambda d: types.SimpleNamespace(**d)
sm = types.SimpleNamespace(input=ns(spec["input"]), output=ns(spec["output"]),
                           params=ns(spec["params"]), wildcards=ns(spec["wildcards"]),
                           log=[spec["log"]])
runpy.run_path(f"{root}/workflow/scripts/{spec['script']}", init_globals={"snakemake": sm},
               run_name="__main__")
'''


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into ``base`` (nested mappings merged, as Snakemake's configfile)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _config(configfile: str | None, sets: list[str]) -> dict[str, Any]:
    """config/config.yaml with ``configfile`` and the ``--set`` overrides merged in."""
    config = yaml.safe_load((HERE / "config" / "config.yaml").read_text(encoding="utf-8"))
    if configfile:
        config = _merge(config, yaml.safe_load(Path(configfile).read_text(encoding="utf-8")))
    for item in sets:
        key, _, value = item.partition("=")
        node = config
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = yaml.safe_load(value)
    return config


def _spec(job: str, config: dict[str, Any], out: Path, results: Path | None
          ) -> dict[str, Any] | None:
    """The script, inputs, outputs and parameters of ``job`` (None: not runnable here)."""
    t1 = config["theorem1"]
    seeds = config.get("seeds", [config["seed"]])
    spec: dict[str, Any] = {"input": {}, "wildcards": {}, "log": str(out / "log.txt")}
    if job == "summary":
        spec.update(script="theorem1_summary.py", output={"summary": str(out / "summary.csv")},
                    params={"instances": t1["instances"], "seed": config["seed"]})
    elif job == "slo_optimum":
        spec.update(script="theorem1_slo_optimum.py",
                    output={"table": str(out / "slo_optimum.csv"),
                            "summary": str(out / "slo_optimum_summary.csv")},
                    params={"settings": t1.get("slo_optimum", {}), "seed": config["seed"]})
    elif job.startswith("worst_case:"):
        spec.update(script="theorem1_worst_case.py",
                    output={"cells": str(out / "cells.csv"), "check": str(out / "check.csv")},
                    params={"settings": t1["worst_case"], "seed": config["seed"]},
                    wildcards={"family": job.split(":", 1)[1]})
    elif job == "migration":
        spec.update(script="near_edge_migration.py",
                    input={"ledger": str(HERE / "src/rollmux/data/claims.csv")},
                    output={"rows": str(out / "migration.json")},
                    params={"seeds": seeds, "iterations": config["microbench"]["iterations"],
                            "overrides": config.get("hardware_overrides", {})})
    elif job == "near_edge":
        if results is None:
            return None
        from rollmux.sim.sweeps import run_files, sweep_plan

        plan = sweep_plan(config["sim"], config["seed"], seeds)
        res = results / "results"
        migration = out.parent / "migration.json"
        spec.update(
            script="near_edge.py",
            input={"migration": str(migration),
                   "sensitivity": str(res / "sim/sensitivity.csv"),
                   "mixed": str(res / "sim/mixed.csv"),
                   "jobs": [str(results / p) for p in run_files(
                       plan.sensitivity + plan.mixed, "jobs.csv")],
                   "throughput": [str(res / f"microbench/seeds/seed={s}/throughput.csv")
                                  for s in seeds],
                   "ledger": str(HERE / "src/rollmux/data/claims.csv")},
            output={"table": str(out / "what_it_would_take.csv")},
            params={"window": plan.window,
                    "slo_endpoints": config["sim"].get("metrics", {}).get(
                        "slo_endpoints", ["1.2", "2"]),
                    "reference": plan.reference,
                    "overrides": config.get("hardware_overrides", {})})
    else:
        raise SystemExit(f"--jobs: unknown job {job!r} (expected one of {', '.join(JOBS)})")
    return spec


def _run(root: Path, spec: dict[str, Any]) -> float:
    """CPU seconds of one child running ``spec`` with ``root``'s code."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", _CHILD, str(root), json.dumps(spec)], env=env,
                   check=True, cwd=str(root))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _same(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Outputs of two specs that differ (byte for byte)."""
    return [name for name in a["output"]
            if not filecmp.cmp(a["output"][name], b["output"][name], shallow=False)]


def main() -> None:
    """Print a Markdown table of CPU seconds per job and code, with ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="a checkout of the old code")
    parser.add_argument("--jobs", nargs="+", default=list(JOBS))
    parser.add_argument("--configfile", default=None)
    parser.add_argument("--results", default=None)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], dest="sets")
    args = parser.parse_args()
    reference = Path(args.reference).resolve()
    if not (reference / "src" / "rollmux").is_dir():
        raise SystemExit(f"--reference: {reference}/src/rollmux is not a folder")
    config = _config(args.configfile, args.sets)
    results = Path(args.results).resolve() if args.results else None
    codes = [("reference", reference), ("this checkout", HERE)]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; config {args.configfile or 'config/config.yaml'}"
          f"{' ' + ' '.join(args.sets) if args.sets else ''}; {args.rounds} round(s) per "
          f"code (medians); load average at start {os.getloadavg()[0]:.1f}")
    print()
    print("| job | reference CPU (s) | this checkout CPU (s) | reference / new | outputs |")
    print("|---|---:|---:|---:|---|")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_theorem1_") as tmp:
        for job in args.jobs:
            times: dict[str, list[float]] = {name: [] for name, _ in codes}
            specs: dict[str, dict[str, Any]] = {}
            skipped = False
            for k in range(args.rounds):
                for name, root in codes if k % 2 == 0 else codes[::-1]:
                    out = Path(tmp) / name.replace(" ", "_") / job.replace(":", "_")
                    out.mkdir(parents=True, exist_ok=True)
                    spec = _spec(job, config, out, results)
                    if spec is None:
                        skipped = True
                        break
                    if job == "near_edge":  # both codes read the same migration rows
                        Path(spec["input"]["migration"]).write_text(
                            (Path(tmp) / "this_checkout" / "migration" /
                             "migration.json").read_text(encoding="utf-8"), encoding="utf-8")
                    times[name].append(_run(root, spec))
                    specs[name] = spec
                if skipped:
                    break
            if skipped:
                print(f"| {job} | - | - | - | skipped (no --results) |", flush=True)
                continue
            differ = _same(specs["reference"], specs["this checkout"])
            if differ:
                raise SystemExit(f"{job}: outputs differ: {', '.join(differ)}")
            old, new = (statistics.median(times[name]) for name, _ in codes)
            print(f"| {job} | {old:.1f} | {new:.1f} | {old / new:.2f} | byte-identical "
                  f"({', '.join(Path(p).name for p in specs['reference']['output'].values())})"
                  " |", flush=True)
    print()
    print(f"total wall time {time.perf_counter() - start:.0f} s; load average at end "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
