"""A generation run: the engine that turns seed jobs into journaled records, and the export.

Job j synthesises the seed tool `order[j mod |catalog|]` (a seeded permutation), with up
to `max_attempts` attempts. Which jobs run is decided by `schedule`, where they are kept
by `journal`; the dataset is the first N accepted dialogues by job number, so the result
does not depend on scheduling, concurrency or how many times the run was interrupted.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from utcgen.pipeline import __version__
from utcgen.pipeline.config import RunConfig
from utcgen.pipeline.errors import InputError
from utcgen.pipeline.export.run_info import RunInfo
from utcgen.pipeline.records import Dialogue, Usage
from utcgen.pipeline.synthesis.journal import JobRecord, Journal, select
from utcgen.pipeline.synthesis.schedule import check_fruitless, pending

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
        self.personas = load_personas(config.personas, field=config.persona_field)
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
                    candidates=shuffled_pool(tool, distractors, rng), seed=self.config.seed,
                    persona_fit=self.sampler.fit(persona, tool, self.index.vector(tool)))

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
        try:
            while not select(records, n)[2]:
                check_fruitless(records)
                for job in pending(records, n, in_flight=active.values(), limit=window - len(active)):
                    active[asyncio.ensure_future(self.run_job(job))] = job
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
