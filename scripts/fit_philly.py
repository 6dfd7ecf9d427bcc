"""Fit the Philly job-runtime distribution and write the committed fit file.

Usage: python scripts/fit_philly.py [--path ../shared/traces/philly_runtime.csv]
                                    [--out src/rollmux/traces/philly_fit.json]
The fit is a 1001-point quantile table of log runtime over runtimes >= --min-runtime-s
(the simulation generator samples it by inverse CDF when the CSV is absent).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rollmux.traces.philly import (
    RUNTIME_FILE,
    file_sha256,
    fit_runtimes,
    read_runtimes,
    shared_traces_dir,
)
from rollmux.traces.writer import atomic_write_text

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "rollmux" / "traces" / "philly_fit.json"


def main(argv: list[str] | None = None) -> int:
    """Read the runtimes, fit them and write the JSON fit; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=shared_traces_dir() / RUNTIME_FILE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--min-runtime-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    if not args.path.is_file():
        print(f"error: {args.path} not found", file=sys.stderr)
        return 2
    runtimes = read_runtimes(args.path, args.min_runtime_s)
    fit = fit_runtimes(
        runtimes, args.min_runtime_s, f"{RUNTIME_FILE} sha256={file_sha256(args.path)}"
    )
    atomic_write_text(args.out, json.dumps(fit, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: {fit['count']} runtimes, mean {fit['mean_s'] / 3600:.2f} h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
