"""The ``rollmux`` command line.

    rollmux meta-iteration --rollout 10 2 --train 2 10     exact round-robin period
    rollmux model microbench --out results/models/microbench.csv
    rollmux gantt --job-types A A --out results/gantt/phases.csv
    rollmux theorem1 --instances 200 --seed 0 --out summary.csv
    rollmux theorem1-worst-case --sizes 2 3 4 --out worst_case.csv
    rollmux calibration [--format markdown]                phase-model calibration table
    rollmux bench placement --jobs 2000 --seed 0           RollMux decision latency
    rollmux bench optimum --jobs 13 --seed 0 --format json exact offline optimum
    rollmux trace validate|generate|adapt|stats ...        job traces
    rollmux simulate --trace FILE --policy NAME [--seed S] [--out DIR]

Every command goes through :func:`main` and :func:`rollmux.cliutil.run`, the one place
where failures become messages: one line ``rollmux: error: ...`` naming the argument (or,
for an invalid input file, one such line per problem, located by file, line, row and
column) and an exit status of :class:`rollmux.errors.ExitStatus`; no traceback reaches
the user. Output paths are checked when the arguments are parsed, before any work; long
commands draw a progress bar on a terminal (``--quiet`` turns it off). A command that
prints a table or a result takes ``--format {table,csv,json}`` (:mod:`rollmux.cliformat`;
the default ``table`` is at most 100 characters wide).

This module defines the small commands itself and imports the modules that define the
others (``rollmux.sim.cli``, ``rollmux.traces.cli``, ``rollmux.theorem1.cli``); those
never import this one. What the commands share lives in :mod:`rollmux.cliutil`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rollmux import __version__
from rollmux.cliformat import FORMATS, add_format, print_record, print_table
from rollmux.cliutil import (
    COUNT_MAX,
    ArgumentParser,
    add_hardware,
    add_quiet,
    add_seed,
    elapsed_bar,
    error,
    exit_status_epilog,
    integer,
    number,
    output_file,
    progress_bar,
    run,
    say,
    updatable_file,
)
from rollmux.errors import ExitStatus, UsageError, clip, echo
from rollmux.io import open_input
from rollmux.sim.cli import register as register_simulate
from rollmux.theorem1.cli import register as register_theorem1
from rollmux.traces.cli import register as register_traces

#: Longest phase duration `meta-iteration` accepts (s): 1e9 s, about 32 years.
DURATION_MAX_S = 1e9
#: Longest `bench optimum --time-limit-s` (s): a week.
TIME_LIMIT_MAX_S = 7 * 24 * 3600.0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rollmux`` command: run it, return its exit status."""
    return run(build_parser, argv)



# --------------------------------------------------------------------------- commands


def _node_list(text: str, option: str) -> list[object]:
    """Parse ``0,1,0`` or ``0+1,2`` (``+`` joins the nodes of one job) into pinnings."""
    out: list[object] = []
    for item in text.split(","):
        parts: list[object] = []
        for part in item.split("+"):
            name = part.strip()
            if not name:
                raise UsageError(f"{option} {echo(text)}: empty node name (expected e.g. "
                                 f"0,1,0+1)")
            if name.isascii() and name.isdigit():
                if len(name) > len(str(COUNT_MAX)) or int(name) > COUNT_MAX:
                    raise UsageError(f"{option} {echo(text)}: node {clip(name)} is out of "
                                     f"range: expected 0 to {COUNT_MAX} or a name")
                parts.append(int(name))
            else:
                parts.append(name)
        out.append(tuple(parts) if len(parts) > 1 else parts[0])
    return out


def _order(text: str) -> list[int]:
    """Parse ``--order 2,0,1`` into job indices."""
    items = [x.strip() for x in text.split(",")]
    if not all(x.isascii() and x.isdigit() and len(x) <= len(str(COUNT_MAX)) for x in items):
        raise UsageError(f"--order {echo(text)}: expected job indices from 0 to {COUNT_MAX} "
                         f"such as 2,0,1")
    return [int(x) for x in items]


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
    print_record({"meta_iteration_s": period, "t_cycle_s": t_cycle}, args.format)
    return 0


def cmd_microbench(args: argparse.Namespace) -> int:
    """Write (or print) the closed-form micro-benchmark table."""
    from rollmux.experiments.microbench import scenario_table
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv

    table = scenario_table(args.scenarios, load_hardware(args.hardware))
    if args.out:
        write_csv(table, args.out)
        say(f"wrote {len(table)} rows to {args.out}")
    else:
        print_table(table, args.format, "%.3f", csv_format="%.6g")
    return 0


def cmd_gantt(args: argparse.Namespace) -> int:
    """Write the Solo-D versus woven per-phase timelines of two job types."""
    from rollmux.experiments.microbench import gantt_phases
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv

    phases = gantt_phases(args.job_types, args.iterations, load_hardware(args.hardware))
    write_csv(phases, args.out)
    say(f"wrote {len(phases)} phase rows to {args.out}")
    return 0


# `rollmux bench optimum` runs the brute force beside the optimum up to this many jobs,
# and gives it this much wall time before recording it as unfinished.
BENCH_BRUTEFORCE_MAX_JOBS = 10
BENCH_BRUTEFORCE_TIME_LIMIT_S = 120.0


