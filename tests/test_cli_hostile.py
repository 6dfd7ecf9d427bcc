"""Hostile input to the command line (issue 22, item 5): one clean line, a documented exit
status, nothing changed on disk.

Classes, each checked in general (every option or input path of the parser where one
applies), not only on the issue's examples:

* a defect repeated on many rows is one line naming the rows;
* echoed input is bounded (a few dozen characters, escaped), whatever its size or bytes;
* a path that names no regular file (a FIFO, a device, a socket, a folder) is refused at
  once, never read;
* a number beyond an option's range (1e308, a 400-digit integer) names the option and its
  limit, with no warning or traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollmux.cli import build_parser, main
from rollmux.errors import ECHO_LIMIT, LINE_LIMIT, ExitStatus, bound_line, echo, row_ranges
from rollmux.io import InputPathError, open_input, read_yaml
from rollmux.traces.errors import TraceError
from rollmux.traces.loader import load_trace

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "traces" / "production-default.csv"
ROLLMUX = [sys.executable, "-m", "rollmux.cli"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """Run the CLI in-process: exit status, stdout, the error lines of stderr."""
    code = main(argv)
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("rollmux: error:")]
    assert len(errors) == len([line for line in captured.err.splitlines()
                               if not line.startswith("rollmux: ") or "error" in line]), \
        captured.err
    assert "Traceback" not in captured.err and "Warning" not in captured.err, captured.err
    return code, captured.out, errors


def snapshot(folder: Path) -> dict[str, int]:
    """Every path below ``folder`` with its size (nothing may change on disk)."""
    return {str(p.relative_to(folder)): p.lstat().st_size for p in folder.rglob("*")}


def trace_lines() -> list[str]:
    """The shipped production trace's lines (comments, header, 200 job rows)."""
    return TRACE.read_text(encoding="utf-8").splitlines()


