"""Record Table 5's wall-clock measurements for the pipeline (benchmarks/recorded/).

Table 5 (decision latency vs concurrent jobs; exact optimum vs brute force) is a timing
table: its numbers change from run to run and machine to machine. So that two runs of
the pipeline give byte-identical results and claims files, the pipeline reads the
measurements recorded here by default (`paperfigs.table5_measure: false`); set it to
true to time them during the run instead.

    .venv/bin/python benchmarks/record_table5.py            # paper sizes, about 3 min
    .venv/bin/python benchmarks/record_table5.py --quick    # 100 and 2,000 jobs; up to 11

Writes benchmarks/recorded/table5_latency.csv, table5_optimum.csv and table5_machine.json.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from pathlib import Path

from rollmux.experiments import tables
from rollmux.io import write_csv, write_json

HERE = Path(__file__).resolve().parent / "recorded"


def machine() -> dict[str, object]:
    """What the measurements ran on (CPU model, cores, load, Python, time)."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    ) if Path("/proc/cpuinfo").exists() else platform.processor()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_1m": os.getloadavg()[0],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "recorded_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M"),
    }


def main(argv: list[str] | None = None) -> int:
    """Run both halves of Table 5 and write them beside this script."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes (a smoke run)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the job mixes")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder")
    args = parser.parse_args(argv)
    sizes = [100, 2000] if args.quick else [100, 250, 500, 1000, 2000]
    small = [6, 8, 10, 11] if args.quick else [6, 8, 10, 11, 12, 13]
    before = machine()
    latency = tables.table5_latency(sizes, args.seed, decisions=50 if args.quick else 200)
    optimum = tables.table5_optimum(small, args.seed, bruteforce_time_limit_s=300.0)
    write_csv(latency, args.out / "table5_latency.csv")
    write_csv(optimum, args.out / "table5_optimum.csv")
    write_json({**before, "load_average_1m_after": os.getloadavg()[0]},
               args.out / "table5_machine.json")
    print(latency.to_string(index=False))
    print(optimum.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
