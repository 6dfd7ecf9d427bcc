"""The ``rollmux`` command line.

    rollmux meta-iteration --rollout 10 2 --train 2 10     exact round-robin period
    rollmux model microbench --out results/models/microbench.csv
    rollmux gantt --job-types A A --out results/gantt/phases.csv
    rollmux theorem1 --instances 200 --seed 0 --out summary.csv
    rollmux theorem1-worst-case --sizes 2 3 4 --out worst_case.csv
    rollmux calibration                                    phase-model calibration table
    rollmux bench placement --jobs 2000 --seed 0           RollMux decision latency (JSON)
    rollmux bench optimum --jobs 13 --seed 0               exact offline optimum (JSON)
    rollmux trace validate|generate|adapt|stats ...        job traces
    rollmux simulate --trace FILE --policy NAME [--seed S] [--out DIR]

Every command goes through :func:`main`, the one place where failures become messages:
one line ``rollmux: error: ...`` naming the argument (or, for an invalid input file, one
such line per problem, located by file, line, row and column) and an exit status of
:class:`rollmux.errors.ExitStatus`; no traceback reaches the user. Output paths are
checked when the arguments are parsed, before any work; long commands draw a progress
bar on a terminal (``--quiet`` turns it off).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from rollmux import __version__
from rollmux.cliutil import (
    SEED_MAX,
    ArgumentParser,
    add_quiet,
    elapsed_bar,
    input_file,
    integer,
    number,
    output_file,
    progress_bar,
    updatable_file,
)
from rollmux.errors import (
    EXIT_NAMES,
    ExitStatus,
    InputFileError,
    UsageError,
    os_reason,
    printable,
)

#: Largest job, instance or decision count accepted by the commands that take one.
COUNT_MAX = 1_000_000
#: Longest phase duration `meta-iteration` accepts (s): 1e9 s, about 32 years.
DURATION_MAX_S = 1e9


# --------------------------------------------------------------------------- reporting


def error(message: str) -> None:
    """Print one ``rollmux: error: ...`` line on stderr (user text escaped)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    print(f"rollmux: error: {printable('; '.join(lines) or message)}", file=sys.stderr)


def say(message: str) -> None:
    """Print one line of normal output on stdout (user text escaped)."""
    print(printable(message))


def report(exc: BaseException) -> ExitStatus:
    """Print what went wrong and return the exit status (the one error path)."""
    if isinstance(exc, InputFileError):
        for problem in exc.problems:
            error(str(problem))
        if len(exc.problems) > 1:
            files = sorted({p.file for p in exc.problems})
            error(f"{len(exc.problems)} problems in {', '.join(files)}")
        return ExitStatus.INVALID_INPUT
    if isinstance(exc, BrokenPipeError):  # the reader went away (`rollmux ... | head`)
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitStatus.OK
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else None
        error(f"{where}: {os_reason(exc)}" if where is not None else os_reason(exc))
        return ExitStatus.OS_ERROR
    if isinstance(exc, MemoryError):
        error("out of memory")
        return ExitStatus.OS_ERROR
    if isinstance(exc, OverflowError):
        error("a number overflowed: an input value is far outside its plausible range "
              "(trace fields: traces/README.md)")
        return ExitStatus.USAGE
    if isinstance(exc, ValueError):
        error(str(exc))
        return ExitStatus.USAGE
    if os.environ.get("ROLLMUX_TRACEBACK"):
        traceback.print_exception(exc)
    error(f"internal error ({type(exc).__name__}: {exc}); this is a bug, please report the "
          f"command line (ROLLMUX_TRACEBACK=1 shows the traceback)")
    return ExitStatus.INTERNAL


@contextmanager
def _one_interrupt() -> Iterator[None]:
    """Let the first Ctrl-C raise KeyboardInterrupt and ignore further ones while the
    interrupted work cleans up (its temporary files), so no second traceback appears."""

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rollmux`` command: run it, return its exit status."""
    with _one_interrupt():
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            return int(args.func(args) or 0)
        except SystemExit as exc:  # --help and --version
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except KeyboardInterrupt:
            return ExitStatus.INTERRUPTED
        except Exception as exc:
            return report(exc)


def module_main(command: Sequence[str], argv: Sequence[str] | None = None) -> int:
    """``python -m rollmux.<module>``: the ``rollmux`` command ``command`` with ``argv``."""
    return main([*command, *(sys.argv[1:] if argv is None else argv)])


# --------------------------------------------------------------------------- commands


def _node_list(text: str, option: str) -> list[object]:
    """Parse ``0,1,0`` or ``0+1,2`` (``+`` joins the nodes of one job) into pinnings."""
    out: list[object] = []
    for item in text.split(","):
        parts: list[object] = []
        for part in item.split("+"):
            name = part.strip()
            if not name:
                raise UsageError(f"{option} {text!r}: empty node name (expected e.g. 0,1,0+1)")
            parts.append(int(name) if name.isascii() and name.isdigit() else name)
        out.append(tuple(parts) if len(parts) > 1 else parts[0])
    return out


def _order(text: str) -> list[int]:
    """Parse ``--order 2,0,1`` into job indices."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--order {text!r}: expected job indices such as 2,0,1") from None


