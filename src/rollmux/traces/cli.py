"""`rollmux trace validate|generate|adapt|stats`: the trace command line.

Every sub-command returns an exit code and never lets a traceback reach the user:
0 success, 1 invalid input (one located problem per line on stderr), 2 usage or
environment error.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rollmux.traces import adapters, generate
from rollmux.traces.errors import TraceError
from rollmux.traces.loader import FILE_MODE, load_trace, trace_text
from rollmux.traces.stats import stats_table, summary_lines

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
GENERATORS = ("production", "simulation", "microbench")
#: Arrival horizon per adapter when --horizon-h is absent: two weeks (§6.4), 580 h (§6.5).
HORIZON_DEFAULT_H = {"alibaba": 336.0, "philly": 580.0}


def _hardware(args: argparse.Namespace) -> Any:
    """The hardware catalogue named by --hardware (packaged defaults when absent)."""
    from rollmux.hardware import load_hardware

    return load_hardware(getattr(args, "hardware", None))


def _guarded(body: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a command so TraceError, ValueError and OSError become messages and exit codes."""

    def run(args: argparse.Namespace) -> int:
        """Run the command body, converting failures to one-line messages."""
        try:
            return body(args)
        except TraceError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            print(f"{len(exc.problems)} problem(s) found", file=sys.stderr)
            return EXIT_INVALID
        except (ValueError, OSError, KeyError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except Exception as exc:  # last resort: the contract is "no traceback"
            print(f"internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return EXIT_USAGE

    run.__name__ = body.__name__
    run.__doc__ = body.__doc__
    return run


def _write_validated(result: generate.Generated, out: Path, hw: Any) -> None:
    """Write a generated trace via a temp file, validate it with the loader, then os.replace."""
    if out.suffix.lower() != ".csv":
        raise ValueError(f"--out must be a .csv file, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=".csv", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(trace_text(result.jobs, result.comments))
            stream.flush()
            os.fsync(stream.fileno())
        load_trace(temp_name, hw)
        os.chmod(temp_name, FILE_MODE)
        os.replace(temp_name, out)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _report(result: generate.Generated, out: Path) -> None:
    """Print achieved statistics beside the targets and where the trace went."""
    for line in generate.statistics_lines(result):
        print(line)
    print(f"wrote {out} ({len(result.jobs)} jobs)")


@_guarded
def cmd_validate(args: argparse.Namespace) -> int:
    """Validate a trace file; print a summary (exit 0) or one line per problem (exit 1)."""
    hw = _hardware(args)
    jobs = load_trace(args.file, hw)
    for line in summary_lines(str(args.file), jobs, hw):
        print(line)
    return EXIT_OK


@_guarded
def cmd_generate(args: argparse.Namespace) -> int:
    """Generate a synthetic trace (production, simulation or microbench) deterministically."""
    hw = _hardware(args)
    workloads = generate.load_workloads(args.workloads)
    if args.kind == "production":
        result = generate.generate_production(args.seed, hw, workloads)
    elif args.kind == "simulation":
        result = generate.generate_simulation(
            args.seed,
            args.profile,
            hw,
            workloads,
            runtimes_source=args.runtimes,
            philly_path=args.philly_path,
        )
    else:
        result = generate.generate_microbench(args.seed, hw)
    _write_validated(result, args.out, hw)
    _report(result, args.out)
    return EXIT_OK


@_guarded
def cmd_adapt(args: argparse.Namespace) -> int:
    """Adapt a public cluster trace (alibaba or philly) into a rollmux trace."""
    hw = _hardware(args)
    workloads = generate.load_workloads(args.workloads)
    if not Path(args.path).is_file():
        raise ValueError(f"--path {args.path}: file not found")
    horizon_h = args.horizon_h if args.horizon_h is not None else HORIZON_DEFAULT_H[args.source]
    if args.source == "alibaba":
        result = adapters.adapt_alibaba(
            args.path,
            seed=args.seed,
            horizon_h=horizon_h,
            mean_duration_h=args.mean_duration_h,
            profile=args.profile,
            keep=adapters.AlibabaFilter(min_gpus=args.min_gpus),
            hw=hw,
            workloads=workloads,
        )
    else:
        match = None
        if args.mean_duration_h is not None or args.max_duration_h is not None:
            if args.mean_duration_h is None or args.max_duration_h is None:
                raise ValueError("give both --mean-duration-h and --max-duration-h, or neither")
            match = (args.mean_duration_h, args.max_duration_h)
        result = adapters.adapt_philly(
            args.path,
            seed=args.seed,
            jobs=args.jobs,
            horizon_h=horizon_h,
            match=match,
            profile=args.profile,
            hw=hw,
            workloads=workloads,
        )
    _write_validated(result, args.out, hw)
    _report(result, args.out)
    return EXIT_OK


@_guarded
def cmd_stats(args: argparse.Namespace) -> int:
    """Print a trace's statistics beside the paper's (or write them as CSV with --out)."""
    hw = _hardware(args)
    table = stats_table(load_trace(args.file, hw), args.kind, hw)
    if args.out is None:
        print(table.to_string(index=False))
    else:
        from rollmux.traces.loader import atomic_write_text

        atomic_write_text(args.out, table.to_csv(index=False, lineterminator="\n"))
        print(f"wrote {args.out}")
    return EXIT_OK


def _common(parser: argparse.ArgumentParser) -> None:
    """Options every trace sub-command accepts."""
    parser.add_argument(
        "--hardware", type=Path, default=None, help="hardware YAML (default: packaged)"
    )


def _generation_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by generate and adapt."""
    parser.add_argument("--seed", type=int, default=0, help="seed of the numpy Generator")
    parser.add_argument("--out", type=Path, required=True, help="output CSV (written atomically)")
    parser.add_argument(
        "--workloads", type=Path, default=None, help="workload estimates YAML (default: packaged)"
    )
    parser.add_argument(
        "--profile",
        default="mixed",
        help="Table 6 profile: mixed, balanced, rollout-heavy, train-heavy, or e.g. RH-M",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `trace` command (validate, generate, adapt, stats) to a CLI's sub-parsers."""
    trace = subparsers.add_parser("trace", help="validate, generate and adapt job traces")
    commands = trace.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check a trace file against the schema")
    validate.add_argument("file", type=Path)
    _common(validate)
    validate.set_defaults(func=cmd_validate)

    gen = commands.add_parser("generate", help="generate a synthetic trace")
    gen.add_argument("kind", choices=GENERATORS)
    _generation_options(gen)
    gen.add_argument(
        "--runtimes",
        choices=("auto", "csv", "fit"),
        default="auto",
        help="simulation durations: real Philly CSV, committed fit, or csv-if-present",
    )
    gen.add_argument("--philly-path", type=Path, default=None, help="philly_runtime.csv")
    _common(gen)
    gen.set_defaults(func=cmd_generate)

    adapt = commands.add_parser("adapt", help="adapt a public GPU-cluster trace")
    adapt.add_argument("source", choices=("alibaba", "philly"))
    adapt.add_argument("--path", type=Path, required=True, help="the public trace file")
    _generation_options(adapt)
    adapt.add_argument("--horizon-h", type=float, default=None, help="arrival horizon (h)")
    adapt.add_argument("--mean-duration-h", type=float, default=None)
    adapt.add_argument("--max-duration-h", type=float, default=None, help="philly only")
    adapt.add_argument("--min-gpus", type=int, default=2, help="alibaba: smallest pod kept")
    adapt.add_argument("--jobs", type=int, default=300, help="philly: jobs to sample")
    _common(adapt)
    adapt.set_defaults(func=cmd_adapt)

    stats = commands.add_parser("stats", help="trace statistics beside the paper's")
    stats.add_argument("file", type=Path)
    stats.add_argument("--kind", choices=(*GENERATORS, "other"), default="other")
    stats.add_argument("--out", type=Path, default=None)
    _common(stats)
    stats.set_defaults(func=cmd_stats)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (`python -m rollmux.traces.cli trace ...`)."""
    from rollmux.cli import run_standalone

    return run_standalone(register, argv)


if __name__ == "__main__":
    sys.exit(main())
