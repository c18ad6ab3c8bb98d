"""One process per output folder: the run lock.

Two `utcgen generate` on one `--out` would both spend on the same seed jobs and race on the
export, leaving a folder that disagrees with its journal. So the process that owns a run (the
CLI, or the Prefect flow that plans the waves) takes an exclusive lock on `<out>/.utcgen/run.lock`
for the whole run; the flow's task workers (threads, Dask processes) run inside that run and never
take it, so they share it by design.

The lock is an operating-system lock (`filelock`: `flock` on POSIX), which the kernel drops when
its holder dies, even by `kill -9`: a killed run leaves nothing to clean up. Beside it,
`<out>/.utcgen/holder.json` says who holds it (pid, host, since) so that a refused process can name
the holder. On a file system without `flock` the library falls back to a lock that is just the
file's existence; there a lock whose holder was a process of this host that no longer runs is
stale and is taken over.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from ..core.errors import InputError
from ..core.files import STATE_DIR, pid_alive, write_atomic

LOCK_FILE = "run.lock"
HOLDER_FILE = "holder.json"


class FolderLocked(InputError):
    """Another live process holds the folder's run lock (exit status 2)."""


def holder_of(folder: Path) -> dict[str, object]:
    """What `holder.json` says about the lock's holder (empty if unreadable)."""
    try:
        data = json.loads((Path(folder) / STATE_DIR / HOLDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe_holder(holder: dict[str, object]) -> str:
    if not holder:
        return "another process (no holder recorded)"
    since = holder.get("since")
    when = (dt.datetime.fromtimestamp(float(since)).isoformat(sep=" ", timespec="seconds")  # pyright: ignore[reportArgumentType]
            if isinstance(since, (int, float)) else "?")
    return f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} (since {when}, {holder.get('command', 'utcgen')})"


def _stale(holder: dict[str, object]) -> bool:
    """A holder recorded on this host whose process is gone."""
    pid = holder.get("pid")
    return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid)


class RunLock:
    """The exclusive lock of one output folder, held from `acquire` (or `with`) until `release`.

    Re-entrant on one instance; a second instance on the same folder, even in this process, is refused."""

    def __init__(self, folder: Path | str, command: str = "utcgen generate") -> None:
        self.folder = Path(folder)
        self.state = self.folder / STATE_DIR
        self.command = command
        self._lock = FileLock(str(self.state / LOCK_FILE), timeout=0)

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> RunLock:
        """Take the lock or raise `FolderLocked` naming the holder; never waits."""
        self.state.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            holder = holder_of(self.folder)
            if not _stale(holder) or not self._take_over():
                raise FolderLocked(
                    f"{self.folder}: another utcgen run is writing into this folder: {describe_holder(holder)}. "
                    "Wait for it to finish, stop it, or choose another --out.") from None
        if self._lock.lock_counter == 1:
            write_atomic(self.state / HOLDER_FILE, json.dumps(
                {"pid": os.getpid(), "host": socket.gethostname(), "since": round(time.time(), 3),
                 "command": self.command}) + "\n")
        return self

    def _take_over(self) -> bool:
        """A soft lock left by a dead process of this host: remove it and try once more."""
        Path(self._lock.lock_file).unlink(missing_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            return False
        return True

    def release(self) -> None:
        if not self._lock.is_locked:
            return
        if self._lock.lock_counter == 1:
            (self.state / HOLDER_FILE).unlink(missing_ok=True)
        self._lock.release()

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
