"""Atomic, deterministic file output: nothing half-written on disk, same bytes every run.

Files are written to a temporary file beside them and renamed into place
(:func:`atomic_write`); a folder of outputs that belong together is built in a temporary
sibling folder and renamed into place whole (:func:`replace_folder`), so a reader never
sees files of two runs side by side. :func:`check_output_file` and
:func:`check_output_folder` tell, before any work, whether a path can be written that way;
an operating-system error while writing names the output, never a temporary file.

Never touch what rollmux did not write: a folder is replaced only when it is absent,
empty, or written by rollmux, i.e. it holds the marker :data:`OUTPUT_MARKER` (written last,
naming the run and listing its files) and nothing that the marker does not list; any
other folder is refused with one line naming it. A symbolic link is followed: the files
go to its target (a file) or replace its target (a folder, under the same rule), and the
link stays a link.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rollmux.errors import os_reason, printable, yaml_problem

if TYPE_CHECKING:  # pandas and yaml load on first use: the command line starts without them
    import pandas as pd

#: Permissions of written files (mkstemp alone would leave them owner-only).
FILE_MODE = 0o644

#: Permissions of a folder written by :func:`replace_folder` (mkdtemp: owner-only).
FOLDER_MODE = 0o755

#: The file :func:`replace_folder` writes last into every folder it writes: which run
#: wrote the folder and which files (JSON ``{"writer": "rollmux", "run": ..., "files":
#: [...]}``). Its presence is what makes the folder replaceable.
OUTPUT_MARKER = ".rollmux-output.json"


class InputPathError(ValueError):
    """An input path that names no regular file (a folder, a FIFO, a device, a socket);
    the message names the path and what it is (``reason``: what it is, without the path)."""

    def __init__(self, path: str | Path, kind: str) -> None:
        """``path is KIND, not a regular file``."""
        self.reason = f"is {kind}, not a regular file"
        super().__init__(f"{printable(path)} {self.reason}")


def _file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as an input file (it is a folder, a FIFO, a device, a
    socket), None for a regular file (a missing one: the OSError of opening it)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    kind = _file_kind(info.st_mode)
    return None if kind is None else str(InputPathError(path, kind))


def open_input(path: str | Path, mode: str = "rb", encoding: str | None = None,
               **options: Any) -> IO[Any]:
    """Open an input file for reading, refusing anything but a regular file without
    blocking (a FIFO with no writer would hang ``open``; a device never ends):
    :class:`InputPathError` naming it. The check is on the opened file itself."""
    try:
        kind = _file_kind(os.stat(path).st_mode)
    except OSError:
        kind = None  # opening it says why
    if kind is not None:
        raise InputPathError(path, kind)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = _file_kind(os.fstat(fd).st_mode)
        if kind is not None:  # swapped since the check above
            raise InputPathError(path, kind)
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode, encoding=encoding, **options)
    except BaseException:
        os.close(fd)
        raise


def read_input_bytes(path: str | Path) -> bytes:
    """The bytes of the regular file at ``path`` (:func:`open_input`'s refusals)."""
    with open_input(path) as stream:
        data: bytes = stream.read()
    return data


def read_yaml(path: str | Path) -> Any:
    """The YAML document in the file at ``path``; ValueError naming the file on an
    unreadable, non-UTF-8 or malformed one (line and column of the YAML error)."""
    import yaml

    try:
        with open_input(path, "r", encoding="utf-8") as stream:
            return yaml.safe_load(stream)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read: {os_reason(exc)}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: {yaml_problem(exc)}") from None


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Re-raise an OSError of the body as one about ``path`` (not a temporary sibling)."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None or exc.filename == str(path):
            raise
        raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path)) from None


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    Whatever ``write`` returns is ignored. Creates the parent folder. If ``write``
    raises, the temporary file is removed and ``path`` is left as it was; an OSError
    names ``path``. A symbolic link ``path`` stays a link: its target is written.
    """
    path = follow_link(Path(path))
    with naming(path):
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


def _state(path: Path) -> os.stat_result | None:
    """``path``'s status, None when it does not exist; ValueError when it cannot be known."""
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ValueError(f"{path}: {os_reason(exc)}") from None


