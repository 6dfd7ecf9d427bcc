"""`rollmux simulate`: replay a job trace under a placement policy and write the tables.

    rollmux simulate --trace traces/production-default.csv --policy rollmux
    rollmux simulate --trace T.csv --policy solo-d --fidelity analytic --out results/x
    rollmux simulate --trace T.csv --policy random --slo 1,2 --max-group-size 3

``--slo`` replaces every job's SLO: one number >= 1 (``1.2``) for all jobs, or a range
``LO,HI`` drawn Uniform(LO, HI) per job from a generator seeded by ``--seed`` and the
job's id (so a job gets the same SLO under every policy and in any window of the trace);
``trace`` (the default) keeps the trace's SLOs. ``--max-group-size N`` is passed to every
policy that takes a group-size limit (rollmux and its variants, random, greedy, optimal,
regroup). The policies that never share a node (``shares_nodes = False``: solo-d, verl,
gavel-plus; every group holds one job, so no limit >= 1 can bind) ignore it, and
config.json records ``max_group_size_applied: false``; any other policy without the option
is refused with exit 2.

The command only builds a :class:`rollmux.sim.replay.ReplaySpec` from its options and
calls :func:`rollmux.sim.replay.run_replay`, which a Python caller can call too: same
files, same ``config.json``. The output folder is checked when the options are parsed
(``--out ''``, a file, the current folder, or a non-empty folder that rollmux did not
write, i.e. without the marker ``.rollmux-output.json`` or with files the marker does not
list, are refused; a symbolic link is followed, its target replaced); the trace and the failure list
are validated before any work: an invalid one prints its problems (one per line, located
by file, line, row and column) and exits 1. Output files (default folder
``results/simulate/<spec.path()>``, e.g.
``results/simulate/trace=<stem>/slo=trace/maxgroup=default/drift=none/policy=<name>/seed=<s>/``),
written into a temporary sibling folder that then replaces the output folder whole (a
rerun leaves no file of an earlier run; an interrupted one leaves the previous folder):

* ``phases.csv``: per-phase rows (event fidelity), integer codes (docs/metrics.md);
* ``events.csv``: arrivals with their decisions, completions, kills, regroupings;
* ``timeseries.csv``: provisioned GPUs and hourly cost, a step function of time;
* ``jobs.csv``: per-job iteration times, slowdown and SLO outcome;
* ``config.json``: the resolved configuration; ``summary.json``: the metrics.

Exit statuses: those of every ``rollmux`` command (:class:`rollmux.errors.ExitStatus`):
0 success, 1 invalid trace or failure list, 2 bad option, 3 operating-system error,
130 interrupted (the previous output folder is left as it was).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rollmux.cliformat import FORMATS, print_record
from rollmux.cliutil import (
    add_hardware,
    add_quiet,
    add_seed,
    command_main,
    input_file,
    integer,
    number,
    output_folder,
    progress_bar,
)
from rollmux.errors import ExitStatus, UsageError, echo, printable
from rollmux.io import OUTPUT_MARKER, check_output_folder

if TYPE_CHECKING:
    from rollmux.sim.replay import (
        FLOAT_FORMAT,
        ReplaySpec,
        SloSetting,
        draw_slos,
        group_size_options,
        override_slos,
        parse_slo,
        write_result,
    )

#: Names of :mod:`rollmux.sim.replay` this module re-exports, loaded on first use (the
#: replay machinery loads numpy and pandas; ``rollmux simulate --help`` must not).
_FROM_REPLAY = ("FLOAT_FORMAT", "SloSetting", "draw_slos", "group_size_options",
                "override_slos", "parse_slo", "write_result")

#: ``--slo`` value that keeps the trace's SLOs (:data:`rollmux.sim.replay.SLO_FROM_TRACE`).
SLO_FROM_TRACE = "trace"
#: ``--drift-reach`` values (those of :class:`rollmux.sim.drift.DriftReach`; a test checks).
DRIFT_REACHES = ("profile", "cap")

#: Largest --max-group-size accepted (no policy forms groups near this size).
GROUP_SIZE_MAX = 1000
#: Longest --regroup-interval-h accepted: a year.
REGROUP_INTERVAL_MAX_H = 8784.0

#: Root of the default output folders (each replay's ``spec.path()`` below it).
DEFAULT_ROOT = Path("results") / "simulate"

__all__ = [
    "DEFAULT_ROOT",
    "FLOAT_FORMAT",
    "SLO_FROM_TRACE",
    "SloSetting",
    "draw_slos",
    "group_size_options",
    "main",
    "override_slos",
    "parse_slo",
    "register",
    "run_simulate",
    "spec_from_args",
    "write_result",
]


def __getattr__(name: str) -> Any:
    """A re-exported name of :mod:`rollmux.sim.replay`, imported on first use."""
    if name not in _FROM_REPLAY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rollmux.sim import replay

    return getattr(replay, name)


def _overrides(text: str | None) -> dict[str, Any]:
    """Parse ``--hardware-overrides``: a JSON object of (dotted) keys (empty: none)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--hardware-overrides is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError("--hardware-overrides is nested too deeply") from None
    if not isinstance(value, dict):
        raise UsageError(f"--hardware-overrides must be a JSON object, got {echo(text)}")
    return value


