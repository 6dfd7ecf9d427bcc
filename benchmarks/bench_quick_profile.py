"""Benchmark: the per-process cost of the quick profile's jobs, before and after, in one run.

Usage: python benchmarks/bench_quick_profile.py --before SRC [--repeats 5]

The quick pipeline (``make reproduce``) runs about 350 jobs, each a fresh Python process;
257 are trace replays (rule ``sim_replay``), most of them a 20- to 60-job window whose
replay itself costs about as much CPU as the process's start-up. This times, in fresh
processes interleaved so load changes hit every variant alike, one replay as rule
``sim_replay`` runs it (Snakemake's script preamble imports, the adapter's imports,
``ReplaySpec.from_keys`` and ``run_replay`` of the first 20 arrivals of the production
trace, RollMux and Random, seed 0), split into start-up CPU (everything before the replay)
and the replay's CPU, for:

* ``now``: this checkout's ``src`` with bytecode caches (what ``make reproduce`` runs
  now: it keeps the caches where ``PYTHONDONTWRITEBYTECODE`` is set);
* ``now, no bytecode cache``: the same where the caches are not written (every job
  compiles each rollmux module again; the installed packages keep their caches);
* ``before`` and ``before, no bytecode cache``: the same for ``--before SRC``'s ``src``
  (e.g. main at an older commit, extracted with ``git archive``); the latter is how the
  pipeline ran before (``PYTHONDONTWRITEBYTECODE`` set in the session's environment).

Each variant imports its own copy of ``src`` (made in a temporary folder, without
``__pycache__``; the cached variants are warmed up by one discarded run).
CPU (user + system of the process, ``resource.getrusage``), not wall: the machine is
shared, and CPU is what the pipeline's 2 cores are short of. Both variants write their
replay folders, and the benchmark checks that they are byte-identical. Prints a Markdown
table with the machine's load before and after. Record results in
benchmarks/RESULTS-startup.md and benchmarks/RESULTS.md (issue 24 item 4).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# One replay as workflow/scripts/sim_replay.py runs it, in a fresh process, after the
# imports of Snakemake's script preamble; prints the CPU before and after the replay.
CHILD = r"""
import resource, sys, json
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import pickle
from snakemake.logging import logger
from snakemake.iocontainers import Snakemake
import snakemake.script
preamble = cpu()
from pathlib import Path
from rollmux.sim import ReplaySpec, run_replay
trace, policy, out = sys.argv[1], sys.argv[2], sys.argv[3]
keys = {"trace": Path(trace).stem, "slo": "trace", "maxgroup": "5", "drift": "none",
        "policy": policy, "seed": "0"}
spec = ReplaySpec.from_keys(keys, trace=trace, record_phases=False)
start = cpu()
run_replay(spec, Path(out) / spec.path())
end = cpu()
print(json.dumps({"preamble": preamble, "startup": start, "replay": end - start,
                  "total": end, "scipy_stats": "scipy.stats" in sys.modules}))
"""


def run_child(src: Path, trace: Path, policy: str, out: Path, cache: bool
              ) -> dict[str, float]:
    """One replay in a fresh process with ``src`` first on the path; its CPU split."""
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, str(trace), policy, str(out)],
                          env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"replay failed ({src}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def same_tree(a: Path, b: Path) -> bool:
    """True when the two folders hold the same files with the same bytes."""
    left = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    right = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return left == right and all(filecmp.cmp(a / p, b / p, shallow=False) for p in left)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True,
                        help="an older source tree (its src/ is imported for 'before')")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from rollmux.sim.sweeps import window_trace_text

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        source = ROOT / "traces" / "production-default.csv"
        trace = tmp / "production-default-first20.csv"
        trace.write_text(window_trace_text(source.read_text(encoding="utf-8"), 20,
                                           source=source.name), encoding="utf-8")
        variants = {
            "now": (ROOT / "src", True),
            "now, no bytecode cache": (ROOT / "src", False),
            "before": (args.before / "src", True),
            "before, no bytecode cache": (args.before / "src", False),
        }
        copies = {}
        for name, (src, cache) in variants.items():
            copies[name] = tmp / "src" / name.replace(",", "").replace(" ", "-") / "src"
            shutil.copytree(src, copies[name], ignore=shutil.ignore_patterns("__pycache__"))
            if cache:  # warm-up: writes the bytecode caches
                run_child(copies[name], trace, "rollmux", tmp / "warm-up", cache)
        runs: dict[tuple[str, str], list[dict[str, float]]] = {}
        for i in range(args.repeats):
            for policy in ("rollmux", "random"):
                for name, (_, cache) in variants.items():
                    out = tmp / "out" / name.split()[0].rstrip(",") / policy / str(i)
                    runs.setdefault((name, policy), []).append(
                        run_child(copies[name], trace, policy, out, cache))
        identical = same_tree(tmp / "out" / "now", tmp / "out" / "before")
    load_after = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average (1, 5, 15 min) before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {args.repeats} "
          f"runs each, interleaved; replay folders before and now byte-identical: "
          f"{'yes' if identical else 'NO'}\n")
    print("| replay (first 20 arrivals of production-default, seed 0) | variant | "
          "start-up CPU s (median) | of which Snakemake's preamble | replay CPU s | "
          "total CPU s | scipy.stats loaded | before / variant (total) |")
    print("|---|---|---|---|---|---|---|---|")
    for policy in ("rollmux", "random"):
        before = statistics.median(r["total"] for r in runs[("before, no bytecode cache",
                                                             policy)])
        for name in variants:
            rs = runs[(name, policy)]
            total = statistics.median(r["total"] for r in rs)
            print(f"| {policy} | {name} | {statistics.median(r['startup'] for r in rs):.3f} | "
                  f"{statistics.median(r['preamble'] for r in rs):.3f} | "
                  f"{statistics.median(r['replay'] for r in rs):.3f} | {total:.3f} | "
                  f"{'yes' if rs[0]['scipy_stats'] else 'no'} | {before / total:.2f}x |")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
