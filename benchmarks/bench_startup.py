"""Benchmark: start-up of the command line (`--version`, `--help`, every `COMMAND --help`).

Usage: python benchmarks/bench_startup.py [--repeats 7] [--before PYTHON]

Times each command in a fresh process (the median and the fastest of ``--repeats`` runs,
interleaved so load changes hit every command alike), beside ``python -c pass`` (the
interpreter's own start-up, and each command's median as a multiple of its median: the
load-independent figure on a shared machine) and, with ``--before``, the same commands
run by another interpreter's rollmux (e.g. an older checkout's ``.venv/bin/python``), as
a ratio. Prints a Markdown table with the machine's load average before and after.
Target (issue 22): every command under 0.3 s on an idle machine. Record results in
benchmarks/RESULTS-startup.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

TARGET_S = 0.3


def commands() -> list[list[str]]:
    """``--version``, ``--help`` and ``COMMAND --help`` for every command and sub-command."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from test_cli_startup import command_paths

    from rollmux.cli import build_parser

    return [["--version"], ["--help"]] + [[*p, "--help"] for p in command_paths(build_parser())]


def wall_s(argv: list[str]) -> float:
    """Wall time of one run of ``argv`` (output discarded; a failure stops the benchmark)."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", default=None,
                        help="another interpreter whose `-m rollmux.cli` is timed alongside")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runs = {"python -c pass": [sys.executable, "-c", "pass"]}
    script = os.path.join(os.path.dirname(sys.executable), "rollmux")
    for command in commands():
        runs[" ".join(["rollmux", *command])] = [script, *command]
        if args.before:
            runs["before: " + " ".join(["rollmux", *command])] = [
                args.before, "-m", "rollmux.cli", *command]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, command in runs.items():
            times[name].append(wall_s(command))
    load_after = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average (1, 5, 15 min) before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {args.repeats} "
          f"runs each, interleaved\n")
    header = ("| command | median s | fastest s | under 0.3 s (fastest) | "
              "/ `python -c pass` (median) |")
    bare = statistics.median(times["python -c pass"])
    if args.before:
        header += " before, median s | before / now (median) |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name, values in times.items():
        if name.startswith("before: "):
            continue
        median, fastest = statistics.median(values), min(values)
        row = f"| `{name}` | {median:.3f} | {fastest:.3f} | " \
              f"{'yes' if fastest < TARGET_S else 'no'} | {median / bare:.1f}x |"
        if args.before:
            before = times.get("before: " + name)
            if before:
                b = statistics.median(before)
                row += f" {b:.3f} | {b / median:.1f}x |"
            else:
                row += " | |"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
