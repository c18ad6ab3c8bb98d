"""Running a batch of seed jobs inside a long-lived process, for orchestrators.

An orchestrator's task (a Prefect task in a worker thread, or in a Dask worker process)
calls `run_batch` with job numbers planned by `runner.run_waves`. This is the execution
side of the runner: it runs what it is given and journals each job; what runs next,
and whether the budget or a fruitless run stops the run, is decided where the waves are planned.
Building an `Engine` costs the catalog load, the embedding index and, on a cold cache,
the embedding model: it is done once per process and configuration, and every batch
task in that process then submits its jobs to one shared event loop. The engine's
gateway therefore bounds LLM calls for the whole process, as it does for `utcgen generate`.
Nothing here knows the orchestrator.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import queue
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import UtcgenError
from ..core.records import Usage
from ..llm.gateway import shutdown
from ..retrieval.embeddings import Embedder
from ..settings.config import RunConfig
from .journal import JobRecord
from .run import Engine
from .schedule import JobSummary

MAX_ENGINES = 4  # configurations kept per process; the least recently used one is closed


@dataclass
class BatchOutcome:
    """What one batch did: small enough to be a task result (counts, never dialogues)."""

    jobs: list[int]
    ran: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    accepted: int = 0
    attempts: int = 0
    rejected_attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    errors: dict[int, str] = field(default_factory=dict)

    def add(self, record: JobRecord) -> None:
        self.ran.append(record.job)
        self.accepted += record.accepted
        self.attempts += len(record.dialogues)
        self.rejected_attempts += sum(not d.accepted for d in record.dialogues)
        for d in record.dialogues:
            self.usage.add(d.generation.usage)

    def as_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs, "ran": sorted(self.ran), "skipped": self.skipped, "accepted": self.accepted,
            "attempts": self.attempts, "rejected_attempts": self.rejected_attempts,
            "usage": self.usage.model_dump(), "errors": {str(k): v for k, v in self.errors.items()},
        }


class _Runtime:
    """The process-wide loop and engine cache behind `run_batch`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._embedder: Any = None
        self._engines: OrderedDict[str, tuple[Engine, asyncio.Semaphore]] = OrderedDict()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="utcgen-flow-loop", daemon=True).start()
                self._loop = loop
            return self._loop

    def engine(self, config: RunConfig) -> tuple[Engine, asyncio.Semaphore]:
        """The cached engine for this configuration. The target count and the budget do not matter to
        a job (the runner plans jobs and holds the budget), so a resume with either changed reuses it."""
        key = config.model_dump_json(exclude={"num_dialogues", "budget"})
        with self._lock:
            if key in self._engines:
                self._engines.move_to_end(key)
                return self._engines[key]
            if self._embedder is None:
                self._embedder = Embedder()
            engine = Engine(config, embedder=self._embedder)
            # A per-engine bound on concurrent jobs, shared by every batch of this process.
            entry = (engine, asyncio.Semaphore(config.jobs_in_flight()))
            self._engines[key] = entry
            while len(self._engines) > MAX_ENGINES:
                _, (old, _sem) = self._engines.popitem(last=False)
                old.close()
            return entry

    def clear(self) -> None:
        """Close every cached engine (tests; a long-lived worker never needs it)."""
        with self._lock:
            while self._engines:
                _, (engine, _sem) = self._engines.popitem()
                engine.close()


RUNTIME = _Runtime()


async def _bounded(engine: Engine, bound: asyncio.Semaphore, job: int) -> JobRecord:
    async with bound:
        return await engine.run_job(job)


async def _run_jobs(engine: Engine, bound: asyncio.Semaphore, jobs: list[int],
                    on_job: Callable[[JobRecord], None] | None) -> BatchOutcome:
    outcome = BatchOutcome(jobs=list(jobs))
    todo = []
    for job in jobs:
        (outcome.skipped if engine.journal.path(job).exists() else todo).append(job)

    results = await asyncio.gather(*(_bounded(engine, bound, job) for job in todo), return_exceptions=True)
    for job, result in zip(todo, results):
        if isinstance(result, BaseException):
            outcome.errors[job] = f"{type(result).__name__}: {result}"[:500]
            continue
        outcome.add(result)
        if on_job:
            on_job(result)
    return outcome


def run_batch(config: RunConfig, jobs: list[int],
              on_job: Callable[[JobRecord], None] | None = None) -> BatchOutcome:
    """Run the seed jobs not yet in the journal, concurrently, on this process's loop.

    Finished jobs are journaled one by one as they end, so a failed or killed batch keeps
    its finished work and a retry runs only what is missing. `on_job` is called from the
    loop thread. Job errors are collected in the outcome, not raised: the caller decides.
    """
    engine, bound = RUNTIME.engine(config)
    future = asyncio.run_coroutine_threadsafe(_run_jobs(engine, bound, jobs, on_job), RUNTIME.loop())
    return future.result()


# ---------------------------------------------------------------- a worker process of `utcgen generate --workers`

def picklable_error(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling (it crosses to the parent as itself: same type, message and exit
    status), else a `UtcgenError` with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return UtcgenError(f"{type(exc).__name__}: {exc}")


PARENT_CHECK_S = 1.0  # how often an idle worker looks whether its parent still runs


def serve(config_json: str, inbox: Any, outbox: Any, worker: int, parent: int) -> None:
    """The main function of a worker process (`synthesis.pool.WorkerPool`): runs the seed jobs it is sent,
    several at once on this process's loop (`run_batch`'s engine and bound), journals each, and answers
    `(worker, "done", job, JobSummary)` or `(worker, "error", job, exception)`; `(worker, "failed", None,
    exception)` when the engine cannot be built. Messages in: a job number, `("cancel", job)`, or None to
    stop. Ctrl-C is the parent's to handle; a worker whose parent is gone (killed) stops by itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("utcgen.catalog").setLevel(logging.ERROR)  # the parent already showed the catalog's warnings
    try:
        engine, bound = RUNTIME.engine(RunConfig.model_validate_json(config_json))
    except BaseException as exc:  # reported to the parent, which stops the run with it
        outbox.put((worker, "failed", None, picklable_error(exc)))
        return
    loop = RUNTIME.loop()
    running: dict[int, Any] = {}

    def report(job: int, future: Any) -> None:
        running.pop(job, None)
        if future.cancelled():
            return
        if (exc := future.exception()) is not None:
            outbox.put((worker, "error", job, picklable_error(exc)))
        else:
            outbox.put((worker, "done", job, JobSummary.of(future.result())))

    try:
        while True:
            try:
                message = inbox.get(timeout=PARENT_CHECK_S)
            except queue.Empty:
                if os.getppid() != parent:
                    return
                continue
            if message is None:
                return
            if isinstance(message, tuple):  # ("cancel", job)
                if (future := running.get(message[1])) is not None:
                    future.cancel()
                continue
            future = asyncio.run_coroutine_threadsafe(_bounded(engine, bound, message), loop)
            running[message] = future
            future.add_done_callback(lambda f, job=message: report(job, f))
    finally:
        for future in list(running.values()):
            future.cancel()
        _close(loop)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    RUNTIME.clear()
    try:
        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
    except Exception:  # leaving anyway
        pass
