"""Hypothesis fuzzing of the trace loader: malformed input only ever raises TraceError."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.traces import TraceError, load_trace
from rollmux.traces.schema import load_schema

VALID = (
    b"# schema_version: 1\n"
    b"job_id,model_size_b,max_response_tokens,turns,rollout_gpus,slo,rollout_s,workload\n"
    b"a,7,8192,1,8,1.5,300,math\n"
    b"b,14,16384,4,16,1.2,,swe\n"
    b"c,32,4096,1,16,2.0,120.5,\n"
)

NASTY = st.sampled_from(
    [b",", b"\n", b"\r\n", b'"', b"\xff", b"\x00", b"nan", b"-1", b"1e999", b"#", b" ", b"H100"]
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """The valid trace with a few random deletions, insertions and replacements."""
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        at = draw(st.integers(0, len(data)))
        if op == "delete":
            del data[at : at + draw(st.integers(1, 12))]
        else:
            chunk = draw(st.one_of(NASTY, st.binary(min_size=1, max_size=6)))
            if op == "insert":
                data[at:at] = chunk
            else:
                data[at : at + len(chunk)] = chunk
    return bytes(data)


def check_only_trace_errors(content: bytes) -> None:
    """Load content from a file: success, or TraceError whose problems are all located."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.csv"
        path.write_bytes(content)
        try:
            jobs = load_trace(path)
        except TraceError as exc:
            assert exc.problems
            names = set(load_schema().names) | {"*", "schema_version", "''"}
            for problem in exc.problems:
                assert problem.file == str(path)
                assert isinstance(problem.row, int) and problem.row >= 0
                assert isinstance(problem.line, int) and problem.line >= 0
                assert isinstance(problem.column, str) and problem.column
                assert problem.column in names or problem.row == 0
                assert "\n" not in str(problem).rstrip("\n").split(": ", 1)[0]
        else:
            assert all(job.job_id for job in jobs)


@given(mutated())
def test_mutated_traces_raise_only_trace_errors(content: bytes) -> None:
    """A randomly damaged valid trace loads or raises TraceError with row and column."""
    check_only_trace_errors(content)


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_trace_errors(content: bytes) -> None:
    """Arbitrary bytes never escape as anything but TraceError."""
    check_only_trace_errors(content)


@given(st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=5), min_size=0, max_size=4))
def test_random_cells_raise_only_trace_errors(rows: list[list[str]]) -> None:
    """Arbitrary text cells under a valid header load or raise a located TraceError."""
    header = "job_id,model_size_b,max_response_tokens,slo,train_gpus\n"
    body = "\n".join(",".join(cells) for cells in rows)
    check_only_trace_errors((header + body).encode("utf-8", errors="surrogatepass"))


def test_repeated_empty_column_names_are_named(tmp_path: Path) -> None:
    """Two empty header cells: the duplicate is reported with a visible column name."""
    path = tmp_path / "empty-names.csv"
    path.write_bytes(
        b",,# schema_version: 1\njob_id,model_size_b,max_response_tokens,turns,rollout_gpus,"
        b"slo,rollout_s,workload\na,7,8192,1,8,1.5,300,math\n"
    )
    with pytest.raises(TraceError) as exc:
        load_trace(path)
    assert all(problem.column for problem in exc.value.problems)
