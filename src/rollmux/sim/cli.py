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
import dataclasses
import hashlib
import json
import math
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rollmux.io import write_csv, write_json

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2

#: Float format of the written tables: 10 significant digits keep 0.1 ms over weeks.
FLOAT_FORMAT = "%.10g"

#: ``--slo`` value that keeps the trace's SLOs.
SLO_FROM_TRACE = "trace"

#: Stream tag of the SLO draws (keeps them apart from every other seeded draw).
_SLO_STREAM = 0x510

__all__ = [
    "SLO_FROM_TRACE",
    "SloSetting",
    "default_out_dir",
    "draw_slos",
    "group_size_options",
    "main",
    "override_slos",
    "parse_slo",
    "register",
    "run_simulate",
    "write_result",
]


@dataclasses.dataclass(frozen=True, slots=True)
class SloSetting:
    """An SLO override: every job's SLO is ``low`` (``low == high``) or U(low, high)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        """Check 1 <= low <= high, both finite numbers (stored as floats)."""
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 1.0
            ):
                raise ValueError(f"an SLO must be a finite number >= 1, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.low > self.high:
            raise ValueError(f"an SLO range needs LO <= HI, got {self.low:g},{self.high:g}")

    @property
    def is_range(self) -> bool:
        """True when SLOs are drawn per job from U(low, high)."""
        return self.high > self.low

    def label(self) -> str:
        """The canonical text: ``1.2`` or ``1,2`` (``%g`` numbers)."""
        return f"{self.low:g},{self.high:g}" if self.is_range else f"{self.low:g}"


def parse_slo(text: str) -> SloSetting | None:
    """Parse an ``--slo`` value: ``trace`` (None), a number >= 1, or a range ``LO,HI``.

    Raises ValueError with a readable message for anything else.
    """
    raw = str(text).strip()
    if raw.lower() == SLO_FROM_TRACE:
        return None
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) not in (1, 2) or not all(parts):
        raise ValueError(f"--slo must be 'trace', a number >= 1 such as 1.2 or a range "
                         f"LO,HI such as 1,2; got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"--slo must be 'trace', a number >= 1 such as 1.2 or a range "
                         f"LO,HI such as 1,2; got {text!r}") from None
    try:
        return SloSetting(values[0], values[-1])
    except ValueError as exc:
        raise ValueError(f"--slo {text!r}: {exc}") from None


def draw_slos(job_ids: Sequence[str], setting: SloSetting, seed: int) -> list[float]:
    """Each job's SLO under ``setting``: the fixed value, or U(low, high) per job.

    A job's draw depends only on ``seed``, its id and the range (a generator seeded with
    ``(seed, stream, crc32(job_id))``), not on the policy, the other jobs or their order.
    """
    if not setting.is_range:
        return [setting.low] * len(job_ids)
    import numpy as np

    out = []
    for job_id in job_ids:
        key = zlib.crc32(str(job_id).encode("utf-8"))
        rng = np.random.default_rng([int(seed), _SLO_STREAM, key])
        out.append(float(rng.uniform(setting.low, setting.high)))
    return out


def override_slos(jobs: Sequence[Any], setting: SloSetting | None, seed: int) -> list[Any]:
    """The jobs with their SLOs replaced per ``setting`` (None: unchanged)."""
    if setting is None:
        return list(jobs)
    slos = draw_slos([job.job_id for job in jobs], setting, seed)
    return [dataclasses.replace(job, slo=slo) for job, slo in zip(jobs, slos, strict=True)]


def group_size_options(policy: str, max_group_size: int | None) -> tuple[dict[str, Any], bool]:
    """Policy options carrying a group-size limit, and whether the limit applies.

    None: no option. A policy that never shares a node (``shares_nodes = False``) ignores
    the limit (``({}, False)``); a policy declaring ``max_group_size`` among its options
    gets it; any other raises ValueError.
    """
    from rollmux.placement import policy_options, policy_shares_nodes
    from rollmux.placement.base import check_max_group_size

    if max_group_size is None:
        return {}, False
    limit = check_max_group_size(max_group_size)
    if not policy_shares_nodes(policy):
        return {}, False
    if "max_group_size" not in policy_options(policy):
        raise ValueError(f"policy {policy!r} does not take a group-size limit; "
                         f"drop --max-group-size")
    return {"max_group_size": limit}, True


def _positive_int(text: str) -> int:
    """argparse type of ``--max-group-size``: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _overrides(text: str | None) -> dict[str, Any] | None:
    """Parse ``--hardware-overrides``: a JSON object of (dotted) keys, or None."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--hardware-overrides is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"--hardware-overrides must be a JSON object, got {text!r}")
    return value or None


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
        hw = load_hardware(args.hardware, _overrides(args.hardware_overrides))
        if args.policy not in policy_names():
            raise ValueError(f"unknown policy {args.policy!r}; valid names: "
                             f"{', '.join(policy_names())}")
        if args.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        slo = parse_slo(args.slo)
        options, limit_applied = group_size_options(args.policy, args.max_group_size)
        if args.regroup_interval_h is not None:
            options["regroup_interval_s"] = args.regroup_interval_h * 3600.0
        try:
            jobs = load_trace(args.trace, hw)
        except TraceError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            print(f"{len(exc.problems)} problem(s) found; nothing simulated", file=sys.stderr)
            return EXIT_INVALID
        jobs = override_slos(jobs, slo, args.seed)
        failures = read_failures_csv(args.failures) if args.failures else ()
        config = SimConfig(
            fidelity=args.fidelity,
            stochastic=not args.deterministic,
            migration=not args.no_migration,
            drift=args.drift,
            sync=args.sync,
            record_phases=not args.no_phases,
            failures=failures,
            policy_options=tuple(options.items()),
            **({"regroup_interval_s": args.regroup_interval_h * 3600.0}
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
        result.config["slo_override"] = None if slo is None else slo.label()
        result.config["max_group_size"] = args.max_group_size
        result.config["max_group_size_applied"] = limit_applied
        if args.hardware_overrides:
            result.config["hardware_overrides"] = _overrides(args.hardware_overrides) or {}
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
    p.add_argument("--slo", default=SLO_FROM_TRACE,
                   help="override every job's SLO: a number >= 1 (e.g. 1.2), a range LO,HI "
                        "drawn Uniform per job (seeded by --seed and the job id), or "
                        "'trace' (default: the trace's SLOs)")
    p.add_argument("--max-group-size", type=_positive_int, default=None,
                   help="group-size limit passed to every policy that takes one (ignored "
                        "by solo-d, verl and gavel-plus, which never share a node)")
    p.add_argument("--no-phases", action="store_true", help="do not keep the per-phase table")
    p.add_argument("--hardware", type=Path, default=None, help="hardware YAML")
    p.add_argument("--hardware-overrides", default=None,
                   help='JSON object of dotted-key overrides, e.g. '
                        '\'{"gpus.H20.price_usd_per_h": 2.0}\'')
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    p.set_defaults(func=run_simulate)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m rollmux.sim.cli simulate ...``)."""
    from rollmux.cli import run_standalone

    return run_standalone(register, argv)


if __name__ == "__main__":
    sys.exit(main())
