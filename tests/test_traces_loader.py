"""Trace loader: every defect is reported with file, row and column; valid files load."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from rollmux.jobs import RLJob
from rollmux.traces import (
    TraceError,
    load_trace,
    loader,
    read_trace_frame,
    trace_text,
    write_trace,
    writer,
)
from rollmux.traces.schema import load_schema

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "traces").glob("*.csv"))
MINIMAL = "job_id,model_size_b,max_response_tokens\n"


def problems_of(tmp_path: Path, content: str | bytes, name: str = "t.csv") -> list:
    """Write content to a file, load it, and return the TraceError's problems."""
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(TraceError) as info:
        load_trace(path)
    for problem in info.value.problems:
        assert problem.file == str(path)
    return list(info.value.problems)


CASES = [
    ("missing column", "job_id,model_size_b\na,7\n", 0, "max_response_tokens", "required column"),
    ("wrong type", MINIMAL + "a,seven,8192\n", 1, "model_size_b", "not a number"),
    ("empty file", "", 0, "*", "empty file"),
    ("whitespace only", "\n \n", 0, "*", "empty file"),
    ("header only", MINIMAL, 0, "*", "empty trace"),
    ("truncated row", MINIMAL + "a,7\n", 1, "max_response_tokens", "truncated row"),
    ("extra fields", MINIMAL + "a,7,8192,9\n", 1, "*", "extra fields"),
    ("NaN duration", MINIMAL.strip() + ",rollout_s\na,7,8192,nan\n", 1, "rollout_s", "NaN"),
    ("inf duration", MINIMAL.strip() + ",train_s\na,7,8192,inf\n", 1, "train_s", "not finite"),
    ("zero duration", MINIMAL.strip() + ",rollout_s\na,7,8192,0\n", 1, "rollout_s", "> 0"),
    ("negative size", MINIMAL + "a,-7,8192\n", 1, "model_size_b", ">= 0.01 billion params"),
    ("tiny size", MINIMAL + "a,1e-300,8192\n", 1, "model_size_b", "1e-300 must be >= 0.01"),
    ("huge size", MINIMAL + "a,1e308,8192\n", 1, "model_size_b",
     "1e308 is out of range: must be <= 10000 billion params"),
    ("huge max tokens", MINIMAL + "a,7,2000000000\n", 1, "max_response_tokens",
     "2000000000 is out of range: must be <= 1048576 tokens"),
    ("20-digit integer", MINIMAL + "a,7,12345678901234567890\n", 1, "max_response_tokens",
     "12345678901234567890 is out of range: must be <= 1048576 tokens"),
    ("huge turns", MINIMAL.strip() + ",turns\na,7,8192,1e9\n", 1, "turns",
     "1e9 is out of range: must be <= 1000 turns"),
    ("far arrival", MINIMAL.strip() + ",arrival_s\na,7,8192,1e18\n", 1, "arrival_s",
     "1e18 is out of range: must be <= 31536000 s"),
    ("NUL in job id", MINIMAL + "a\x00b,7,8192\n", 1, "job_id",
     "control characters are not allowed: 'a\\x00b'"),
    ("escape in label", MINIMAL.strip() + ",workload\na,7,8192,\x1b[31mred\n", 1, "workload",
     "control characters are not allowed: '\\x1b[31mred'"),
    (
        "unknown GPU",
        MINIMAL.strip() + ",rollout_gpu_type\na,7,8192,H100\n",
        1,
        "rollout_gpu_type",
        "unknown GPU type 'H100'",
    ),
    ("SLO below 1", MINIMAL.strip() + ",slo\na,7,8192,0.9\n", 1, "slo", ">= 1"),
    ("duplicate ids", MINIMAL + "a,7,8192\na,14,8192\n", 2, "job_id", "duplicate id 'a'"),
    (
        "partial node",
        MINIMAL.strip() + ",rollout_gpus\na,7,8192,12\n",
        1,
        "rollout_gpus",
        "not a whole number of 8-GPU nodes",
    ),
    ("above pool", MINIMAL.strip() + ",train_gpus\na,7,8192,336\n", 1, "train_gpus", "pool"),
    (
        "host memory given",
        MINIMAL.strip() + ",rollout_mem_gb_per_node\na,7,8192,5000\n",
        1,
        "rollout_mem_gb_per_node",
        "host DRAM",
    ),
    (
        "host memory derived",
        MINIMAL.strip() + ",rollout_gpus\na,140,8192,16\n",
        1,
        "train_mem_gb_per_node",
        "derived host memory",
    ),
    ("fits no GPU", MINIMAL + "a,300,8192\n", 1, "rollout_gpus", "too few"),
    ("non-integer", MINIMAL.strip() + ",turns\na,7,8192,2.5\n", 1, "turns", "not an integer"),
    ("typo column", MINIMAL.strip() + ",slo_\na,7,8192,1\n", 0, "slo_", "did you mean 'slo'"),
    ("bad version", "# schema_version: 9\n" + MINIMAL + "a,7,8192\n", 0, "schema_version", "9"),
    (
        "cold below warm",
        MINIMAL.strip() + ",warm_switch_s,cold_switch_s\na,7,8192,10,5\n",
        1,
        "cold_switch_s",
        "cold-start switch is faster",
    ),
    (
        "RLJob rule",
        MINIMAL.strip() + ",mean_response_tokens\na,7,8192,8192\n",
        1,
        "mean_response_tokens",
        "mean_response_tokens must be below max_response_tokens",
    ),
    (
        "mean above max",
        MINIMAL.strip() + ",mean_response_tokens\na,7,8192,9000\n",
        1,
        "max_response_tokens",
        "mean response length exceeds",
    ),
    ("required empty", MINIMAL + ",7,8192\n", 1, "job_id", "missing value"),
]


