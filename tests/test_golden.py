"""Golden outputs: every built-in policy, both fidelities, stochastic and expected phases.

Each run replays one of the tiny traces of ``tests/golden/traces/`` through the
``rollmux simulate`` command (in process) and reduces its output folder to a few
reviewable tables; the micro-benchmark tables (Table 4, Fig. 10, Fig. 12) are computed
with a few iterations. The tables are compared with the files under ``tests/golden/``
cell by cell (numbers to a relative 1e-9). They change only on purpose:

    .venv/bin/python -m pytest tests/test_golden.py --update-golden

rewrites them, and the refresh is committed on its own with a message that says what
moved and why. A newly registered policy has no golden rows until such a refresh, so the
test fails for it: adding a policy is a reviewed change of the golden outputs too. Only
the built-in policies are replayed (``builtin_policy_names``): an installed plug-in is
tested by tests/test_policy_plugin.py, and does not change what this suite checks.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from rollmux.cli import main as cli_main
from rollmux.placement import builtin_policy_names

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
TRACES = ("tiny-sim", "tiny-prod")

#: Phase modes of every policy: (label, extra ``rollmux simulate`` arguments).
MODES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("event-stochastic", ()),
    ("event-expected", ("--deterministic",)),
    ("analytic", ("--fidelity", "analytic")),
)

#: Replay options beyond the defaults, on the tiny simulation trace.
FEATURE_RUNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("rollmux-drift-mixed", "rollmux", ("--drift", "Mixed")),
    ("rollmux-failures", "rollmux", ("--failures", "tests/golden/traces/tiny-sim-failures.csv")),
    ("rollmux-slo-range-group2", "rollmux", ("--slo", "1,2", "--max-group-size", "2")),
    ("rollmux-slo-1.2", "rollmux", ("--slo", "1.2")),
    ("rollmux-sync-flat", "rollmux", ("--sync", "flat")),
    ("rollmux-no-migration", "rollmux", ("--no-migration",)),
    ("random-seed1", "random", ("--seed", "1")),
    ("greedy-group3", "greedy", ("--max-group-size", "3")),
    ("regroup-interval-0.5h", "regroup", ("--regroup-interval-h", "0.5")),
    # SLO 3 lets the time slices pack several jobs (at U(1, 2) every slice holds one job).
    ("timeslice-slo-3", "timeslice", ("--slo", "3")),
)

#: Tables per trace (file name -> key columns that identify a row within a run).
TABLES = ("summary", "jobs", "events", "timeseries", "phases")

REL_TOL = 1e-9
ABS_TOL = 1e-9


def _runs(trace: str) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(run label, policy, extra arguments) of every golden run on ``trace``."""
    for policy in builtin_policy_names():
        for mode, extra in MODES:
            yield f"{policy}/{mode}", policy, extra
    if trace == "tiny-sim":
        yield from FEATURE_RUNS


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    """Nested JSON as (dotted key, JSON text of the leaf) rows."""
    if isinstance(value, dict):
        for key in sorted(value):
            _flatten(f"{prefix}.{key}" if prefix else str(key), value[key], out)
    else:
        out.append((prefix, json.dumps(value, sort_keys=True)))


def _phase_digest(path: Path) -> pd.DataFrame:
    """The per-phase table reduced per (job, phase, pool): rows, spans, work and GPU time."""
    cols = ["job", "phase", "pool", "rows", "iterations", "first_start_s", "last_end_s",
            "work_s", "gpu_work_s"]
    if not path.exists():
        return pd.DataFrame(columns=cols)
    ph = pd.read_csv(path)
    ph["gpu_work_s"] = ph["work_s"] * ph["gpus"]
    out = ph.groupby(["job", "phase", "pool"], sort=True).agg(
        rows=("node", "size"), iterations=("iteration", "nunique"),
        first_start_s=("start_s", "min"), last_end_s=("end_s", "max"),
        work_s=("work_s", "sum"), gpu_work_s=("gpu_work_s", "sum")).reset_index()
    return out[cols]


def _run_tables(out: Path) -> dict[str, pd.DataFrame]:
    """One run's output folder as the golden tables (without the run column)."""
    rows: list[tuple[str, str]] = []
    _flatten("summary", json.loads((out / "summary.json").read_text()), rows)
    _flatten("config", json.loads((out / "config.json").read_text()), rows)
    return {
        "summary": pd.DataFrame(rows, columns=["key", "value"]),
        "jobs": pd.read_csv(out / "jobs.csv", keep_default_na=False, dtype=str),
        "events": pd.read_csv(out / "events.csv", keep_default_na=False, dtype=str),
        "timeseries": pd.read_csv(out / "timeseries.csv", keep_default_na=False, dtype=str),
        "phases": _phase_digest(out / "phases.csv").astype(str),
    }


