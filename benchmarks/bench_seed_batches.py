"""Benchmark: the pipeline's seed-batched replays against one job per replay, in one run.

Usage: python benchmarks/bench_seed_batches.py [--workdir /tmp/bb] [--repeats 1]
       [--configfile config/config.yaml]

Rule ``sim_replay_seeds`` (workflow/rules/sim_batch.smk) replays every seed of a cheap
setting in one process; with ``sim.batch_seeds: false`` each seed is its own
``sim_replay`` job. This makes two copies of the pipeline under ``--workdir`` ("batched"
and "one job per replay"; the workdir gets a ``shared`` link to ``../shared`` of this
checkout so the config's relative paths resolve), builds the replays' input traces once
(copied to both), then runs, alternating the two so load changes hit both alike,

    /usr/bin/time -v snakemake <every batched setting's summary.json> --cores 1 --force

in each copy (the targets: the files of all batch jobs of the config's dry run), and
prints a Markdown table of the jobs, the CPU (user + system of Snakemake and its jobs)
and wall time of each run, with the machine's load before and after, and whether the two
copies' replay folders are byte-identical (``filecmp``, every file). Record results in
benchmarks/RESULTS.md and benchmarks/RESULTS-startup.md (issue 24 item 4, fourth pass).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What a copy of the pipeline needs (as tests/test_workflow.py's PIPELINE_FILES).
PIPELINE_FILES = ("Snakefile", "workflow", "config", "analysis", "traces", "environment.yml",
                  "pyproject.toml", "src/rollmux/data", "src/rollmux/traces/workloads.yaml",
                  "benchmarks/recorded")
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
OFF = "sim:\n  batch_seeds: false\n"


def copy_pipeline(dest: Path) -> None:
    """A fresh copy of the pipeline's files in ``dest`` (no results)."""
    shutil.rmtree(dest, ignore_errors=True)
    for name in PIPELINE_FILES:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, target)
    (dest / "config" / "nobatch.yaml").write_text(OFF, encoding="utf-8")


def batch_jobs(workdir: Path, configfile: str) -> tuple[list[str], list[str]]:
    """The batch jobs' summary.json files and their inputs, from a dry run."""
    out = subprocess.run([*SNAKEMAKE, "-n", "--forceall", "--configfile", configfile],
                         cwd=workdir, capture_output=True, text=True, check=True).stdout
    targets: set[str] = set()
    inputs: set[str] = set()
    for block in out.split("\nrule ")[1:]:
        if not block.startswith("sim_replay_seeds"):
            continue
        for line in block.splitlines():
            key, _, value = line.strip().partition(": ")
            files = [f.strip() for f in value.split(",")]
            if key == "output":
                targets.update(f for f in files if f.endswith("/summary.json"))
            elif key == "input":
                inputs.update(f for f in files if f.startswith("results/"))
    return sorted(targets), sorted(inputs)


def timed(workdir: Path, args: list[str]) -> dict[str, float]:
    """``/usr/bin/time -v`` of Snakemake in ``workdir``: CPU, wall and the job count."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    result = subprocess.run(["/usr/bin/time", "-v", *SNAKEMAKE, *args], cwd=workdir,
                            capture_output=True, text=True, env=env, check=False)
    if result.returncode:
        raise SystemExit(f"snakemake failed in {workdir}:\n{result.stderr[-3000:]}")
    err = result.stderr

    def field(name: str) -> str:
        match = re.search(rf"{re.escape(name)}: (.+)", err)
        assert match, name
        return match.group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    jobs = re.search(r"(\d+) of (\d+) steps \(100%\) done", err)
    return {"user": float(field("User time (seconds)")),
            "system": float(field("System time (seconds)")), "wall": wall,
            "jobs": float(jobs.group(2)) if jobs else float("nan"),
            "max_rss_mb": float(field("Maximum resident set size (kbytes)")) / 1024}


def same_folders(a: Path, b: Path, targets: list[str]) -> bool:
    """Whether every replay folder of ``targets`` has the same files and bytes in a and b."""
    for target in targets:
        folder = Path(target).parent
        cmp = filecmp.dircmp(a / folder, b / folder)
        if cmp.left_only or cmp.right_only or cmp.common_dirs:
            return False
        _, mismatch, errors = filecmp.cmpfiles(a / folder, b / folder, cmp.common_files,
                                               shallow=False)
        if mismatch or errors:
            return False
    return True


def main() -> None:
    """Run both variants, alternating; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_seed_batches"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--configfile", default="config/config.yaml")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    shared = args.workdir / "shared"
    if not shared.exists():
        shared.symlink_to((ROOT.parent / "shared").resolve())
    on, off = args.workdir / "batched", args.workdir / "single"
    copy_pipeline(on)
    copy_pipeline(off)
    targets, inputs = batch_jobs(on, args.configfile)
    if inputs:
        subprocess.run([*SNAKEMAKE, *inputs, "--cores", "2", "--configfile",
                        args.configfile], cwd=on, capture_output=True, check=True)
        for path in inputs:
            (off / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(on / path, off / path)
    variants = {"batched (sim_replay_seeds)": (on, ["--configfile", args.configfile]),
                "one job per replay (sim_replay)": (off, ["--configfile", args.configfile,
                                                          "config/nobatch.yaml"])}
    load_before = os.getloadavg()
    rows = []
    for k in range(args.repeats):
        order = list(variants.items())
        if k % 2 == 0:
            order.reverse()  # the unbatched run first in the first round
        for name, (workdir, config) in order:
            stats = timed(workdir, [*targets, "--cores", "1", "--force", *config])
            rows.append((name, stats))
            print(name, stats, os.getloadavg(), file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    identical = same_folders(on, off, targets)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average (1, 5, 15 min) before "
          f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in load_after)}; {len(targets)} replays, "
          f"{args.repeats} run(s) each, alternating; replay folders byte-identical: "
          f"{'yes' if identical else 'NO'}\n")
    print("| variant | jobs | user CPU s | system CPU s | total CPU s | wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, s in rows:
        print(f"| {name} | {s['jobs']:.0f} | {s['user']:.1f} | {s['system']:.1f} | "
              f"{s['user'] + s['system']:.1f} | {s['wall']:.1f} |")
    total = {name: [s["user"] + s["system"] for n, s in rows if n == name] for name in variants}
    single, batched = (min(total[n]) for n in reversed(list(variants)))
    print(f"\none job per replay / batched (total CPU, best of each): {single / batched:.2f}x")


if __name__ == "__main__":
    main()
