"""Building blocks of the ``rollmux`` command line.

* :class:`ArgumentParser`: argparse whose usage errors raise
  :class:`rollmux.errors.UsageError` (one line, the argument named) instead of printing
  the usage and exiting;
* argument types with plausible ranges (:func:`integer`, :func:`number`), input files
  (:func:`input_file`) and output paths checked before any work (:func:`output_file`,
  :func:`output_folder`);
* progress (:func:`progress_bar`, :func:`elapsed_bar`): a tqdm bar on stderr on a
  terminal, a line every few seconds otherwise (:class:`LineProgress`), never with
  ``--quiet``;
* the one error path (:func:`run`): every failure becomes one ``rollmux: error: ...``
  line per problem (:func:`report`) and an exit status of
  :class:`rollmux.errors.ExitStatus`; Ctrl-C exits 130 quietly.

The top-level command (:mod:`rollmux.cli`) imports the modules that define sub-commands
(``rollmux.sim.cli``, ``rollmux.traces.cli``, ``rollmux.theorem1.cli``); they take what
they share from here and never import :mod:`rollmux.cli` (no import cycle). A sub-command
module's stand-alone entry point (``python -m rollmux.sim.cli simulate ...``) is
:func:`command_main`.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import stat
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

from rollmux.errors import (
    EXIT_NAMES,
    MESSAGE_LIMIT,
    ExitStatus,
    InputFileError,
    PluginError,
    UsageError,
    bound_line,
    clip,
    echo,
    os_reason,
    printable,
)
from rollmux.io import check_output_file, check_output_folder, regular_file_problem

__all__ = [
    "COUNT_MAX",
    "PROGRESS_LINE_EVERY_S",
    "SEED_MAX",
    "ArgumentParser",
    "LineProgress",
    "add_hardware",
    "add_quiet",
    "add_seed",
    "command_main",
    "elapsed_bar",
    "error",
    "exit_status_epilog",
    "input_file",
    "integer",
    "number",
    "output_file",
    "output_folder",
    "progress_bar",
    "report",
    "run",
    "say",
    "show_progress",
    "updatable_file",
    "write_or_print",
]

#: Largest seed accepted on the command line (numpy seeds any non-negative integer; 32 bits
#: keep seeds readable and within every consumer's integer types).
SEED_MAX = 2**32 - 1
#: Largest job, instance or decision count accepted by the commands that take one.
COUNT_MAX = 1_000_000


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose errors raise UsageError (one line) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage error with a pointer to this command's help."""
        raise UsageError(f"{message} (see: {self.prog} --help)")


def _integer_text(text: str) -> int | None:
    """The integer ``text`` spells (digits, an optional sign), else None."""
    body = text.strip()
    digits = body[1:] if body[:1] in "+-" else body
    if not digits.isascii() or not digits.isdigit():
        return None
    if len(digits) > 40:  # no range below comes near; int() would refuse > 4300 digits
        return -(10**41) if body.startswith("-") else 10**41
    return int(body)


def integer(low: int, high: int) -> Callable[[str], int]:
    """Argument type: an integer in [low, high] ("out of range" names the bounds)."""

    def parse(text: str) -> int:
        """Parse and range-check one integer argument."""
        value = _integer_text(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected an integer, got {echo(text)}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{clip(text.strip())} is out of range: expected an integer from {low} "
                f"to {high}"
            )
        return value

    parse.__name__ = "integer"
    return parse


def number(
    low: float | None = None, high: float | None = None, *, above: float | None = None
) -> Callable[[str], float]:
    """Argument type: a finite number, >= ``low`` (or > ``above``) and <= ``high``."""

    def parse(text: str) -> float:
        """Parse and range-check one number argument."""
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number, got {echo(text)}"
            ) from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {echo(text)}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: must be > {above:g}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: must be >= {low:g}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: must be <= {high:g}")
        return value

    parse.__name__ = "number"
    return parse