@pytest.mark.parametrize(("label", "content", "row", "column", "text"), CASES)
def test_each_defect_is_located(
    tmp_path: Path, label: str, content: str, row: int, column: str, text: str
) -> None:
    """Each kind of defect yields a problem naming the expected row, column and cause."""
    found = problems_of(tmp_path, content)
    assert any(p.row == row and p.column == column and text in p.message for p in found), (
        label,
        [str(p) for p in found],
    )


def test_non_utf8_bytes_are_located(tmp_path: Path) -> None:
    """Undecodable bytes are reported in the cell that holds them, not as a crash."""
    found = problems_of(tmp_path, MINIMAL.encode() + b"ok,7,8192\nb\xff,7,8192\n")
    assert [(p.line, p.row, p.column) for p in found] == [(3, 2, "job_id")]
    assert "non-UTF-8" in found[0].message


def test_line_numbers_count_comments_and_quoted_newlines(tmp_path: Path) -> None:
    """Lines are physical lines: the version comment and a quoted newline shift them."""
    content = (
        "# schema_version: 1\n" + MINIMAL.strip() + ",workload\n"
        'a,7,8192,"two\nlines"\nb,7,8192,x\nc,-1,8192,y\n'
    )
    found = problems_of(tmp_path, content)
    # The quoted newline is a control character in a label: reported where row 1 starts.
    assert [(p.line, p.row, p.column) for p in found] == [(3, 1, "workload"),
                                                          (6, 3, "model_size_b")]


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    """Several defects in several rows are all reported, in file order."""
    content = MINIMAL.strip() + ",slo\na,0,8192,1\nb,7,x,0.5\n"
    found = problems_of(tmp_path, content)
    assert [(p.row, p.column) for p in found] == [
        (1, "model_size_b"),
        (2, "max_response_tokens"),
        (2, "slo"),
    ]
    assert str(found[0]).startswith(f"{tmp_path / 't.csv'}:2: row 1, column model_size_b:")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    """A missing path or a directory is a TraceError, not an OSError."""
    with pytest.raises(TraceError, match="file not found"):
        load_trace(tmp_path / "absent.csv")
    with pytest.raises(TraceError, match="is a folder, not a regular file"):
        load_trace(tmp_path)


def test_parquet_needs_pyarrow(tmp_path: Path) -> None:
    """Without pyarrow, a Parquet trace fails with a clear message naming pyarrow."""
    pytest.importorskip("pytest")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        path = tmp_path / "t.parquet"
        path.write_bytes(b"PAR1")
        with pytest.raises(TraceError, match="pyarrow"):
            load_trace(path)
    else:
        pytest.skip("pyarrow is installed; the missing-dependency message cannot be shown")


