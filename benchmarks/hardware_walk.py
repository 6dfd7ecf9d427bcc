"""Walk of the hardware parameter from Table 4's builder (issue 23's "stays, rooms, climbs").

Runs :func:`rollmux.experiments.microbench_sim.table4` (one scenario, a few iterations)
under ``sys.setprofile`` and records every rollmux function frame that *holds the
Hardware object*: it is one of the frame's arguments or locals (checked when the frame
is entered and when it returns), other than ``self`` of a Hardware method (reading a
field of the hardware is not passing it on). Frames are taken in the order they are
entered; a frame whose chain of callers (module and function, from the builder down)
was walked before is the same step again (the next job, iteration or scenario) and is
left out, so the walk is the set of distinct paths the parameter travels.

* a *stay*: a run of consecutive walked frames in one module;
* a *room*: a module the walk enters;
* a *climb back*: a stay in a module the walk had already left.

Usage (any checkout: the ``rollmux`` on ``PYTHONPATH`` is the one measured)::

    PYTHONPATH=src .venv/bin/python benchmarks/hardware_walk.py [--scenario temporal]
"""

from __future__ import annotations

import argparse
import sys
from types import FrameType
from typing import Any


def walk(scenario: str, iterations: int) -> list[tuple[str, str]]:
    """(module, function) of each distinct walked frame, in the order they are entered."""
    from rollmux.experiments.microbench_sim import table4
    from rollmux.hardware import Hardware, load_hardware
    from rollmux.memo import clear_all

    hw = load_hardware()
    clear_all()  # a memo hit would hide a walk a cold run makes
    entered: list[tuple[tuple[tuple[str, str], ...], bool]] = []
    chains: dict[int, tuple[tuple[str, str], ...]] = {}
    index: dict[int, int] = {}

    def holds(frame: FrameType) -> bool:
        values = frame.f_locals
        for name, value in values.items():
            if value is hw and not (name == "self" and isinstance(value, Hardware)):
                return True
        return False

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        del arg
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("rollmux"):
            return
        key = id(frame)
        if event == "call":
            parent = frame.f_back
            while parent is not None and id(parent) not in chains:
                parent = parent.f_back
            base = chains[id(parent)] if parent is not None else ()
            chain = (*base, (module, frame.f_code.co_qualname))
            chains[key] = chain
            index[key] = len(entered)
            entered.append((chain, holds(frame)))
        else:
            i = index.pop(key, None)
            if i is not None and not entered[i][1] and holds(frame):
                entered[i] = (entered[i][0], True)
            chains.pop(key, None)

    sys.setprofile(profile)
    try:
        table4(seed=0, iterations=iterations, hw=hw, names=(scenario,))
    finally:
        sys.setprofile(None)
    seen: set[tuple[tuple[str, str], ...]] = set()
    out = []
    for chain, held in entered:
        if held and chain not in seen:
            seen.add(chain)
            out.append(chain[-1])
    return out


def stays(frames: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Consecutive frames in one module, as (module, its functions in order)."""
    out: list[tuple[str, list[str]]] = []
    for module, func in frames:
        if out and out[-1][0] == module:
            out[-1][1].append(func)
        else:
            out.append((module, [func]))
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the walk, then its stays, rooms, climbs back and entries per module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="temporal")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--quiet", action="store_true", help="print the counts only")
    args = parser.parse_args(argv)
    runs = stays(walk(args.scenario, args.iterations))
    left: set[str] = set()
    climbs = 0
    entries: dict[str, int] = {}
    for k, (module, funcs) in enumerate(runs):
        back = module in left
        climbs += back
        entries[module] = entries.get(module, 0) + 1
        if k:
            left.add(runs[k - 1][0])
        if not args.quiet:
            mark = "  (climb back)" if back else ""
            print(f"{k + 1:3d} {module}{mark}: {', '.join(funcs)}")
    print(f"stays {len(runs)}, rooms {len(entries)}, climbs back {climbs}; entries: "
          + ", ".join(f"{m.removeprefix('rollmux.')} {n}" for m, n in entries.items()))


if __name__ == "__main__":
    main()
