"""Time the `optimal` and `regroup` replays of a trace, old code against new, in one run.

For each code version (``--before REV``: the ``src/`` of a git revision, extracted to a
temporary folder and put first on ``PYTHONPATH``; and the checkout itself) and each
policy (``rollmux``, ``optimal``, ``regroup``) it runs

    rollmux simulate --trace TRACE --policy POLICY --out DIR --quiet

as a child process, ``--repeat`` times with the versions interleaved (before, after,
before, ...), and records the best wall time and the child's CPU time (user + system)
of that run. It checks that both versions write byte-identical output files (all but
``config.json``, which names the output folder) and reports each replay also as a ratio
to the RollMux replay of the same version, measured in the same run.

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


def extract_src(rev: str, into: Path) -> Path:
    """The ``src/`` folder of git revision ``rev``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def run_once(trace: Path, policy: str, out: Path, src: Path | None) -> dict[str, float]:
    """One replay in a child process: wall and CPU seconds (user + system)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [sys.executable, "-m", "rollmux.cli", "simulate", "--trace", str(trace),
               "--policy", policy, "--out", str(out), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def same_outputs(a: Path, b: Path) -> bool:
    """Whether two output folders hold the same files with the same bytes (not config.json)."""
    names = sorted(p.name for p in a.iterdir() if p.name != "config.json")
    if names != sorted(p.name for p in b.iterdir() if p.name != "config.json"):
        return False
    return all(filecmp.cmp(a / name, b / name, shallow=False) for name in names)


def bench(trace: Path, before_rev: str, repeat: int) -> dict[str, Any]:
    """Every policy under both versions, interleaved; best wall time of ``repeat`` runs."""
    results: dict[str, Any] = {"trace": str(trace), "before": before_rev, "repeat": repeat,
                               "machine": f"{platform.platform()}, Python "
                               f"{platform.python_version()}, {os.cpu_count()} CPUs",
                               "load_avg_start": os.getloadavg(), "runs": []}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "before").mkdir()
        versions = {"before": extract_src(before_rev, tmp / "before"), "after": None}
        best: dict[tuple[str, str], dict[str, float]] = {}
        for _ in range(repeat):
            for policy in POLICIES:
                for version, src in versions.items():
                    out = tmp / f"out-{version}-{policy}"
                    timing = run_once(trace, policy, out, src)
                    key = (version, policy)
                    if key not in best or timing["wall_s"] < best[key]["wall_s"]:
                        best[key] = timing
                    print(json.dumps({"version": version, "policy": policy, **timing}),
                          flush=True)
        for policy in POLICIES:
            results["runs"].append({
                "policy": policy,
                "before": best[("before", policy)],
                "after": best[("after", policy)],
                "identical_outputs": same_outputs(tmp / f"out-before-{policy}",
                                                  tmp / f"out-after-{policy}"),
            })
    results["load_avg_end"] = os.getloadavg()
    return results


def markdown(results: dict[str, Any]) -> str:
    """One table: wall and CPU before/after, after/before, ratio to RollMux, same outputs."""
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
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the comparison; print the table and write the JSON record when ``--out`` is given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, required=True, help="trace CSV to replay")
    parser.add_argument("--before", default="main", help="git revision of the old code")
    parser.add_argument("--repeat", type=int, default=1, help="runs per version and policy")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to write")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    results = bench(args.trace.resolve(), args.before, args.repeat)
    print(markdown(results))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