def input_file(text: str) -> Path:
    """Argument type: an existing, readable regular file (a folder, a FIFO, a device or a
    socket is refused: exit status 2)."""
    if not text:
        raise argparse.ArgumentTypeError("the path is empty")
    if "\x00" in text:
        raise argparse.ArgumentTypeError("the path contains a NUL character")
    path = Path(text)
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise argparse.ArgumentTypeError(f"{text}: no such file") from None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text}: {os_reason(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise argparse.ArgumentTypeError(f"{text} is a folder; expected a file")
    if not stat.S_ISREG(info.st_mode):  # a FIFO would hang the read, a device never end
        raise argparse.ArgumentTypeError(f"{regular_file_problem(path)}; expected a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text}: permission denied")
    return path


def output_file(text: str) -> Path:
    """Argument type: a file :func:`rollmux.io.atomic_write` can write (checked now)."""
    try:
        return check_output_file(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def output_folder(marker: str) -> Callable[[str], Path]:
    """Argument type: a folder :func:`rollmux.io.replace_folder` may replace; an existing,
    non-empty one must hold ``marker`` (proof that an earlier run wrote it)."""

    def parse(text: str) -> Path:
        """Check one output folder argument."""
        try:
            return check_output_folder(text, marker)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "output folder"
    return parse


def updatable_file(text: str) -> Path:
    """Argument type: an existing file that is read, then rewritten atomically."""
    return output_file(str(input_file(text)))


def add_quiet(parser: argparse.ArgumentParser, also: str = "") -> None:
    """The ``--quiet`` option of a long-running command (``also``: what else it silences)."""
    parser.add_argument("--quiet", "-q", action="store_true",
                        help=f"no progress{also} (a bar on a terminal, else a line every "
                             f"{PROGRESS_LINE_EVERY_S:g} s on stderr)")


#: Seconds between two progress lines when stderr is not a terminal (a log, a pipe).
PROGRESS_LINE_EVERY_S = 5.0


def show_progress(quiet: bool = False) -> bool:
    """Whether progress bars are drawn: stderr is a terminal and ``--quiet`` is off."""
    try:
        return not quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class LineProgress:
    """Progress for a log or a pipe: one ``rollmux: DESC: ...`` line on stderr every
    :data:`PROGRESS_LINE_EVERY_S` seconds while the work runs (none for short work).

    Quacks like the few tqdm members the commands use (``update``, ``n``, ``total``,
    ``set_postfix_str``, ``refresh``, ``close``, a context manager). A background thread
    writes the lines, so work that reports nothing (an exact solver) still shows its
    elapsed time.
    """

    def __init__(self, desc: str, total: float | None, unit: str,
                 every_s: float = PROGRESS_LINE_EVERY_S) -> None:
        """Start the clock and the writer thread."""
        self.desc, self.total, self.unit = desc, total, unit
        self.n: float = 0
        self.disable = False
        self.postfix = ""
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._every_s = every_s
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def update(self, n: float = 1) -> None:
        """``n`` more units done."""
        with self._lock:
            self.n += n

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        """What is being worked on (shown at the end of the next line)."""
        self.postfix = text

    def refresh(self) -> None:
        """Nothing to redraw: lines are written on the clock."""

    def line(self) -> str:
        """The progress line as it reads now."""
        elapsed = time.monotonic() - self._start
        if self.unit == "s":  # an elapsed-time bar: the clock is the progress
            done = f"{elapsed:.0f} s" + (f" of at most {self.total:g} s" if self.total else "")
        elif self.total:
            done = (f"{self.n:g}/{self.total:g} {self.unit} "
                    f"({100 * self.n / self.total:.0f} %), {elapsed:.0f} s")
        else:
            done = f"{self.n:g} {self.unit}, {elapsed:.0f} s"
        extra = f" [{self.postfix}]" if self.postfix else ""
        return f"rollmux: {self.desc}: {done}{extra}"

    def _run(self) -> None:
        """Write a line every ``every_s`` seconds until closed."""
        while not self._stop.wait(self._every_s):
            with suppress(OSError, ValueError):
                print(printable(self.line()), file=sys.stderr, flush=True)

    def close(self) -> None:
        """Stop writing lines."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> LineProgress:
        """The reporter itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop writing lines."""
        self.close()


def progress_bar(desc: str, total: float | None = None, unit: str = "it",
                 quiet: bool = False, **options: Any) -> Any:
    """Progress on stderr: a tqdm bar on a terminal, a :class:`LineProgress` line every
    few seconds elsewhere, nothing with ``quiet``."""
    if not quiet and not show_progress(quiet):
        return LineProgress(desc, total, unit)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True, disable=not show_progress(quiet), **options)


@contextmanager
def elapsed_bar(desc: str, limit_s: float | None = None, quiet: bool = False
                ) -> Iterator[None]:
    """A bar of elapsed seconds (against ``limit_s`` when given) while the body runs.

    For work that reports no progress of its own (an exact solver); a background thread
    redraws the bar twice a second (off a terminal: a line every few seconds).
    """
    bar = progress_bar(desc, total=limit_s, unit="s", quiet=quiet,
                       bar_format="{desc}: {n:.0f}/{total_fmt} s |{bar}|" if limit_s
                       else "{desc}: {n:.0f} s")
    if bar.disable or isinstance(bar, LineProgress):
        try:
            yield
        finally:
            bar.close()
        return
    stop = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        """Move the bar to the elapsed time until the body ends."""
        while not stop.wait(0.5):
            elapsed = time.monotonic() - start
            bar.n = min(elapsed, limit_s) if limit_s else elapsed
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()


# --------------------------------------------------------------------------- common options


def add_seed(parser: argparse.ArgumentParser, help_text: str = "seed of the random draws"
             ) -> None:
    """The ``--seed`` option (an integer 0..2^32-1, default 0)."""
    parser.add_argument("--seed", type=integer(0, SEED_MAX), default=0, help=help_text)


def add_hardware(parser: argparse.ArgumentParser,
                 help_text: str = "hardware YAML to use instead of the packaged defaults"
                 ) -> None:
    """The ``--hardware`` option (a defaults YAML instead of the packaged one)."""
    parser.add_argument("--hardware", type=input_file, default=None, help=help_text)


# --------------------------------------------------------------------------- output


def say(message: object) -> None:
    """Print one line of normal output on stdout (user text escaped)."""
    print(printable(message))


def write_or_print(table: Any, out: Path | None, what: str, float_format: str = "%.6g",
                   fmt: str = "csv") -> None:
    """Write ``table`` as CSV to ``out`` atomically, or print it on stdout as ``fmt``
    (``--format``: table, csv or json; :mod:`rollmux.cliformat`)."""
    from rollmux.io import write_csv

    if out is None:
        from rollmux.cliformat import print_table

        print_table(table, fmt, float_format)
    else:
        write_csv(table, out, float_format=float_format)
        say(f"wrote {len(table)} {what} to {out}")


# --------------------------------------------------------------------------- the error path


def error(message: object) -> None:
    """Print one ``rollmux: error: ...`` line on stderr (user text escaped, the line
    bounded: :func:`rollmux.errors.bound_line`)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    text = bound_line(printable('; '.join(lines) or message))
    print(f"rollmux: error: {text}", file=sys.stderr)


def report(exc: BaseException) -> ExitStatus:
    """Print what went wrong and return the exit status (the one error path)."""
    if isinstance(exc, InputFileError):
        # One line per distinct defect (a defect repeated on many rows: one line naming
        # the rows), at most MESSAGE_LIMIT of them, then the count when there are several.
        for line in exc.lines[:MESSAGE_LIMIT]:
            error(line)
        hidden = len(exc.lines) - MESSAGE_LIMIT
        if hidden > 0:
            error(f"... and {hidden} more kind(s) of problem")
        if len(exc.lines) > 1:
            files = sorted({p.file for p in exc.problems})
            error(f"{len(exc.problems)} problems in {', '.join(printable(f) for f in files)}")
        return ExitStatus.INVALID_INPUT
    if isinstance(exc, BrokenPipeError):  # the reader went away (`rollmux ... | head`)
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitStatus.OK
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else None
        error(f"{where}: {os_reason(exc)}" if where is not None else os_reason(exc))
        return ExitStatus.OS_ERROR
    if isinstance(exc, MemoryError):
        error("out of memory")
        return ExitStatus.OS_ERROR
    if isinstance(exc, PluginError):
        error(str(exc))
        return ExitStatus.PLUGIN
    if isinstance(exc, OverflowError):
        error("a number overflowed: an input value is far outside its plausible range "
              "(trace fields: traces/README.md)")
        return ExitStatus.USAGE
    if isinstance(exc, ValueError):
        error(str(exc))
        return ExitStatus.USAGE
    if os.environ.get("ROLLMUX_TRACEBACK"):
        traceback.print_exception(exc)
    error(f"internal error ({type(exc).__name__}: {exc}); this is a bug, please report the "
          f"command line (ROLLMUX_TRACEBACK=1 shows the traceback)")
    return ExitStatus.INTERNAL


@contextmanager
def _one_interrupt() -> Iterator[None]:
    """Let the first Ctrl-C raise KeyboardInterrupt and ignore further ones while the
    interrupted work cleans up (its temporary files), so no second traceback appears."""

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started with Ctrl-C ignored (a background job of a script): it stays ignored.
        yield
        return
    try:
        previous = signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run(build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str] | None
        ) -> int:
    """Parse ``argv`` with the parser ``build_parser`` makes, run the chosen command and
    return its exit status; every failure goes through :func:`report`."""
    with _one_interrupt():
        try:
            args = build_parser().parse_args(argv)
            return int(args.func(args) or 0)
        except SystemExit as exc:  # --help and --version
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except KeyboardInterrupt:
            return ExitStatus.INTERRUPTED
        except Exception as exc:
            return report(exc)


def exit_status_epilog() -> str:
    """The exit statuses in one line, for the end of ``--help``."""
    return ("exit status: " + ", ".join(f"{int(s)} {EXIT_NAMES[s]}" for s in ExitStatus)
            + " (README.md, 'The command line')")


def command_main(register: Callable[[Any], None], command: Sequence[str] = (),
                 argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point of the sub-commands ``register`` adds: the ``rollmux``
    command line restricted to them, run on ``[*command, *argv]`` (default: sys.argv)."""

    def build_parser() -> argparse.ArgumentParser:
        """A ``rollmux`` parser holding only the sub-commands of ``register``."""
        parser = ArgumentParser(prog="rollmux", epilog=exit_status_epilog())
        register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
        return parser

    return run(build_parser, [*command, *(sys.argv[1:] if argv is None else argv)])
