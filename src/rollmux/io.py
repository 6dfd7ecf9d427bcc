"""Atomic, deterministic file output: nothing half-written on disk, same bytes every run."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

#: Permissions of written files (mkstemp alone would leave them owner-only).
FILE_MODE = 0o644


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    Whatever ``write`` returns is ignored. Creates the parent folder. If ``write``
    raises, the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 text atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_csv(frame: pd.DataFrame, path: str | Path, float_format: str = "%.6g") -> Path:
    """Write a DataFrame as CSV atomically, with a fixed float format (stable bytes)."""
    text = frame.to_csv(index=False, float_format=float_format, lineterminator="\n")
    return write_text(path, text)


def write_json(data: Any, path: str | Path) -> Path:
    """Write JSON atomically, keys sorted, two-space indent."""
    return write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
