"""The ``rollmux`` command line.

    rollmux meta-iteration --rollout 10 2 --train 2 10     exact round-robin period
    rollmux model microbench --out results/models/microbench.csv
    rollmux gantt --job-types A A --out results/gantt/phases.csv
    rollmux theorem1 --instances 200 --seed 0 --out results/theorem1/summary.csv
    rollmux theorem1-worst-case --sizes 2 3 4 --out results/theorem1/worst_case.csv
    rollmux calibration                                    phase-model calibration table
    rollmux bench placement --jobs 2000 --seed 0           RollMux decision latency (JSON)
    rollmux bench optimum --jobs 13 --seed 0               exact offline optimum (JSON)
    rollmux trace validate|generate|adapt|stats ...        job traces
    rollmux simulate --trace FILE --policy NAME [--seed S] [--out DIR]

Errors in the input (bad numbers, unknown names, malformed traces) print one line
``rollmux: error: ...`` and exit with status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rollmux import __version__


def _node_list(text: str) -> list[object]:
    """Parse ``0,1,0`` or ``0+1,2`` (``+`` joins the nodes of one job) into pinnings."""
    out: list[object] = []
    for item in text.split(","):
        parts = [int(p) if p.strip().lstrip("-").isdigit() else p.strip() for p in item.split("+")]
        out.append(tuple(parts) if len(parts) > 1 else parts[0])
    return out


def cmd_meta_iteration(args: argparse.Namespace) -> int:
    """Print the exact steady-state meta-iteration time of a round-robin group."""
    from rollmux import meta_iteration_time

    period = meta_iteration_time(
        args.rollout,
        args.train,
        rollout_node=_node_list(args.rollout_node) if args.rollout_node else None,
        train_node=_node_list(args.train_node) if args.train_node else None,
        order=[int(x) for x in args.order.split(",")] if args.order else None,
    )
    t_cycle = max(r + t for r, t in zip(args.rollout, args.train, strict=True))
    print(json.dumps({"meta_iteration_s": period, "t_cycle_s": t_cycle}))
    return 0


def cmd_microbench(args: argparse.Namespace) -> int:
    """Write (or print) the closed-form micro-benchmark table."""
    from rollmux.experiments.microbench import scenario_table
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv

    table = scenario_table(args.scenarios, load_hardware(args.hardware))
    if args.out:
        write_csv(table, args.out)
        print(f"wrote {len(table)} rows to {args.out}")
    else:
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


def cmd_gantt(args: argparse.Namespace) -> int:
    """Write the Solo-D versus woven per-phase timelines of two job types."""
    from rollmux.experiments.microbench import gantt_phases
    from rollmux.hardware import load_hardware
    from rollmux.io import write_csv

    phases = gantt_phases(args.job_types, args.iterations, load_hardware(args.hardware))
    write_csv(phases, args.out)
    print(f"wrote {len(phases)} phase rows to {args.out}")
    return 0


# `rollmux bench optimum` runs the brute force beside the optimum up to this many jobs,
# and gives it this much wall time before recording it as unfinished.
BENCH_BRUTEFORCE_MAX_JOBS = 10
BENCH_BRUTEFORCE_TIME_LIMIT_S = 120.0


def cmd_bench(args: argparse.Namespace) -> int:
    """Run one benchmark and print its result as one JSON object."""
    if args.jobs < 1:
        raise ValueError(f"--jobs = {args.jobs}: expected a positive number of jobs")
    if args.what == "placement":
        from rollmux.experiments.placement_bench import bench_placement

        result = bench_placement(args.jobs, args.seed, decisions=args.decisions)
    else:
        from rollmux.experiments.jobmix import production_mix
        from rollmux.hardware import load_hardware
        from rollmux.placement.optimum import compare_solvers

        hw = load_hardware()
        result = {
            "jobs": args.jobs,
            "seed": args.seed,
            **compare_solvers(
                production_mix(args.jobs, args.seed, hw),
                hw,
                bruteforce=args.jobs <= BENCH_BRUTEFORCE_MAX_JOBS,
                bruteforce_time_limit_s=BENCH_BRUTEFORCE_TIME_LIMIT_S,
            ),
        }
    print(json.dumps(result, sort_keys=True, default=str))
    return 0


def _forward(module: str) -> Callable[[argparse.Namespace], int]:
    """A command that hands its remaining arguments to ``module.main``."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        result = importlib.import_module(module).main(args.rest)
        return int(result or 0)

    return run


