"""The `rollmux trace` command line: exit codes, one line per problem, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollmux.cli import main
from rollmux.traces import generate

REPO = Path(__file__).resolve().parents[1]


def run(argv: list[str]) -> int:
    """Run the rollmux command line in-process (its one error path included)."""
    return main(argv)


def test_validate_valid_trace_prints_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """A valid trace exits 0 with a short summary naming jobs, sizes, GPUs and ratio."""
    assert run(["trace", "validate", str(REPO / "traces" / "production-default.csv")]) == 0
    out = capsys.readouterr().out
    assert "valid (200 jobs)" in out
    for word in ("horizon", "model sizes", "GPU demand", "rollout/training"):
        assert word in out
    assert len(out.splitlines()) <= 24


def test_validate_broken_trace_lists_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken trace exits 1 with one `file:line: row, column` line per problem."""
    path = tmp_path / "bad.csv"
    path.write_text("job_id,model_size_b,max_response_tokens,slo\na,7,8192,0.5\na,x,8192,1\n")
    assert run(["trace", "validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"rollmux: error: 3 problems in {path}"
    assert all(line.startswith(f"rollmux: error: {path}:") and ", column " in line
               for line in err[:-1])
    assert "Traceback" not in "\n".join(err)


def test_validate_non_utf8_and_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Binary junk and empty files fail cleanly with exit code 1."""
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"\xff\xfe\x00\x01")
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert run(["trace", "validate", str(junk)]) == 1
    assert run(["trace", "validate", str(empty)]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_generate_writes_atomically_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """generate prints targets beside achieved statistics and leaves only the output file."""
    out = tmp_path / "sub" / "micro.csv"
    assert run(["trace", "generate", "microbench", "--seed", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "target" in printed and "achieved" in printed
    assert [p.name for p in out.parent.iterdir()] == ["micro.csv"]


def test_generate_failure_leaves_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """If validation of the generated trace fails, no output or temp file remains."""
    real = generate.generate_microbench

    def broken(*args: object, **kwargs: object) -> generate.Generated:
        """The real generator's output with one job repeated."""
        result = real(*args, **kwargs)
        bad = [*result.jobs, result.jobs[0]]  # a duplicate id: the loader rejects it
        return generate.Generated(bad, result.targets, result.achieved, result.comments)

    monkeypatch.setattr(generate, "generate_microbench", broken)
    out = tmp_path / "micro.csv"
    assert run(["trace", "generate", "microbench", "--out", str(out)]) == 1
    assert "duplicate id" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_adapt_missing_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """adapt with a path that does not exist exits 2 with a one-line message."""
    code = run(
        [
            "trace",
            "adapt",
            "alibaba",
            "--path",
            str(tmp_path / "no.csv"),
            "--out",
            str(tmp_path / "o.csv"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("rollmux: error: argument --path: ") and "Traceback" not in err


def test_stats_writes_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """stats --out writes statistic, unit, paper and achieved columns."""
    out = tmp_path / "stats.csv"
    src = str(REPO / "traces" / "simulation-mixed.csv")
    assert run(["trace", "stats", src, "--kind", "simulation", "--out", str(out)]) == 0
    header = out.read_text().splitlines()[0]
    assert header == "statistic,unit,paper,achieved"
    assert "mean_duration_h" in out.read_text()


@pytest.mark.parametrize("kind", ["production", "microbench"])
def test_generate_profile_only_for_simulation(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--profile on a trace kind that has no Table 6 profile is refused, nothing written."""
    out = tmp_path / "t.csv"
    status = run(["trace", "generate", kind, "--profile", "train-heavy", "--out", str(out)])
    assert status == 2
    assert "--profile applies to simulation traces" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
