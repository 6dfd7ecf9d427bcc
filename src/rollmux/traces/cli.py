"""`rollmux trace validate|generate|adapt|stats|lengths`: the trace command line.

Failures go through the one error path of :func:`rollmux.cliutil.run`: an invalid trace
prints one located problem per line (`rollmux: error: file:line: row R, column C: ...`)
and exits 1; a bad argument exits 2 (exit statuses: :class:`rollmux.errors.ExitStatus`).
Output files are checked when the arguments are parsed and written atomically, after the
loader has validated what was generated.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rollmux.cliformat import add_format, print_json, print_table, wrap_line
from rollmux.cliutil import (
    add_hardware,
    add_quiet,
    add_seed,
    command_main,
    elapsed_bar,
    input_file,
    integer,
    number,
    output_file,
)
from rollmux.errors import ExitStatus, UsageError, printable
from rollmux.io import atomic_write, write_text

if TYPE_CHECKING:
    # The trace machinery (pandas, numpy, scipy, jsonschema) loads inside the commands,
    # so `rollmux trace ... --help` answers at once (README, "The command line").
    from rollmux.traces import generate

GENERATORS = ("production", "simulation", "microbench")
#: Table 6 profile of `trace generate simulation` and `trace adapt` without --profile.
PROFILE_DEFAULT = "mixed"
#: Arrival horizon per adapter when --horizon-h is absent: two weeks (§6.4), 580 h (§6.5).
HORIZON_DEFAULT_H = {"alibaba": 336.0, "philly": 580.0}
#: Longest arrival horizon or job duration accepted by the adapters: a year.
HOURS_MAX = 8784.0
#: Most jobs an adapter samples or a generator draws.
JOBS_MAX = 1_000_000
#: Largest arrival-rate multiplier of `trace generate` (arrivals a second apart at most
#: about this many times closer than the paper's).
RATE_SCALE_MAX = 1_000_000.0


def _hardware(args: argparse.Namespace) -> Any:
    """The hardware catalogue named by --hardware (packaged defaults when absent)."""
    from rollmux.hardware import load_hardware

    return load_hardware(getattr(args, "hardware", None))


def _csv_output(text: str) -> Path:
    """Argument type of a generated trace: a writable path ending in .csv."""
    path = output_file(text)
    if path.suffix.lower() != ".csv":
        raise argparse.ArgumentTypeError(f"{text}: a trace file must end in .csv")
    return path


def _write_validated(result: generate.Generated, out: Path, hw: Any) -> None:
    """Write a generated trace to a temporary file, validate it with the loader, rename it."""

    def write(tmp: Path) -> None:
        """The trace text, then the loader's full validation of the written bytes."""
        from rollmux.traces.loader import load_trace
        from rollmux.traces.writer import trace_text

        tmp.write_text(trace_text(result.jobs, result.comments), encoding="utf-8")
        load_trace(tmp, hw)

    atomic_write(out, write)


