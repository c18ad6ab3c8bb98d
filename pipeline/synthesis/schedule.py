"""Which seed jobs to run next: the one scheduler behind `utcgen generate` and the flows.

The dataset is the first N accepted dialogues by job number (`journal.select`), so the
jobs worth running are the lowest-numbered ones not yet journaled, and only as many as
are likely to be needed: the shortest prefix of job numbers whose finished jobs plus the
expected yield of its unfinished ones reaches N. The yield is the acceptance rate seen
so far (1.0 before any job ends, never taken below `MIN_RATE`). A gap left by a failed
or killed job is the lowest unfinished number, so it is always redone first.

`run_waves` drives a run in waves for an orchestrator that runs batches of jobs elsewhere
(Prefect tasks, Dask workers); `Engine.run` uses `pending` directly for its window of
jobs in flight. Nothing here knows how a job is run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection

from utcgen.pipeline.errors import UtcgenError
from utcgen.pipeline.synthesis.journal import JobRecord, Journal, select

MIN_RATE = 0.1  # a run accepting fewer than 1 in 10 still plans as if 1 in 10
MAX_FRUITLESS_JOBS = 20  # abort when this many seed jobs produced nothing, and nothing was ever accepted


def pending(records: dict[int, JobRecord], n: int, in_flight: Collection[int] = (), limit: int | None = None) -> list[int]:
    """The next jobs to start, lowest first: unfinished, not in flight, inside the prefix
    expected to yield `n` accepted dialogues; at most `limit` of them."""
    if select(records, n)[2]:
        return []
    rate = max(MIN_RATE, sum(r.accepted for r in records.values()) / len(records)) if records else 1.0
    busy = set(in_flight)
    expected, jobs, job = 0.0, [], 0
    while expected < n - 1e-9 and (limit is None or len(jobs) < limit):  # 1e-9: ten 0.1s make 1
        if job in records:
            expected += records[job].accepted
        else:
            expected += rate
            if job not in busy:
                jobs.append(job)
        job += 1
    return jobs


def batches(jobs: list[int], batch_size: int, parallelism: int = 1) -> list[list[int]]:
    """Jobs cut into batches of at most `batch_size`, and into at least `parallelism` batches
    when there are enough jobs, so every worker gets some."""
    if not jobs:
        return []
    size = max(1, min(batch_size, math.ceil(len(jobs) / max(parallelism, 1))))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def check_fruitless(records: dict[int, JobRecord]) -> None:
    """Stops a run that is burning calls for nothing (e.g. a model that never follows the format)."""
    if len(records) < MAX_FRUITLESS_JOBS or any(r.accepted for r in records.values()):
        return
    reasons = Counter((r.final.rejection_reason or "?").split(":")[0] + ": " +
                      (r.final.rejection_reason or "?").split(":", 1)[-1][:80] for r in records.values())
    top = "; ".join(f"{count}x {reason.strip()}" for reason, count in reasons.most_common(3))
    raise UtcgenError(f"no dialogue accepted in the first {len(records)} seed jobs; most common rejections: {top}")


def run_waves(journal: Journal, n: int, run_wave: Callable[[list[list[int]]], None], *,
              batch_size: int, parallelism: int = 1,
              on_wave: Callable[[int, list[list[int]], dict[int, JobRecord]], None] | None = None) -> int:
    """Runs waves until the journal holds the first `n` accepted dialogues; returns the wave count.

    Each wave plans the pending jobs, cut into batches, and hands them to `run_wave`, which
    runs them (journaling each job as it ends) and returns when all have ended; it may raise
    after its finished jobs are journaled, and the next call resumes from the journal.
    `on_wave(wave, batches, records)` is called before each wave (with the records so far)."""
    waves = 0
    records = journal.load()
    while not select(records, n)[2]:
        check_fruitless(records)
        planned = batches(pending(records, n), batch_size, parallelism)
        if not planned:  # only if the journal's records disagree with their own dialogues
            raise UtcgenError(f"{journal.dir}: the journal says the run is short of {n} accepted dialogues "
                              "but no job is left to run; delete the inconsistent job files to redo them")
        waves += 1
        if on_wave:
            on_wave(waves, planned, records)
        run_wave(planned)
        records = journal.load()
    return waves
