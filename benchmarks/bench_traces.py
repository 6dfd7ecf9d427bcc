"""Benchmark: validate and load a 100,000-job trace (wall time and peak RSS).

Usage: python benchmarks/bench_traces.py [--jobs 100000] [--seed 0]
Builds the trace by tiling the production generator's jobs with fresh ids and arrivals,
writes it to a temporary folder, then times read_trace_frame and load_trace in a fresh
child process each (so peak RSS is the loader's alone). Budget: 5 s and 1 GB each.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 5.0
BUDGET_MB = 1024.0


VARIANTS = {
    "tiled": "tiled from the production trace",
    "phases": "every job its own direct phase times (like simulation traces)",
    "configs": "every job its own configuration (worst case: one RLJob validation per row)",
}


def build_trace(path: Path, jobs: int, seed: int, variant: str = "tiled") -> None:
    """Write a `jobs`-row trace tiled from the seeded production trace (see VARIANTS)."""
    from rollmux.traces.generate import generate_production
    from rollmux.traces.loader import write_trace

    base = generate_production(seed).jobs
    tiled = [
        dataclasses.replace(
            base[i % len(base)],
            job_id=f"bench-{i:06d}",
            arrival_s=float(i * 10),
            **_variant_fields(variant, i),
        )
        for i in range(jobs)
    ]
    write_trace(tiled, path)


def _variant_fields(variant: str, i: int) -> dict[str, float | int]:
    """Per-job field overrides that make rows distinct in the way the variant names."""
    if variant == "phases":
        return {"train_s": 100.0 + i * 1e-3, "train_max_s": 200.0 + i * 1e-3}
    if variant == "configs":
        return {"prompts_per_iter": 64 + i}
    return {}


def measure(path: str, mode: str) -> dict[str, float]:
    """Time one load in this process; peak RSS from getrusage (KiB on Linux)."""
    start = time.perf_counter()
    # Imports (numpy, pandas, scipy via the job model) are timed apart from the load.
    import rollmux.jobs
    import rollmux.phasetimes  # noqa: F401
    from rollmux.traces.loader import load_trace, read_trace_frame

    import_s = time.perf_counter() - start
    start = time.perf_counter()
    result = read_trace_frame(path) if mode == "frame" else load_trace(path)
    wall_s = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {
        "mode": mode,
        "rows": len(result),
        "import_s": import_s,
        "wall_s": wall_s,
        "peak_rss_mb": peak_mb,
    }


def main(argv: list[str] | None = None) -> int:
    """Build the trace, measure both load modes in child processes, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="tiled")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*args.child)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.csv"
        build_trace(path, args.jobs, args.seed, args.variant)
        size_mb = path.stat().st_size / 1e6
        print(
            f"machine: {platform.processor() or platform.machine()}, "
            f"{platform.python_implementation()} {platform.python_version()}, "
            f"{platform.system()} {platform.release()}"
        )
        print(f"trace: {args.jobs} jobs ({VARIANTS[args.variant]}), {size_mb:.1f} MB")
        failed = False
        for mode in ("frame", "jobs"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(path), mode],
                check=True,
                capture_output=True,
                text=True,
            )
            result = json.loads(out.stdout)
            ok = result["wall_s"] <= BUDGET_S and result["peak_rss_mb"] <= BUDGET_MB
            failed |= not ok
            print(
                f"{mode:>5}: {result['rows']} rows, {result['wall_s']:.2f} s "
                f"(+ {result['import_s']:.2f} s imports) "
                f"(budget {BUDGET_S:g} s), peak RSS {result['peak_rss_mb']:.0f} MB "
                f"(budget {BUDGET_MB:g} MB) {'OK' if ok else 'OVER BUDGET'}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
