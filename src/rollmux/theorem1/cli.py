"""`rollmux theorem1` and `rollmux theorem1-worst-case`: Theorem 1 from the command line.

    rollmux theorem1 --instances 200 --seed 0 --out summary.csv
    rollmux theorem1-worst-case --families b_shared_train --sizes 2 3 --out worst.csv

Both print their table on stdout unless ``--out`` is given (``--format table``, the
default, at most 100 characters wide; ``csv``; ``json``) and draw a progress bar on a
terminal (``--quiet`` turns it off). ``python -m rollmux.theorem1`` is ``rollmux
theorem1``. Failures go through the one error path of :func:`rollmux.cliutil.run`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rollmux.cliformat import add_format
from rollmux.cliutil import (
    COUNT_MAX,
    add_quiet,
    add_seed,
    command_main,
    integer,
    output_file,
    progress_bar,
    write_or_print,
)
from rollmux.errors import ExitStatus
from rollmux.theorem1.settings import BUDGET_FLAGS, FAMILIES, Budget

__all__ = ["cmd_theorem1", "cmd_theorem1_worst_case", "main", "register"]

#: Ranges of the worst-case search's budget flags other than 1..COUNT_MAX (the schema's).
_BUDGET_RANGES = {"max_multiplicity": (1, 4), "optimizer_generations": (0, COUNT_MAX),
                  "polish_evaluations": (0, COUNT_MAX),
                  "exhaustive_max_genomes": (0, 100 * COUNT_MAX)}


def cmd_theorem1(args: argparse.Namespace) -> int:
    """Write (or print) the Theorem 1 boundary map, optionally its instance and gap tables."""
    from rollmux.theorem1.boundary import FAMILIES, instance_table, order_search_gap, summarise

    total = args.instances * len(FAMILIES) + (args.gap_instances if args.gap_out else 0)
    with progress_bar("theorem1", total, "instance", args.quiet) as bar:
        table = instance_table(args.instances, args.seed, progress=bar.update)
        gap = order_search_gap(args.gap_instances, args.seed, progress=bar.update) \
            if args.gap_out is not None else None
    write_or_print(summarise(table), args.out, "family rows", fmt=args.format)
    if args.instances_out is not None:
        write_or_print(table.drop(columns=["_size"]), args.instances_out, "instance rows")
    if gap is not None:
        write_or_print(gap, args.gap_out, "gap rows")
    return ExitStatus.OK


def cmd_theorem1_worst_case(args: argparse.Namespace) -> int:
    """Write (or print) round-robin's worst case per family and size, and the check."""
    from rollmux.theorem1.worst_case import (
        BUDGET_FLAGS,
        Budget,
        cells,
        check_table,
        worst_case_table,
    )

    budget = Budget.from_settings({name: getattr(args, name) for _, name, _ in BUDGET_FLAGS})
    n_cells = len(cells(args.families))
    with progress_bar("worst case", n_cells * len(args.sizes), "cell", args.quiet) as bar:
        table = worst_case_table(args.families, args.sizes, args.max_duration, budget, args.seed,
                                 progress=lambda label: _advance(bar, label))
    check = None
    if args.check_out is not None:
        with progress_bar("exhaustive check", n_cells * len(args.check_sizes), "cell",
                          args.quiet) as bar:
            check = check_table(args.families, args.check_sizes, args.check_max_duration,
                                budget, args.seed, progress=lambda label: _advance(bar, label))
    write_or_print(table, args.out, "cells", float_format="%.9g", fmt=args.format)
    if check is not None:
        write_or_print(check, args.check_out, "check rows", float_format="%.9g")
    return ExitStatus.OK


def _advance(bar: Any, label: str) -> None:
    """One cell done: show what it was and move the bar on."""
    bar.set_postfix_str(label, refresh=False)
    bar.update()


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``theorem1`` and ``theorem1-worst-case`` commands to a CLI's sub-parsers."""
    boundary = sub.add_parser(
        "theorem1", help="Theorem 1 boundary map (see docs/theorem1.md)",
        description="Seeded random small groups per family, round-robin against the "
                    "exhaustive optimum; prints the summary unless --out is given.")
    boundary.add_argument("--instances", type=integer(1, COUNT_MAX), default=100,
                          help="random instances per family (default 100, about 20 s)")
    add_seed(boundary)
    boundary.add_argument("--out", type=output_file, default=None,
                          help="summary CSV to write (default: print it on stdout)")
    boundary.add_argument("--instances-out", type=output_file, default=None,
                          help="per-instance CSV")
    boundary.add_argument("--gap-out", type=output_file, default=None,
                          help="order-search gap CSV")
    boundary.add_argument("--gap-instances", type=integer(1, COUNT_MAX), default=300,
                          help="instances for the gap table (default 300)")
    add_format(boundary, "the summary (without --out)")
    add_quiet(boundary)
    boundary.set_defaults(func=cmd_theorem1)

    worst = sub.add_parser(
        "theorem1-worst-case",
        help="round-robin's worst case per family and group size (see docs/theorem1.md)",
        description="Adversarial search for the largest ratio best schedule / round-robin; "
                    "prints the table unless --out is given.")
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
    add_seed(worst)
    worst.add_argument("--out", type=output_file, default=None,
                       help="worst-case CSV to write (default: print it on stdout)")
    worst.add_argument("--check-out", type=output_file, default=None,
                       help="exhaustive check CSV")
    worst.add_argument("--check-sizes", nargs="+", type=integer(2, 3), default=[2],
                       help="group sizes of the exhaustive check (2-3)")
    worst.add_argument("--check-max-duration", type=integer(1, 9), default=3,
                       help="durations 1..D s of the exhaustive check (default 3)")
    add_format(worst, "the worst-case table (without --out)")
    add_quiet(worst)
    worst.set_defaults(func=cmd_theorem1_worst_case)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rollmux.theorem1``: the ``rollmux theorem1`` command."""
    return command_main(register, ["theorem1"], argv)


if __name__ == "__main__":
    raise SystemExit(main())