def run_standalone(
    register: Callable[[argparse._SubParsersAction], None], argv: Sequence[str] | None
) -> int:
    """Run one command module on its own (``python -m rollmux.traces.cli trace ...``)."""
    parser = argparse.ArgumentParser(prog="rollmux")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rollmux`` command."""
    parser = argparse.ArgumentParser(
        prog="rollmux",
        description="Trace-driven benchmark and reproduction harness for RollMux (Weave).",
    )
    parser.add_argument("--version", action="version", version=f"rollmux {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    meta = sub.add_parser(
        "meta-iteration", help="exact steady-state meta-iteration time of a group"
    )
    meta.add_argument("--rollout", type=float, nargs="+", required=True, help="rollout s per job")
    meta.add_argument("--train", type=float, nargs="+", required=True, help="training s per job")
    meta.add_argument("--rollout-node", help="rollout node per job, e.g. 0,1,0+1")
    meta.add_argument("--train-node", help="training node per job, e.g. 0,0,0")
    meta.add_argument("--order", help="round-robin job order, e.g. 2,0,1")
    meta.set_defaults(func=cmd_meta_iteration)

    model = sub.add_parser("model", help="closed-form models").add_subparsers(
        dest="model_command", required=True, metavar="MODEL"
    )
    micro = model.add_parser("microbench", help="micro-benchmark scenarios in closed form")
    micro.add_argument("--scenarios", nargs="+", default=["temporal", "train", "spatial"])
    micro.add_argument("--hardware", type=Path, help="defaults YAML to use instead of ours")
    micro.add_argument("--out", type=Path, help="CSV to write (default: print a table)")
    micro.set_defaults(func=cmd_microbench)

    gantt = sub.add_parser("gantt", help="Solo-D vs woven per-phase timelines (Fig. 1)")
    gantt.add_argument("--job-types", nargs=2, default=["A", "A"], metavar="TYPE")
    gantt.add_argument("--iterations", type=int, default=3)
    gantt.add_argument("--hardware", type=Path, help="defaults YAML to use instead of ours")
    gantt.add_argument("--out", type=Path, required=True, help="CSV to write")
    gantt.set_defaults(func=cmd_gantt)

    bench = sub.add_parser("bench", help="decision-latency and optimum benchmarks (JSON)")
    bench.add_argument("what", choices=["placement", "optimum"], help="what to time")
    bench.add_argument("--jobs", type=int, required=True, help="concurrent jobs")
    bench.add_argument("--seed", type=int, default=0, help="seed of the generated job mix")
    bench.add_argument(
        "--decisions", type=int, default=50, help="timed decisions (placement only)"
    )
    bench.set_defaults(func=cmd_bench)

    for name, module, text in (
        ("theorem1", "rollmux.theorem1", "Theorem 1 boundary map (see docs/theorem1.md)"),
        ("theorem1-worst-case", "rollmux.theorem1.worst_case",
         "round-robin's worst case per family and group size (see docs/theorem1.md)"),
        ("calibration", "rollmux.calibration", "phase-time model calibration table"),
    ):
        forward = sub.add_parser(name, help=text, add_help=False)
        forward.add_argument("rest", nargs=argparse.REMAINDER)
        forward.set_defaults(func=_forward(module))

    from rollmux.sim.cli import register as register_simulate
    from rollmux.traces.cli import register as register_traces

    register_traces(sub)
    register_simulate(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rollmux`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rollmux: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `rollmux model microbench | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
