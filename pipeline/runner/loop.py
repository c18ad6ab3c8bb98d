"""What runs next, and when a run stops: the loop shared by every resumable run.

A kind of run supplies a `Work`: its finished items (keyed, e.g. by job number or case id),
which items to start next, when the run is complete, and its own stop rule. The loop adds
the rest. `run_window` keeps up to `window` items in flight on the caller's event loop and
checkpoints each as it ends (the work's `run`); `run_waves` plans batches for an
orchestrator that runs them elsewhere and re-reads the checkpoint after each wave. Both stop
with `BudgetExceeded` before the spend (resumed sessions included) would pass the budget, and
both call the work's `check` (e.g. the fruitless-run rule) before planning more.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Collection, Hashable
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from ..core.errors import UtcgenError
from ..core.records import Usage
from .budget import MARGIN, Budget

K = TypeVar("K", bound=Hashable)
NO_BUDGET = Budget()
R = TypeVar("R")


class RunProgress(BaseModel):
    """What a progress display shows; updated after every item and every model call."""

    target: int
    done: int = 0          # items finished, resumed ones included
    resumed: int = 0       # items finished before this session
    accepted: int = 0
    rejected: int = 0
    errors: int = 0
    usage: Usage = Usage()  # of the finished items
    spent: Usage = Usage()  # every call so far: resumed items, finished ones and those in flight
    calls_in_flight: int = 0
    in_flight: int = 0
    retries: int = 0
    note: str = ""  # a warning the work sets for the display (e.g. very low acceptance)


class Work(Protocol, Generic[K, R]):
    """One kind of resumable run, as the loop sees it."""

    target: int

    def load(self) -> dict[K, R]:
        """The finished items on disk."""
        ...

    def plan(self, records: dict[K, R], in_flight: Collection[K], limit: int | None) -> list[K]:
        """The next items to start, in order: at most `limit`, none of `in_flight`."""
        ...

    def complete(self, records: dict[K, R]) -> bool: ...

    def check(self, records: dict[K, R]) -> None:
        """Raise to stop the run (a stop rule of the kind: a run failing the same way every time)."""
        ...

    def usage(self, record: R) -> Usage: ...

    def tally(self, progress: RunProgress, record: R) -> None:
        """Count a finished item into the progress (accepted, rejected, errors)."""
        ...

    def key(self, record: R) -> K: ...

    def describe(self, records: dict[K, R]) -> str:
        """How far the run got, for the budget message ("3 of 5 dialogues accepted")."""
        ...

    def stuck(self) -> UtcgenError:
        """The error when the run is not complete but nothing is left to plan."""
        ...


class Meter(Protocol):
    """Where the calls of this session are counted (the model gateways)."""

    def usage(self) -> Usage: ...

    def calls_in_flight(self) -> int: ...

    def retries(self) -> int: ...

    def watch(self, callback: Callable[[], None] | None) -> None:
        """Call `callback` after every model call (None: stop)."""
        ...


class Gateways:
    """A `Meter` over model gateways (anything with `usage`, `in_flight()`, `retries` and an `on_call`
    hook), plus the usage of models counted elsewhere (`extra`: a local model counts its own)."""

    def __init__(self, *gateways: Any, extra: Callable[[], list[Usage]] | None = None) -> None:
        self.gateways = [g for g in gateways if g is not None]
        self.extra = extra

    def usage(self) -> Usage:
        return Usage.total([*(g.usage for g in self.gateways), *(self.extra() if self.extra else [])])

    def calls_in_flight(self) -> int:
        return sum(g.in_flight() for g in self.gateways)

    def retries(self) -> int:
        return sum(g.retries for g in self.gateways)

    def watch(self, callback: Callable[[], None] | None) -> None:
        for g in self.gateways:
            g.on_call = (lambda _gateway: callback()) if callback else None


def spend(work: Work[Any, Any], records: dict[Any, Any]) -> Usage:
    return Usage.total(work.usage(r) for r in records.values())


def _per_item(work: Work[Any, Any], records: dict[Any, Any]) -> tuple[float, float] | None:
    """Expected (cost, tokens) of one item, from the finished ones."""
    if not records:
        return None
    total = spend(work, records)
    return total.cost_usd / len(records), total.total_tokens / len(records)


class _Window(Generic[K, R]):
    """One `run_window` session: the finished items, those in flight, and the spend the budget is held
    to, which every model call (the meter's callback) and every finished item bring up to date."""

    def __init__(self, work: Work[K, R], run: Callable[[K], Awaitable[R]], window: int, budget: Budget,
                 meter: Meter | None, progress: RunProgress | None,
                 on_progress: Callable[[RunProgress], None] | None) -> None:
        self.work, self.run, self.window, self.budget, self.meter = work, run, window, budget, meter
        self.on_progress = on_progress
        self.records = work.load()
        self.progress = progress or RunProgress(target=work.target)
        self.progress.done = self.progress.resumed = len(self.records)
        for record in self.records.values():
            work.tally(self.progress, record)
        self.prior = spend(work, self.records)  # finished before this session
        self.here = Usage()  # of the items this session finished
        self.active: dict[asyncio.Future[R], K] = {}
        self.stop = asyncio.Event()
        self.reason: list[str] = []

    def session(self) -> Usage:
        """Every call of this session (without a meter: of its finished items)."""
        return self.meter.usage() if self.meter else self.here

    def spent(self) -> Usage:
        return Usage.total([self.prior, self.session()])

    def refresh(self) -> None:
        """Brings the progress up to date and, once the calls made reach the budget, stops the run:
        the items in flight are cancelled at their next await, so none starts another call."""
        progress, meter = self.progress, self.meter
        progress.spent = self.spent()
        progress.in_flight = len(self.active)
        if meter:
            progress.calls_in_flight, progress.retries = meter.calls_in_flight(), meter.retries()
        if self.budget.active and meter and not self.stop.is_set():
            used = meter.usage()
            per_call = 1 / max(1, used.calls - used.cached_calls)
            calls = meter.calls_in_flight()  # their cost is not known yet: expect the average
            if limit := self.budget.over(progress.spent, used.cost_usd * per_call * calls,
                                         used.total_tokens * per_call * calls):
                self.reason.append(limit)
                self.stop.set()
                for task in self.active:
                    task.cancel()
        if self.on_progress:
            self.on_progress(progress)

    def start_next(self) -> None:
        """Starts what the work plans next, as many items as the window and the budget leave room for;
        raises when nothing is in flight and nothing may start (the budget spent, or the work stuck)."""
        work, budget, records = self.work, self.budget, self.records
        work.check(records)
        wanted = work.plan(records, self.active.values(), self.window - len(self.active))
        in_flight = self.session().minus(self.here)  # spent by the items in flight so far
        room = budget.room(self.spent(), _per_item(work, records), len(self.active), in_flight, len(wanted))
        for key in wanted[:room]:
            self.active[asyncio.ensure_future(self.run(key))] = key
        if not self.active:
            if budget.active:
                per_item = _per_item(work, records) or (0, 0)  # planned with the margin `room` uses
                limit = budget.over(self.spent(), *(MARGIN * x for x in per_item)) or "the budget"
                raise budget.exceeded(limit, self.spent(), work.describe(records))
            raise work.stuck()

    def finish(self, done: Collection[asyncio.Future[Any]], stopper: asyncio.Future[Any]) -> None:
        """Takes in the items that ended (their exception, if any, is raised here and stops the run)."""
        for task in done:
            if task is stopper:
                continue
            self.active.pop(task)
            record = task.result()
            self.records[self.work.key(record)] = record
            self.here.add(self.work.usage(record))
            self.progress.done += 1
            self.work.tally(self.progress, record)
            self.refresh()

    async def cancel(self) -> None:
        """Cancels the items still in flight and waits until they have ended."""
        for task in self.active:
            task.cancel()
        if self.active:
            await asyncio.gather(*self.active, return_exceptions=True)


async def run_window(work: Work[K, R], run: Callable[[K], Awaitable[R]], *, window: int, budget: Budget = NO_BUDGET,
                     meter: Meter | None = None, progress: RunProgress | None = None,
                     on_progress: Callable[[RunProgress], None] | None = None) -> dict[K, R]:
    """Runs items, at most `window` at once, until the work is complete; returns every finished item.

    `run(key)` runs one item and checkpoints it. With a budget, no item starts when the spend so far
    plus the expected spend of the items in flight and of the new one would pass it, and the items in
    flight are cancelled (not checkpointed) when the calls already made reach it: `BudgetExceeded`
    is raised either way. An item's exception stops the run (the others are cancelled) and is raised."""
    w = _Window(work, run, window, budget, meter, progress, on_progress)
    if meter:
        meter.watch(w.refresh)
    w.refresh()
    stopper = asyncio.ensure_future(w.stop.wait())
    try:
        while not work.complete(w.records) and not w.stop.is_set():
            w.start_next()
            w.refresh()
            done, _ = await asyncio.wait([*w.active, stopper], return_when=asyncio.FIRST_COMPLETED)
            if w.stop.is_set():
                break
            w.finish(done, stopper)
        if w.stop.is_set() and not work.complete(w.records):
            raise budget.exceeded(w.reason[0], w.spent(), work.describe(w.records))
    finally:
        if meter:
            meter.watch(None)
        stopper.cancel()
        await w.cancel()
    return w.records


def batches(jobs: list[K], batch_size: int, parallelism: int = 1) -> list[list[K]]:
    """Items cut into batches of at most `batch_size`, and into at least `parallelism` batches
    when there are enough items, so every worker gets some."""
    if not jobs:
        return []
    size = max(1, min(batch_size, math.ceil(len(jobs) / max(parallelism, 1))))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def run_waves(work: Work[K, R], run_wave: Callable[[list[list[K]]], None], *, batch_size: int, parallelism: int = 1,
              budget: Budget = NO_BUDGET,
              on_wave: Callable[[int, list[list[K]], dict[K, R]], None] | None = None) -> int:
    """Runs waves until the work is complete; returns the wave count.

    Each wave plans the next items (as many as the budget allows), cut into batches, and hands
    them to `run_wave`, which runs them (checkpointing each as it ends) and returns when all have
    ended; it may raise after its finished items are checkpointed, and the next call resumes.
    Before each wave the checkpoint is read again: once its spend reaches the budget no wave is
    planned and `BudgetExceeded` is raised. `on_wave(wave, batches, records)` is called before each."""
    waves = 0
    records = work.load()
    while not work.complete(records):
        work.check(records)
        wanted = work.plan(records, (), None)
        if budget.active and wanted:
            spent, per_item = spend(work, records), _per_item(work, records)
            wanted = wanted[:budget.room(spent, per_item, 0, None, len(wanted))]
            if not wanted:
                limit = budget.over(spent, *(per_item or (0, 0))) or "the budget"
                raise budget.exceeded(limit, spent, work.describe(records))
        planned = batches(wanted, batch_size, parallelism)
        if not planned:  # only if the checkpoint's records disagree with themselves
            raise work.stuck()
        waves += 1
        if on_wave:
            on_wave(waves, planned, records)
        run_wave(planned)
        records = work.load()
    return waves