def cmd_meta_iteration(args: argparse.Namespace) -> int:
    """Print the exact steady-state meta-iteration time of a round-robin group."""
    from rollmux import meta_iteration_time

    period = meta_iteration_time(
        args.rollout,
        args.train,
        rollout_node=_node_list(args.rollout_node, "--rollout-node") if args.rollout_node
        else None,
        train_node=_node_list(args.train_node, "--train-node") if args.train_node else None,
        order=_order(args.order) if args.order else None,
    )
    t_cycle = max(r + t for r, t in zip(args.rollout, args.train, strict=False))
    print(json.dumps({"meta_iteration_s": period, "t_cycle_s": t_cycle}))
    return 0


def _write_or_print(table: Any, out: Path | None, what: str, float_format: str = "%.6g"
                    ) -> None:
    """Write ``table`` as CSV to ``out`` atomically, or print it as CSV on stdout."""
    from rollmux.io import write_csv

    if out is None:
        sys.stdout.write(table.to_csv(index=False, float_format=float_format,
                                      lineterminator="\n"))
    else:
        write_csv(table, out, float_format=float_format)
        say(f"wrote {len(table)} {what} to {out}")


def cmd_microbench(args: argparse.Namespace) -> int:
    """Write (or print) the closed-form micro-benchmark table."""
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv
    from rollmux.microbench import scenario_table

    table = scenario_table(args.scenarios, load_hardware(args.hardware))
    if args.out:
        write_csv(table, args.out)
        say(f"wrote {len(table)} rows to {args.out}")
    else:
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


def cmd_gantt(args: argparse.Namespace) -> int:
    """Write the Solo-D versus woven per-phase timelines of two job types."""
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv
    from rollmux.microbench import gantt_phases

    phases = gantt_phases(args.job_types, args.iterations, load_hardware(args.hardware))
    write_csv(phases, args.out)
    say(f"wrote {len(phases)} phase rows to {args.out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Run one benchmark and print its result as one JSON object."""
    status = ExitStatus.OK
    if args.what == "placement":
        from rollmux.placement.bench import bench_placement

        if args.time_limit_s is not None:
            raise UsageError("--time-limit-s applies to `bench optimum` only")
        with progress_bar("bench placement", args.jobs + args.decisions, "job",
                          args.quiet) as bar:
            result = bench_placement(args.jobs, args.seed, decisions=args.decisions,
                                     progress=bar.update)
    else:
        from rollmux.placement.optimum import BRUTEFORCE_TIME_LIMIT_S, bench_optimum

        limit = args.time_limit_s
        with elapsed_bar("bench optimum", limit, args.quiet):
            result = bench_optimum(
                args.jobs, args.seed, time_limit_s=limit,
                bruteforce_time_limit_s=BRUTEFORCE_TIME_LIMIT_S if limit is None else limit,
            )
        missed = []
        if not result.get("proven_optimal", True):
            missed.append("the optimum is not proven (best plan found so far printed)")
        if result.get("bruteforce_finished") is False:
            missed.append("brute force did not finish (its fields are null)")
        if missed:
            used = limit if limit is not None else result.get("bruteforce_time_limit_s")
            error(f"time limit of {used:g} s reached: {'; '.join(missed)}")
            status = ExitStatus.TIME_LIMIT
    print(json.dumps(result, sort_keys=True, default=str))
    return status


def cmd_theorem1(args: argparse.Namespace) -> int:
    """Write (or print) the Theorem 1 boundary map, optionally its instance and gap tables."""
    from rollmux.theorem1.boundary import FAMILIES, instance_table, order_search_gap, summarise

    total = args.instances * len(FAMILIES) + (args.gap_instances if args.gap_out else 0)
    with progress_bar("theorem1", total, "instance", args.quiet) as bar:
        table = instance_table(args.instances, args.seed, progress=bar.update)
        gap = order_search_gap(args.gap_instances, args.seed, progress=bar.update) \
            if args.gap_out is not None else None
    _write_or_print(summarise(table), args.out, "family rows")
    if args.instances_out is not None:
        _write_or_print(table.drop(columns=["_size"]), args.instances_out, "instance rows")
    if gap is not None:
        _write_or_print(gap, args.gap_out, "gap rows")
    return 0


def cmd_theorem1_worst_case(args: argparse.Namespace) -> int:
    """Write (or print) round-robin's worst case per family and size, and the check."""
    from rollmux.theorem1.worst_case import BUDGET_FLAGS, Budget, check_table, worst_case_table

    budget = Budget.from_settings({name: getattr(args, name) for _, name, _ in BUDGET_FLAGS})
    table = worst_case_table(args.families, args.sizes, args.max_duration, budget, args.seed,
                             progress=not args.quiet)
    check = None
    if args.check_out is not None:
        check = check_table(args.families, args.check_sizes, args.check_max_duration, budget,
                            args.seed, progress=not args.quiet)
    _write_or_print(table, args.out, "cells", float_format="%.9g")
    if check is not None:
        _write_or_print(check, args.check_out, "check rows", float_format="%.9g")
    return 0


def cmd_calibration(args: argparse.Namespace) -> int:
    """Print the calibration table as Markdown, or refresh the tables of a doc file."""
    from rollmux.calibration import anchors, calibration_markdown, doc_tables, fill_doc
    from rollmux.io import write_text

    with progress_bar("calibration", len(anchors()), "anchor", args.quiet) as bar:
        if args.update_doc is None:
            sys.stdout.write(calibration_markdown(progress=bar.update))
            return 0
        try:
            text = args.update_doc.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"--update-doc {args.update_doc}: not UTF-8 text") from None
        try:
            filled = fill_doc(text, doc_tables(progress=bar.update))
        except ValueError as exc:
            raise UsageError(f"--update-doc {args.update_doc}: {exc}") from None
    write_text(args.update_doc, filled)
    say(f"updated {args.update_doc}")
    return 0


