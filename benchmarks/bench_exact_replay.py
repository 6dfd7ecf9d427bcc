"""Benchmark: `optimal` and `regroup` replays of the production traces vs RollMux (issue 15, 2).

Usage: python benchmarks/bench_exact_replay.py [--traces traces/production*.csv]
                                               [--policies rollmux optimal regroup]
                                               [--profile optimal regroup] [--top 15]

Each (trace, policy) pair is one ``rollmux simulate`` in a fresh child process (default
options: per-phase events, stochastic phase times, seed 0), in the order given, so the
pairs of one trace share the machine's load; wall time from ``time.perf_counter`` and
CPU time (user + system of the child, ``resource.getrusage(RUSAGE_CHILDREN)``). Ratios
are to the first policy's replay of the same trace. With ``--profile``, each named policy
is then replayed once more under ``cProfile`` (in-process ``run_replay``, CPU time of the
process as the profile's clock) and the top entries by own time and by cumulative time
are printed. Budget: <= 30 s per replay on
2 cores.

Prints one JSON document with every figure (and the machine).
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import io
import json
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 30.0


def timed_replay(trace: str, policy: str) -> dict[str, Any]:
    """One ``rollmux simulate`` in a child process: wall and CPU seconds, its summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rollmux.cli", "simulate", "--trace", trace,
                        "--policy", policy, "--seed", "0", "--out", str(out), "--quiet"],
                       check=True, cwd=ROOT)
        wall_s = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"trace": trace, "policy": policy, "wall_s": round(wall_s, 2),
            "cpu_s": round(cpu_s, 2), "cost_usd_per_h": summary["cost_usd_per_h"],
            "slo_attainment": summary["slo_attainment"], "load_avg": os.getloadavg()}


def profiled_replay(trace: str, policy: str, top: int) -> dict[str, Any]:
    """One in-process replay under cProfile: the top entries by own and cumulative time."""
    from rollmux.sim import ReplaySpec, run_replay

    spec = ReplaySpec(trace=trace, policy=policy, seed=0)
    # CPU time, not wall time: on a loaded machine a wall-clock profile charges waiting
    # for a core to whatever function happened to be running.
    profile = cProfile.Profile(time.process_time)
    with tempfile.TemporaryDirectory() as tmp:
        profile.enable()
        run_replay(spec, Path(tmp) / "run")
        profile.disable()
    tables = {}
    for key in ("tottime", "cumulative"):
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats(key).print_stats(top)
        total = stats.total_tt  # type: ignore[attr-defined]
        tables[key] = text.getvalue().split("\n   ncalls", 1)[-1]
    return {"trace": trace, "policy": policy, "profiled_total_s": round(total, 2),
            "by_own_time": "   ncalls" + tables["tottime"],
            "by_cumulative_time": "   ncalls" + tables["cumulative"]}


def machine() -> dict[str, Any]:
    """Where the figures were measured."""
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_avg": os.getloadavg(),
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def main(argv: list[str] | None = None) -> int:
    """Time the replays (and profile some), print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shipped = glob.glob(str(ROOT / "traces" / "production*.csv"))
    parser.add_argument("--traces", nargs="+",
                        default=sorted(os.path.relpath(p, ROOT) for p in shipped))
    parser.add_argument("--policies", nargs="*", default=["rollmux", "optimal", "regroup"],
                        help="policies to time (none: only profile)")
    parser.add_argument("--profile", nargs="*", default=[], help="policies to profile")
    parser.add_argument("--top", type=int, default=15, help="profile entries per table")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"machine": machine(), "budget_s": BUDGET_S,
                              "command": " ".join([Path(sys.executable).name, *sys.argv])}
    runs = []
    for trace in args.traces:
        first = None
        for policy in args.policies:
            run = timed_replay(trace, policy)
            first = first or run
            run["wall_over_first"] = round(run["wall_s"] / first["wall_s"], 1)
            run["cpu_over_first"] = round(run["cpu_s"] / first["cpu_s"], 1)
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
    report["replays"] = runs
    report["profiles"] = [profiled_replay(trace, policy, args.top)
                          for trace in args.traces for policy in args.profile]
    report["machine_after"] = machine()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
