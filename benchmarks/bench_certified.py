"""Time whole-trace replays of the optimum policies, old code against new, in one run (issue 24).

Each case replays a trace in a fresh child process (``simulate_trace`` in process, so
policy options such as ``mip_gap`` can be passed) under a CPU-time cap
(``RLIMIT_CPU``); the child reports its CPU seconds, the replay's total cost and the
optimum's certified gap (``optimum_gap`` of the summary, new code only). ``--before
DIR`` is a checkout of the old code (e.g. ``git worktree add /tmp/opt-before abeaac1``);
its ``src`` goes first on ``PYTHONPATH``. The machine's load average is recorded before
and after every child, since CPU seconds on a shared VM move with it.

    .venv/bin/python benchmarks/bench_certified.py --before /tmp/opt-before \\
        --out benchmarks/recorded/certified.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# (label, trace, SLO setting, policy, fidelity, stochastic, policy options of the new code)
CASES: tuple[tuple[str, str, str, str, str, bool, dict[str, Any]], ...] = (
    ("production rollmux", "traces/production-default.csv", "trace", "rollmux", "event",
     True, {}),
    ("production regroup", "traces/production-default.csv", "trace", "regroup", "event",
     True, {}),
    ("production regroup mip_gap 0.005", "traces/production-default.csv", "trace", "regroup",
     "event", True, {"mip_gap": 0.005}),
    ("simulation-mixed SLO 2.0 optimal (whole)", "traces/simulation-mixed.csv", "2.0",
     "optimal", "analytic", False, {}),
)

CHILD = """
import json, sys, time
from rollmux.hardware import load_hardware
from rollmux.traces import load_trace
from rollmux.sim.replay import parse_slo, override_slos
from rollmux.sim.engine import simulate_trace, SimConfig
from rollmux.sim.engine import build_policy
trace, slo, policy, fidelity, stochastic, options = json.loads(sys.argv[1])
hw = load_hardware()
jobs = override_slos(load_trace(trace, hw), parse_slo(slo), 0)
obj = build_policy(policy, 0, options)
start = time.process_time()
res = simulate_trace(jobs, obj, hw, 0, SimConfig(fidelity=fidelity, stochastic=stochastic))
out = {"cpu_s": time.process_time() - start, "total_cost_usd": res.summary["total_cost_usd"],
       "optimum_gap": res.summary.get("optimum_gap"),
       "optimum_solves": res.summary.get("optimum_solves")}
print(json.dumps(out))
"""


def run(src: Path, case: tuple[Any, ...], cpu_cap_s: int, new: bool) -> dict[str, Any]:
    """One replay in a child under a CPU cap: its report, or ``finished: False``."""
    label, trace, slo, policy, fidelity, stochastic, options = case
    env = {**os.environ, "PYTHONPATH": str(src)}
    arg = json.dumps([str(ROOT / trace), slo, policy, fidelity, stochastic,
                      options if new else {}])

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_cap_s, cpu_cap_s + 5))

    load_before = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], env=env, capture_output=True,
                          text=True, preexec_fn=cap, check=False)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    row: dict[str, Any] = {"case": label, "version": "after" if new else "before",
                           "load_before": load_before, "load_after": os.getloadavg()[0],
                           "children_cpu_s_so_far": usage.ru_utime + usage.ru_stime}
    if proc.returncode == 0:
        row.update(json.loads(proc.stdout.strip().splitlines()[-1]), finished=True)
    else:
        row.update(finished=False, cpu_s=float(cpu_cap_s), returncode=proc.returncode,
                   stderr=proc.stderr[-300:])
    return row


def main() -> None:
    """Run every case for the old and the new code; print and write the rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout of the old code")
    parser.add_argument("--cases", nargs="*", type=int, default=None,
                        help="indices of CASES to run (default: all)")
    parser.add_argument("--cpu-cap-s", type=int, default=900, help="CPU cap per replay")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to write")
    args = parser.parse_args()
    picked = [CASES[i] for i in (args.cases if args.cases is not None else range(len(CASES)))]
    rows = []
    for case in picked:
        versions = [(args.before / "src", False), (ROOT / "src", True)]
        if case[-1]:  # options only the new code has
            versions = versions[1:]
        for src, new in versions:
            row = run(src, case, args.cpu_cap_s, new)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
