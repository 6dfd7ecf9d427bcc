"""Never touch what rollmux did not write (issue 22, item 1).

An output folder is replaced only when it is absent, empty or written by rollmux (the
marker `.rollmux-output.json`, written last, names the run and lists its files, and the
folder holds nothing else); any other folder is refused with one line naming it and
nothing on disk changes. A symbolic link is followed: its target is written or refused,
the link is never replaced. The rule lives in rollmux.io (check_output_folder,
replace_folder), so every command that writes a folder has it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_cli_errors import assert_one_error, run, tiny_trace

from rollmux.cli import main
from rollmux.errors import ExitStatus
from rollmux.io import (
    OUTPUT_MARKER,
    atomic_write,
    check_output_file,
    check_output_folder,
    replace_folder,
)


def snapshot(root: Path) -> dict[str, str]:
    """Every entry below ``root`` (links not followed): kind and content hash."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = f"link -> {path.readlink()}"
        elif path.is_dir():
            out[key] = "dir"
        else:
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def simulate(trace: Path, out: Path) -> list[str]:
    """The argv of a quick `rollmux simulate` into ``out``."""
    return ["simulate", "--trace", str(trace), "--policy", "solo-d", "--fidelity", "analytic",
            "--quiet", "--out", str(out)]


@pytest.mark.parametrize("contents", [
    {"config.json": "{}", "thesis.tex": "precious"},  # looks like an output: it is not
    {"config.json": "{}", OUTPUT_MARKER: '{"writer": "someone else", "files": []}'},
    {OUTPUT_MARKER: "not json"},
    {"data.csv": "a,b\n"},
])
def test_a_folder_rollmux_did_not_write_is_refused_and_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], contents: dict[str, str]) -> None:
    """One line naming the folder, exit 2, every byte on disk as it was."""
    trace = tiny_trace(tmp_path / "t.csv")
    out = tmp_path / "mine"
    out.mkdir()
    for name, text in contents.items():
        (out / name).write_text(text)
    before = snapshot(tmp_path)
    code, _, err = run(simulate(trace, out), capsys)
    assert code == ExitStatus.USAGE
    assert_one_error(err, str(out), "name a new or empty folder")
    assert snapshot(tmp_path) == before


def test_the_marker_names_the_run_and_lists_the_files_written(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    """The marker is written last and lists exactly the other files of the folder."""
    trace = tiny_trace(tmp_path / "t.csv")
    out = tmp_path / "run"
    assert run(simulate(trace, out), capsys)[0] == 0
    marker = json.loads((out / OUTPUT_MARKER).read_text())
    assert marker["writer"] == "rollmux"
    assert marker["run"].startswith("rollmux simulate ") and "policy=solo-d" in marker["run"]
    assert marker["files"] == sorted(p.name for p in out.iterdir() if p.name != OUTPUT_MARKER)
    # An empty folder is anyone's to fill.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(simulate(trace, empty), capsys)[0] == 0 and (empty / OUTPUT_MARKER).is_file()


def test_a_symlinked_out_writes_into_its_target_and_stays_a_link(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The results reach the link's target (twice: replaced, not nested), the link stays a
    link and no hidden sibling is left beside either."""
    trace = tiny_trace(tmp_path / "t.csv")
    target = tmp_path / "disk" / "results"
    target.parent.mkdir()
    link = tmp_path / "out"
    link.symlink_to(target)
    for _ in range(2):
        assert run(simulate(trace, link), capsys)[0] == 0
        assert link.is_symlink() and link.readlink() == target
        assert (target / "summary.json").is_file() and (target / OUTPUT_MARKER).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk", "out", "t.csv"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["results"]


def test_a_symlink_to_a_foreign_folder_is_refused(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A link to a folder rollmux did not write: refused like the folder itself."""
    trace = tiny_trace(tmp_path / "t.csv")
    target = tmp_path / "photos"
    target.mkdir()
    (target / "cat.jpg").write_bytes(b"\xff\xd8")
    link = tmp_path / "out"
    link.symlink_to(target)
    before = snapshot(tmp_path)
    code, _, err = run(simulate(trace, link), capsys)
    assert code == ExitStatus.USAGE
    assert_one_error(err, str(link), "cat.jpg")
    assert snapshot(tmp_path) == before


def test_replace_folder_refuses_before_the_body_runs(tmp_path: Path) -> None:
    """The library rule, for every caller: nothing is computed into a folder that would
    be refused, and the refused folder is untouched."""
    out = tmp_path / "x"
    out.mkdir()
    (out / "keep").write_text("k")
    ran = []
    with pytest.raises(ValueError, match="keep"), replace_folder(out) as tmp:
        ran.append(tmp)
    assert ran == [] and (out / "keep").read_text() == "k"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]
    with pytest.raises(ValueError, match="rollmux did not write"):
        check_output_folder(out)


def test_many_foreign_files_are_named_briefly(tmp_path: Path) -> None:
    """The refusal names three entries and counts the rest; long names are shortened."""
    out = tmp_path / "x"
    out.mkdir()
    for k in range(10):
        (out / (f"f{k}" + "y" * 200)).write_text("")
    with pytest.raises(ValueError) as info:
        check_output_folder(out)
    message = str(info.value)
    assert "and 7 more" in message and len(message) - len(str(out)) < 250


def test_a_symlinked_output_file_is_written_through(tmp_path: Path) -> None:
    """atomic_write (every output file) writes the link's target and keeps the link."""
    target = tmp_path / "real.csv"
    target.write_text("old")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    assert check_output_file(link) == link
    atomic_write(link, lambda tmp: tmp.write_text("new"))
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "real.csv"]


def test_a_cli_file_output_through_a_link(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`rollmux gantt --out LINK` writes the target; the link stays."""
    target = tmp_path / "phases.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert main(["gantt", "--out", str(link)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and target.read_text().startswith("layout,job,phase")
