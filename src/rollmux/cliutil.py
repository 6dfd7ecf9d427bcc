"""Building blocks of the ``rollmux`` command line.

* :class:`ArgumentParser`: argparse whose usage errors raise
  :class:`rollmux.errors.UsageError` (one line, the argument named) instead of printing
  the usage and exiting;
* argument types with plausible ranges (:func:`integer`, :func:`number`), input files
  (:func:`input_file`) and output paths checked before any work (:func:`output_file`,
  :func:`output_folder`);
* progress bars (:func:`progress_bar`, :func:`elapsed_bar`): tqdm on stderr, shown only
  on a terminal and never with ``--quiet``.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from rollmux.errors import UsageError, os_reason, shorten
from rollmux.io import check_output_file, check_output_folder

__all__ = [
    "SEED_MAX",
    "ArgumentParser",
    "add_quiet",
    "elapsed_bar",
    "input_file",
    "integer",
    "number",
    "output_file",
    "output_folder",
    "progress_bar",
    "show_progress",
    "updatable_file",
]

#: Largest seed accepted on the command line (numpy seeds any non-negative integer; 32 bits
#: keep seeds readable and within every consumer's integer types).
SEED_MAX = 2**32 - 1


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
            raise argparse.ArgumentTypeError(f"expected an integer, got {shorten(text)!r}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{shorten(text.strip())} is out of range: expected an integer from {low} "
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
                f"expected a number, got {shorten(text)!r}"
            ) from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {shorten(text)!r}")
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
    """Argument type: an existing, readable regular file."""
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
                        help=f"no progress bar{also} (the bar is drawn only on a terminal)")


def show_progress(quiet: bool = False) -> bool:
    """Whether progress bars are drawn: stderr is a terminal and ``--quiet`` is off."""
    try:
        return not quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def progress_bar(desc: str, total: float | None = None, unit: str = "it",
                 quiet: bool = False, **options: Any) -> Any:
    """A tqdm bar on stderr, disabled unless :func:`show_progress`."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True, disable=not show_progress(quiet), **options)


@contextmanager
def elapsed_bar(desc: str, limit_s: float | None = None, quiet: bool = False
                ) -> Iterator[None]:
    """A bar of elapsed seconds (against ``limit_s`` when given) while the body runs.

    For work that reports no progress of its own (an exact solver); a background thread
    redraws the bar twice a second.
    """
    bar = progress_bar(desc, total=limit_s, unit="s", quiet=quiet,
                       bar_format="{desc}: {n:.0f}/{total_fmt} s |{bar}|" if limit_s
                       else "{desc}: {n:.0f} s")
    if bar.disable:
        bar.close()
        yield
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
