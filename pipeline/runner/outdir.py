"""Whether a run may write into its output folder, decided before any work starts.

A run writes a journal, parquet shards, `README.md` and `stats.json` into `--out`, and removes
shards it wrote earlier. Pointed at the wrong folder (a project's checkout, a dataset someone
made by hand) it would overwrite and delete what is not its own. So a folder is accepted when
it does not exist yet, is empty, or is already a utcgen run (it holds the `.utcgen/` state folder,
or a run journal's manifest from a version before it); anything else is refused unless the
user says `--force`. An empty path, a path that is a file, and a folder this user cannot write
into are refused with one line, exit status 2; a full disk met while checking is an
environment fault, exit status 1.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import InputError, UtcgenError, os_error
from ..core.files import STATE_DIR
from .lock import RunLock

# Files that mark a folder as a utcgen run folder (the last one: runs made before `.utcgen/` existed).
RUN_MARKERS = (STATE_DIR, "journal/run.json")
PROBE = "write-probe"


def is_run_folder(folder: Path) -> bool:
    return any((Path(folder) / marker).exists() for marker in RUN_MARKERS)


def _first_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def check_out_folder(out: str | Path | None, *, force: bool = False, flag: str = "--out") -> Path:
    """The output folder, created with its `.utcgen/` state folder, or a one-line error naming the flag.

    Refuses (exit 2): an empty path; a path that is, or lies under, a file; an existing non-empty
    folder that is not a utcgen run unless `force`; a folder this user cannot create or write into."""
    text = "" if out is None else str(out)
    if not text.strip():
        raise InputError(f"{flag}: empty path: name the output folder (an empty one would write into the current folder)")
    path = Path(text).expanduser()
    try:
        return _check(path, text, force, flag)
    except OSError as exc:  # a name too long, a loop of links, ...: said about the flag
        raise os_error(exc, f"{flag} {text}") from None


def _check(path: Path, text: str, force: bool, flag: str) -> Path:
    existing = _first_existing(path.absolute())
    if existing.exists() and not existing.is_dir():
        what = "is a file" if existing == path.absolute() else f"lies under {existing}, which is a file"
        raise InputError(f"{flag} {text}: {what}, not a folder; choose a folder path")
    if path.is_dir() and not is_run_folder(path) and any(path.iterdir()) and not force:
        shown = sorted(p.name for p in path.iterdir())[:5]
        raise InputError(
            f"{flag} {text}: the folder exists, is not empty ({', '.join(shown)}{', ...' if len(shown) == 5 else ''}) "
            "and is not a utcgen run folder; a run would overwrite README.md and stats.json in it. Choose a new or "
            "empty folder, or pass --force to write into it anyway.")
    check_writable(path, flag)
    return path


def check_writable(path: Path, flag: str = "--out") -> None:
    """Creates `path/.utcgen/` and writes and removes a small file there, before any work starts."""
    state = path / STATE_DIR
    probe = state / f"{PROBE}-{os.getpid()}"
    try:
        state.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"utcgen\n")
        probe.unlink()
    except OSError as exc:
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise InputError(f"{flag} {path}: cannot write there ({exc.strerror or exc}); "
                             "choose a folder you can write into") from None
        raise os_error(exc, f"{flag} {path}") from None



def discard_if_unused(folder: Path) -> bool:
    """Removes a folder this run created when it holds nothing but the run's own state (the lock):
    a run refused before its first write leaves no trace. Says whether it did."""
    folder = Path(folder)
    if not folder.is_dir():
        return False
    state = folder / STATE_DIR
    if any(not (p == state or state in p.parents) for p in folder.rglob("*")):
        return False
    if any(p.name not in ("run.lock", "holder.json") for p in state.rglob("*")):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


@contextlib.contextmanager
def claimed(out: str | Path | None, *, force: bool = False, command: str = "utcgen generate") -> Iterator[Path]:
    """The output folder checked (`check_out_folder`) with its run lock held for the `with` block. A
    folder this run created is removed again when the block fails with a UtcgenError before anything
    was written into it (a refused run leaves no trace)."""
    existed = bool(out) and os.path.exists(os.path.expanduser(str(out)))  # False for a path that cannot exist
    folder = check_out_folder(out, force=force)
    try:
        with RunLock(folder, command=command):
            yield folder
    except UtcgenError:
        if not existed:
            discard_if_unused(folder)
        raise
