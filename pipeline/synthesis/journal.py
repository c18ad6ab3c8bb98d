"""The run journal: one file per finished seed job, and the run manifest.

The journal is the runner's checkpoint (`runner.checkpoint`) laid out for seed jobs: each
finished job is written at once, as `journal/job-NNNNNNN.json`, atomically, so a kill loses at
most the jobs in flight and a re-run of the same command skips every finished job; the
sessions' files give the run's wall time over resumes. The
dataset is the accepted dialogues of the lowest-numbered jobs, N of them (`select`), so
the result does not depend on scheduling, concurrency or how often the run was interrupted.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from ..config import RunConfig
from ..records import Dialogue
from ..runner import Checkpoint

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


class Journal(Checkpoint):
    """One JSON file per finished job under `<out>/journal/`, plus the run manifest and sessions."""

    def __init__(self, out: Path, config: RunConfig, allow_config_change: bool = False) -> None:
        folder = Path(out) / JOURNAL_DIR
        super().__init__(folder, folder / "run.json", kind="generate", settings=config.model_dump(),
                         fingerprint=config.fingerprint(), settings_key="config", allow_change=allow_config_change,
                         label=Path(out), what="a run", sessions=True)

    def path(self, job: int) -> Path:
        return self.dir / f"job-{job:07d}.json"

    def write(self, record: JobRecord) -> None:
        self.save(self.path(record.job), record)

    def load(self) -> dict[int, JobRecord]:
        return {record.job: record for record in self.read("job-*.json", JobRecord)}


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
