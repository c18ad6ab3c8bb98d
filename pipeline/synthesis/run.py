"""A generation run: seed jobs, the resumable journal, scheduling to N accepted, export.

Job j synthesises the seed tool `order[j mod |catalog|]` (a seeded permutation), with
up to `max_attempts` attempts. Each finished job is written to the journal at once,
as its own file, atomically: a kill loses at most the jobs in flight, and a re-run of
the same command skips every finished job. The dataset is the accepted dialogues of
the lowest-numbered jobs, N of them, so the result does not depend on scheduling,
concurrency or how many times the run was interrupted.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from utcgen.pipeline import __version__
from utcgen.pipeline.config import RunConfig
from utcgen.pipeline.errors import InputError, UtcgenError
from utcgen.pipeline.files import remove_stale_temporaries, write_atomic
from utcgen.pipeline.export.run_info import RunInfo
from utcgen.pipeline.records import Dialogue, Usage

JOURNAL_DIR = "journal"
MAX_FRUITLESS_JOBS = 20  # abort when this many seed jobs in a row produced nothing


class JobRecord(BaseModel):
    """The outcome of one seed job: every attempt, the last one accepted if any was."""

    job: int
    seed_tool: str
    accepted: bool
    dialogues: list[Dialogue]
    elapsed_s: float

    @property
    def final(self) -> Dialogue:
        return self.dialogues[-1]


class Journal:
    """One JSON file per finished job under `<out>/journal/`, plus the run manifest."""

    def __init__(self, out: Path, config: RunConfig) -> None:
        self.dir = out / JOURNAL_DIR
        manifest = self.dir / "run.json"
        if manifest.exists():
            try:
                previous = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"{manifest}: unreadable run manifest: {exc}") from exc
            if previous.get("fingerprint") != config.fingerprint():
                raise InputError(
                    f"{out}: holds a run made with a different configuration (catalog, personas, seed, "
                    "models or synthesis settings changed). Use another --out, or delete the folder to start over."
                )
        else:
            write_atomic(manifest, json.dumps({"fingerprint": config.fingerprint(), "utcgen_version": __version__,
                                               "config": config.model_dump()}, indent=2))
        remove_stale_temporaries(self.dir)  # a write interrupted by a kill; its job simply runs again

    def path(self, job: int) -> Path:
        return self.dir / f"job-{job:07d}.json"

    def write(self, record: JobRecord) -> None:
        write_atomic(self.path(record.job), record.model_dump_json())

    def load(self) -> dict[int, JobRecord]:
        records = {}
        for path in sorted(self.dir.glob("job-*.json")):
            try:
                record = JobRecord.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # cannot happen with atomic writes; if it does, the job is redone
            records[record.job] = record
        return records


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


class Progress(BaseModel):
    target: int
    accepted: int = 0
    rejected: int = 0
    jobs_done: int = 0
    resumed_jobs: int = 0
    usage: Usage = Usage()


class Engine:
    """Holds what every job shares: catalog, index, personas, gateway, journal."""

    def __init__(self, config: RunConfig, embedder: Any = None) -> None:
        from utcgen.pipeline.catalog.reader import load_catalog
        from utcgen.pipeline.retrieval.embeddings import Embedder
        from utcgen.pipeline.llm.gateway import Gateway, check_models
        from utcgen.pipeline.retrieval.personas import PersonaSampler, load_personas
        from utcgen.pipeline.retrieval.index import ToolIndex

        if problems := check_models(config):
            raise InputError(problems)
        self.config = config
        self.out = Path(config.out)
        self.tools = load_catalog(config.catalog)
        if len(self.tools) < 2:
            raise InputError(f"{config.catalog}: a catalog needs at least 2 tools to have distractors")
        self.personas = load_personas(config.personas)
        self.journal = Journal(self.out, config)
        self.embedder = embedder or Embedder()
        self.index = ToolIndex(self.tools, self.embedder)
        self.sampler = PersonaSampler(self.personas, self.embedder, k=config.synthesis.persona_top_k,
                                      seed=config.seed)
        self.gateway = Gateway(config)
        self.order = list(range(len(self.tools)))
        random.Random(f"{config.seed}:order").shuffle(self.order)

    def seed_for(self, job: int, attempt: int):
        from utcgen.pipeline.synthesis.attempt import Seed, shuffled_pool

        tool = self.tools[self.order[job % len(self.tools)]]
        cycle = job // len(self.tools)
        persona = self.sampler.sample(tool, self.index.vector(tool), attempt=cycle * 100 + attempt)
        distractors = [n.tool for n in self.index.distractors(tool, self.config.synthesis.k_distractors)]
        rng = random.Random(f"{self.config.seed}:{job}:{attempt}:pool")
        return Seed(job=job, attempt=attempt, tool=tool, persona=persona, distractors=distractors,
                    candidates=shuffled_pool(tool, distractors, rng), seed=self.config.seed)

    async def run_job(self, job: int) -> JobRecord:
        """All attempts of one seed job, journaled as soon as it finishes."""
        from utcgen.pipeline.synthesis.attempt import synthesize

        start = time.monotonic()
        attempts: list[Dialogue] = []
        for attempt in range(1, self.config.synthesis.max_attempts + 1):
            dialogue = await synthesize(self.seed_for(job, attempt), self.config, self.gateway)
            attempts.append(dialogue)
            if dialogue.accepted:
                break
        record = JobRecord(job=job, seed_tool=attempts[0].seed_tool.name, accepted=attempts[-1].accepted,
                           dialogues=attempts, elapsed_s=round(time.monotonic() - start, 3))
        await asyncio.to_thread(self.journal.write, record)  # fsync off the event loop
        return record

    async def run(self, on_progress: Callable[[Progress], None] | None = None) -> dict[int, JobRecord]:
        """Runs jobs in order, a bounded number at once, until the first N accepted are known."""
        n = self.config.num_dialogues
        records = self.journal.load()
        progress = Progress(target=n, resumed_jobs=len(records))
        for rec in records.values():
            _tally(progress, rec)
        if on_progress:
            on_progress(progress)
        window = self.config.synthesis.max_jobs_in_flight
        active: dict[asyncio.Task, int] = {}
        next_job = 0
        try:
            while not select(records, n)[2]:
                check_fruitless(records)
                while len(active) < window:
                    while next_job in records:
                        next_job += 1
                    pending_accepts = sum(r.accepted for r in records.values()) + len(active)
                    if active and pending_accepts >= n + window:
                        break  # enough in flight to finish if they succeed; wait for outcomes first
                    active[asyncio.ensure_future(self.run_job(next_job))] = next_job
                    next_job += 1
                done, _ = await asyncio.wait(active, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    active.pop(task)
                    record = task.result()
                    records[record.job] = record
                    _tally(progress, record)
                    if on_progress:
                        on_progress(progress)
        finally:
            for task in active:
                task.cancel()
            if active:
                await asyncio.gather(*active, return_exceptions=True)
        return records

    def export(self, records: dict[int, JobRecord] | None = None, wall_time_s: float | None = None):
        return export_run(self.config, self.journal.load() if records is None else records, wall_time_s)

    def close(self) -> None:
        self.gateway.close()


def export_run(config: RunConfig, records: dict[int, JobRecord], wall_time_s: float | None = None):
    """Writes the dataset repository from journal records: the same records always give the same files."""
    from utcgen.pipeline.export.dataset import export_dataset

    accepted, rejected, _ = select(records, config.num_dialogues)
    return export_dataset(accepted + rejected, Path(config.out), run_info(config, accepted + rejected, wall_time_s))


def run_info(config: RunConfig, dialogues: list[Dialogue], wall_time_s: float | None) -> RunInfo:
    return RunInfo(
        config=config.model_dump(mode="json"), catalog=config.catalog, requested=config.num_dialogues,
        seed=config.seed, models=config.models.model_dump(), backend=config.backend(),
        usage=Usage.total(d.generation.usage for d in dialogues), wall_time_s=wall_time_s,
        utcgen_version=__version__,
    )


def _tally(progress: Progress, record: JobRecord) -> None:
    progress.jobs_done += 1
    progress.accepted += record.accepted
    progress.rejected += sum(not d.accepted for d in record.dialogues)
    for d in record.dialogues:
        progress.usage.add(d.generation.usage)


def check_fruitless(records: dict[int, JobRecord]) -> None:
    """Stops a run that is burning calls for nothing (e.g. a model that never follows the format)."""
    if len(records) < MAX_FRUITLESS_JOBS or any(r.accepted for r in records.values()):
        return
    reasons = Counter((r.final.rejection_reason or "?").split(":")[0] + ": " +
                      (r.final.rejection_reason or "?").split(":", 1)[-1][:80] for r in records.values())
    top = "; ".join(f"{count}x {reason.strip()}" for reason, count in reasons.most_common(3))
    raise UtcgenError(f"no dialogue accepted in the first {len(records)} seed jobs; most common rejections: {top}")