def _check_path_text(path: str | Path) -> Path:
    """The path of a non-empty path text without NUL bytes (ValueError otherwise)."""
    text = os.fspath(path)
    if not text:
        raise ValueError("the path is empty")
    if "\x00" in text:
        raise ValueError("the path contains a NUL character")
    return Path(text)


def _check_creatable(folder: Path) -> None:
    """ValueError unless files can be created in ``folder`` (made first if absent)."""
    existing = folder
    while _state(existing) is None and existing != existing.parent:
        existing = existing.parent
    info = _state(existing)
    if info is None:
        raise ValueError(f"{folder}: no existing folder above it")
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{existing} is a file, so nothing can be written under it")
    try:  # a real probe: permissions, read-only file systems, root on /proc alike
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise ValueError(f"cannot write into {existing}: {os_reason(exc)}") from None


def follow_link(path: Path) -> Path:
    """The file or folder a symbolic link ``path`` names (itself when not a link).

    A chain of links is followed to its end; a link whose target does not exist yet names
    that target (it is created there). ValueError on a loop.
    """
    if not path.is_symlink():
        return path
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError) as exc:
        raise ValueError(f"{path}: a symbolic link that cannot be followed ({exc})") from None


def _short(name: str) -> str:
    """A file name as shown in a refusal: escaped, at most 40 characters."""
    text = name.encode("unicode_escape", "backslashreplace").decode("ascii")
    return text if len(text) <= 40 else text[:37] + "..."


def written_by_rollmux(folder: Path) -> tuple[bool, str]:
    """Whether ``folder`` (an existing folder) may be replaced whole, and if not why not.

    Yes when it is empty, or it holds :data:`OUTPUT_MARKER` naming rollmux as the writer
    and every other entry is a file the marker lists.
    """
    try:
        entries = sorted(entry.name for entry in folder.iterdir())
    except OSError as exc:
        raise ValueError(f"{folder}: {os_reason(exc)}") from None
    if not entries:
        return True, ""
    others = [name for name in entries if name != OUTPUT_MARKER]
    listed: set[str] = set()
    if OUTPUT_MARKER in entries:
        try:
            marker = json.loads((folder / OUTPUT_MARKER).read_text(encoding="utf-8"))
            if marker.get("writer") == "rollmux" and isinstance(marker.get("files"), list):
                listed = {str(name) for name in marker["files"]}
            else:
                return False, f"its {OUTPUT_MARKER} does not name rollmux as the writer"
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            return False, f"its {OUTPUT_MARKER} is not rollmux's"
    else:
        shown = ", ".join(_short(name) for name in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        return False, f"it holds {shown}{more} and no {OUTPUT_MARKER} (rollmux did not write it)"
    foreign = [name for name in others if name not in listed]
    if foreign:
        shown = ", ".join(_short(name) for name in foreign[:3])
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        return False, f"it holds {shown}{more}, which rollmux did not write"
    return True, ""


def check_output_file(path: str | Path) -> Path:
    """``path`` as a Path if :func:`atomic_write` can write it; ValueError says why not.

    Refused: an empty path, a path ending in ``/``, an existing folder or non-file, a
    path under a file, a folder where files cannot be created.
    """
    out = _check_path_text(path)
    if os.fspath(path).endswith(("/", os.sep)):
        raise ValueError(f"{out} names a folder (it ends with /); expected a file")
    target = follow_link(out)
    info = _state(target)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{out} is a folder; expected a file")
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{out} exists and is not a regular file")
    _check_creatable(target.parent)
    return out


def check_output_folder(path: str | Path, marker: str | None = None) -> Path:
    """``path`` as a Path if :func:`replace_folder` may replace it; ValueError says why not.

    Refused: an empty path, the current folder or one above it, an existing file, a
    non-empty folder that rollmux did not write (:func:`written_by_rollmux`: replacing it
    would delete what it holds), a parent where nothing can be created. A symbolic link
    is judged by its target, which is what gets replaced. ``marker`` is ignored (the
    marker is always :data:`OUTPUT_MARKER`; kept for callers of the earlier signature).
    """
    out = _check_path_text(path)
    target = follow_link(out)
    try:
        resolved, here = target.resolve(), Path.cwd().resolve()
    except OSError as exc:
        raise ValueError(f"{out}: {os_reason(exc)}") from None
    if resolved == here or resolved in here.parents:
        raise ValueError(f"{out} is the current folder or one above it; the output folder "
                         f"is replaced whole, so name a folder of its own")
    info = _state(target)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{out} is a file; expected a folder")
    if info is not None:
        ours, why = written_by_rollmux(target)
        if not ours:
            raise ValueError(f"{out} is not replaced: {why}; name a new or empty folder")
    _check_creatable(target.parent)
    return out


def _sibling(path: Path, kind: str) -> Path:
    """A fresh hidden sibling name of ``path`` for ``kind`` (tmp or old), owned by this pid."""
    return path.parent / f".{path.name}.{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _process_alive(pid: int) -> bool:
    """Whether a process with this id exists (another writer may still be at work)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def orphaned_siblings(path: str | Path) -> list[Path]:
    """Temporary siblings of ``path`` left by writers that no longer run (killed mid-write)."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(tmp|old)-(\d+)-[0-9a-f]{{8}}$")
    out = []
    for entry in sorted(path.parent.iterdir()):
        match = pattern.match(entry.name)
        if match and (int(match.group(2)) == os.getpid()
                      or not _process_alive(int(match.group(2)))):
            out.append(entry)
    return out


