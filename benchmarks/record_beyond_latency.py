"""Record the decision latencies of the beyond-the-paper comparison (benchmarks/recorded/).

Rule ``beyond_repeat`` (workflow/rules/beyond.smk) compares policies on the same replays;
their decision latency is a timing, different on every run, so that two runs of the
pipeline give byte-identical results and claims files the rule reads the latencies
recorded here by default (``sim.beyond.measure_latency: false``); set it to true to time
them during the run instead.

For every replay of the comparison in the given configs (``SweepPlan.repeat``: the quick
and the paper profile by default), this script runs the replay (``rollmux.sim.run_replay``,
no output folder) and times its decisions (``rollmux.sim.policy_compare.latency_row``):

    .venv/bin/python benchmarks/record_beyond_latency.py    # about 3-5 min on 2 cores

Writes benchmarks/recorded/beyond_repeat_latency.csv and beyond_repeat_machine.json.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from record_table5 import machine

from rollmux.io import write_csv, write_json
from rollmux.sim import run_replay
from rollmux.sim.policy_compare import LATENCY_COLUMNS, latency_row
from rollmux.sim.sweeps import sweep_plan, window_name, window_trace_text

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "recorded"


def _trace_path(name: str, scratch: Path) -> Path:
    """A shipped trace, or the window ``<base>-first<N>`` of one written into ``scratch``."""
    shipped = ROOT / "traces" / f"{name}.csv"
    if shipped.is_file():
        return shipped
    base, _, n = name.rpartition("-first")
    source = ROOT / "traces" / f"{base}.csv"
    path = scratch / f"{window_name(base, int(n))}.csv"
    path.write_text(window_trace_text(source.read_text(encoding="utf-8"), int(n), str(source)),
                    encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Replay and time every comparison replay of the configs; write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", type=Path,
                        default=[ROOT / "config" / "config.yaml", ROOT / "config" / "paper.yaml"],
                        help="pipeline configs whose comparison replays are recorded")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder")
    args = parser.parse_args(argv)
    keys = []
    for path in args.configs:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        keys += sweep_plan(config.get("sim", {}), int(config.get("seed", 0))).repeat
    before = machine()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for key in sorted(set(keys)):
            trace = _trace_path(key.trace, Path(scratch))
            folder = Path(scratch) / "run"
            run_replay(key.spec(trace), folder)
            rows.append(latency_row(folder, trace))
            print(f"{key.trace} {key.policy}: median {rows[-1]['decision_median_ms']:.2f} ms",
                  flush=True)
    write_csv(pd.DataFrame(rows, columns=list(LATENCY_COLUMNS)),
              args.out / "beyond_repeat_latency.csv")
    write_json({**before, "load_average_1m_after": os.getloadavg()[0]},
               args.out / "beyond_repeat_machine.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
