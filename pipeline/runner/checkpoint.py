"""A run folder's resumable state: the manifest, one file per finished item, the sessions.

The manifest (`run.json`) records the fingerprint of the settings that made the run (see
`fingerprint`). Opening a folder made with another fingerprint is refused unless the caller
allows the change; then the manifest is rewritten, keeping the earlier fingerprints.
Each finished item is written at once, as its own file, atomically: a kill loses at most the
items in flight, and a re-run skips every finished one. With `sessions`, each process that
writes also keeps a session file (`session-*.json`: when it started and when it last wrote),
so the run's wall time is the union of its sessions' intervals (the file names its process, `pid`): it accumulates over resumes, a
killed session counts up to its last finished item, and concurrent workers of one run (Prefect
tasks) are not counted twice. Every item passes through `redaction.redact` before it is written,
so a key a server echoed into an error never lands in the journal.

The checkpoint takes no lock: the process that owns the run holds the folder's `RunLock`
(`runner.lock`) and the workers of that run (Prefect tasks, Dask processes) open the checkpoint
under it. Its start-up clean-up therefore removes only temporary files of dead processes
(`files.remove_stale_temporaries`), never one a live worker is writing.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from .. import __version__
from ..core.errors import InputError
from ..core.files import remove_stale_temporaries, write_atomic
from ..core.redaction import redact
from ..settings.fingerprint import FINGERPRINT_VERSION, Kind, changed_settings

M = TypeVar("M", bound=BaseModel)


class Checkpoint:
    """Finished items under `items/`, and the manifest at `manifest` (a JSON file).

    `settings` are stored in the manifest under `settings_key`, so that a refused resume can
    name the settings that changed; `what` names the run in that message ("a run", "an
    evaluation") and `label` the folder."""

    def __init__(self, items: Path, manifest: Path, *, kind: Kind, settings: Mapping[str, Any], fingerprint: str,
                 settings_key: str = "settings", allow_change: bool = False, label: Path | None = None,
                 what: str = "a run", sessions: bool = False) -> None:
        self.dir = Path(items)
        self.manifest = Path(manifest)
        previous: dict[str, Any] = {}
        if self.manifest.exists():
            try:
                previous = json.loads(self.manifest.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"{self.manifest}: unreadable run manifest: {exc}") from exc
        if previous and previous.get("fingerprint") != fingerprint and not allow_change:
            changed = changed_settings(kind, previous.get(settings_key) or {}, settings)
            raise InputError(
                f"{label or self.manifest.parent}: holds {what} made with a different configuration "
                f"({', '.join(changed) or 'prompt versions'}), and replies made under the old one would be mixed "
                "with new ones. Use another --out, delete the folder to start over, or pass "
                "--allow-config-change to resume into it anyway.")
        if previous.get("fingerprint") != fingerprint:
            history = [*previous.get("previous_fingerprints", []), previous.get("fingerprint")] if previous else []
            write_atomic(self.manifest, redact(json.dumps(
                {"fingerprint": fingerprint, "fingerprint_version": FINGERPRINT_VERSION, "utcgen_version": __version__,
                 settings_key: dict(settings), "previous_fingerprints": history}, indent=2, default=str)))
        remove_stale_temporaries(self.dir)  # a dead process's interrupted write; its item simply runs again
        self._sessions = sessions
        self._session = self.dir / f"session-{uuid.uuid4().hex[:12]}.json"
        self._started = time.time()

    def save(self, path: Path, item: BaseModel) -> None:
        """One finished item, atomically (and this session's span, with `sessions`)."""
        write_atomic(path, redact(item.model_dump_json()))
        if self._sessions:
            self.touch()

    def read(self, pattern: str, model: type[M]) -> list[M]:
        """Every finished item whose file name matches `pattern`, in file-name order."""
        items = []
        for path in sorted(self.dir.glob(pattern)) if self.dir.is_dir() else []:
            try:
                items.append(model.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue  # cannot happen with atomic writes; if it does, the item runs again
        return items

    def touch(self) -> None:
        """Records that this session ran until now (each item write does; the export does at the end)."""
        write_atomic(self._session, json.dumps({"started": self._started, "last": time.time(), "pid": os.getpid()}))

    def wall_time_s(self) -> float:
        """Seconds covered by the sessions of this run, overlaps counted once."""
        spans = []
        for path in self.dir.glob("session-*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                spans.append((float(data["started"]), float(data["last"])))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # cannot happen with atomic writes; a lost span only shortens the total
        total, end = 0.0, float("-inf")
        for start, last in sorted(spans):
            if last > end:
                total += last - max(start, end)
                end = last
        return round(total, 2)