def _report(result: generate.Generated, out: Path, fmt: str = "table") -> None:
    """Print achieved statistics beside the targets and where the trace went.

    ``table``: aligned lines and the ``wrote`` line on stdout; ``csv``/``json``: the
    statistics table alone on stdout (for programs) and the ``wrote`` line on stderr.
    """
    from rollmux.traces import generate

    wrote = f"wrote {printable(out)} ({len(result.jobs)} jobs)"
    if fmt == "table":
        for line in generate.statistics_lines(result):
            print(printable(line))
        print(wrote)
        return
    print_table(generate.statistics_table(result), fmt)
    print(f"rollmux: {wrote}", file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate a trace file; print a summary (exit 0) or one line per problem (exit 1)."""
    from rollmux.traces.loader import load_trace
    from rollmux.traces.stats import summary_lines

    hw = _hardware(args)
    jobs = load_trace(args.file, hw)
    for line in summary_lines(str(args.file), jobs, hw):
        print(wrap_line(printable(line)))
    return ExitStatus.OK


def cmd_generate(args: argparse.Namespace) -> int:
    """Generate a synthetic trace (production, simulation or microbench) deterministically."""
    with elapsed_bar(f"trace generate {args.kind}", quiet=args.quiet):
        result, hw = _generated(args)
        _write_validated(result, args.out, hw)
    _report(result, args.out, args.format)
    return ExitStatus.OK


def _generated(args: argparse.Namespace) -> tuple[generate.Generated, Any]:
    """The trace `trace generate` asks for, and the hardware it was generated for."""
    from rollmux.traces import generate

    if args.kind == "microbench" and (args.jobs is not None or args.rate_scale != 1):
        raise UsageError("--jobs and --rate-scale apply to production and simulation "
                         "traces (microbench has one job per type)")
    if args.kind != "simulation" and args.profile is not None:
        raise UsageError(f"--profile applies to simulation traces and `trace adapt` only "
                         f"(a {args.kind} trace has the paper's own job mix)")
    hw = _hardware(args)
    workloads = generate.load_workloads(args.workloads)
    if args.kind == "production":
        result = generate.generate_production(args.seed, hw, workloads, jobs=args.jobs,
                                              rate_scale=args.rate_scale)
    elif args.kind == "simulation":
        result = generate.generate_simulation(
            args.seed,
            args.profile or PROFILE_DEFAULT,
            hw,
            workloads,
            runtimes_source=args.runtimes,
            philly_path=args.philly_path,
            jobs=args.jobs,
            rate_scale=args.rate_scale,
        )
    else:
        result = generate.generate_microbench(args.seed, hw)
    return result, hw


def cmd_adapt(args: argparse.Namespace) -> int:
    """Adapt a public cluster trace (alibaba or philly) into a rollmux trace."""
    match = None
    if args.source == "alibaba" and args.max_duration_h is not None:
        raise UsageError("--max-duration-h applies to `trace adapt philly` only")
    if args.source == "philly" and (args.mean_duration_h is not None
                                    or args.max_duration_h is not None):
        if args.mean_duration_h is None or args.max_duration_h is None:
            raise UsageError("give both --mean-duration-h and --max-duration-h, or neither")
        if not args.mean_duration_h < args.max_duration_h:
            raise UsageError(f"--mean-duration-h {args.mean_duration_h:g} h must be below "
                             f"--max-duration-h {args.max_duration_h:g} h")
        match = (args.mean_duration_h, args.max_duration_h)
    with elapsed_bar(f"trace adapt {args.source}", quiet=args.quiet):
        hw = _hardware(args)
        result = _adapted(args, hw, match)
        _write_validated(result, args.out, hw)
    _report(result, args.out, args.format)
    return ExitStatus.OK


def _adapted(args: argparse.Namespace, hw: Any, match: tuple[float, float] | None
             ) -> generate.Generated:
    """The trace `trace adapt` asks for."""
    from rollmux.traces import adapters, generate

    workloads = generate.load_workloads(args.workloads)
    horizon_h = args.horizon_h if args.horizon_h is not None else HORIZON_DEFAULT_H[args.source]
    if args.source == "alibaba":
        result = adapters.adapt_alibaba(
            args.path,
            seed=args.seed,
            horizon_h=horizon_h,
            mean_duration_h=args.mean_duration_h,
            profile=args.profile or PROFILE_DEFAULT,
            keep=adapters.AlibabaFilter(min_gpus=args.min_gpus),
            hw=hw,
            workloads=workloads,
        )
    else:
        result = adapters.adapt_philly(
            args.path,
            seed=args.seed,
            jobs=args.jobs,
            horizon_h=horizon_h,
            match=match,
            profile=args.profile or PROFILE_DEFAULT,
            hw=hw,
            workloads=workloads,
        )
    return result


def cmd_stats(args: argparse.Namespace) -> int:
    """Print a trace's statistics beside the paper's (or write them as CSV with --out)."""
    from rollmux.traces.loader import load_trace
    from rollmux.traces.stats import stats_table

    hw = _hardware(args)
    table = stats_table(load_trace(args.file, hw), args.kind, hw)
    if args.out is None:
        print_table(table, args.format)
    else:
        write_text(args.out, table.to_csv(index=False, lineterminator="\n"))
        print(f"wrote {printable(args.out)}")
    return ExitStatus.OK


def _folder(text: str) -> Path:
    """Argument type: an existing folder (a PolyTrace workload folder or one above)."""
    path = Path(text)
    if not text or "\x00" in text:
        raise argparse.ArgumentTypeError("expected a folder path")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: {'not a folder' if path.exists() else 'no such folder'}")
    return path


def cmd_lengths(args: argparse.Namespace) -> int:
    """Per-step response-length statistics of PolyTrace folders and the length model's fit."""
    from rollmux.traces import polytrace

    hw = _hardware(args)
    workloads = polytrace.read_lengths(args.path, cap=args.cap)
    steps = polytrace.step_table(workloads)
    fit = polytrace.fit_table(workloads, hw.workload.response_len_sigma,
                              hw.workload.mean_response_fraction)
    notes = []
    for w in workloads:
        note = f"{w.name}: {w.format}, {len(w.steps)} step(s), cap {w.cap_source}"
        if w.validation_rows:
            note += f", {w.validation_rows} validation row(s) skipped"
        if w.ignored_files:
            note += f", not lengths: {', '.join(w.ignored_files)}"
        notes.append(note)
    printed: dict[str, Any] = {"notes": notes}
    if args.format != "json":
        for note in notes:
            print(printable(f"# {note}"))
    for table, out, what in ((steps, args.out, "per-step statistics"),
                             (fit, args.fit_out, "length-model fit")):
        if out is None:
            if args.format == "json":  # one JSON document: the notes and both tables
                printed[what] = table.dropna(axis=1, how="all")
                continue
            print(f"# {what}")
            print_table(table.dropna(axis=1, how="all"), args.format)
        else:
            write_text(out, table.to_csv(index=False, lineterminator="\n", float_format="%.6g"))
            if args.format != "json":
                print(f"wrote {printable(out)} ({what})")
    if args.format == "json":
        print_json(printed)
    return ExitStatus.OK


def _common(parser: argparse.ArgumentParser) -> None:
    """Options every trace sub-command accepts."""
    add_hardware(parser)


def _generation_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by generate and adapt."""
    add_seed(parser, "seed of the numpy Generator")
    parser.add_argument("--out", type=_csv_output, required=True,
                        help="output CSV (validated, then written atomically)")
    parser.add_argument(
        "--workloads", type=input_file, default=None,
        help="workload estimates YAML (default: packaged)"
    )
    parser.add_argument(
        "--profile",
        default=None,
        help=f"Table 6 profile: mixed, balanced, rollout-heavy, train-heavy, or e.g. RH-M "
             f"(default {PROFILE_DEFAULT}; simulation traces and adapt only)",
    )
    add_format(parser, "the statistics table (csv and json: the 'wrote' line goes to stderr)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `trace` command (validate, generate, adapt, stats, lengths) to sub-parsers."""
    trace = subparsers.add_parser("trace", help="validate, generate and adapt job traces")
    commands = trace.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check a trace file against the schema")
    validate.add_argument("file", type=input_file)
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
    gen.add_argument("--philly-path", type=input_file, default=None, help="philly_runtime.csv")
    gen.add_argument("--jobs", type=integer(1, JOBS_MAX), default=None,
                     help="jobs to generate (default: the paper's, 200 or 300); the "
                          "arrival horizon grows with them, the statistics stay")
    gen.add_argument("--rate-scale", type=number(above=0.0, high=RATE_SCALE_MAX), default=1.0,
                     help="arrivals per hour x this (default 1: the paper's rate); "
                          "the mean inter-arrival time is divided by it")
    _common(gen)
    add_quiet(gen)
    gen.set_defaults(func=cmd_generate)

    adapt = commands.add_parser("adapt", help="adapt a public GPU-cluster trace")
    adapt.add_argument("source", choices=("alibaba", "philly"))
    adapt.add_argument("--path", type=input_file, required=True, help="the public trace file")
    _generation_options(adapt)
    hours = number(above=0.0, high=HOURS_MAX)
    adapt.add_argument("--horizon-h", type=hours, default=None,
                       help="arrival horizon (h; default 336 for alibaba, 580 for philly)")
    adapt.add_argument("--mean-duration-h", type=hours, default=None,
                       help="mean job duration (h)")
    adapt.add_argument("--max-duration-h", type=hours, default=None,
                       help="philly only: longest job duration (h), with --mean-duration-h")
    adapt.add_argument("--min-gpus", type=integer(1, 1_000_000), default=2,
                       help="alibaba: smallest pod kept (GPUs)")
    adapt.add_argument("--jobs", type=integer(1, JOBS_MAX), default=300,
                       help="philly: jobs to sample")
    _common(adapt)
    add_quiet(adapt)
    adapt.set_defaults(func=cmd_adapt)

    stats = commands.add_parser("stats", help="trace statistics beside the paper's")
    stats.add_argument("file", type=input_file)
    stats.add_argument("--kind", choices=(*GENERATORS, "other"), default="other")
    stats.add_argument("--out", type=output_file, default=None,
                       help="CSV to write (default: print a table)")
    add_format(stats, "the table (without --out)")
    _common(stats)
    stats.set_defaults(func=cmd_stats)

    lengths = commands.add_parser(
        "lengths", help="per-step response lengths of PolyTrace folders and our model's fit")
    lengths.add_argument("path", type=_folder,
                         help="a PolyTrace workload folder (packed_lengths_step_N or "
                              "multiturn_workload_step_N .jsonl[.gz] files) or a folder "
                              "above several")
    lengths.add_argument("--out", type=output_file, default=None,
                         help="CSV of one row per training step (default: print a table)")
    lengths.add_argument("--fit-out", type=output_file, default=None,
                         help="CSV of the length model's fit per workload (default: print)")
    add_format(lengths, "the tables (without --out/--fit-out; json: one object holding "
                        "the notes and each printed table)")
    lengths.add_argument("--cap", type=number(above=0.0, high=1e9), default=None,
                         help="response cap (tokens) of packed workloads, whose records do "
                              "not carry it (default: inferred, docs/stochastic.md P0)")
    _common(lengths)
    lengths.set_defaults(func=cmd_lengths)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m rollmux.traces.cli trace ...``)."""
    return command_main(register, (), argv)


if __name__ == "__main__":
    sys.exit(main())
