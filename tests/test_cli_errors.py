"""The command line's surface under bad input (issue 13): one test per kind of failure.

Every command ends with a status of the README's table, prints `rollmux: error: ...` on
one line per problem, never a traceback, checks its output paths before any work and
writes nothing outside `--out`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rollmux import cli
from rollmux.cli import main
from rollmux.errors import ExitStatus, exit_status_markdown, printable
from rollmux.jobs import RLJob
from rollmux.theorem1 import cli as theorem1_cli
from rollmux.traces import cli as traces_cli
from rollmux.traces.writer import trace_text

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
ROLLMUX = [sys.executable, "-m", "rollmux.cli"]
HEADER = "job_id,model_size_b,max_response_tokens,turns,arrival_s,rollout_s,train_s,iterations"


def tiny_trace(path: Path, n: int = 3) -> Path:
    """A small valid trace with direct phase times (replays in well under a second)."""
    jobs = [RLJob(f"t{k}", 7.0, 4096, rollout_s=100.0 + 20 * k, train_s=60.0,
                  rollout_max_s=130.0 + 20 * k, train_max_s=70.0, iterations=4,
                  arrival_s=30.0 * k, slo=1.5) for k in range(n)]
    path.write_text(trace_text(jobs), encoding="utf-8")
    return path


def one_row_trace(path: Path, row: str) -> Path:
    """A trace of the columns of HEADER with one data row."""
    path.write_bytes(f"{HEADER}\n{row}\n".encode("utf-8", errors="surrogateescape"))
    return path


#: A progress line (stderr is not a terminal here): written on the clock, so some runs
#: have them and some not; rollmux.cliutil.LineProgress and tests/test_cli_startup.py.
PROGRESS_LINE = re.compile(r"^rollmux: (?!error: )[^:]+: (.* )?\d+ s( of at most .*)?( \[.*\])?$")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process: exit status, stdout, stderr without progress lines."""
    code = main(argv)
    captured = capsys.readouterr()
    err = "".join(line for line in captured.err.splitlines(keepends=True)
                  if not PROGRESS_LINE.match(line.rstrip("\n")))
    return code, captured.out, err


def assert_one_error(err: str, *fragments: str) -> None:
    """stderr is one `rollmux: error:` line holding every fragment, and no traceback."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rollmux: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, err)
    assert "Traceback" not in err and "[Errno" not in err


def files_under(folder: Path) -> set[str]:
    """Every file and folder below ``folder``, relative."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# --------------------------------------------------------------------------- the table


def test_readme_exit_status_table_is_the_code_table() -> None:
    """The README's exit-status table is exactly the one rollmux.errors defines."""
    assert exit_status_markdown() in README.read_text(encoding="utf-8")
    codes = [int(s) for s in ExitStatus]
    assert codes == sorted(set(codes)) and codes[:3] == [0, 1, 2] and 130 in codes


def test_help_lists_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    """`rollmux --help` names every exit status."""
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    for status in ExitStatus:
        assert f"{int(status)} " in flat


# --------------------------------------------------------------------------- commands


