"""What a whole run would spend, from its first seed jobs run into a temporary folder
(`utcgen generate --estimate`): the sample's usage, scaled by the acceptance it showed."""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass

from ..core.records import Usage
from ..llm.gateway import shutdown
from ..settings.config import RunConfig
from .journal import JobRecord
from .run import Engine
from .schedule import MIN_RATE


@dataclass(frozen=True)
class RunEstimate:
    """The sample (`jobs` seed jobs, `accepted` dialogues, `usage`, `elapsed` seconds, `by_role`) and the
    run it stands for: `rate` (acceptance, at least `schedule.MIN_RATE`), `seed_jobs` for the run's
    `target` dialogues, and `scale` (how many times the sample's spend the run's is)."""

    jobs: int
    accepted: int
    usage: Usage
    by_role: dict[str, Usage]
    elapsed: float
    target: int
    rate: float
    seed_jobs: float
    scale: float


def estimate_run(config: RunConfig, jobs: int) -> RunEstimate:
    """Runs seed jobs 0..jobs-1 of `config` into a temporary folder, uncached (a cached reply costs nothing
    and would hide the real price), and scales their spend to `config.num_dialogues` accepted dialogues.
    Nothing is written into `config.out`."""
    with tempfile.TemporaryDirectory(prefix="utcgen-estimate-") as tmp:
        sample = config.model_copy(deep=True, update={"out": tmp})
        sample.llm.cache = False
        engine = Engine(sample)
        try:
            start = time.monotonic()
            records = asyncio.run(_sample(engine, jobs))
            elapsed = time.monotonic() - start
        finally:
            engine.close()
    usage = Usage.total(d.generation.usage for r in records for d in r.dialogues)
    accepted = sum(r.accepted for r in records)
    rate = max(MIN_RATE, accepted / len(records))
    seed_jobs = config.num_dialogues / rate
    by_role: dict[str, Usage] = {}
    for r in records:
        for d in r.dialogues:
            for role, u in d.generation.usage_by_role.items():
                by_role.setdefault(role, Usage()).add(u)
    return RunEstimate(jobs=len(records), accepted=accepted, usage=usage, by_role=by_role, elapsed=elapsed,
                       target=config.num_dialogues, rate=rate, seed_jobs=seed_jobs, scale=seed_jobs / len(records))


async def _sample(engine: Engine, jobs: int) -> list[JobRecord]:
    try:
        return await asyncio.gather(*(engine.run_job(job) for job in range(jobs)))
    finally:
        await shutdown()
