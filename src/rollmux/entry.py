"""The ``rollmux`` console script: the command line, quiet on Ctrl-C from its first instant.

The script's wrapper imports this module only (the ``rollmux`` package and this file load
nothing else), so a Ctrl-C while the command line itself loads exits 130 without a
traceback, as one during a command does (:func:`rollmux.cliutil.run`).
"""

from __future__ import annotations

#: Exit status of an interrupted command (:attr:`rollmux.errors.ExitStatus.INTERRUPTED`).
INTERRUPTED = 130


def main() -> int:
    """Load and run the ``rollmux`` command line; 130 when interrupted while loading."""
    try:
        from rollmux.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        return INTERRUPTED
