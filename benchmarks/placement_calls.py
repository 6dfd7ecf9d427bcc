"""Count the work of timed placement decisions: Python calls under cProfile, load-independent.

Builds the cluster of ``bench_placement`` (the seeded production mix, ``--jobs`` admitted),
then profiles ``--decisions`` further decisions on that snapshot without applying them,
and prints the total function calls (deterministic for a given code, seed and size, so
two checkouts compare exactly even on a loaded machine) and the functions with the most
internal time. Run it once per checkout (``PYTHONPATH`` picks the code measured)::

    PYTHONPATH=/tmp/base/src .venv/bin/python benchmarks/placement_calls.py --jobs 2000
    PYTHONPATH=src .venv/bin/python benchmarks/placement_calls.py --jobs 2000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time


def main() -> None:
    """Print the call count and the top functions of the timed decisions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", default="rollmux")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    import rollmux.experiments.placement_bench as pb

    hw = pb.load_hardware()
    mix = pb.production_mix(args.jobs + args.decisions, args.seed, hw)
    placer = pb.get_policy(args.policy)
    snapshot = pb.empty_snapshot(hw)
    for job in mix[:args.jobs]:
        snapshot = pb.apply(snapshot, placer.place(job, snapshot))
    arrivals = mix[args.jobs:]
    for job in arrivals:  # resolved before timing, as bench_placement does
        pb.resolve(job, hw)
    prof = cProfile.Profile()
    cpu = time.thread_time()
    prof.enable()
    for job in arrivals:
        placer.place(job, snapshot)
    prof.disable()
    cpu = time.thread_time() - cpu
    stats = pstats.Stats(prof)
    print(f"{args.jobs} jobs, {len(snapshot.groups)} groups, {args.decisions} decisions: "
          f"{stats.total_calls} calls ({stats.total_calls / args.decisions:.1f} per "
          f"decision), {cpu:.2f} s CPU under the profiler")
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue().split("\n\n", 2)[-1].rstrip())


if __name__ == "__main__":
    main()