# --------------------------------------------------------------------------- the parser


def _seed(parser: argparse.ArgumentParser, help_text: str = "seed of the random draws"
          ) -> None:
    """The ``--seed`` option (an integer 0..2^32-1, default 0)."""
    parser.add_argument("--seed", type=integer(0, SEED_MAX), default=0, help=help_text)


def _hardware(parser: argparse.ArgumentParser) -> None:
    """The ``--hardware`` option (a defaults YAML instead of the packaged one)."""
    parser.add_argument("--hardware", type=input_file, help="defaults YAML to use instead of ours")


#: Ranges of the worst-case search's budget flags other than 1..COUNT_MAX (the schema's).
_BUDGET_RANGES = {"max_multiplicity": (1, 4), "optimizer_generations": (0, COUNT_MAX),
                  "polish_evaluations": (0, COUNT_MAX)}


def _add_theorem1(sub: argparse._SubParsersAction) -> None:
    """The ``theorem1`` and ``theorem1-worst-case`` commands."""
    from rollmux.theorem1.boundary import FAMILIES
    from rollmux.theorem1.worst_case import BUDGET_FLAGS, Budget

    boundary = sub.add_parser(
        "theorem1", help="Theorem 1 boundary map (see docs/theorem1.md)",
        description="Seeded random small groups per family, round-robin against the "
                    "exhaustive optimum; prints the summary CSV unless --out is given.")
    boundary.add_argument("--instances", type=integer(1, COUNT_MAX), default=100,
                          help="random instances per family (default 100, about 10 s)")
    _seed(boundary)
    boundary.add_argument("--out", type=output_file, default=None,
                          help="summary CSV to write (default: print it on stdout)")
    boundary.add_argument("--instances-out", type=output_file, default=None,
                          help="per-instance CSV")
    boundary.add_argument("--gap-out", type=output_file, default=None,
                          help="order-search gap CSV")
    boundary.add_argument("--gap-instances", type=integer(1, COUNT_MAX), default=300,
                          help="instances for the gap table (default 300)")
    add_quiet(boundary)
    boundary.set_defaults(func=cmd_theorem1)

    worst = sub.add_parser(
        "theorem1-worst-case",
        help="round-robin's worst case per family and group size (see docs/theorem1.md)",
        description="Adversarial search for the largest ratio best schedule / round-robin; "
                    "prints the CSV unless --out is given.")
    worst.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    worst.add_argument("--sizes", nargs="+", type=integer(2, 8), default=[2, 3, 4, 5, 6],
                       help="group sizes (2-8)")
    worst.add_argument("--max-duration", type=integer(1, 100), default=9,
                       help="durations 1..D s (default 9)")
    defaults = Budget()
    for flag, name, help_text in BUDGET_FLAGS:
        low, high = _BUDGET_RANGES.get(name, (1, COUNT_MAX))
        worst.add_argument(flag, type=integer(low, high), dest=name,
                           default=getattr(defaults, name),
                           help=f"{help_text} ({low}-{high}, default {getattr(defaults, name)})")
    _seed(worst)
    worst.add_argument("--out", type=output_file, default=None,
                       help="worst-case CSV to write (default: print it on stdout)")
    worst.add_argument("--check-out", type=output_file, default=None,
                       help="exhaustive check CSV")
    worst.add_argument("--check-sizes", nargs="+", type=integer(2, 3), default=[2],
                       help="group sizes of the exhaustive check (2-3)")
    worst.add_argument("--check-max-duration", type=integer(1, 9), default=3,
                       help="durations 1..D s of the exhaustive check (default 3)")
    add_quiet(worst)
    worst.set_defaults(func=cmd_theorem1_worst_case)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rollmux`` command."""
    parser = ArgumentParser(
        prog="rollmux",
        description="Trace-driven benchmark and reproduction harness for RollMux (Weave).",
        epilog="exit status: " + ", ".join(f"{int(s)} {EXIT_NAMES[s]}" for s in ExitStatus)
        + " (README.md, 'The command line')",
    )
    parser.add_argument("--version", action="version", version=f"rollmux {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    meta = sub.add_parser(
        "meta-iteration", help="exact steady-state meta-iteration time of a group"
    )
    duration = number(above=0.0, high=DURATION_MAX_S)
    meta.add_argument("--rollout", type=duration, nargs="+", required=True,
                      help="rollout s per job")
    meta.add_argument("--train", type=duration, nargs="+", required=True,
                      help="training s per job")
    meta.add_argument("--rollout-node", help="rollout node per job, e.g. 0,1,0+1")
    meta.add_argument("--train-node", help="training node per job, e.g. 0,0,0")
    meta.add_argument("--order", help="round-robin job order, e.g. 2,0,1")
    meta.set_defaults(func=cmd_meta_iteration)

    model = sub.add_parser("model", help="closed-form models").add_subparsers(
        dest="model_command", required=True, metavar="MODEL"
    )
    micro = model.add_parser("microbench", help="micro-benchmark scenarios in closed form")
    micro.add_argument("--scenarios", nargs="+", default=["temporal", "train", "spatial"])
    _hardware(micro)
    micro.add_argument("--out", type=output_file, help="CSV to write (default: print a table)")
    micro.set_defaults(func=cmd_microbench)

    gantt = sub.add_parser("gantt", help="Solo-D vs woven per-phase timelines (Fig. 1)")
    gantt.add_argument("--job-types", nargs=2, default=["A", "A"], metavar="TYPE")
    gantt.add_argument("--iterations", type=integer(1, 1000), default=3)
    _hardware(gantt)
    gantt.add_argument("--out", type=output_file, required=True, help="CSV to write")
    gantt.set_defaults(func=cmd_gantt)

    bench = sub.add_parser("bench", help="decision-latency and optimum benchmarks (JSON)")
    bench.add_argument("what", choices=["placement", "optimum"], help="what to time")
    bench.add_argument("--jobs", type=integer(1, COUNT_MAX), required=True,
                       help="concurrent jobs")
    _seed(bench, "seed of the generated job mix")
    bench.add_argument("--decisions", type=integer(1, COUNT_MAX), default=50,
                       help="timed decisions (placement only)")
    bench.add_argument("--time-limit-s", type=number(above=0.0), default=None,
                       help="optimum only: wall-time limit of the solver and of the brute "
                            "force (default: none for the solver, 60 s for brute force); "
                            "when it runs out the best plan is printed and the exit "
                            "status is 4")
    add_quiet(bench)
    bench.set_defaults(func=cmd_bench)

    _add_theorem1(sub)

    calibration = sub.add_parser(
        "calibration", help="phase-time model calibration table",
        description="The phase-time model against the paper's anchors (Markdown).")
    calibration.add_argument(
        "--update-doc", type=updatable_file, default=None,
        help="rewrite the generated tables inside this Markdown file (e.g. docs/model.md)")
    add_quiet(calibration)
    calibration.set_defaults(func=cmd_calibration)

    from rollmux.sim.cli import register as register_simulate
    from rollmux.traces.cli import register as register_traces

    register_traces(sub)
    register_simulate(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
