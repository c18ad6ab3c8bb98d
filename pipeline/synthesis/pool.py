"""Seed jobs run by worker processes: `utcgen generate --workers N`.

The offline backend is pure CPU, so one process uses one core. With workers, the parent keeps the
run as it is (`run_pooled`: `runner.run_window` over the engine's `SeedJobs`, so the budget, the stop
rules and the progress hold), but its `run(job)` hands the job to one of N spawned processes. Each worker
builds its engine once (`batch.serve`, on `run_batch`'s per-process cache and loop), runs the jobs it
is sent, several at once, journals each record itself and answers with the job's `JobSummary`. The
parent holds the run lock and exports once at the end; the journal is shared (one atomic file per
job), and a record depends only on (configuration, job number), so the dataset is the one a single
process makes.

A job's error in a worker crosses back as the same exception and stops the run as it would in one
process; a worker that dies (killed, out of memory) fails its jobs in flight. However the run ends,
`close` stops every worker: asked first, then terminated. Ctrl-C is the parent's alone (workers
ignore SIGINT), and a worker whose parent was killed stops within a second.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import UtcgenError
from ..runner import Budget, RunProgress, run_window
from ..settings.config import RunConfig
from .batch import serve
from .run import Engine
from .schedule import JobSummary

OFFLINE_JOBS_PER_WORKER = 2  # CPU-bound jobs: one runs while the other journals
ALIVE_CHECK_S = 0.5  # how often the parent looks whether a worker died
STOP_WAIT_S = 10.0  # a worker asked to stop gets this long before it is terminated


async def run_pooled(engine: Engine, on_progress: Callable[[RunProgress], None] | None,
                     workers: int) -> Mapping[int, JobSummary]:
    """`Engine.run` with the jobs in `workers` processes: the same window of jobs and stop rules; the budget
    is checked as jobs finish (their calls are counted by the workers, so none is cancelled midway)."""
    async with WorkerPool(engine.config, workers) as pool:
        records = await run_window(engine.work(light=True), pool.run, window=pool.window,
                                   budget=Budget.of(engine.config.budget), on_progress=on_progress)
    engine.worker_jobs = dict(zip(pool.pids, pool.ran))
    return records  # pyright: ignore[reportReturnType]


class WorkerLost(UtcgenError):
    """A worker process ended while it had jobs in flight (exit status 1)."""


class WorkerPool:
    """N worker processes (spawned, not forked: the parent has threads and an event loop) running seed
    jobs for one event loop of the parent. Use as an async context manager; `run(job)` from that loop."""

    def __init__(self, config: RunConfig, workers: int) -> None:
        self.config = config
        self.workers = workers
        # per worker: the jobs of one process on an LLM server; on the offline backend, CPU-bound, a couple
        self.per_worker = OFFLINE_JOBS_PER_WORKER if config.backend() == "offline" else config.jobs_in_flight()
        self._context = multiprocessing.get_context("spawn")
        self._outbox: Any = self._context.Queue()
        self._inboxes: list[Any] = []
        self._processes: list[Any] = []
        self._pending: list[dict[int, asyncio.Future[JobSummary]]] = []
        self._fatal: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reader: threading.Thread | None = None
        self._closing = threading.Event()
        self.ran: list[int] = []  # jobs finished per worker

    @property
    def pids(self) -> list[int | None]:
        return [p.pid for p in self._processes]

    @property
    def window(self) -> int:
        """Jobs in flight over every worker."""
        return self.workers * self.per_worker

    async def __aenter__(self) -> WorkerPool:
        self._loop = asyncio.get_running_loop()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.close)

    def start(self) -> None:
        """Spawns the workers: at the first job, so a finished run starts none."""
        payload = self.config.model_dump_json()
        for worker in range(self.workers):
            inbox = self._context.Queue()
            process = self._context.Process(target=serve, name=f"utcgen-worker-{worker}", daemon=True,
                                            args=(payload, inbox, self._outbox, worker, os.getpid()))
            process.start()
            self._inboxes.append(inbox)
            self._processes.append(process)
            self._pending.append({})
            self.ran.append(0)
        self._reader = threading.Thread(target=self._read, name="utcgen-worker-replies", daemon=True)
        self._reader.start()

    async def run(self, job: int) -> JobSummary:
        """Job `job` run by the least busy live worker; its summary once the worker journaled it."""
        if self._fatal is not None:
            raise self._fatal
        if not self._processes:
            self.start()
        live = [w for w, p in enumerate(self._processes) if p.is_alive()]
        if not live:
            raise WorkerLost("every worker process has ended; finished jobs are kept, re-run the same command")
        worker = min(live, key=lambda w: (len(self._pending[w]), w))
        future: asyncio.Future[JobSummary] = asyncio.get_running_loop().create_future()
        self._pending[worker][job] = future
        self._inboxes[worker].put(job)
        try:
            return await future
        except asyncio.CancelledError:  # the run stopped (budget, another job's error): the worker drops it
            if self._pending[worker].pop(job, None) is not None and self._processes[worker].is_alive():
                self._inboxes[worker].put(("cancel", job))
            raise

    def _read(self) -> None:
        """The replies, passed to the parent's loop; a worker that died fails its jobs in flight."""
        checked = time.monotonic()
        while not self._closing.is_set():
            if time.monotonic() - checked >= ALIVE_CHECK_S:  # also while the other workers keep answering
                checked = time.monotonic()
                self._check_alive()
            try:
                message = self._outbox.get(timeout=ALIVE_CHECK_S)
            except queue.Empty:
                continue
            except (EOFError, OSError):
                return
            assert self._loop is not None
            try:
                self._loop.call_soon_threadsafe(self._settle, *message)
            except RuntimeError:  # the loop is closed: the run is over
                return

    def _settle(self, worker: int, kind: str, job: int | None, value: Any) -> None:
        if kind == "failed":  # the worker could not build its engine: the run stops with its error
            self._fail_all(value)
            return
        future = self._pending[worker].pop(job, None) if job is not None else None
        if future is None or future.done():
            return
        if kind == "done":
            self.ran[worker] += 1
            future.set_result(value)
        else:
            future.set_exception(value)

    def _fail_all(self, exc: BaseException) -> None:
        self._fatal = self._fatal or exc
        for pending in self._pending:
            for future in pending.values():
                if not future.done():
                    future.set_exception(exc)
            pending.clear()

    def _check_alive(self) -> None:
        for worker, process in enumerate(self._processes):
            if self._pending[worker] and not process.is_alive() and not self._closing.is_set():
                lost = WorkerLost(f"worker process {process.pid} ended (exit status {process.exitcode}) with "
                                  f"{len(self._pending[worker])} jobs in flight; finished jobs are kept, re-run "
                                  "the same command to go on")
                assert self._loop is not None
                try:
                    self._loop.call_soon_threadsafe(self._fail_all, lost)
                except RuntimeError:
                    return

    def close(self) -> None:
        """Stops every worker: asked to stop (their jobs in flight are dropped, never half-written), then
        terminated if they do not within `STOP_WAIT_S`, then killed."""
        self._closing.set()
        for inbox, process in zip(self._inboxes, self._processes):
            if process.is_alive():
                try:
                    inbox.put(None)
                except (OSError, ValueError):
                    pass
        for process in self._processes:
            process.join(STOP_WAIT_S)
            if process.is_alive():
                process.terminate()
                process.join(2)
            if process.is_alive():
                process.kill()
                process.join()
        if self._reader is not None:
            self._reader.join(2)
        for q in (*self._inboxes, self._outbox):
            q.close()
            q.cancel_join_thread()