def test_readme_theorem1_line_parses_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`rollmux theorem1 --instances 200 --seed 0 --out summary.csv` (README) is accepted
    as written; with fewer instances it writes the summary where --out says."""
    line = next(line for line in README.read_text(encoding="utf-8").splitlines()
                if "rollmux theorem1 --instances" in line)
    argv = line.split("#")[0].split()[1:]
    assert argv == ["theorem1", "--instances", "200", "--seed", "0", "--out", "summary.csv"]
    args = cli.build_parser().parse_args(argv)
    assert (args.instances, args.seed, args.out) == (200, 0, Path("summary.csv"))
    monkeypatch.chdir(tmp_path)
    argv[argv.index("200")] = "2"
    code, out, err = run(argv, capsys)
    assert (code, err) == (0, "")
    assert "wrote 5 family rows to summary.csv" in out
    assert files_under(tmp_path) == {"summary.csv"}
    assert len(pd.read_csv(tmp_path / "summary.csv")) == 5


def test_theorem1_alone_prints_and_writes_nothing(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Without --out, `rollmux theorem1` prints the summary on stdout (a table, or CSV with
    --format csv) and writes no file (no more results/ in the current folder)."""
    monkeypatch.chdir(tmp_path)
    assert cli.build_parser().parse_args(["theorem1"]).out is None
    code, out, _ = run(["theorem1", "--instances", "1", "--format", "csv"], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith("family,objective,")
    code, out, _ = run(["theorem1", "--instances", "1"], capsys)
    assert code == 0
    assert out.split()[:2] == ["family", "objective"] and max(map(len, out.splitlines())) <= 100
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize("command", [["theorem1"], ["calibration"], ["theorem1-worst-case"]])
def test_forwarded_commands_take_help_through_the_main_cli(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`rollmux theorem1 --help` and friends show their own options (no forwarding)."""
    code, out, _ = run([*command, "--help"], capsys)
    assert code == 0 and f"usage: rollmux {command[0]}" in out and "--quiet" in out


def test_calibration_update_doc_rewrites_atomically(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`rollmux calibration --update-doc FILE` fills the marked tables; a file without
    markers is a one-line error naming the option."""
    doc = tmp_path / "model.md"
    doc.write_text("x\n<!-- calibration-table:start -->\n<!-- calibration-table:end -->\n"
                   "<!-- parameter-table:start -->\n<!-- parameter-table:end -->\n")
    code, _, _ = run(["calibration", "--update-doc", str(doc)], capsys)
    assert code == 0 and "| anchor |" in doc.read_text()
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    code, _, err = run(["calibration", "--update-doc", str(bare)], capsys)
    assert code == 2
    assert_one_error(err, "--update-doc", "calibration-table")
    assert files_under(tmp_path) == {"model.md", "bare.md"}


def test_bench_optimum_time_limit_is_reported(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """When --time-limit-s runs out, the JSON is printed, stderr says so, status 4."""
    from rollmux.placement import optimum

    def limited(jobs: object, hw: object, **kwargs: object) -> dict[str, object]:
        """A result whose solver ran out of time (as optimal_partition reports it)."""
        assert kwargs["time_limit_s"] == 0.5 and kwargs["bruteforce_time_limit_s"] == 0.5
        return {"proven_optimal": False, "bruteforce_finished": None}

    monkeypatch.setattr(optimum, "compare_solvers", limited)
    code, out, err = run(["bench", "optimum", "--jobs", "40", "--time-limit-s", "0.5",
                           "--format", "json"], capsys)
    assert code == ExitStatus.TIME_LIMIT
    assert '"proven_optimal": false' in out
    assert_one_error(err, "time limit of 0.5 s reached", "not proven")


def test_bench_optimum_time_limit_on_a_real_solve(capsys: pytest.CaptureFixture[str]) -> None:
    """A real brute force that cannot finish in 1 ms (10 jobs: 115,975 set partitions, so
    its deadline check, every 4,096 partitions, is reached): status 4 and the message."""
    code, out, err = run(["bench", "optimum", "--jobs", "10", "--time-limit-s", "0.001",
                           "--format", "json"], capsys)
    assert code == ExitStatus.TIME_LIMIT
    assert '"bruteforce_finished": false' in out
    assert_one_error(err, "time limit of 0.001 s reached", "brute force did not finish")


def test_time_limit_is_refused_for_bench_placement(capsys: pytest.CaptureFixture[str]) -> None:
    """--time-limit-s belongs to bench optimum."""
    code, _, err = run(["bench", "placement", "--jobs", "2", "--time-limit-s", "1"], capsys)
    assert code == 2
    assert_one_error(err, "--time-limit-s applies to `bench optimum` only")


# --------------------------------------------------------------------------- output paths


@pytest.mark.parametrize("command", [
    ["gantt", "--iterations", "1"],
    ["model", "microbench", "--scenarios", "temporal"],
    ["theorem1", "--instances", "1"],
    ["trace", "generate", "microbench"],
])
@pytest.mark.parametrize("where", ["empty", "under a file", "existing folder", "trailing slash",
                                   "unwritable"])
def test_bad_output_file_is_refused_before_any_work(
    command: list[str], where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--out ''`, under a file, at a folder, ending in /, or where nothing can be
    created: status 2, one line naming --out, nothing written, nothing computed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "afolder").mkdir()
    if where == "unwritable" and not Path("/proc/self").is_dir():
        pytest.skip("needs /proc (a folder where no file can be created, even by root)")
    out = {"empty": "", "under a file": "afile/out.csv", "existing folder": "afolder",
           "trailing slash": "new/", "unwritable": "/proc/out.csv"}[where]
    before = files_under(tmp_path)

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started before the output path was checked")

    for name in ("cmd_gantt", "cmd_microbench"):
        monkeypatch.setattr(cli, name, no_work)
    monkeypatch.setattr(theorem1_cli, "cmd_theorem1", no_work)
    monkeypatch.setattr(traces_cli, "cmd_generate", no_work)
    code, _, err = run([*command, "--out", out], capsys)
    assert code == 2
    assert_one_error(err, "argument --out: ")
    assert files_under(tmp_path) == before


@pytest.mark.parametrize(("out", "fragment"), [
    ("", "the path is empty"),
    (".", "current folder"),
    ("afile", "is a file; expected a folder"),
    ("foreign", "rollmux did not write it"),
    ("afile/below", "afile is a file"),
])
def test_simulate_refuses_a_bad_out_before_replaying(
    out: str, fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`simulate --out ''` no longer writes six files into the current folder: a bad
    --out (or one that is not an earlier output, which replacing would delete) is
    refused when the options are parsed, before the replay."""
    from rollmux.sim import replay

    trace = tiny_trace(tmp_path / "t.csv")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "thesis.tex").write_text("precious")
    before = files_under(tmp_path)

    def no_replay(*args: object, **kwargs: object) -> None:
        raise AssertionError("the replay ran before --out was checked")

    monkeypatch.setattr(replay, "run_replay", no_replay)
    code, _, err = run(["simulate", "--trace", str(trace), "--policy", "rollmux", "--out", out],
                       capsys)
    assert code == 2
    assert_one_error(err, "argument --out: ", fragment)
    assert files_under(tmp_path) == before


def test_simulate_replaces_its_own_output_but_not_a_file_added_to_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder rollmux wrote is replaced whole by a rerun; once a user adds a file to it,
    the rerun is refused (one line naming the folder and the file) and the file stays."""
    trace = tiny_trace(tmp_path / "t.csv")
    out = tmp_path / "run"
    argv = ["simulate", "--trace", str(trace), "--policy", "solo-d", "--quiet", "--out", str(out)]
    assert run(argv, capsys)[0] == 0
    assert run(argv, capsys)[0] == 0
    (out / "notes.txt").write_text("mine")
    before = files_under(tmp_path)
    code, _, err = run(argv, capsys)
    assert code == ExitStatus.USAGE
    assert_one_error(err, str(out), "notes.txt", "rollmux did not write")
    assert files_under(tmp_path) == before and (out / "notes.txt").read_text() == "mine"


def test_os_error_while_writing_names_the_output_not_a_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused write (here: the final rename) exits 3 naming --out's file, with no
    temporary name and no errno number; no temporary file stays behind."""

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied", str(src), None, str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    out = tmp_path / "phases.csv"
    code, _, err = run(["gantt", "--iterations", "1", "--out", str(out)], capsys)
    assert code == ExitStatus.OS_ERROR
    assert err == f"rollmux: error: {out}: permission denied\n"
    assert files_under(tmp_path) == set()


# --------------------------------------------------------------------------- input values


@pytest.mark.parametrize(("row", "column", "message"), [
    ("a,7,8192,1000000000,0,,,", "turns", "1000000000 is out of range: must be <= 1000 turns"),
    ("a,7,8192,1,1e18,,,", "arrival_s", "1e18 is out of range: must be <= 31536000 s"),
    ("a,7,2000000000,1,0,,,", "max_response_tokens",
     "2000000000 is out of range: must be <= 1048576 tokens"),
    ("a,1e-300,8192,1,0,,,", "model_size_b", "1e-300 must be >= 0.01 billion params"),
    ("a,1e308,8192,1,0,,,", "model_size_b",
     "1e308 is out of range: must be <= 10000 billion params"),
    ("a,7,8192,1,0,,,99999999999999999999", "iterations",
     "99999999999999999999 is out of range: must be <= 10000000 iterations"),
    ("a\x00b,7,8192,1,0,,,", "job_id", "control characters are not allowed: 'a\\x00b'"),
])
@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_implausible_trace_values_name_the_bound(
    row: str, column: str, message: str, command: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """turns=1e9, arrival_s=1e18, max_response_tokens=2e9, model_size_b=1e-300 or 1e308,
    a 20-digit integer, a NUL in a job id: status 1, one located line naming the bound
    (no 35-line OverflowError from simulate, no "internal error" from validate)."""
    trace = one_row_trace(tmp_path / "t.csv", row)
    argv = (["trace", "validate", str(trace)] if command == "validate" else
            ["simulate", "--trace", str(trace), "--policy", "rollmux", "--out",
             str(tmp_path / "out")])
    code, _, err = run(argv, capsys)
    assert code == ExitStatus.INVALID_INPUT
    assert_one_error(err, f"{trace}:2: row 1, column {column}: {message}")
    assert not (tmp_path / "out").exists()


def test_escape_sequences_in_a_header_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An escape sequence in a column name (and a file name) is printed escaped."""
    trace = tmp_path / "evil\x1b]0;title\x07.csv"
    trace.write_text("job_id,model_size_b,max_response_tokens,\x1b[2J\x1b[31mred\na,7,8192,1\n")
    code, _, err = run(["trace", "validate", str(trace)], capsys)
    assert code == 1
    assert "\x1b" not in err and "\x07" not in err
    assert_one_error(err, "column \\x1b[2J\\x1b[31mred: unknown column", "evil\\x1b]0;title\\x07")


def test_printable_escapes_controls_and_undecodable_bytes() -> None:
    """printable() keeps text readable and makes every control visible."""
    assert printable("plain 7B job, ü") == "plain 7B job, ü"
    assert printable("a\x00b\x1b[31m\n\t\x9b") == "a\\x00b\\x1b[31m\\n\\t\\x9b"
    assert printable(os.fsdecode(b"bad\xff.csv")) == "bad\\xff.csv"
    assert printable("\u202eevil") == "\\u202eevil"


@pytest.mark.parametrize(("argv", "fragment"), [
    (["bench", "placement", "--jobs", "99999999999999999999"],
     "argument --jobs: 99999999999999999999 is out of range"),
    (["theorem1", "--instances", "-5"], "argument --instances: -5 is out of range"),
    (["theorem1", "--seed", "1" * 30], "argument --seed: 1111"),
    (["bench", "placement", "--jobs", "x"], "argument --jobs: expected an integer, got 'x'"),
    (["meta-iteration", "--rollout", "nan", "--train", "1"], "expected a finite number"),
    (["meta-iteration", "--rollout", "1e308", "--train", "1"], "out of range: must be <="),
    (["meta-iteration", "--rollout", "1", "--train", "1", "--order", "x"], "--order 'x'"),
    (["trace", "adapt", "philly", "--path", "README.md", "--out", "o.csv",
      "--mean-duration-h", "30", "--max-duration-h", "20"],
     "--mean-duration-h 30 h must be below --max-duration-h 20 h"),
    (["trace", "adapt", "philly", "--path", "README.md", "--out", "o.csv",
      "--horizon-h", "-1"], "argument --horizon-h: -1 is out of range: must be > 0"),
    (["simulate", "--trace", "traces/microbench.csv", "--policy", "nope"],
     "unknown policy 'nope'"),
    (["simulate", "--trace", "traces/microbench.csv", "--policy", "rollmux", "--slo", "0.5"],
     "--slo '0.5'"),
    (["simulate", "--trace", "traces/microbench.csv", "--policy", "rollmux",
      "--hardware-overrides", '{"gpus.H20.price_usd_per_h": -1}'],
     "gpus.H20.price_usd_per_h must be positive"),
    (["trace", "validate", "no-such.csv"], "argument file: no-such.csv: no such file"),
    (["no-such-command"], "invalid choice: 'no-such-command'"),
])
def test_bad_arguments_are_one_line_naming_the_argument(
    argv: list[str], fragment: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Out-of-range numbers (a 20-digit integer is "out of range", not "not an integer"),
    non-numbers, unknown names, inconsistent options: status 2, one line, no traceback;
    durations in hours are reported in hours."""
    monkeypatch.chdir(REPO)
    code, _, err = run(argv, capsys)
    assert code == ExitStatus.USAGE
    assert_one_error(err, fragment)


def test_bad_hardware_and_workloads_files_are_one_line(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A hardware or workloads YAML that does not parse: status 2, file and line named."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpus: [unclosed\n")
    code, _, err = run(["model", "microbench", "--hardware", str(bad)], capsys)
    assert code == 2
    assert_one_error(err, str(bad), "line 2, column 1: invalid YAML")
    code, _, err = run(["trace", "generate", "production", "--workloads", str(bad), "--out",
                        str(tmp_path / "t.csv")], capsys)
    assert code == 2
    assert_one_error(err, str(bad), "invalid YAML")


@pytest.mark.parametrize(("content", "located"), [
    ("job_id,kill_at_s,resubmit_at_s\nt1,-5,\n", ":2: row 1, column kill_at_s: "),
    ("job_id,kill_at_s,resubmit_at_s\nt0,10,20\nzz,300,\n",
     ":3: row 2, column job_id: unknown job id 'zz' (not in the trace)"),
    ("job_id,kill_at_s\nt1,10\nt1,5\n", ":3: row 2, column kill_at_s: "),
    ("job_id,kill_at_s,when\nt1,10,3\n", ":1: row 0, column when: unknown column"),
    ("job_id,kill_at_s,resubmit_at_s\nt1,10\n", ":2: row 1, column *: truncated row"),
])
def test_failure_lists_are_located_with_1_based_rows(
    content: str, located: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad failure list exits 1 with file, line, 1-based row and column (rows used to
    be 0-based "rows[0]"), and an unknown job id is caught before the replay."""
    trace = tiny_trace(tmp_path / "t.csv")
    failures = tmp_path / "fail.csv"
    failures.write_text(content)
    code, _, err = run(["simulate", "--trace", str(trace), "--policy", "rollmux", "--failures",
                        str(failures), "--out", str(tmp_path / "out")], capsys)
    assert code == ExitStatus.INVALID_INPUT
    assert_one_error(err, f"{failures}{located}")
    assert "rows[" not in err and not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the handler


@pytest.mark.parametrize(("raised", "status", "expected"), [
    (KeyboardInterrupt(), ExitStatus.INTERRUPTED, ""),
    (OverflowError("(34, 'Numerical result out of range')"), ExitStatus.USAGE,
     "rollmux: error: a number overflowed: an input value is far outside its plausible "
     "range (trace fields: traces/README.md)\n"),
    (OSError(28, "No space left on device", "/x/y.csv"), ExitStatus.OS_ERROR,
     "rollmux: error: /x/y.csv: no space left on device\n"),
    (MemoryError(), ExitStatus.OS_ERROR, "rollmux: error: out of memory\n"),
    (BrokenPipeError(32, "Broken pipe"), ExitStatus.OK, ""),
    (ValueError("line one\nline two"), ExitStatus.USAGE, "rollmux: error: line one; line two\n"),
    (KeyError("oops"), ExitStatus.INTERNAL,
     "rollmux: error: internal error (KeyError: 'oops'); this is a bug, please report the "
     "command line (ROLLMUX_TRACEBACK=1 shows the traceback)\n"),
])
def test_one_handler_for_every_failure(
    raised: BaseException, status: ExitStatus, expected: str,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Interrupts, overflows, OS errors, memory, a closed pipe and bugs each become one
    line (or none) and a status of the table; never a traceback."""

    def fail(args: object) -> int:
        raise raised

    monkeypatch.setattr(cli, "cmd_meta_iteration", fail)
    monkeypatch.delenv("ROLLMUX_TRACEBACK", raising=False)
    code, _, err = run(["meta-iteration", "--rollout", "1", "--train", "1"], capsys)
    assert code == status
    assert err == expected


# --------------------------------------------------------------------------- subprocesses


@pytest.mark.subprocess
def test_python_m_theorem1_bad_instances_is_one_line() -> None:
    """`python -m rollmux.theorem1 --instances -5`: status 2, one line, no traceback."""
    result = subprocess.run([sys.executable, "-m", "rollmux.theorem1", "--instances", "-5"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert_one_error(result.stderr, "argument --instances: -5 is out of range")


def _repeated_trace(path: Path, copies: int) -> str:
    """The trace at ``path`` repeated ``copies`` times, each copy after the last arrival."""
    lines = path.read_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith("job_id,"))
    frame = pd.read_csv(path, comment="#")
    span = float(frame["arrival_s"].max()) + 1.0
    parts = []
    for k in range(copies):
        copy = frame.copy()
        copy["job_id"] = copy["job_id"].astype(str) + f"-c{k}"
        copy["arrival_s"] = copy["arrival_s"] + k * span
        parts.append(copy)
    body = pd.concat(parts).to_csv(index=False, lineterminator="\n")
    return "\n".join(lines[:header_at]) + "\n" + body


@pytest.mark.subprocess
def test_ctrl_c_during_simulate_exits_130_quietly(tmp_path: Path) -> None:
    """SIGINT while `simulate` works: status 130, nothing on stderr, nothing left behind.

    The signal is sent once the replay has begun writing its per-phase table into the
    temporary sibling of the output folder, so it lands inside the work (a FIFO as the
    trace, which this test used to block on, is now refused when the options are read).
    """
    trace = tmp_path / "trace.csv"
    # Six copies of the production trace one after another (a replay of 10-20 s), so the
    # signal lands inside the work even when this process is starved for seconds on a
    # loaded machine (with one copy it could land after the replay ended: status -2).
    trace.write_text(_repeated_trace(REPO / "traces" / "production-default.csv", 6))
    out = tmp_path / "out"
    # SIGINT at its default in the child, whatever this process has (a background job's
    # children inherit it ignored, and rollmux then leaves it ignored).
    proc = subprocess.Popen([*ROLLMUX, "simulate", "--trace", str(trace), "--policy", "rollmux",
                             "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    started = False
    while not started and time.monotonic() < deadline and proc.poll() is None:
        started = any(tmp_path.glob(".out*/phases.csv"))
        time.sleep(0.02)
    assert started, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert all(line.startswith("rollmux: simulate rollmux: ") for line in stderr.splitlines())
    assert files_under(tmp_path) == {"trace.csv"}


@pytest.mark.subprocess
def test_console_script_help_of_forwarded_command() -> None:
    """The installed `rollmux theorem1 --help` works (it used to fail)."""
    exe = Path(sys.executable).with_name("rollmux")
    if not exe.exists():
        pytest.skip("console script not installed")
    result = subprocess.run([str(exe), "theorem1", "--help"], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0 and "--instances" in result.stdout


# --------------------------------------------------------------------------- the fuzz test

#: Values that have broken parsers: empty, signs, huge, non-finite, control characters,
#: escape sequences, a lone surrogate (an undecodable byte of a file name), JSON.
NASTY = ("", " ", "-1", "0", "1", "2", "1e308", "-1e-300", "nan", "inf", "0x10", "1_000",
         "99999999999999999999", "1" * 45, "x", "a,b", "1,", ",", "+", "0+1,2", "2,0,1",
         "\x00", "a\x00b", "\x1b[31mred", "\x1b]0;t\x07", "\udcff", "\u202e", "é", "--",
         "-", "{}", "[]", '{"gpus.H20.price_usd_per_h": -1}', '{"node.x": 1}', "[[[[",
         '{"perf.train_mfu": "x"}', "trace", "1.2", "0.5", "1,2", "2,1")
#: Paths relative to the example's folder (see `fuzz_folder`), good and bad.
PATHS = ("", ".", "/", "t.csv", "bad.csv", "afile", "afile/x.csv", "afolder", "afolder/",
         "new.csv", "new/sub/x.csv", "new/", "/proc/x.csv", "nul\x00.csv", "\x1b[2J.csv",
         "no-such.csv", "out", "doc.md")
#: Small counts only, so that no valid combination runs for long.
COUNTS = ("1", "2", "0", "-5", "99999999999999999999", "x", "", "1e3", "nan")

nasty = st.sampled_from(NASTY) | st.text(max_size=8)
paths = st.sampled_from(PATHS)
counts = st.sampled_from(COUNTS)
flag = st.just(None)


def _one_of(*choices: str) -> st.SearchStrategy[str]:
    """A valid choice, sometimes a nasty value instead."""
    return st.sampled_from(choices) | nasty


#: Per command: its words, the strategy of its positional arguments, and its options
#: (option -> strategy of one value; None values are flags; `nargs` options get a list).
COMMANDS: dict[tuple[str, ...], tuple[st.SearchStrategy[list[str]], dict[str, Any]]] = {
    ("meta-iteration",): (st.just([]), {
        "--rollout": st.lists(nasty, min_size=1, max_size=3),
        "--train": st.lists(nasty, min_size=1, max_size=3),
        "--rollout-node": nasty, "--train-node": nasty, "--order": nasty}),
    ("model", "microbench"): (st.just([]), {
        "--scenarios": st.lists(_one_of("temporal", "train", "spatial"), max_size=2),
        "--hardware": paths, "--out": paths}),
    ("gantt",): (st.just([]), {
        "--job-types": st.lists(_one_of("A", "E"), min_size=2, max_size=2),
        "--iterations": counts, "--hardware": paths, "--out": paths}),
    ("theorem1",): (st.just([]), {
        "--instances": st.sampled_from(("1", "0", "-5", "x", "99999999999999999999")),
        "--seed": counts, "--out": paths, "--instances-out": paths, "--gap-out": paths,
        "--gap-instances": counts, "--quiet": flag}),
    ("calibration",): (st.just([]), {"--update-doc": paths, "--quiet": flag}),
    ("bench",): (st.lists(_one_of("placement", "optimum"), max_size=1), {
        "--jobs": counts, "--decisions": counts, "--seed": counts,
        "--time-limit-s": nasty, "--quiet": flag}),
    ("trace", "validate"): (st.lists(paths, max_size=1), {"--hardware": paths}),
    ("trace", "stats"): (st.lists(paths, max_size=1), {
        "--kind": _one_of("microbench", "other"), "--out": paths}),
    ("trace", "generate"): (st.lists(_one_of("microbench"), max_size=1), {
        "--seed": counts, "--out": paths, "--workloads": paths, "--profile": nasty,
        "--quiet": flag}),
    ("simulate",): (st.just([]), {
        "--trace": paths, "--policy": _one_of("rollmux", "solo-d", "greedy", "optimal"),
        "--seed": counts, "--out": paths, "--slo": nasty, "--max-group-size": counts,
        "--drift": _one_of("none", "Mixed", "increasing-1.0"), "--failures": paths,
        "--hardware-overrides": nasty, "--fidelity": _one_of("event", "analytic"),
        "--sync": _one_of("flat"), "--regroup-interval-h": nasty, "--deterministic": flag,
        "--no-phases": flag, "--quiet": flag}),
    (): (st.lists(nasty, max_size=2), {"--version": flag, "--help": flag}),
}
#: Options naming what a command may write (a file, or a folder replaced whole).
OUTPUT_OPTIONS = ("--out", "--instances-out", "--gap-out", "--check-out", "--update-doc")


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """A command line: a command's words, positionals and options with nasty values."""
    words = draw(st.sampled_from(sorted(COMMANDS)))
    positional, options = COMMANDS[words]
    argv = [*words, *draw(positional)]
    for option in draw(st.lists(st.sampled_from(sorted(options)), max_size=5)):
        value = draw(options[option]) if options[option] is not flag else None
        argv += [option] if value is None else [option, *value] if isinstance(value, list) \
            else [option, value]
    if words == ("simulate",) and "--out" not in argv:
        argv += ["--out", "out"]  # the default folder is under results/, outside this test
    return argv


def fuzz_folder(folder: Path) -> None:
    """The inputs a fuzzed command line may name: a valid and a broken trace, a file, a
    folder, an earlier simulate output and a Markdown file without table markers."""
    tiny_trace(folder / "t.csv")
    (folder / "bad.csv").write_bytes(b"job_id,turns\n\x00a,1e999\n")
    (folder / "afile").write_text("x\n")
    (folder / "afolder").mkdir()
    (folder / "afolder" / "keep.txt").write_text("precious\n")
    (folder / "doc.md").write_text("no markers\n")


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes (folders as empty values)."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b""
            for p in sorted(folder.rglob("*"))}


def allowed_outputs(argv: list[str]) -> list[Path]:
    """The paths the command line names as outputs (normalised, relative)."""
    return [Path(os.path.normpath(argv[i + 1])) for i, word in enumerate(argv[:-1])
            if word in OUTPUT_OPTIONS and argv[i + 1] not in ("", ".", "/")]


@given(argv=command_lines())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_fuzzed_command_lines_never_trace_back(argv: list[str]) -> None:
    """Any command line: a status of the README's table (never 70, a bug), stderr only
    `rollmux: error:` lines, no traceback, and no file written or changed outside the
    paths given to --out (or --update-doc)."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        fuzz_folder(folder)
        before = snapshot(folder)
        cwd = Path.cwd()
        out, err = io.StringIO(), io.StringIO()
        os.chdir(folder)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        finally:
            os.chdir(cwd)
        after = snapshot(folder)
    assert code in {int(s) for s in ExitStatus} and code != ExitStatus.INTERNAL, \
        (argv, code, err.getvalue())
    assert "Traceback" not in err.getvalue()
    assert all(line.startswith("rollmux: error: ") or PROGRESS_LINE.match(line)
               for line in err.getvalue().splitlines()), (argv, err.getvalue())
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    outputs = allowed_outputs(argv)
    stray = sorted(name for name in changed
                   if not any(Path(name) == o or o in Path(name).parents for o in outputs)
                   and not any(Path(name) in o.parents for o in outputs))
    assert stray == [], (argv, stray)


@st.composite
def trace_files(draw: st.DrawFn) -> bytes:
    """A trace file: a header of real and odd column names, rows of nasty cells."""
    columns = draw(st.lists(st.sampled_from([*HEADER.split(","), "slo", "x", "\x1b[1m", ""])
                            | nasty, min_size=1, max_size=9))
    rows = draw(st.lists(st.lists(nasty | st.sampled_from(["7", "4096", "a", "1e18", "1"]),
                                  min_size=0, max_size=len(columns) + 1), max_size=4))
    text = "\n".join([",".join(columns), *(",".join(row) for row in rows)])
    return draw(st.sampled_from(["", "# schema_version: 1\n", "# schema_version: 9\n"])) \
        .encode() + text.encode("utf-8", errors="surrogateescape")


@given(content=trace_files())
def test_fuzzed_traces_are_valid_or_located_problems(content: bytes) -> None:
    """`trace validate` on any bytes: status 0 or 1 (2 for an unusable value), stderr
    only `rollmux: error:` lines, each problem located by file and line."""
    with tempfile.TemporaryDirectory() as name:
        trace = Path(name) / "fuzz.csv"
        trace.write_bytes(content)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["trace", "validate", str(trace)])
    lines = err.getvalue().splitlines()
    assert code in (ExitStatus.OK, ExitStatus.INVALID_INPUT, ExitStatus.USAGE), \
        (content, code, lines)
    assert all(line.startswith("rollmux: error: ") for line in lines), lines
    if code == ExitStatus.INVALID_INPUT:
        assert all(f"{trace}:" in line or "problems in" in line for line in lines), lines


# --------------------------------------------------------------------------- progress


class Terminal(io.StringIO):
    """A captured stderr that says it is a terminal, so progress bars are drawn."""

    def isatty(self) -> bool:
        """Claim to be a terminal."""
        return True


@pytest.mark.parametrize(("argv", "bar"), [
    (["theorem1", "--instances", "1"], "theorem1:"),
    (["theorem1-worst-case", "--families", "b_shared_train", "--sizes", "2",
      "--max-duration", "2", "--examples", "2"], "worst case:"),
    (["bench", "placement", "--jobs", "2", "--decisions", "1"], "bench placement:"),
    (["bench", "optimum", "--jobs", "2"], "bench optimum:"),
    (["calibration"], "calibration:"),
    (["trace", "generate", "microbench", "--out", "m.csv"], "trace generate microbench:"),
    (["simulate", "--trace", "t.csv", "--policy", "rollmux", "--out", "o"], "simulate rollmux:"),
])
def test_long_commands_draw_a_progress_bar_on_a_terminal(
    argv: list[str], bar: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rollmux theorem1` used to run ~9 s silently: every command that can run for more
    than a few seconds draws a tqdm bar on a terminal, and none with --quiet."""
    monkeypatch.chdir(tmp_path)
    tiny_trace(tmp_path / "t.csv")
    for quiet in (False, True):
        err = Terminal()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main([*argv, "--quiet"] if quiet else argv)
        assert code == 0, err.getvalue()
        assert (bar in err.getvalue()) is not quiet, (quiet, err.getvalue())
