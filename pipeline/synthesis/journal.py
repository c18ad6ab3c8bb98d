"""The run journal: one file per finished seed job, and the run manifest.

The journal is the runner's checkpoint (`runner.checkpoint`) laid out for seed jobs: each
finished job is written at once, as `journal/job-NNNNNNN.json`, atomically, so a kill loses at
most the jobs in flight and a re-run of the same command skips every finished job; the
sessions' files give the run's wall time over resumes; `inputs.json` holds the digests of the
input files, checked on every resume. The
dataset is the accepted dialogues of the lowest-numbered jobs, N of them (`select`), so
the result does not depend on scheduling, concurrency or how often the run was interrupted.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from ..core.errors import InputError
from ..core.files import write_atomic
from ..core.records import Dialogue, Usage
from ..ingest.parsing import catalog_files
from ..runner import Checkpoint
from ..settings.config import RunConfig
from ..settings.fingerprint import changed_files, file_digests

JOURNAL_DIR = "journal"
INPUTS = "inputs.json"  # sha256 of every input file the run reads


def input_digests(config: RunConfig) -> dict[str, str]:
    """sha256 of each file the run's dialogues come from: the catalog's files, the personas, the split."""
    files = {f"catalog file {path.name}": path for _, path in catalog_files(config.located(config.catalog))}
    for what, extra in (("personas", config.personas), ("split", config.exclude_split)):
        if extra:
            files[f"{what} file {Path(extra).name}"] = config.located(extra)
    return file_digests(files)


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


class CallCounters(BaseModel):
    """What one process's gateway counted that the records do not hold: retries (by reason), calls
    that failed through their retries, and the calls of work thrown away (jobs in flight when the
    run had its N dialogues, attempts started early and not needed: `synthesis.speculate`). Kept
    per process so `stats.json` sums every session."""

    retries: int = 0
    retry_reasons: dict[str, int] = {}
    gave_up: int = 0
    discarded: Usage = Field(default_factory=Usage)


class Journal(Checkpoint):
    """One JSON file per finished job under `<out>/journal/`, plus the run manifest, the sessions
    and each process's call counters (`calls-*.json`)."""

    def __init__(self, out: Path, config: RunConfig, allow_config_change: bool = False) -> None:
        folder = Path(out) / JOURNAL_DIR
        super().__init__(folder, folder / "run.json", kind="generate", settings=config.fingerprint_settings(),
                         fingerprint=config.fingerprint(), settings_key="config", allow_change=allow_config_change,
                         label=Path(out), what="a run", sessions=True)
        self._counters = folder / f"calls-{uuid.uuid4().hex[:12]}.json"
        self._check_inputs(config, Path(out), allow_config_change)

    def _check_inputs(self, config: RunConfig, out: Path, allow_change: bool) -> None:
        """Refuses a resume whose catalog, personas or split file changed content since the run began
        (exit 2, naming the file), unless the change is allowed; records the digests otherwise."""
        path = self.dir / INPUTS
        digests = input_digests(config)
        try:
            previous = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: unreadable record of the run's input files: {exc}") from exc
        if isinstance(previous, dict) and (changed := changed_files(previous, digests)) and not allow_change:
            raise InputError(
                f"{out}: holds a run made from other input files: {', '.join(changed[:5])} (catalog "
                f"{config.catalog}, personas {config.personas}) changed content since it began (edited, added or "
                "removed), and dialogues from the old content would be mixed "
                "with new ones. Restore the file, use another --out, or pass --allow-config-change to resume "
                "into it anyway.")
        if previous != digests:
            write_atomic(path, json.dumps(digests, indent=2, sort_keys=True))

    def write_counters(self, counters: CallCounters) -> None:
        """This process's counters so far (each finished job writes them; so does the export)."""
        if counters.retries or counters.gave_up or counters.discarded.calls or self._counters.exists():
            write_atomic(self._counters, counters.model_dump_json())

    def counters(self) -> CallCounters:
        """Every process's counters, summed: the whole run's, over resumes and workers."""
        total = CallCounters()
        for item in self.read("calls-*.json", CallCounters):
            total.retries += item.retries
            total.gave_up += item.gave_up
            total.discarded.add(item.discarded)
            for reason, count in item.retry_reasons.items():
                total.retry_reasons[reason] = total.retry_reasons.get(reason, 0) + count
        return total

    def path(self, job: int) -> Path:
        return self.dir / f"job-{job:07d}.json"

    def write(self, record: JobRecord) -> None:
        self.save(self.path(record.job), record)

    def load(self) -> dict[int, JobRecord]:
        return {record.job: record for record in self.read("job-*.json", JobRecord)}

    def count(self) -> int:
        """How many jobs are journaled (their files; none is read)."""
        return sum(1 for _ in self.dir.glob("job-*.json")) if self.dir.is_dir() else 0

    def each(self) -> Iterator[JobRecord]:
        """Every finished job, read one at a time and not kept (in file-name order)."""
        for path in sorted(self.dir.glob("job-*.json")) if self.dir.is_dir() else []:
            try:
                yield JobRecord.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # as `Checkpoint.read`: the job runs again

    def in_order(self) -> Iterator[JobRecord]:
        """The finished jobs from job 0 up to the first gap, read one at a time and not kept (an
        unreadable file is a gap, as `load` skips it)."""
        job = 0
        while (path := self.path(job)).exists():
            try:
                record = JobRecord.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return
            yield record
            job += 1


def in_job_order(records: Mapping[int, JobRecord]) -> Iterator[JobRecord]:
    """The records of jobs 0, 1, ... up to the first gap."""
    job = 0
    while job in records:
        yield records[job]
        job += 1


def selected(records: Iterable[JobRecord], n: int) -> Iterator[Dialogue]:
    """`select`'s dialogues one at a time, in job order, from records in job order (`in_job_order`,
    `Journal.in_order`): every attempt of each job until n accepted ones were seen."""
    accepted = 0
    for record in records:
        if accepted >= n:
            return
        for d in record.dialogues:
            accepted += d.accepted
            yield d


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