@contextmanager
def replace_folder(path: str | Path, run: str = "rollmux") -> Iterator[Path]:
    """Yield an empty temporary sibling folder; on success it replaces ``path`` whole.

    Files written into the yielded folder appear at ``path`` together, with
    :data:`OUTPUT_MARKER` (naming ``run`` and listing the files) written last, and no file
    of an earlier run survives there. A folder rollmux did not write is refused
    (ValueError, before the body runs: :func:`check_output_folder`); a symbolic link is
    followed and its target replaced, the link kept. If the body raises (or the process is
    killed), ``path`` keeps its previous contents (or stays absent) and the temporary
    folder is removed (or left as an orphan, which the next call for ``path`` removes).
    Orphans of writers still running are left alone.
    """
    link = Path(path)
    path = follow_link(link)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{link} exists and is not a folder")
    if not path.name or path.name == "..":
        raise ValueError(f"{link}: name a folder of its own (it is replaced whole)")
    if path.is_dir():
        ours, why = written_by_rollmux(path)
        if not ours:
            raise ValueError(f"{link} is not replaced: {why}; name a new or empty folder")
    with naming(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    for orphan in orphaned_siblings(path):
        if orphan.name.startswith(f".{path.name}.old-") and not path.exists():
            # Killed between the two renames below: the previous folder goes back.
            os.rename(orphan, path)
            continue
        shutil.rmtree(orphan, ignore_errors=True)
    tmp = _sibling(path, "tmp")
    with naming(path):
        tmp.mkdir()
    try:
        with naming(path):
            yield tmp
            files = sorted(entry.name for entry in tmp.iterdir() if entry.name != OUTPUT_MARKER)
            marker = {"writer": "rollmux", "run": run, "files": files}
            (tmp / OUTPUT_MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True)
                                             + "\n", encoding="utf-8")
            os.chmod(tmp / OUTPUT_MARKER, FILE_MODE)
            os.chmod(tmp, FOLDER_MODE)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    with naming(path):
        if path.exists():
            old = _sibling(path, "old")
            os.rename(path, old)
        try:
            os.rename(tmp, path)
        except BaseException:
            if old is not None:
                os.rename(old, path)
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