def _folder(text: str) -> Path:
    """Argument type of --lengths: an existing folder."""
    path = Path(text)
    if not text or "\x00" in text or not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a folder")
    return path


def _check_options(args: argparse.Namespace) -> None:
    """Refuse a bad --drift, --hardware or --hardware-overrides with a UsageError naming
    the option and the limit it broke, before any work."""
    from rollmux.sim.drift import DriftRangeError, check_setting

    try:
        check_setting(args.drift)
    except DriftRangeError as exc:
        raise UsageError(f"--drift {echo(args.drift)}: {exc}") from None
    except ValueError:
        raise UsageError(f"--drift {echo(args.drift)}: unknown setting (valid: none, "
                         f"Increasing, Decreasing, Mixed, increasing-1.0, ...)") from None
    overrides = _overrides(args.hardware_overrides)
    if args.hardware is None and not overrides:
        return
    from rollmux.hardware import load_hardware

    try:
        load_hardware(args.hardware)
    except ValueError as exc:
        raise UsageError(f"--hardware {printable(args.hardware)}: {exc}") from None
    if overrides:
        try:
            load_hardware(args.hardware, overrides)
        except ValueError as exc:
            raise UsageError(f"--hardware-overrides: {exc}") from None


def spec_from_args(args: argparse.Namespace) -> ReplaySpec:
    """The replay the command line describes (ValueError on a bad option)."""
    from rollmux.sim.engine import SimConfig
    from rollmux.sim.replay import ReplaySpec

    _check_options(args)
    return ReplaySpec(
        trace=str(args.trace),
        policy=args.policy,
        seed=args.seed,
        slo=args.slo,
        max_group_size=args.max_group_size,
        regroup_interval_h=args.regroup_interval_h,
        failures=None if args.failures is None else str(args.failures),
        hardware=None if args.hardware is None else str(args.hardware),
        hardware_overrides=tuple(_overrides(args.hardware_overrides).items()),
        sim=SimConfig(
            fidelity=args.fidelity,
            stochastic=not args.deterministic,
            migration=not args.no_migration,
            drift=args.drift,
            drift_reach=args.drift_reach,
            sync=args.sync,
            record_phases=not args.no_phases,
            lengths=(None if getattr(args, "lengths", None) is None  # older namespaces
                     else str(args.lengths)),
        ),
    )


