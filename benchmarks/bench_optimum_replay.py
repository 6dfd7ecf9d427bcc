"""Time the `optimal` and `regroup` replays of a trace, old code against new, in one run.

For each code version (``--before REV``: the ``src/`` of a git revision, extracted to a
temporary folder and put first on ``PYTHONPATH``; and the checkout itself) and each
policy (``rollmux``, ``optimal``, ``regroup``) it runs

    rollmux simulate --trace TRACE --policy POLICY --out DIR --quiet

as a child process, ``--repeat`` times with the versions interleaved (before, after,
before, ...), and records the best wall time and the child's CPU time (user + system)
of that run. The child also times every call of ``solve_set_partitioning`` (HiGHS) in
process CPU time, so the table shows the rest (the column search, the simulator) apart,
and digests every MILP input in order. It checks that both versions write
byte-identical output files (all but ``config.json``, which names the output folder)
and hand HiGHS the same inputs in the same order, and reports each replay also as a
ratio to the RollMux replay of the same version, measured in the same run.

    .venv/bin/python benchmarks/bench_optimum_replay.py --trace traces/production-default.csv \\
        --before main --repeat 2 --out benchmarks/recorded/optimum_replay_production.json
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

POLICIES = ("rollmux", "optimal", "regroup")
ROOT = Path(__file__).resolve().parents[1]

# The child: `rollmux simulate` with HiGHS timed (process CPU time) and its inputs digested,
# both written as JSON to the file named by the environment's ROLLMUX_BENCH_PROBE.
PROBE = """
import atexit, hashlib, json, os, sys, time
import rollmux.placement.optimum.partition as partition
from rollmux.cli import main

digest, probe = hashlib.sha256(), {"highs_cpu_s": 0.0, "solves": 0}
solve = partition.solve_set_partitioning

def timed_solve(n, subsets, costs, deadline, *args, **kwargs):
    digest.update(repr((n, tuple(subsets), tuple(costs))).encode())
    start = time.process_time()
    try:
        return solve(n, subsets, costs, deadline, *args, **kwargs)
    finally:
        probe["highs_cpu_s"] += time.process_time() - start
        probe["solves"] += 1

def write():
    probe["milp_inputs_sha256"] = digest.hexdigest()
    with open(os.environ["ROLLMUX_BENCH_PROBE"], "w", encoding="utf-8") as out:
        json.dump(probe, out)

