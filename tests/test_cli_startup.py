"""A quick, talkative command line (issue 22, item 4).

`rollmux --help`, `--version` and every `COMMAND --help` load none of the heavy libraries
(their time is measured in benchmarks/bench_startup.py, not here); Ctrl-C at any moment
exits 130 without a traceback; long work reports progress on a stderr that is not a
terminal, a line every few seconds.
"""

from __future__ import annotations

import argparse
import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollmux.cli import build_parser
from rollmux.cliutil import LineProgress, progress_bar

#: Libraries that take a large share of a second to import; none loads for --help.
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "seaborn", "yaml", "jsonschema", "tqdm",
         "hypothesis", "snakemake", "highspy", "networkx")

ROLLMUX = Path(sys.executable).with_name("rollmux")


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
                  ) -> list[tuple[str, ...]]:
    """Every command and sub-command of ``parser`` (``("trace", "validate")``...)."""
    out: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((*prefix, name))
                out.extend(command_paths(sub, (*prefix, name)))
    return out


def test_command_paths_finds_nested_commands() -> None:
    """The walk reaches sub-sub-commands (the test below would miss them otherwise)."""
    paths = command_paths(build_parser())
    assert ("simulate",) in paths and ("trace", "validate") in paths
    assert ("model", "microbench") in paths


@pytest.mark.subprocess
def test_help_and_version_load_no_heavy_library() -> None:
    """In a fresh interpreter, `--version`, `--help` and each `COMMAND --help` import none
    of HEAVY; the failure names the command and the library it loaded."""
    argvs = [["--version"], ["--help"]] + [[*p, "--help"] for p in command_paths(build_parser())]
    program = (
        "import contextlib, io, json, sys\n"
        "from rollmux.entry import main\n"
        f"heavy = {HEAVY!r}\n"
        "out = {}\n"
        f"for argv in {argvs!r}:\n"
        "    sys.argv = ['rollmux', *argv]\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        from rollmux.cli import main as cli\n"
        "        status = cli(argv)\n"
        "    out[' '.join(argv)] = [status, [m for m in heavy if m in sys.modules]]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout)
    assert {argv: status for argv, (status, _) in result.items() if status != 0} == {}
    assert {argv: loaded for argv, (_, loaded) in result.items() if loaded} == {}


def test_the_console_script_is_the_lazy_entry() -> None:
    """`rollmux` runs rollmux.entry:main, which imports the command line inside its guard."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'rollmux = "rollmux.entry:main"' in text


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not ROLLMUX.exists(), reason="the rollmux console script is not installed")
def _default_sigint() -> None:
    """In the child before exec: SIGINT at its default action, whatever the parent has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_at_any_moment_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """SIGINT sent at moments from start-up to the middle of the work: every run ends 130
    (or 0 if it finished first) with no traceback and no file left behind."""
    statuses, early = [], []
    for delay in (0.0, 0.01, 0.03, 0.08, 0.15, 0.3, 0.6, 1.2, 2.5):
        out = tmp_path / f"summary-{delay}.csv"
        # Ctrl-C at its default: a run started in the background of a script inherits it
        # ignored, and rollmux then leaves it ignored (the next test).
        proc = subprocess.Popen(
            [str(ROLLMUX), "theorem1", "--instances", "100000", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            preexec_fn=_default_sigint)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
        if "Fatal Python error: init_import_site" in stderr or (
                f'File "{ROLLMUX}"' in stderr and ", in main" not in stderr):
            # Interrupted inside the interpreter's start-up or the console script's own
            # lines before rollmux.entry.main runs (its first import, or before its first
            # line: "line 0, in <module>"): Python's own message, out of rollmux's reach
            # (README, "The command line").
            early.append(delay)
            continue
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, (delay, stderr)
        # -SIGINT: killed before Python installed its handler; a shell reports 130 too.
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, stderr)
        statuses.append(proc.returncode)
    assert 130 in statuses and len(early) <= 3, (statuses, early)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_line_progress_writes_lines_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off a terminal, progress is a line every few seconds (here every 0.05 s) with the
    count, the share of the total and what is being worked on."""
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with LineProgress("theorem1", 200, "instance", every_s=0.05) as bar:
        bar.update(50)
        bar.set_postfix_str("c_crossing")
        time.sleep(0.3)
    lines = err.getvalue().splitlines()
    assert len(lines) >= 2
    assert lines[-1].startswith("rollmux: theorem1: 50/200 instance (25 %), ")
    assert lines[-1].endswith("[c_crossing]")
    time.sleep(0.15)
    assert err.getvalue().splitlines() == lines  # closed: no more lines


def test_progress_off_a_terminal_is_lines_and_quiet_is_silent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """progress_bar gives lines when stderr is a file, nothing at all with --quiet."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress_bar("x", 10, "job") as bar:
        assert isinstance(bar, LineProgress)
    with progress_bar("x", 10, "job", quiet=True) as bar:
        assert not isinstance(bar, LineProgress) and bar.disable


def test_line_progress_of_elapsed_time_names_the_limit() -> None:
    """An elapsed-time reporter (unit s) shows the seconds and the limit."""
    with LineProgress("bench optimum", 60, "s", every_s=3600) as bar:
        assert bar.line() == "rollmux: bench optimum: 0 s of at most 60 s"



def test_a_run_started_with_ctrl_c_ignored_keeps_it_ignored() -> None:
    """A command started with SIGINT ignored (a script's background job) leaves it ignored
    instead of installing its Ctrl-C handler over it."""
    import argparse

    from rollmux import cliutil

    seen = []

    def command(args: argparse.Namespace) -> int:
        seen.append(signal.getsignal(signal.SIGINT))
        return 0

    def build() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser()
        parser.set_defaults(func=command)
        return parser

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cliutil.run(build, []) == 0
        assert seen == [signal.SIG_IGN]
        # Started with Python's own handler: rollmux installs its handler, then restores.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        assert cliutil.run(build, []) == 0
        assert seen[-1] not in (signal.SIG_IGN, signal.SIG_DFL, signal.default_int_handler)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
