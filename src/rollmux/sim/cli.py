"""`rollmux simulate`: replay a job trace under a placement policy and write the tables.

    rollmux simulate --trace traces/production-default.csv --policy rollmux
    rollmux simulate --trace T.csv --policy solo-d --fidelity analytic --out results/x

The trace is validated first: an invalid trace prints the loader's problems (one per
line, located by file, row and column) and exits 1 before any work. Output files
(default folder ``results/simulate/trace=<stem>/policy=<name>/seed=<s>/``), each written
atomically, ``summary.json`` last:

* ``phases.csv``: per-phase rows (event fidelity), integer codes (docs/metrics.md);
* ``events.csv``: arrivals with their decisions, completions, kills, regroupings;
* ``timeseries.csv``: provisioned GPUs and hourly cost, a step function of time;
* ``jobs.csv``: per-job iteration times, slowdown and SLO outcome;
* ``config.json``: the resolved configuration; ``summary.json``: the metrics.

Exit codes: 0 success, 1 invalid trace, 2 usage or other input error.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from rollmux.io import write_csv, write_json

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2

#: Float format of the written tables: 10 significant digits keep 0.1 ms over weeks.
FLOAT_FORMAT = "%.10g"

__all__ = ["default_out_dir", "main", "register", "run_simulate", "write_result"]


def default_out_dir(trace: Path, policy: str, seed: int) -> Path:
    """``results/simulate/trace=<stem>/policy=<name>/seed=<s>/``."""
    return Path("results") / "simulate" / f"trace={trace.stem}" / f"policy={policy}" / \
        f"seed={seed}"


def write_result(result: Any, out: Path) -> list[Path]:
    """Write a :class:`SimulationResult`'s files into ``out`` (summary.json last)."""
    written = []
    if len(result.phases):
        written.append(write_csv(result.phases, out / "phases.csv", FLOAT_FORMAT))
    written.append(write_csv(result.events, out / "events.csv", FLOAT_FORMAT))
    written.append(write_csv(result.timeseries, out / "timeseries.csv", FLOAT_FORMAT))
    written.append(write_csv(result.jobs, out / "jobs.csv", FLOAT_FORMAT))
    written.append(write_json(result.config, out / "config.json"))
    written.append(write_json(result.summary, out / "summary.json"))
    return written


def _sha256(path: Path) -> str:
    """Hex digest of a file's bytes (recorded in config.json)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_simulate(args: argparse.Namespace) -> int:
    """Validate the trace, replay it, write the outputs; returns an exit code."""
    from rollmux.hardware import load_hardware
    from rollmux.placement import policy_names
    from rollmux.sim.drift import read_failures_csv
    from rollmux.sim.engine import SimConfig, simulate_trace
    from rollmux.traces.errors import TraceError
    from rollmux.traces.loader import load_trace

    try:
        hw = load_hardware(args.hardware)
        if args.policy not in policy_names():
            raise ValueError(f"unknown policy {args.policy!r}; valid names: "
                             f"{', '.join(policy_names())}")
        if args.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        try:
            jobs = load_trace(args.trace, hw)
        except TraceError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            print(f"{len(exc.problems)} problem(s) found; nothing simulated", file=sys.stderr)
            return EXIT_INVALID
        failures = read_failures_csv(args.failures) if args.failures else ()
        config = SimConfig(
            fidelity=args.fidelity,
            stochastic=not args.deterministic,
            migration=not args.no_migration,
            drift=args.drift,
            sync=args.sync,
            record_phases=not args.no_phases,
            failures=failures,
            **({"regroup_interval_s": args.regroup_interval_h * 3600.0,
                "policy_options": (("regroup_interval_s", args.regroup_interval_h * 3600.0),)}
               if args.regroup_interval_h is not None else {}),
        )
        out = args.out or default_out_dir(Path(args.trace), args.policy, args.seed)
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc=f"simulate {args.policy}", unit="job",
                   file=sys.stderr, disable=args.quiet or not sys.stderr.isatty())
        try:
            result = simulate_trace(jobs, args.policy, hw, args.seed, config,
                                    progress=bar.update)
        finally:
            bar.close()
        result.config["trace"] = str(args.trace)
        result.config["trace_sha256"] = _sha256(Path(args.trace))
        if args.failures:
            result.config["failures_file"] = str(args.failures)
        write_result(result, Path(out))
    except (ValueError, OSError) as exc:
        print(f"rollmux: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet:
        s = result.summary
        print(f"{args.policy}: {s['jobs_completed']}/{s['jobs']} jobs completed, "
              f"${s['cost_usd_per_h']:.1f}/h average, total ${s['total_cost_usd']:.0f}, "
              f"SLO attainment {s['slo_attainment']:.3f}; wrote {out}")
    return EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` command to a CLI's sub-parsers."""
    p = subparsers.add_parser("simulate", help="replay a job trace under a placement policy")
    p.add_argument("--trace", type=Path, required=True, help="trace CSV (validated first)")
    p.add_argument("--policy", required=True, help="placement policy name, e.g. rollmux")
    p.add_argument("--seed", type=int, default=0, help="seed of the phase draws and policy")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default results/simulate/trace=../policy=../seed=..)")
    p.add_argument("--fidelity", choices=("event", "analytic"), default="event",
                   help="per-phase events or steady-state rates")
    p.add_argument("--no-migration", action="store_true", help="disable long-tail migration")
    p.add_argument("--drift", default="none",
                   help="drift: none, Increasing, Decreasing, Mixed or a template "
                        "such as increasing-1.0")
    p.add_argument("--deterministic", action="store_true",
                   help="expected phase times instead of sampled ones (event fidelity)")
    p.add_argument("--sync", choices=("topology", "flat"), default="topology",
                   help="weight sync: topology-aware (default) or flat")
    p.add_argument("--failures", type=Path, default=None,
                   help="CSV job_id,kill_at_s,resubmit_at_s of jobs to kill and resubmit")
    p.add_argument("--regroup-interval-h", type=float, default=None,
                   help="re-solve period of regrouping policies (default: the policy's)")
    p.add_argument("--no-phases", action="store_true", help="do not keep the per-phase table")
    p.add_argument("--hardware", type=Path, default=None, help="hardware YAML")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    p.set_defaults(func=run_simulate)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m rollmux.sim.cli simulate ...``)."""
    from rollmux.cli import run_standalone

    return run_standalone(register, argv)


if __name__ == "__main__":
    sys.exit(main())