def test_defaults_and_types(tmp_path: Path) -> None:
    """Absent optional columns take RLJob's defaults; empty cells become None."""
    path = tmp_path / "t.csv"
    path.write_text(MINIMAL.strip() + ",rollout_s,turns\na,7,8192,,3\n b , 14 ,4096,120.5,\n")
    jobs = load_trace(path)
    assert jobs[0] == RLJob(job_id="a", model_size_b=7.0, max_response_tokens=8192, turns=3)
    assert jobs[1].job_id == "b" and jobs[1].rollout_s == 120.5 and jobs[1].turns == 1
    frame = read_trace_frame(path)
    assert list(frame.columns) == list(load_schema().names)
    assert frame["turns"].tolist() == [3, 1]
    assert pd.isna(frame.loc[0, "rollout_s"])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_fast_path_matches_exact_path(path: Path) -> None:
    """The pandas fast path and the csv-module path give the same frame and jobs."""
    raw = path.read_bytes()
    schema = load_schema()
    view = loader.hardware_view(None)
    fast = loader._fast_table(raw, schema)
    assert fast is not None
    fast_frame, fast_jobs = loader._validate_table(fast[0], schema, view, "f", [], fast[1])
    problems: list = []
    table = loader._parse_csv(raw, "f", problems)
    slow_frame, slow_jobs = loader._validate_table(table, schema, view, "f", problems)
    pd.testing.assert_frame_equal(fast_frame, slow_frame)
    assert fast_jobs == slow_jobs


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_loaded_jobs_equal_constructed_jobs(path: Path) -> None:
    """Jobs copied from validated templates equal jobs built by RLJob's constructor."""
    for job in load_trace(path):
        assert RLJob(**dataclasses.asdict(job)) == job


def same_value(a: object, b: object) -> bool:
    """Equal values of the same type (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    return a == b or (isinstance(a, float) and a != a and b != b)


@pytest.mark.parametrize("path", [*SHIPPED, REPO / "tests/golden/traces/tiny-sim.csv"],
                         ids=lambda p: p.name)
def test_fast_construction_matches_the_constructor_on_every_field(path: Path) -> None:
    """Each loaded job equals RLJob(**row) of its own row on every dataclass field, by type
    and value, and holds no attribute besides the fields (fields are enumerated, so a new
    RLJob field is covered without editing this test)."""
    raw = path.read_bytes()
    schema = load_schema()
    fast = loader._fast_table(raw, schema)
    assert fast is not None
    frame, jobs = loader._validate_table(fast[0], schema, loader.hardware_view(None), "f", [],
                                         fast[1])
    rows = loader._record_kwargs(frame, schema)
    names = [f.name for f in dataclasses.fields(RLJob)]
    assert len(jobs) == len(rows) > 0
    for job, row in zip(jobs, rows, strict=True):
        built = RLJob(**row)
        for name in names:
            assert same_value(getattr(job, name), getattr(built, name)), (
                f"{path.name} {row['job_id']}: field {name} is {getattr(job, name)!r}, "
                f"RLJob(**row) gives {getattr(built, name)!r}")
        if hasattr(job, "__dict__"):
            assert set(vars(job)) == set(names), f"{path.name}: attributes beyond the fields"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_write_is_canonical(path: Path, tmp_path: Path) -> None:
    """Loading a shipped trace and writing it back reproduces its data lines exactly."""
    jobs = load_trace(path)
    data = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    again = [line for line in trace_text(jobs).splitlines() if not line.startswith("#")]
    assert again == data
    out = write_trace(jobs, tmp_path / "copy.csv")
    assert load_trace(out) == jobs


def test_atomic_write_leaves_nothing_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails, the old file is intact and no temporary file remains."""
    target = tmp_path / "t.csv"
    target.write_text("old")

    def broken_replace(src: str, dst: str) -> None:
        """Fail the rename, as a full disk or a crash would."""
        raise OSError("disk full")

    monkeypatch.setattr(writer.os, "replace", broken_replace)
    with pytest.raises(OSError):
        writer.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
