"""What the user sees when something goes wrong: exit statuses, located problems, safe text.

Every ``rollmux`` command ends with one of the :class:`ExitStatus` values (the README's
table is :func:`exit_status_markdown`, and a test keeps the two equal). Input files are
checked whole and each defect becomes a :class:`Problem` located by file, physical line,
1-based data row and column; :class:`InputFileError` carries them all. Text that came
from the user (cells, column names, file names, arguments) goes through
:func:`printable` before it reaches a terminal, so a control character or an escape
sequence is shown, never obeyed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "ANY_COLUMN",
    "EXIT_MEANINGS",
    "EXIT_NAMES",
    "HEADER_ROW",
    "MESSAGE_LIMIT",
    "ExitStatus",
    "InputFileError",
    "Problem",
    "UsageError",
    "control_characters",
    "exit_status_markdown",
    "os_reason",
    "printable",
    "shorten",
    "yaml_problem",
]

#: Row number used for problems of the header or of the file as a whole.
HEADER_ROW = 0
#: Column name used when a problem concerns a whole row or the whole file.
ANY_COLUMN = "*"
#: How many problems an exception message lists before summarising the rest.
MESSAGE_LIMIT = 50


class ExitStatus(IntEnum):
    """The exit status of every ``rollmux`` command (one table, in the README)."""

    OK = 0
    INVALID_INPUT = 1
    USAGE = 2
    OS_ERROR = 3
    TIME_LIMIT = 4
    PLUGIN = 5
    INTERNAL = 70
    INTERRUPTED = 130


#: A few words per status (``rollmux --help``).
EXIT_NAMES: dict[ExitStatus, str] = {
    ExitStatus.OK: "success",
    ExitStatus.INVALID_INPUT: "invalid input file",
    ExitStatus.USAGE: "bad argument or value",
    ExitStatus.OS_ERROR: "operating-system error",
    ExitStatus.TIME_LIMIT: "time limit reached",
    ExitStatus.PLUGIN: "a policy plug-in failed",
    ExitStatus.INTERNAL: "internal error",
    ExitStatus.INTERRUPTED: "interrupted",
}

#: What each status means, as the README's table shows it.
EXIT_MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "success (also when the reader of the output stops early, e.g. `| head`)",
    ExitStatus.INVALID_INPUT: (
        "an input file is invalid (a trace, a failure list): one line per problem, "
        "located by file, line, 1-based row and column"
    ),
    ExitStatus.USAGE: (
        "a bad argument or option (the message names it), an unusable output path, a bad "
        "hardware or workloads file, or an input value that is out of its range"
    ),
    ExitStatus.OS_ERROR: (
        "the operating system refused a read or write while working (disk full, "
        "permission denied, out of memory)"
    ),
    ExitStatus.TIME_LIMIT: (
        "a time limit ran out (`bench optimum --time-limit-s`): the result is printed, "
        "marked as not proven"
    ),
    ExitStatus.PLUGIN: (
        "a policy plug-in (another package's policy) failed: it raised or exited on import, "
        "raised, returned something other than a placement or ran out of time in `place()`; "
        "the message names the plug-in and its distribution"
    ),
    ExitStatus.INTERNAL: (
        "internal error, a bug: please report the command line "
        "(`ROLLMUX_TRACEBACK=1` shows the traceback)"
    ),
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C); nothing half-written is left behind",
}


def exit_status_markdown() -> str:
    """The exit-status table of the README (Markdown)."""
    rows = ["| status | meaning |", "|---|---|"]
    rows += [f"| {int(status)} | {EXIT_MEANINGS[status]} |" for status in ExitStatus]
    return "\n".join(rows)


class UsageError(ValueError):
    """A bad command-line argument or option; the message names it."""


class PluginError(ValueError):
    """A policy plug-in that cannot be used or misbehaved (load failure, wrong type, name
    clash, a failing or overlong ``place()``); the message names it and its distribution."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect of an input file, located by file, physical line, data row and column.

    ``row`` counts data rows from 1 (0: the header or the file as a whole); ``line`` is
    the physical line of the file (0: the file as a whole).
    """

    file: str
    line: int
    row: int
    column: str
    message: str

    def __str__(self) -> str:
        """Render as `file:line: row R, column C: message` (one line)."""
        return f"{self.file}:{self.line}: row {self.row}, column {self.column}: {self.message}"


class InputFileError(ValueError):
    """An input file failed validation; ``problems`` holds every defect found, each located."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        """Keep all problems; the message lists the first MESSAGE_LIMIT of them."""
        if not problems:
            raise ValueError(f"{type(self).__name__} needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        lines = [str(p) for p in self.problems[:MESSAGE_LIMIT]]
        hidden = len(self.problems) - MESSAGE_LIMIT
        if hidden > 0:
            lines.append(f"... and {hidden} more problem(s)")
        super().__init__("\n".join(lines))


# Characters a terminal may obey rather than show: C0 and C1 controls, DEL, lone
# surrogates (undecodable bytes of file names and cells) and bidirectional overrides.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    """The visible escape of one unsafe character."""
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` with every control character, escape sequence start, undecodable byte and
    bidirectional override written as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``)."""
    return _UNSAFE.sub(_escape, str(text))


def control_characters(text: str) -> list[str]:
    """The control characters (C0, DEL, C1) in ``text``, escaped, in order of appearance."""
    return [_escape(m) for m in _CONTROL.finditer(text)]


def os_reason(exc: OSError) -> str:
    """An OSError's reason in lower case, without errno number or file name."""
    text = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
    return text[:1].lower() + text[1:]


def yaml_problem(exc: Exception) -> str:
    """A YAML parser error in one line: ``line L, column C: problem`` (1-based)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return f"invalid YAML: {problem}"
    return f"line {mark.line + 1}, column {mark.column + 1}: invalid YAML: {problem}"


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for echoing user input)."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