partition.solve_set_partitioning = timed_solve
atexit.register(write)
sys.exit(main(sys.argv[1:]))
"""


def extract_src(rev: str, into: Path) -> Path:
    """The ``src/`` folder of git revision ``rev``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def run_once(trace: Path, policy: str, out: Path, src: Path | None) -> dict[str, Any]:
    """One replay in a child process: wall and CPU seconds (user + system), HiGHS apart."""
    probe = out.with_name(out.name + ".probe.json")
    env = {**os.environ, "ROLLMUX_BENCH_PROBE": str(probe)}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [sys.executable, "-c", PROBE, "simulate", "--trace", str(trace),
               "--policy", policy, "--out", str(out), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    highs = json.loads(probe.read_text(encoding="utf-8"))
    return {"wall_s": wall, "cpu_s": cpu, **highs, "rest_cpu_s": cpu - highs["highs_cpu_s"]}


def same_outputs(a: Path, b: Path) -> bool:
    """Whether two output folders hold the same files with the same bytes (not config.json)."""
    names = sorted(p.name for p in a.iterdir() if p.name != "config.json")
    if names != sorted(p.name for p in b.iterdir() if p.name != "config.json"):
        return False
    return all(filecmp.cmp(a / name, b / name, shallow=False) for name in names)


def summary_of(out: Path) -> dict[str, Any]:
    """The replay's total cost and certified optimum gap (summary.json; None if absent)."""
    path = out / "summary.json"
    if not path.exists():
        return {}
    summary = json.loads(path.read_text(encoding="utf-8"))
    return {key: summary.get(key) for key in ("total_cost_usd", "optimum_gap")}


def bench(trace: Path, before_rev: str, repeat: int,
          policies: tuple[str, ...] = POLICIES) -> dict[str, Any]:
    """Every policy under both versions, interleaved; best wall time of ``repeat`` runs.

    With ``repeat`` > 1 it also checks that each version's repeated runs of a policy
    write byte-identical outputs (determinism).
    """
    results: dict[str, Any] = {"trace": str(trace), "before": before_rev, "repeat": repeat,
                               "machine": f"{platform.platform()}, Python "
                               f"{platform.python_version()}, {os.cpu_count()} CPUs",
                               "load_avg_start": os.getloadavg(), "runs": [],
                               "policies": list(policies)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "before").mkdir()
        versions = {"before": extract_src(before_rev, tmp / "before"), "after": None}
        best: dict[tuple[str, str], dict[str, Any]] = {}
        digests: dict[tuple[str, str], set[str]] = {}
        repeatable: dict[tuple[str, str], bool] = {}
        for run in range(repeat):
            for policy in policies:
                for version, src in versions.items():
                    out = tmp / f"out-{version}-{policy}" / str(run)
                    out.parent.mkdir(exist_ok=True)
                    timing = run_once(trace, policy, out, src)
                    timing.update(summary_of(out))
                    key = (version, policy)
                    if run:
                        repeatable[key] = repeatable.get(key, True) and same_outputs(
                            out.parent / "0", out)
                    digests.setdefault(key, set()).add(timing["milp_inputs_sha256"])
                    if key not in best or timing["wall_s"] < best[key]["wall_s"]:
                        best[key] = timing
                    print(json.dumps({"version": version, "policy": policy, **timing}),
                          flush=True)
        for policy in policies:
            results["runs"].append({
                "policy": policy,
                "before": best[("before", policy)],
                "after": best[("after", policy)],
                "identical_outputs": same_outputs(tmp / f"out-before-{policy}" / "0",
                                                  tmp / f"out-after-{policy}" / "0"),
                # each version's repeated runs byte-identical (None: run once)
                "repeatable": {version: repeatable.get((version, policy))
                               for version in versions},
                # one digest over every run of both versions: the same MILP inputs, in order
                "identical_milp_inputs": len(
                    digests[("before", policy)] | digests[("after", policy)]) == 1,
            })
    results["load_avg_end"] = os.getloadavg()
    return results


def markdown(results: dict[str, Any]) -> str:
    """Two tables: wall and CPU before/after with ratios to RollMux; HiGHS and the rest apart."""
    rollmux = {r["policy"]: r for r in results["runs"]}["rollmux"]
    lines = [
        f"Trace `{results['trace']}`; before = `{results['before']}`, after = this checkout; "
        f"best of {results['repeat']} interleaved runs; {results['machine']}; load average "
        f"{results['load_avg_start'][0]:.1f} at the start, {results['load_avg_end'][0]:.1f} "
        "at the end.",
        "",
        "| policy | before wall s | before CPU s | after wall s | after CPU s | after/before "
        "(wall, CPU) | after / rollmux (wall, CPU) | before / rollmux (wall, CPU) | same outputs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    split = [
        "",
        "The same runs split: HiGHS (every `solve_set_partitioning` call, process CPU time "
        "in the child) and the rest (column search, simulator, start-up).",
        "",
        "| policy | MILPs | before HiGHS CPU s | after HiGHS CPU s | before rest CPU s "
        "| after rest CPU s | rest after/before | same MILP inputs |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    outcome = [
        "",
        "What the replays found: total cost, the largest certified optimum gap, and whether "
        "each version's repeated runs wrote byte-identical outputs.",
        "",
        "| policy | before total cost $ | after total cost $ | before gap | after gap "
        "| before repeatable | after repeatable |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for r in results["runs"]:
        b, a = r["before"], r["after"]
        lines.append(
            f"| {r['policy']} | {b['wall_s']:.1f} | {b['cpu_s']:.1f} | {a['wall_s']:.1f} "
            f"| {a['cpu_s']:.1f} | {a['wall_s'] / b['wall_s']:.2f}, {a['cpu_s'] / b['cpu_s']:.2f} "
            f"| {a['wall_s'] / rollmux['after']['wall_s']:.1f}, "
            f"{a['cpu_s'] / rollmux['after']['cpu_s']:.1f} "
            f"| {b['wall_s'] / rollmux['before']['wall_s']:.1f}, "
            f"{b['cpu_s'] / rollmux['before']['cpu_s']:.1f} "
            f"| {'yes' if r['identical_outputs'] else 'NO'} |"
        )
        split.append(
            f"| {r['policy']} | {a['solves']} | {b['highs_cpu_s']:.1f} | {a['highs_cpu_s']:.1f} "
            f"| {b['rest_cpu_s']:.1f} | {a['rest_cpu_s']:.1f} "
            f"| {a['rest_cpu_s'] / b['rest_cpu_s']:.2f} "
            f"| {'yes' if r['identical_milp_inputs'] else 'NO'} |"
        )
        rep = r.get("repeatable", {})
        outcome.append(
            f"| {r['policy']} | {b.get('total_cost_usd')} | {a.get('total_cost_usd')} "
            f"| {b.get('optimum_gap')} | {a.get('optimum_gap')} "
            f"| {_yes(rep.get('before'))} | {_yes(rep.get('after'))} |"
        )
    return "\n".join(lines + split + outcome) + "\n"


def _yes(flag: bool | None) -> str:
    """yes / NO / - (not repeated)."""
    return "-" if flag is None else "yes" if flag else "NO"


def main() -> None:
    """Run the comparison; print the table and write the JSON record when ``--out`` is given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, required=True, help="trace CSV to replay")
    parser.add_argument("--before", default="main", help="git revision of the old code")
    parser.add_argument("--repeat", type=int, default=1, help="runs per version and policy")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to write")
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES),
                        help="policies to replay (rollmux is always included: the ratios)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    policies = tuple(p for p in POLICIES if p == "rollmux" or p in args.policies)
    results = bench(args.trace.resolve(), args.before, args.repeat, policies)
    print(markdown(results))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