def write_trace(path: Path, lines: list[str]) -> Path:
    """Write trace lines to ``path``."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    return path


def with_cell(column: str, value: str, rows: slice = slice(0, 1)) -> list[str]:
    """The shipped trace with ``column`` set to ``value`` on the job rows ``rows``."""
    lines = trace_lines()
    first = next(i for i, line in enumerate(lines) if not line.startswith("#")) + 1
    header = lines[first - 1].split(",")
    for i in range(first, len(lines))[rows]:
        cells = lines[i].split(",")
        cells[header.index(column)] = value
        lines[i] = ",".join(cells)
    return lines


# --------------------------------------------------------------------------- repeated defects


def test_row_ranges_name_runs_and_count_scattered_rows() -> None:
    """Consecutive rows are one range; scattered rows are listed, then counted."""
    assert row_ranges(range(2, 202)) == "2-201"
    assert row_ranges([9, 2, 5, 10, 11, 12]) == "2, 5, 9-12 (6 rows)"
    assert row_ranges(range(1, 100, 2)) == "1, 3, 5, 7, 9, 11, ... (50 rows)"


def test_trailing_comma_on_every_row_is_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A trailing comma on all 200 rows: one line naming rows 1-200, exit 1, no output."""
    lines = trace_lines()
    bad = [line if line.startswith("#") or line.startswith("job_id") else line + ","
           for line in lines]
    trace = write_trace(tmp_path / "comma.csv", bad)
    out = tmp_path / "out"
    before = snapshot(tmp_path)
    code, _, errors = run(["simulate", "--trace", str(trace), "--policy", "rollmux",
                           "--out", str(out), "--quiet"], capsys)
    assert code == ExitStatus.INVALID_INPUT
    assert errors == [f"rollmux: error: {trace}:4: rows 1-200, column *: row has extra "
                      f"fields: expected 26 fields, found 27"]
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(("column", "value", "fragment"), [
    ("slo", "abc", "column slo: not a number: 'abc' (float expected)"),
    ("slo", "0.5", "column slo: 0.5 must be >= 1"),
    ("rollout_gpu_type", "B200", "column rollout_gpu_type: unknown GPU type 'B200'"),
])
def test_one_bad_value_on_many_rows_is_one_line(tmp_path: Path, column: str, value: str,
                                                fragment: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The same bad value in rows 3-150 of any column: one line with the rows."""
    trace = write_trace(tmp_path / "t.csv", with_cell(column, value, slice(2, 150)))
    code, _, errors = run(["trace", "validate", str(trace)], capsys)
    assert code == ExitStatus.INVALID_INPUT
    assert len(errors) == 1, errors
    assert f"rows 3-150, {fragment}" in errors[0], errors


def test_different_defects_keep_their_own_lines(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Two kinds of defect: one line each (with its rows), then the count."""
    lines = with_cell("slo", "abc", slice(0, 5))
    first = next(i for i, line in enumerate(lines) if line.startswith("job_id")) + 1
    lines[first + 9] += ","
    trace = write_trace(tmp_path / "t.csv", lines)
    code, _, errors = run(["trace", "validate", str(trace)], capsys)
    assert code == ExitStatus.INVALID_INPUT
    assert len(errors) == 3, errors
    assert "rows 1-5, column slo: not a number: 'abc'" in errors[0]
    assert "row 10, column *: row has extra fields" in errors[1]
    assert errors[2] == f"rollmux: error: 6 problems in {trace}"


# --------------------------------------------------------------------------- bounded echo


def test_echo_is_bounded_escaped_and_says_the_length() -> None:
    """echo() quotes, escapes and cuts a value, keeping repr() for short clean text."""
    assert echo("B200") == repr("B200")
    assert echo("a\x1b[31mb") == "'a\\x1b[31mb'"
    assert echo("a\udcc3b") == "'a\\xc3b'"
    long = echo("x" * 10_000_000)
    assert long == f"'{'x' * ECHO_LIMIT}...' (10,000,000 characters)"


def test_bound_line_cuts_long_quoted_values_then_the_line() -> None:
    """A line past LINE_LIMIT: long quoted values cut first, then the line itself."""
    line = bound_line(f"bad value {'z' * 5000!r} here")
    assert line == f"bad value '{'z' * ECHO_LIMIT}...' (5,000 characters) here"
    assert len(bound_line("q" * 100_000)) < LINE_LIMIT + 40


@pytest.mark.parametrize(("column", "value"), [
    ("workload", "w" * 10_000_000),       # a 10 MB text cell
    ("slo", "9" * 100_000),               # a 100 kB number
    ("job_id", "a\x1b[2J" + "y" * 5000),  # control characters in a long id
    ("model_size_b", "0." + "0" * 100_000 + "1"),  # a long number below the bound
])
def test_huge_cells_are_echoed_bounded(tmp_path: Path, column: str, value: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever a cell holds, each error line stays short and escaped (exit 1)."""
    trace = write_trace(tmp_path / "big.csv", with_cell(column, value))
    code, out, errors = run(["trace", "validate", str(trace)], capsys)
    assert code == ExitStatus.INVALID_INPUT and out == ""
    assert errors and all(len(line) < 300 for line in errors), [len(e) for e in errors]
    assert all("\x1b" not in line for line in errors)


def test_binary_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Random bytes or a gzip-compressed trace as a trace: one line, nothing echoed."""
    import gzip

    rng = __import__("random").Random(0)
    for name, data in (("random.csv", bytes(rng.randrange(256) for _ in range(200_000))),
                       ("packed.csv", gzip.compress(TRACE.read_bytes()))):
        path = tmp_path / name
        path.write_bytes(data)
        code, _, errors = run(["trace", "validate", str(path)], capsys)
        assert code == ExitStatus.INVALID_INPUT
        assert errors == [f"rollmux: error: {path}:1: row 0, column *: not a CSV trace: the "
                          f"header line holds binary data (non-UTF-8 bytes or control "
                          f"characters)"]


@pytest.mark.parametrize("argv", [
    ["simulate", "--trace", str(TRACE), "--policy", "rollmux", "--slo", "s" * 100_000],
    ["simulate", "--trace", str(TRACE), "--policy", "rollmux", "--drift", "d" * 100_000],
    ["simulate", "--trace", str(TRACE), "--policy", "rollmux", "--hardware-overrides",
     "[" + "1," * 50_000 + "1]"],
    ["bench", "placement", "--jobs", "j" * 100_000],
    ["meta-iteration", "--rollout", "1", "--train", "1", "--order", "o" * 100_000],
    ["meta-iteration", "--rollout", "1", "--train", "1", "--rollout-node", "9" * 100_000],
    ["trace", "generate", "simulation", "--out", "x.csv", "--profile", "p" * 100_000],
])
def test_long_option_values_are_echoed_bounded(argv: list[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A 100 kB option value: one short error line, exit 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    code, _, errors = run(argv, capsys)
    assert code == ExitStatus.USAGE
    assert len(errors) == 1 and len(errors[0]) < 300, errors
    assert snapshot(tmp_path) == {}


# --------------------------------------------------------------------------- non-regular files


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A FIFO, a socket, a character device and a folder."""
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock.csv"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    try:
        yield {"a named pipe (FIFO)": fifo, "a socket": sock_path,
               "a character device": Path("/dev/zero"), "a folder": folder}
    finally:
        sock.close()


def input_path_options() -> list[tuple[str, ...]]:
    """(command..., option) of every argument whose type is an input file, from the parser
    (a positional argument: option '')."""
    from test_cli_startup import command_paths

    from rollmux.cliutil import input_file, updatable_file

    out = []
    for path in command_paths(build_parser()):
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[name]
        for action in parser._actions:
            if action.type in (input_file, updatable_file):
                out.append((*path, action.option_strings[0] if action.option_strings else ""))
    return out


def test_input_path_options_are_found() -> None:
    """The walk finds the trace, failures, hardware and plug-in-free inputs."""
    found = input_path_options()
    assert ("simulate", "--trace") in found and ("simulate", "--failures") in found
    assert ("trace", "validate", "") in found and ("calibration", "--update-doc") in found
    assert len(found) >= 12


@pytest.mark.parametrize("where", input_path_options(), ids="-".join)
def test_every_input_path_option_refuses_non_regular_files(
        where: tuple[str, ...], specials: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each input path option refuses a FIFO, a socket, a device and a folder at once:
    one line naming the path and what it is, exit 2, nothing changed."""
    *command, option = where
    before = snapshot(tmp_path)
    for kind, path in specials.items():
        argv = [*command, *([option] if option else []), str(path)]
        code, _, errors = run(argv, capsys)
        assert code == ExitStatus.USAGE, (argv, errors)
        assert len(errors) == 1 and (f"{path} is {kind}" in errors[0]
                                     or f"{path} is a folder; expected a file" in errors[0]), \
            errors
    assert snapshot(tmp_path) == before


@pytest.mark.subprocess
def test_fifo_trace_never_hangs_the_installed_command(tmp_path: Path) -> None:
    """`rollmux simulate --trace FIFO` and `rollmux trace validate FIFO`: one line, exit 2,
    long before any timeout (no writer ever opens the FIFO)."""
    fifo = tmp_path / "trace.csv"
    os.mkfifo(fifo)
    for argv in (["simulate", "--trace", str(fifo), "--policy", "rollmux"],
                 ["trace", "validate", str(fifo)]):
        result = subprocess.run([*ROLLMUX, *argv], capture_output=True, text=True,
                                timeout=120, check=False, cwd=tmp_path)
        assert result.returncode == ExitStatus.USAGE
        assert result.stderr.count("\n") == 1 and "is a named pipe (FIFO)" in result.stderr
    assert snapshot(tmp_path) == {"trace.csv": 0}


def test_library_readers_refuse_non_regular_files(specials: dict[str, Path]) -> None:
    """load_trace, read_yaml and open_input refuse a FIFO or a device without reading."""
    for kind, path in specials.items():
        with pytest.raises(TraceError) as error:
            load_trace(path)
        assert str(error.value) == f"{path}:0: row 0, column *: is {kind}, not a regular file"
        with pytest.raises(ValueError, match=re.escape(f"{path} is {kind}")):
            read_yaml(path)
        with pytest.raises(InputPathError, match=re.escape(f"{path} is {kind}")):
            open_input(path)


def test_lengths_folder_with_a_fifo_inside(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO named like a PolyTrace lengths file inside `trace lengths PATH`: one located
    line (exit 1), not a hang; the library reader refuses it too."""
    from rollmux.traces.polytrace import LengthsError, read_lengths

    folder = tmp_path / "w"
    folder.mkdir()
    os.mkfifo(folder / "packed_lengths_step_1.jsonl")
    code, _, errors = run(["trace", "lengths", str(folder)], capsys)
    assert code == ExitStatus.INVALID_INPUT and len(errors) == 1, errors
    assert str(folder) in errors[0]
    with pytest.raises(LengthsError):
        read_lengths(folder)


# --------------------------------------------------------------------------- numeric overflow


def numeric_options() -> list[tuple[tuple[str, ...], str, str]]:
    """(command, option, kind) of every option typed by cliutil.integer or cliutil.number."""
    from test_cli_startup import command_paths

    out = []
    for path in command_paths(build_parser()):
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[name]
        for action in parser._actions:
            kind = getattr(action.type, "__name__", "")
            if kind in ("integer", "number") and action.option_strings:
                out.append((path, action.option_strings[0], kind))
    return out


def test_numeric_options_are_found() -> None:
    """The walk finds seeds, counts, sizes, rates and limits of several commands."""
    found = {(path, option) for path, option, _ in numeric_options()}
    assert (("simulate",), "--seed") in found and (("bench",), "--time-limit-s") in found
    assert (("trace", "generate"), "--rate-scale") in found
    assert len(found) >= 25


@pytest.mark.parametrize(("path", "option", "kind"), numeric_options(),
                         ids=lambda v: "-".join(v) if isinstance(v, tuple) else str(v))
def test_every_numeric_option_refuses_overflow_naming_its_limit(
        path: tuple[str, ...], option: str, kind: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """1e308 (a number) or a 400-digit integer: one line naming the option and its
    limit, exit 2."""
    for value in (["1e308", "-1e308"] if kind == "number" else ["9" * 400, "-" + "9" * 400]):
        code, _, errors = run([*path, f"{option}={value}"], capsys)
        assert code == ExitStatus.USAGE
        assert len(errors) == 1 and f"argument {option}" in errors[0], errors
        assert "out of range" in errors[0] and ("must be" in errors[0]
                                                or "expected an integer from" in errors[0])
        assert len(errors[0]) < 300


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--drift", "increasing-1e308"],
     "--drift 'increasing-1e308': strength 1e+308 is out of range: must be <= 100"),
    (["--drift", "decreasing-1e20"],
     "--drift 'decreasing-1e20': strength 1e+20 is out of range: must be <= 100"),
    (["--slo", "1e308"], "--slo '1e308': an SLO of 1e+308 is out of range: must be <= 100"),
    (["--slo", "1,1e308"], "an SLO of 1e+308 is out of range: must be <= 100"),
    (["--hardware-overrides", '{"gpus.H20.price_usd_per_h": 1e308}'],
     "--hardware-overrides: gpus.H20.price_usd_per_h = 1e+308 is out of range: must be <= "
     "1e+09"),
    (["--hardware-overrides", '{"node.gpus_per_node": ' + "9" * 400 + "}"],
     "--hardware-overrides: node.gpus_per_node = 999999999999... (400 digits) is out of "
     "range"),
])
def test_text_options_with_numbers_refuse_overflow(extra: list[str], fragment: str,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Numbers inside --drift, --slo and --hardware-overrides: one line naming the option
    and the limit, exit 2, before the trace is read; no numpy warning; nothing written."""
    out = tmp_path / "out"
    code, _, errors = run(["simulate", "--trace", str(TRACE), "--policy", "rollmux",
                           "--out", str(out), "--quiet", *extra], capsys)
    assert code == ExitStatus.USAGE
    assert len(errors) == 1 and fragment in errors[0], errors
    assert not out.exists()


def test_meta_iteration_node_and_order_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    """Node names and job orders of 400 digits: one line naming the option and the limit."""
    base = ["meta-iteration", "--rollout", "10", "2", "--train", "2", "10"]
    code, _, errors = run([*base, "--rollout-node", "9" * 400 + ",0"], capsys)
    assert code == ExitStatus.USAGE and "is out of range: expected 0 to 1000000" in errors[0]
    code, _, errors = run([*base, "--order", "9" * 400 + ",0"], capsys)
    assert code == ExitStatus.USAGE and "--order" in errors[0] and "0 to 1000000" in errors[0]


def test_slo_limit_is_the_trace_schema_bound() -> None:
    """--slo's limit is the trace schema's bound on the slo column (one limit, not two)."""
    from rollmux.sim.replay import SLO_MAX
    from rollmux.traces.schema import load_schema

    assert load_schema().column("slo").le == SLO_MAX
