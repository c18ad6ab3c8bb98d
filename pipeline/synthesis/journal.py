"""The run journal: one file per finished seed job, and the run manifest.

Each finished job is written at once, as its own file, atomically: a kill loses at most
the jobs in flight, and a re-run of the same command skips every finished job.
Each process that writes to the journal also keeps a session file (`session-*.json`: when
it started and when it last wrote), so the run's wall time is the union of its sessions'
intervals: it accumulates over resumes, a killed session counts up to its last finished
job, and concurrent workers of one run (Prefect tasks) are not counted twice. The
dataset is the accepted dialogues of the lowest-numbered jobs, N of them (`select`), so
the result does not depend on scheduling, concurrency or how often the run was interrupted.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from .. import __version__
from ..config import RunConfig
from ..errors import InputError
from ..files import remove_stale_temporaries, write_atomic
from ..records import Dialogue

JOURNAL_DIR = "journal"


class JobRecord(BaseModel):
    """The outcome of one seed job: every attempt, the last one accepted if any was."""

    job: int
    seed_tool: str
    accepted: bool
    dialogues: list[Dialogue]
    elapsed_s: float
    finished_at: float | None = None  # wall-clock time the job ended (orders completions)

    @property
    def final(self) -> Dialogue:
        return self.dialogues[-1]


class Journal:
    """One JSON file per finished job under `<out>/journal/`, plus the run manifest."""

    def __init__(self, out: Path, config: RunConfig, allow_config_change: bool = False) -> None:
        self.dir = out / JOURNAL_DIR
        manifest = self.dir / "run.json"
        fingerprint = config.fingerprint()
        previous: dict = {}
        if manifest.exists():
            try:
                previous = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"{manifest}: unreadable run manifest: {exc}") from exc
        if previous.get("fingerprint") == fingerprint:
            pass
        elif previous and not allow_config_change:
            changed = _changed(previous.get("config") or {}, config.model_dump())
            what = f" ({', '.join(changed)})" if changed else ""
            raise InputError(
                f"{out}: holds a run made with a different configuration{what}: catalog, personas, seed, models, "
                "synthesis, API base, sampling or prompt versions changed, and replies made under the old one "
                "would be mixed with new ones. Use another --out, delete the folder to start over, or pass "
                "--allow-config-change to resume into it anyway."
            )
        else:
            history = [*previous.get("previous_fingerprints", []), previous.get("fingerprint")] if previous else []
            write_atomic(manifest, json.dumps({"fingerprint": fingerprint, "utcgen_version": __version__,
                                               "config": config.model_dump(), "previous_fingerprints": history},
                                              indent=2))
        remove_stale_temporaries(self.dir)  # a write interrupted by a kill; its job simply runs again
        self._session = self.dir / f"session-{uuid.uuid4().hex[:12]}.json"
        self._started = time.time()

    def path(self, job: int) -> Path:
        return self.dir / f"job-{job:07d}.json"

    def write(self, record: JobRecord) -> None:
        write_atomic(self.path(record.job), record.model_dump_json())
        self.touch()

    def touch(self) -> None:
        """Records that this session ran until now (each job write does; the export does at the end)."""
        write_atomic(self._session, json.dumps({"started": self._started, "last": time.time()}))

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

    def load(self) -> dict[int, JobRecord]:
        records = {}
        for path in sorted(self.dir.glob("job-*.json")):
            try:
                record = JobRecord.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # cannot happen with atomic writes; if it does, the job is redone
            records[record.job] = record
        return records


def _changed(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted names of the settings that differ (at most 5), leaving out ones that may change on resume."""
    free = {"num_dialogues", "out", "budget", "llm.max_in_flight", "llm.timeout", "llm.max_retries",
            "llm.backoff_base", "llm.backoff_max", "llm.cache", "llm.cache_dir", "llm.api_key_env",
            "synthesis.max_jobs_in_flight", "synthesis.stop_after_same_rejections"}
    out = []
    for key in sorted(set(old) | set(new)):
        name = prefix + key
        if name in free:
            continue
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _changed(a, b, name + ".")
        elif a != b:
            out.append(name)
    return out[:5]


def select(records: dict[int, JobRecord], n: int) -> tuple[list[Dialogue], list[Dialogue], bool]:
    """(accepted, rejected, complete): the first n accepted dialogues by job number, and the
    rejected attempts of the jobs up to the last one used. `complete` when n were found."""
    accepted: list[Dialogue] = []
    rejected: list[Dialogue] = []
    job = 0
    while job in records and len(accepted) < n:
        for d in records[job].dialogues:
            (accepted if d.accepted else rejected).append(d)
        job += 1
    return accepted, rejected, len(accepted) >= n
