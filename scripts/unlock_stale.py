"""Release the Snakemake lock of a run that was killed, so `make reproduce` resumes.

Snakemake locks the working directory while it runs and releases the lock when it ends,
also on Ctrl-C; a run killed outright (SIGKILL, a closed terminal, a crashed machine)
leaves the lock behind, and the next run refuses to start ("Directory cannot be locked").
This script, run by `make reproduce` before Snakemake, calls `snakemake --unlock` when the
directory holds a lock and no Snakemake process is running in it; the run that follows
(`--rerun-incomplete`) then redoes the jobs the kill interrupted. Where running processes
cannot be listed (no /proc), a lock is left alone and the way out is printed.

    python scripts/unlock_stale.py [SNAKEMAKE OPTIONS, e.g. --configfile config/paper.yaml]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LOCKS = Path(".snakemake") / "locks"


def locked(workdir: Path) -> bool:
    """Whether Snakemake's lock folder of ``workdir`` holds a lock."""
    folder = workdir / LOCKS
    return folder.is_dir() and any(folder.iterdir())


def running_here(workdir: Path, proc: Path = Path("/proc")) -> bool | None:
    """Whether a Snakemake process (other than this one's) runs in ``workdir``; None when
    processes cannot be listed."""
    if not proc.is_dir():
        return None
    here = workdir.resolve()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone, or another user's
            continue
        names = [os.path.basename(os.fsdecode(arg)) for arg in argv[:3]]
        if cwd == here and any("snakemake" in name for name in names):
            return True
    return False


def main(argv: list[str]) -> int:
    """Unlock a stale lock of the current directory (0), or say why not (0 as well)."""
    workdir = Path.cwd()
    if not locked(workdir):
        return 0
    running = running_here(workdir)
    if running is None:
        print("rollmux: the working directory is locked and running Snakemake processes "
              "cannot be listed here; if no run is going on, run "
              "`.venv/bin/snakemake --unlock` and then the command again", file=sys.stderr)
        return 0
    if running:
        return 0  # a live run holds the lock: Snakemake itself will refuse to start twice
    print("rollmux: releasing the lock of an interrupted run (snakemake --unlock); its "
          "incomplete jobs run again", file=sys.stderr)
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [str(snakemake)] if snakemake.exists() else [sys.executable, "-m", "snakemake"]
    return subprocess.run([*command, "--unlock", *argv], check=False,
                          stdout=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
