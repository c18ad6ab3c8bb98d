"""The one way utcgen writes a file: atomically.

Write to a temporary file in the target folder, flush and fsync it, then rename it over
the target. A reader, a crash or a `kill -9` sees the old file or the new one, never half
of one, and `datasets` globbing `*.parquet` never sees the temporary name. The temporary name
carries the writer's host and pid, so the start-up clean-up of one process removes only what a
dead process of this host left, never a file another live process is writing.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TMP_PREFIX = ".utcgen-tmp-"
TMP_SUFFIX = ".part"
STATE_DIR = ".utcgen"  # a run folder's own state: the run lock, its holder, the manifest of files written
LEGACY_TMP_AGE_S = 3600  # an untagged temp file (older versions) this old was left by a kill
_TAGGED = re.compile(rf"^{re.escape(TMP_PREFIX)}(?P<host>[A-Za-z0-9.-]*)-(?P<pid>\d+)-")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname())[:40]


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host (one we may not signal counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomic(path: Path, data: str | bytes | Callable[[Path], None]) -> None:
    """Replace `path` with `data`: text, bytes, or a function that writes the given temp path.
    An OSError (a full disk) names `path` when the system did not say which file it was."""
    try:
        _replace(Path(path), data)
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:  # a system error such as ENOSPC
            exc.filename = str(path)
        raise


def temporary_file(folder: Path) -> tuple[int, Path]:
    """(open descriptor, path) of a new temporary file in `folder`, tagged with this host and process so
    that only a dead process's leftovers are cleaned up; `*.parquet` and `*.json` globs never match it."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{_host()}-{os.getpid()}-", suffix=TMP_SUFFIX, dir=folder)
    return fd, Path(name)


def temporary_folder(folder: Path) -> Path:
    """A new temporary folder in `folder`, tagged like `temporary_file`: work that becomes a whole folder
    by one rename (a model made once), and that `remove_stale_temporaries` clears once its writer is dead."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{_host()}-{os.getpid()}-", suffix=TMP_SUFFIX, dir=folder))


def _replace(path: Path, data: str | bytes | Callable[[Path], None]) -> None:
    fd, tmp = temporary_file(path.parent)
    try:
        if callable(data):
            os.close(fd)
            fd = -1
            data(tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        else:
            with os.fdopen(fd, "wb") as fh:
                fd = -1
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
        tmp.chmod(0o644)  # mkstemp makes 0600 files; what utcgen writes is meant to be shared
        os.replace(tmp, path)
    finally:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)


def remove_stale_temporaries(folder: Path) -> None:
    """Temp files and folders left by a write that a kill interrupted (the data they held is redone):
    those of a process of this host that no longer runs, and untagged ones older than an hour. A live
    process's file, or one written from another host, is left alone."""
    host, now = _host(), time.time()
    for stale in Path(folder).glob(f"{TMP_PREFIX}*{TMP_SUFFIX}"):
        tagged = _TAGGED.match(stale.name)
        if tagged:
            if tagged["host"] != host or pid_alive(int(tagged["pid"])):
                continue
        else:
            try:
                if now - stale.stat().st_mtime < LEGACY_TMP_AGE_S:
                    continue
            except FileNotFoundError:
                continue
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)
