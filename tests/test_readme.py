"""Every code block of README.md runs as written (issue 13, item 6).

Blocks run in order, in one temporary folder that holds links to the repository's
`.venv` and `traces/` (so `.venv/bin/rollmux ... traces/x.csv` works as written there)
with the venv's `bin/` first on PATH; what they write stays in that folder:

* ``bash``: run by ``bash -e -o pipefail``; status 0 expected;
* ``python``: run by the venv's Python; an expression line ending in ``# <number>`` must
  evaluate to that number (checked after the block ran);
* ``console``: each ``$ command`` line is run and its output (stdout and stderr) must be
  the lines that follow it, as printed;
* ``text``: not run, unless a ``<!-- readme-test: file NAME -->`` line above it makes
  it the file NAME that later blocks use.

A block is skipped only with a ``<!-- readme-test: skip: REASON -->`` line right above
it: the two set-up commands and the few that need a whole pipeline run, a cluster or
minutes. The test keeps that list short and every reason stated.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Languages a block may declare (a block without one fails the test).
LANGUAGES = ("bash", "python", "console", "text", "toml")
#: At most this many blocks may be skipped.
MAX_SKIPPED = 6
MARKER = re.compile(r"<!-- readme-test: (skip: (?P<reason>.+?)|file (?P<file>\S+)) -->")
#: `expression  # number` in a Python block: the expression's value is that number.
CLAIM = re.compile(r"^(?!\s*\w+\s*=[^=])(?P<expr>[^#]+?)\s+#\s*(?P<value>-?\d+(\.\d+)?)\s*$")
#: Seconds one block may take.
TIMEOUT_S = 600

pytestmark = pytest.mark.subprocess


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, text, first line and marker."""

    language: str
    text: str
    line: int
    skip: str | None = None
    file: str | None = None

    def __str__(self) -> str:
        """Where the block is, for messages."""
        return f"README.md:{self.line} ({self.language})"


def readme_blocks(text: str) -> list[Block]:
    """The fenced code blocks of ``text``, each with the marker on the line above it."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            language = lines[i][3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            match = MARKER.fullmatch(above.strip())
            blocks.append(Block(language, "\n".join(lines[i + 1:end]) + "\n", i + 2,
                                skip=match["reason"] if match else None,
                                file=match["file"] if match else None))
            i = end
        i += 1
    return blocks


def environment(folder: Path) -> dict[str, str]:
    """The environment of a block: the venv's bin/ first on PATH, no progress bars."""
    env = dict(os.environ)
    env["PATH"] = f"{folder / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def run_block(block: Block, folder: Path) -> None:
    """Run one block in ``folder``; fail the test with its output if it does not do
    what it shows."""
    env = environment(folder)
    if block.language == "bash":
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=folder,
                                env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                                check=False)
        assert result.returncode == 0, f"{block}:\n{block.text}\n{result.stderr[-3000:]}"
    elif block.language == "python":
        checks = [f"assert abs(({m['expr'].strip()}) - {m['value']}) < 1e-9, "
                  f"{m['expr'].strip()!r}" for m in map(CLAIM.match, block.text.splitlines())
                  if m]
        code = block.text + "\n".join(checks)
        result = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env,
                                capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        assert result.returncode == 0, f"{block}:\n{code}\n{result.stderr[-3000:]}"
    elif block.language == "console":
        for command, shown in transcript(block.text):
            result = subprocess.run(["bash", "-c", command], cwd=folder, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, timeout=TIMEOUT_S, check=False)
            assert result.stdout == shown, f"{block}: $ {command}\n{result.stdout}"
    elif block.language == "toml":
        tomllib.loads(block.text)  # shown configuration must at least parse
    elif block.file is not None:
        (folder / block.file).write_text(block.text, encoding="utf-8")


def transcript(text: str) -> list[tuple[str, str]]:
    """A console block as (command, the output shown after it) pairs."""
    pairs: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], ""))
        else:
            assert pairs, f"console block output before any command: {line!r}"
            pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]}{line}\n")
    return pairs


def test_blocks_are_found_with_their_markers() -> None:
    """The reader finds blocks, their languages and the marker above each."""
    text = ("x\n<!-- readme-test: skip: slow -->\n```bash\nsleep 1\n```\n\n"
            "<!-- readme-test: file a.csv -->\n```text\nk\n```\n```console\n$ echo 1\n1\n```\n")
    blocks = readme_blocks(text)
    assert [(b.language, b.skip, b.file, b.line) for b in blocks] == [
        ("bash", "slow", None, 4), ("text", None, "a.csv", 9), ("console", None, None, 12)]
    assert transcript(blocks[2].text) == [("echo 1", "1\n")]


def test_every_block_declares_its_language_and_few_are_skipped() -> None:
    """Each block says what it is; at most MAX_SKIPPED are skipped, each with a reason."""
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert [str(b) for b in blocks if b.language not in LANGUAGES] == []
    skipped = [b for b in blocks if b.skip]
    assert len(skipped) <= MAX_SKIPPED, [str(b) for b in skipped]
    assert all(len(b.skip or "") > 10 for b in skipped)


@pytest.mark.slow
def test_readme_code_blocks_run_as_written(tmp_path: Path) -> None:
    """Every block not marked skip runs in order and does what it shows."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    (tmp_path / "traces").symlink_to(ROOT / "traces")
    ran = 0
    for block in readme_blocks(README.read_text(encoding="utf-8")):
        if block.skip is None:
            run_block(block, tmp_path)
            ran += block.language != "text"
    assert ran >= 4  # the command line, Python, simulate and the validation transcript