def _trace_tables(trace: str, tmp: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> dict[str, pd.DataFrame]:
    """Every golden run on ``trace``, each table concatenated with a leading ``run``."""
    monkeypatch.chdir(ROOT)  # trace paths (recorded in config.json) relative to the repo
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLES}
    for label, policy, extra in _runs(trace):
        out = tmp / label.replace("/", "__")
        argv = ["simulate", "--trace", f"tests/golden/traces/{trace}.csv", "--policy", policy,
                "--out", str(out), "--quiet", *extra]
        code = cli_main(argv)
        assert code == 0, f"{label}: rollmux {' '.join(argv)} exited {code}"
        for name, frame in _run_tables(out).items():
            frame.insert(0, "run", label)
            parts[name].append(frame)
    return {name: pd.concat(frames, ignore_index=True).astype(str)
            for name, frames in parts.items()}


def _microbench_tables() -> dict[str, pd.DataFrame]:
    """Table 4, the Fig. 10 throughput table and Fig. 12's migration table, 12 iterations."""
    from rollmux.experiments.microbench_sim import migration_table, table4, throughput_table

    return {
        "table4": table4(seed=0, iterations=12),
        "throughput": throughput_table(seed=0, iterations=12),
        "migration": migration_table(seed=0, iterations=12),
    }


def _same_cell(a: str, b: str) -> bool:
    """Equal text, or numbers equal to REL_TOL (NaN equals NaN)."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) and math.isnan(y):
        return True
    return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _differences(name: str, got: pd.DataFrame, want: pd.DataFrame, limit: int = 12
                 ) -> list[str]:
    """Readable differences between a computed and a golden table (at most ``limit``)."""
    if list(got.columns) != list(want.columns):
        return [f"{name}: columns {list(got.columns)} != golden {list(want.columns)}"]
    problems: list[str] = []
    if "run" in got.columns:
        got_runs, want_runs = set(got["run"]), set(want["run"])
        for run in sorted(got_runs - want_runs):
            problems.append(f"{name}: run {run!r} has no golden rows (new policy or run?)")
        for run in sorted(want_runs - got_runs):
            problems.append(f"{name}: golden run {run!r} was not produced")
        runs = sorted(got_runs & want_runs)
        pairs = [(run, got[got["run"] == run], want[want["run"] == run]) for run in runs]
    else:
        pairs = [("", got, want)]
    for run, g, w in pairs:
        where = f"{name}[{run}]" if run else name
        if len(g) != len(w):
            problems.append(f"{where}: {len(g)} rows, golden {len(w)}")
            continue
        for (_, gr), (_, wr) in zip(g.iterrows(), w.iterrows(), strict=True):
            for col in got.columns:
                if not _same_cell(str(gr[col]), str(wr[col])):
                    key = gr.iloc[1] if len(gr) > 1 else ""
                    problems.append(f"{where} row {key!r} {col}: {gr[col]} != golden {wr[col]}")
                    break
            if len(problems) >= limit:
                return problems
    return problems


def _check(tables: dict[str, pd.DataFrame], folder: Path, update: bool) -> None:
    """Compare ``tables`` with ``folder/<name>.csv`` (or rewrite them when updating)."""
    if update:
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in tables.items():
            frame.to_csv(folder / f"{name}.csv", index=False, lineterminator="\n")
        return
    problems: list[str] = []
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)} missing; run pytest --update-golden")
            continue
        want = pd.read_csv(path, keep_default_na=False, dtype=str)
        text = io.StringIO()
        frame.to_csv(text, index=False, lineterminator="\n")
        text.seek(0)
        got = pd.read_csv(text, keep_default_na=False, dtype=str)
        problems += _differences(name, got, want)
    assert not problems, (
        "golden outputs changed (refresh on purpose with pytest --update-golden and "
        "commit the refresh alone, saying what moved and why):\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("trace", TRACES)
def test_replay_outputs_match_golden(trace: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     update_golden: bool) -> None:
    """Every policy x phase mode (and the feature runs) reproduce the golden tables."""
    tables = _trace_tables(trace, tmp_path, monkeypatch)
    _check(tables, GOLDEN / trace, update_golden)


def test_microbench_tables_match_golden(update_golden: bool) -> None:
    """Table 4, Fig. 10 and Fig. 12's tables (stochastic, 12 iterations) match the golden."""
    tables = {name: frame.astype(str) for name, frame in _microbench_tables().items()}
    _check(tables, GOLDEN / "microbench", update_golden)


def test_golden_comparison_catches_a_change() -> None:
    """The comparison flags a changed number, a missing run and a new run."""
    want = pd.DataFrame({"run": ["a", "a", "b"], "k": ["x", "y", "x"],
                         "v": ["1.0", "2.0", "3.0"]})
    assert _differences("t", want.copy(), want) == []
    near = want.copy()
    near.loc[0, "v"] = "1.0000000000001"
    assert _differences("t", near, want) == []
    moved = want.copy()
    moved.loc[1, "v"] = "2.001"
    assert any("2.001" in p for p in _differences("t", moved, want))
    new = pd.concat([want, pd.DataFrame({"run": ["c"], "k": ["x"], "v": ["1"]})])
    assert any("'c' has no golden rows" in p for p in _differences("t", new, want))
    assert any("'b' was not produced" in p
               for p in _differences("t", want[want["run"] != "b"], want))
