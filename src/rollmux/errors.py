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
    "ECHO_LIMIT",
    "EXIT_MEANINGS",
    "EXIT_NAMES",
    "HEADER_ROW",
    "LINE_LIMIT",
    "MESSAGE_LIMIT",
    "ExitStatus",
    "InputFileError",
    "Problem",
    "UsageError",
    "bound_line",
    "clip",
    "control_characters",
    "echo",
    "exit_status_markdown",
    "grouped_lines",
    "os_reason",
    "printable",
    "row_ranges",
    "shorten",
    "yaml_problem",
]

#: Row number used for problems of the header or of the file as a whole.
HEADER_ROW = 0
#: Column name used when a problem concerns a whole row or the whole file.
ANY_COLUMN = "*"
#: How many problems an exception message lists before summarising the rest.
MESSAGE_LIMIT = 50
#: How many characters of a user's value a message echoes (escaped; longer ones are cut
#: and their length given), so a 10 MB cell or a binary file is never printed in full.
ECHO_LIMIT = 40
#: Longest error line printed: a last guard behind :func:`echo` for text that reached a
#: message unbounded (longer quoted values are cut to ECHO_LIMIT, then the line itself).
LINE_LIMIT = 600
#: How many row ranges a grouped problem lists (``rows 2, 5, 9-12, ...``) before it
#: gives only the count.
RANGES_LIMIT = 6


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
        "located by file, line, 1-based row and column; one defect repeated on many rows "
        "is one line naming them (`rows 1-200`); values are echoed cut to 40 characters"
    ),
    ExitStatus.USAGE: (
        "a bad argument or option (the message names it), a number beyond an option's "
        "range (the message names the limit), an input path that is not a regular file "
        "(a folder, a FIFO, a device, a socket: refused, never read), an unusable output "
        "path, a bad hardware or workloads file, or an input value that is out of its range"
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
        return (f"{self.file}:{self.line}: row {self.row}, column {clip(self.column)}: "
                f"{self.message}")


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """User text shown unquoted (a column name, a cell): escaped, cut after ``limit``
    characters with its length given."""
    if len(text) <= limit:
        return printable(text)
    return f"{printable(text[:limit])}... ({len(text):,} characters)"


def row_ranges(rows: Sequence[int], limit: int = RANGES_LIMIT) -> str:
    """Rows as ranges: ``1-200``, ``2, 5, 9-12``; past ``limit`` ranges ``..., (N rows)``."""
    ordered = sorted(set(rows))
    spans: list[tuple[int, int]] = []
    for row in ordered:
        if spans and row == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], row)
        else:
            spans.append((row, row))
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in spans[:limit]]
    text = ", ".join(parts)
    if len(spans) > limit:
        text += f", ... ({len(ordered)} rows)"
    elif len(spans) > 1:
        text += f" ({len(ordered)} rows)"
    return text


def grouped_lines(problems: Sequence[Problem]) -> list[str]:
    """One line per distinct defect: problems of one file, column and message on several
    rows become ``file:line: rows 2-201, column C: message`` (line: the first one's)."""
    groups: dict[tuple[str, str, str], list[Problem]] = {}
    for problem in problems:
        groups.setdefault((problem.file, problem.column, problem.message), []).append(problem)
    lines = []
    for (file, column, message), members in groups.items():
        if len(members) == 1:
            lines.append(str(members[0]))
        else:
            lines.append(f"{file}:{members[0].line}: rows {row_ranges([p.row for p in members])}"
                         f", column {clip(column)}: {message}")
    return lines


class InputFileError(ValueError):
    """An input file failed validation; ``problems`` holds every defect found, each located."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        """Keep all problems; the message lists the first MESSAGE_LIMIT of them."""
        if not problems:
            raise ValueError(f"{type(self).__name__} needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.lines: list[str] = grouped_lines(self.problems)
        lines = self.lines[:MESSAGE_LIMIT]
        hidden = len(self.lines) - MESSAGE_LIMIT
        if hidden > 0:
            lines.append(f"... and {hidden} more kind(s) of problem")
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


_SURROGATE_ESCAPE = re.compile(r"\\udc([89a-f][0-9a-f])")


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """A user's value as a message shows it: ``repr`` of its first ``limit`` characters
    (so escaped, undecodable bytes as ``\\xNN``), cut ones ending ``...' (N characters)``."""
    text = value if isinstance(value, str) else str(value)
    shown = _SURROGATE_ESCAPE.sub(r"\\x\1", repr(text[:limit]))
    if len(text) <= limit:
        return shown
    return f"{shown[:-1]}...{shown[-1]} ({len(text):,} characters)"


# A quoted run of more than ECHO_LIMIT characters in a message (a value that reached it
# without :func:`echo`).
_LONG = ECHO_LIMIT + 1
_LONG_QUOTED = re.compile(rf"'((?:[^'\\]|\\.){{{_LONG},}})'|\"((?:[^\"\\]|\\.){{{_LONG},}})\"")


def bound_line(text: str, limit: int = LINE_LIMIT) -> str:
    """A message line of at most about ``limit`` characters: long quoted values are cut to
    ECHO_LIMIT characters first, then the line itself (the number of characters cut said)."""
    if len(text) <= limit:
        return text

    def cut(match: re.Match[str]) -> str:
        """One long quoted value, cut."""
        body = match.group(1) if match.group(1) is not None else match.group(2)
        quote = match.group()[0]
        return f"{quote}{body[:ECHO_LIMIT]}...{quote} ({len(body):,} characters)"

    text = _LONG_QUOTED.sub(cut, text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for echoing user input)."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