def run_simulate(args: argparse.Namespace) -> int:
    """Build the spec, check the output folder, replay, write the outputs; the exit status."""
    from rollmux.sim.replay import run_replay

    spec = spec_from_args(args)
    spec.policy_options()  # refuse a bad option before the trace is read
    out = args.out
    if out is None:
        out = DEFAULT_ROOT / spec.path()
        try:
            check_output_folder(out, OUTPUT_MARKER)
        except ValueError as exc:
            raise UsageError(f"default output folder: {exc} (give --out)") from None
    with progress_bar(f"simulate {args.policy}", unit="job", quiet=args.quiet) as bar:
        result = run_replay(spec, out, progress=bar.update)
    s = result.summary
    if args.format is not None:  # the whole summary.json, for reading or for programs
        print_record(s, args.format)
    elif not args.quiet:
        print(f"{args.policy}: {s['jobs_completed']}/{s['jobs']} jobs completed, "
              f"${s['cost_usd_per_h']:.1f}/h average, total ${s['total_cost_usd']:.0f}, "
              f"SLO attainment {s['slo_attainment']:.3f}; wrote {printable(out)}")
    return ExitStatus.OK


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` command to a CLI's sub-parsers."""
    p = subparsers.add_parser("simulate", help="replay a job trace under a placement policy")
    p.add_argument("--trace", type=input_file, required=True,
                   help="trace CSV (validated first)")
    p.add_argument("--policy", required=True, help="placement policy name, e.g. rollmux")
    add_seed(p, "seed of the phase draws and policy")
    p.add_argument("--out", type=output_folder(OUTPUT_MARKER), default=None,
                   help="output folder, replaced whole: new, empty or written by rollmux "
                        "(a link: its target; default results/simulate/ followed by the "
                        "replay's key=value folder)")
    p.add_argument("--fidelity", choices=("event", "analytic"), default="event",
                   help="per-phase events or steady-state rates")
    p.add_argument("--no-migration", action="store_true", help="disable long-tail migration")
    p.add_argument("--drift", default="none",
                   help="drift: none, Increasing, Decreasing, Mixed or a template "
                        "such as increasing-1.0")
    p.add_argument("--drift-reach", choices=DRIFT_REACHES, default=DRIFT_REACHES[0],
                   help="profile: drift scales the job's whole profile, its worst case "
                        "included (default); cap: lengths stay below the maximum of admission")
    p.add_argument("--deterministic", action="store_true",
                   help="expected phase times instead of sampled ones (event fidelity)")
    p.add_argument("--sync", choices=("topology", "flat"), default="topology",
                   help="weight sync: topology-aware (default) or flat")
    p.add_argument("--failures", type=input_file, default=None,
                   help="CSV job_id,kill_at_s,resubmit_at_s of jobs to kill and resubmit")
    p.add_argument("--regroup-interval-h", type=number(above=0.0, high=REGROUP_INTERVAL_MAX_H),
                   default=None,
                   help="re-solve period of regrouping policies (default: the policy's)")
    p.add_argument("--slo", default=SLO_FROM_TRACE,
                   help="override every job's SLO: a number >= 1 (e.g. 1.2), a range LO,HI "
                        "drawn Uniform per job (seeded by --seed and the job id), or "
                        "'trace' (default: the trace's SLOs)")
    p.add_argument("--max-group-size", type=integer(1, GROUP_SIZE_MAX), default=None,
                   help="group-size limit passed to every policy that takes one (ignored "
                        "by solo-d, verl and gavel-plus, which never share a node)")
    p.add_argument("--lengths", type=_folder, default=None,
                   help="draw response lengths from the recorded steps of real runs (a "
                        "PolyTrace workload folder or a folder above several; "
                        "docs/stochastic.md section 8) instead of the lognormal; planning "
                        "keeps the worst case")
    p.add_argument("--no-phases", action="store_true", help="do not keep the per-phase table")
    add_hardware(p)
    p.add_argument("--hardware-overrides", default=None,
                   help='JSON object of dotted-key overrides, e.g. '
                        '\'{"gpus.H20.price_usd_per_h": 2.0}\'')
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="print the whole summary (summary.json) as table (one field per "
                        "line), csv or json instead of the one summary line (printed even "
                        "with --quiet)")
    add_quiet(p, ", no summary line")
    p.set_defaults(func=run_simulate)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m rollmux.sim.cli simulate ...``)."""
    return command_main(register, (), argv)


if __name__ == "__main__":
    sys.exit(main())