def cmd_bench(args: argparse.Namespace) -> int:
    """Run one benchmark and print its result (a field/value table, CSV or JSON)."""
    status = ExitStatus.OK
    if args.what == "placement":
        from rollmux.experiments.placement_bench import bench_placement

        if args.time_limit_s is not None:
            raise UsageError("--time-limit-s applies to `bench optimum` only")
        with progress_bar("bench placement", args.jobs + args.decisions, "job",
                          args.quiet) as bar:
            result = bench_placement(args.jobs, args.seed, decisions=args.decisions,
                                     progress=bar.update)
    else:
        from rollmux.experiments.jobmix import production_mix
        from rollmux.hardware import load_hardware
        from rollmux.placement.optimum import compare_solvers

        hw = load_hardware()
        limit = args.time_limit_s
        with elapsed_bar("bench optimum", limit, args.quiet):
            result = {
                "jobs": args.jobs,
                "seed": args.seed,
                **compare_solvers(
                    production_mix(args.jobs, args.seed, hw),
                    hw,
                    bruteforce=args.jobs <= BENCH_BRUTEFORCE_MAX_JOBS,
                    bruteforce_time_limit_s=BENCH_BRUTEFORCE_TIME_LIMIT_S
                    if limit is None else limit,
                    time_limit_s=limit,
                ),
            }
        missed = []
        if not result.get("proven_optimal", True):
            missed.append("the optimum is not proven (best plan found so far printed)")
        if result.get("bruteforce_finished") is False:
            missed.append("brute force did not finish (its fields are null)")
        if missed:
            used = limit if limit is not None else result.get("bruteforce_time_limit_s")
            error(f"time limit of {used:g} s reached: {'; '.join(missed)}")
            status = ExitStatus.TIME_LIMIT
    print_record(dict(sorted(result.items())), args.format)
    return status


def cmd_calibration(args: argparse.Namespace) -> int:
    """Print the calibration table (a table, CSV, JSON or Markdown), or refresh the tables
    of a doc file."""
    from rollmux.anchors import (
        anchors,
        calibration_markdown,
        calibration_table,
        doc_tables,
        fill_doc,
    )
    from rollmux.io import write_text

    with progress_bar("calibration", len(anchors()), "anchor", args.quiet) as bar:
        if args.update_doc is None:
            if args.format == "markdown":
                sys.stdout.write(calibration_markdown(progress=bar.update))
            else:
                table = calibration_table(progress=bar.update)
                if args.format == "table":
                    table["met"] = ["yes" if met else "NO" for met in table["met"]]
                print_table(table, args.format)
            return 0
        try:
            with open_input(args.update_doc, "r", encoding="utf-8") as stream:
                text = stream.read()
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rollmux`` command."""
    parser = ArgumentParser(
        prog="rollmux",
        description="Trace-driven benchmark and reproduction harness for RollMux (Weave).",
        epilog=exit_status_epilog(),
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
    add_format(meta, "the result")
    meta.set_defaults(func=cmd_meta_iteration)

    model = sub.add_parser("model", help="closed-form models").add_subparsers(
        dest="model_command", required=True, metavar="MODEL"
    )
    micro = model.add_parser("microbench", help="micro-benchmark scenarios in closed form")
    micro.add_argument("--scenarios", nargs="+", default=["temporal", "train", "spatial"])
    add_hardware(micro)
    micro.add_argument("--out", type=output_file, help="CSV to write (default: print a table)")
    add_format(micro, "the table (without --out)")
    micro.set_defaults(func=cmd_microbench)

    gantt = sub.add_parser("gantt", help="Solo-D vs woven per-phase timelines (Fig. 1)")
    gantt.add_argument("--job-types", nargs=2, default=["A", "A"], metavar="TYPE")
    gantt.add_argument("--iterations", type=integer(1, 1000), default=3)
    add_hardware(gantt)
    gantt.add_argument("--out", type=output_file, required=True, help="CSV to write")
    gantt.set_defaults(func=cmd_gantt)

    bench = sub.add_parser("bench", help="decision-latency and optimum benchmarks")
    bench.add_argument("what", choices=["placement", "optimum"], help="what to time")
    bench.add_argument("--jobs", type=integer(1, COUNT_MAX), required=True,
                       help="concurrent jobs")
    add_seed(bench, "seed of the generated job mix")
    bench.add_argument("--decisions", type=integer(1, COUNT_MAX), default=50,
                       help="timed decisions (placement only)")
    bench.add_argument("--time-limit-s", type=number(above=0.0, high=TIME_LIMIT_MAX_S),
                       default=None,
                       help="optimum only: wall-time limit of the solver and of the brute "
                            "force (default: none for the solver, 60 s for brute force); "
                            "when it runs out the best plan is printed and the exit "
                            "status is 4")
    add_format(bench, "the result")
    add_quiet(bench)
    bench.set_defaults(func=cmd_bench)


    calibration = sub.add_parser(
        "calibration", help="phase-time model calibration table",
        description="The phase-time model against the paper's anchors (Markdown).")
    calibration.add_argument(
        "--update-doc", type=updatable_file, default=None,
        help="rewrite the generated tables inside this Markdown file (e.g. docs/model.md)")
    calibration.add_argument(
        "--format", choices=(*FORMATS, "markdown"), default="table",
        help="how the table is printed (without --update-doc): table (aligned, at most 100 "
             "characters wide, in blocks of columns), csv, json, or markdown (as "
             "docs/model.md shows it; default: table)")
    add_quiet(calibration)
    calibration.set_defaults(func=cmd_calibration)

    register_theorem1(sub)
    register_traces(sub)
    register_simulate(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
