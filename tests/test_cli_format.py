"""`--format {table,csv,json}` (issue 22, item 5): every command that prints a table or a
result takes it; the default table fits 100 columns; csv and json hold the same rows in
full."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from rollmux.cli import build_parser, main
from rollmux.cliformat import CELL_MAX, WIDTH, flatten, record_text, table_text

REPO = Path(__file__).resolve().parents[1]
TRACE = str(REPO / "traces" / "production-default.csv")

#: A quick run of every command that takes --format, and whether it prints a table (rows)
#: or a record (one result).
RUNS: dict[tuple[str, ...], tuple[list[str], str]] = {
    ("meta-iteration",): (["--rollout", "10", "2", "--train", "2", "10"], "record"),
    ("model", "microbench"): ([], "table"),
    ("bench",): (["placement", "--jobs", "6", "--decisions", "3", "--quiet"], "record"),
    ("theorem1",): (["--instances", "1", "--quiet"], "table"),
    ("theorem1-worst-case",): (["--families", "b_shared_train", "--sizes", "2",
                                "--max-duration", "3", "--quiet"], "table"),
    ("trace", "stats"): ([TRACE, "--kind", "production"], "table"),
    # {tmp}: the test's temporary folder (generate writes its trace there).
    ("trace", "generate"): (["microbench", "--out", "{tmp}/micro.csv", "--quiet"], "table"),
    ("calibration",): (["--quiet"], "table"),
}


def commands_with_format() -> set[tuple[str, ...]]:
    """Every command of the parser that has a --format option."""
    from test_cli_startup import command_paths

    found = set()
    for path in command_paths(build_parser()):
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[name]
        if any("--format" in a.option_strings for a in parser._actions):
            found.add(path)
    return found


def test_every_table_command_takes_format() -> None:
    """The commands that print tables or results have --format; RUNS covers each of them
    (`trace lengths` needs a PolyTrace folder: tests/test_polytrace.py; `trace adapt`
    prints what `trace generate` does, through the same code; `simulate`: below)."""
    assert commands_with_format() == {*RUNS, ("trace", "lengths"), ("trace", "adapt"),
                                      ("simulate",)}


def printed(command: tuple[str, ...], fmt: str | None,
            capsys: pytest.CaptureFixture[str], tmp: Path) -> str:
    """What ``rollmux COMMAND ... [--format fmt]`` prints on stdout (exit 0)."""
    argv = [arg.replace("{tmp}", str(tmp)) for arg in RUNS[command][0]]
    assert main([*command, *argv, *(["--format", fmt] if fmt else [])]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(RUNS))
def test_formats_agree_and_the_table_fits(command: tuple[str, ...],
                                          capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    """Default: a table of at most 100 columns; csv and json: the same rows and fields."""
    table = printed(command, None, capsys, tmp_path)
    explicit = printed(command, "table", capsys, tmp_path)
    if command == ("bench",):  # timings differ from run to run; the fields do not
        assert [line.split()[0] for line in explicit.splitlines()] == \
            [line.split()[0] for line in table.splitlines()]
    else:
        assert table == explicit
    assert table.strip() and max(len(line) for line in table.splitlines()) <= WIDTH
    as_csv = pd.read_csv(io.StringIO(printed(command, "csv", capsys, tmp_path)))
    as_json = json.loads(printed(command, "json", capsys, tmp_path))
    if RUNS[command][1] == "record":
        assert isinstance(as_json, dict) and len(as_csv) == 1
        assert list(as_csv.columns) == list(flatten(as_json))
        for field in flatten(as_json):  # every field in the table, each on its own line
            assert any(line.startswith(field + " ") for line in table.splitlines()), field
    else:
        assert isinstance(as_json, list) and len(as_json) == len(as_csv)
        assert list(as_json[0]) == list(as_csv.columns)
        for column in as_csv.columns:  # every column appears in the table
            assert column in table.split()
        first = str(as_csv.iloc[0, 0])  # the first row's name starts a line of the table
        assert any(line.startswith(first) for line in table.splitlines())


def test_simulate_format_prints_the_whole_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """simulate: one summary line by default; --format prints summary.json whole, as the
    same fields in every format."""
    micro = str(REPO / "traces" / "microbench.csv")
    base = ["simulate", "--trace", micro, "--policy", "rollmux", "--quiet"]
    assert main([*base[:-1], "--out", str(tmp_path / "a")]) == 0
    line = capsys.readouterr().out
    assert len(line.splitlines()) == 1 and line.startswith("rollmux: 5/5 jobs completed")
    outputs = {}
    for fmt in ("table", "csv", "json"):
        assert main([*base, "--out", str(tmp_path / fmt), "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    summary = json.loads((tmp_path / "json" / "summary.json").read_text())
    assert json.loads(outputs["json"]) == summary
    fields = sorted(flatten(summary))
    assert sorted(pd.read_csv(io.StringIO(outputs["csv"])).columns) == fields
    for field in fields:
        assert any(line.startswith(field + " ") for line in outputs["table"].splitlines())


def test_wide_table_is_split_into_blocks_that_repeat_the_key_columns() -> None:
    """A table of 30 numeric columns: blocks of at most WIDTH characters, each starting
    with the row's name, every value present once."""
    frame = pd.DataFrame({"name": ["alpha", "beta"],
                          **{f"metric_{i:02d}": [i * 1.5, -i / 7] for i in range(30)}})
    text = table_text(frame)
    blocks = text.strip().split("\n\n")
    assert len(blocks) > 3
    for block in blocks:
        lines = block.splitlines()
        assert all(len(line) <= WIDTH for line in lines)
        assert [line.split()[0] for line in lines] == ["name", "alpha", "beta"]
    headers = [h for block in blocks for h in block.splitlines()[0].split()[1:]]
    assert headers == [f"metric_{i:02d}" for i in range(30)]


def test_table_cuts_long_cells_escapes_and_marks_missing_values() -> None:
    """A cell past CELL_MAX is cut with '...'; control characters are escaped; NaN, None
    and empty cells show as '-'; csv keeps every cell whole."""
    frame = pd.DataFrame({"id": ["a\x1b[31m", "b"], "note": ["x" * 500, None],
                          "value": [1.0, float("nan")]})
    text = table_text(frame)
    assert "\x1b" not in text and "a\\x1b[31m" in text
    assert "x" * (CELL_MAX - 3) + "..." in text and "x" * CELL_MAX not in text
    assert text.splitlines()[2].split()[1:] == ["-", "-"]
    assert max(len(line) for line in text.splitlines()) <= WIDTH


def test_record_text_aligns_fields_and_wraps_long_values() -> None:
    """Nested fields are dotted, values aligned, a long value wrapped within WIDTH."""
    text = record_text({"b": {"new-group": 0.6}, "plan": [[0, 1], [2]], "solver": "y " * 200,
                        "ok": True, "cost": 815.5199999})
    lines = text.splitlines()
    assert lines[0].split() == ["b.new-group", "0.6"]
    assert lines[1].split() == ["plan", "[[0,", "1],", "[2]]"]
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[-2].split() == ["ok", "true"] and lines[-1].split() == ["cost", "815.52"]
    column = lines[0].index("0.6")
    assert all(line[column - 2:column] == "  " for line in lines)


def test_trace_validate_summary_fits(capsys: pytest.CaptureFixture[str]) -> None:
    """`trace validate`'s summary wraps its long lines within WIDTH, under their text."""
    assert main(["trace", "validate", TRACE]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert any(line.startswith(" " * 17) and line.strip() for line in lines)
