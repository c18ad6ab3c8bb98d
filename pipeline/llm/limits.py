"""Adaptive concurrency: how many calls may be in flight to one endpoint, learnt from its answers.

One `AdaptiveLimit` per (provider, model, api_base). AIMD, as TCP does it: until the first
overload (see below) the limit doubles after every window of `limit` successful calls in a row
(slow start, so a low start costs a few round trips, not a whole run); after it, every
window raises the limit by one (additive increase, about +1 per round trip of the whole
window). A 429 (rate limit, with or without Retry-After) halves it (multiplicative
decrease) when it signals an overload: at least OVERLOAD_SHARE of the last RECENT answers were
429s (of at least RECENT/2, so the first answers of a run do not decide it alone). A flaky endpoint that rate-limits a few calls at random (10% of them, say) is not
overloaded: halving on each of those would sink the limit to 1 or 2 and the run to a crawl,
while the retry with backoff already absorbs them. At most one halving per window of calls,
so a burst of 429s from one overload counts once. The limit stays within [1, maximum], maximum being
`llm.max_in_flight`. A slot is held per attempt, never across a backoff sleep.

A freed slot goes to the waiting call of lowest `PRIORITY` (set per task), first come first served
among equals. A generation attempt sets its `QueuePlace`: the attempt with the fewest calls made goes
first, then the lowest job. Its chain of dependent calls is the longest still to run, and a run
ends when its last chain does: served oldest-first, the jobs started last would wait behind the
rest and then run their whole chains alone while the slots drain.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass

log = logging.getLogger("utcgen.llm")

TRACE_LIMIT = 200  # changes kept per endpoint for the run stats (first and last halves)
RECENT = 40  # answers remembered to tell an overload from sporadic 429s
OVERLOAD_SHARE = 0.25  # share of 429s among them that means the endpoint is overloaded
LOG_EVERY_S = 5.0  # at most one log line per endpoint this often (the last change is always kept)
@dataclass
class QueuePlace:
    """A generation attempt's place in the queue for call slots: the attempt with fewer calls made
    goes first (it has the longer chain left, and a run ends when its last chain does), then the
    lower job. Shared by the attempt's calls, validators' included."""

    job: int
    calls: int = 0


# Lower goes first when calls wait for a slot (a generation attempt sets its `QueuePlace`; unset: 0).
PRIORITY: ContextVar[int | QueuePlace] = ContextVar("utcgen_call_priority", default=0)


def _key(priority: int | QueuePlace) -> tuple[int, int]:
    return (priority.calls, priority.job) if isinstance(priority, QueuePlace) else (0, priority)


@dataclass(frozen=True)
class Change:
    t: float  # seconds since the limit was made
    limit: int
    reason: str  # "start" | "slow start" | "increase" | "rate limited ..."


class AdaptiveLimit:
    """An asyncio bound whose size follows AIMD. Use `async with limit:` around one attempt."""

    def __init__(self, name: str, maximum: int, start: int | None = None) -> None:
        self.name = name
        self.maximum = max(1, maximum)
        self.limit = max(1, min(self.maximum, start or self.maximum))
        self.in_flight = 0
        self.peak = self.limit
        self.low = self.limit
        self.increases = 0
        self.decreases = 0
        self.slow_start = True  # until the first rate limit
        self._successes = 0
        self._since_decrease = self.limit  # calls finished since the last decrease
        self._t0 = time.monotonic()
        self._head: list[Change] = [Change(0.0, self.limit, "start")]
        self._tail: deque[Change] = deque(maxlen=TRACE_LIMIT // 2)
        self._dropped = 0
        self._last_log = 0.0
        self._waiters: list[tuple[tuple[int, int], int, asyncio.Future]] = []  # a heap: (priority, arrival, future)
        self._arrivals = itertools.count()
        self._recent: deque[bool] = deque(maxlen=RECENT)  # True: a 429

    # -- the bound

    async def acquire(self) -> None:
        while self.in_flight >= self.limit:
            fut = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiters, (_key(PRIORITY.get()), next(self._arrivals), fut))
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake()  # pass the wake-up on to the next waiter
                raise  # a cancelled future stays in the heap until `_wake` pops and skips it
        self.in_flight += 1
        priority = PRIORITY.get()
        if isinstance(priority, QueuePlace):
            priority.calls += 1

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        while free > 0 and self._waiters:
            fut = heapq.heappop(self._waiters)[2]
            if not fut.done():
                fut.set_result(None)
                free -= 1

    async def __aenter__(self) -> AdaptiveLimit:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    # -- feedback

    def success(self) -> None:
        self._recent.append(False)
        self._since_decrease += 1
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.maximum:
            self._successes = 0
            step = self.limit if self.slow_start else 1
            self._set(min(self.maximum, self.limit + step), "slow start" if self.slow_start else "increase")
            self.increases += 1

    def rate_limited(self, retry_after: float | None = None) -> None:
        self._recent.append(True)
        if sum(self._recent) < OVERLOAD_SHARE * max(len(self._recent), RECENT // 2):  # a few answers in: 5 429s
            return  # a sporadic 429 among many answers: the retry absorbs it, slow start goes on
        self._successes = 0
        self.slow_start = False  # an overload: grow by one per window from now on
        if self._since_decrease < self.limit:  # one overload, one decrease
            return
        self._since_decrease = 0
        new = max(1, self.limit // 2)
        if new != self.limit:
            self.decreases += 1
            self._set(new, "rate limited" + (f" (Retry-After {retry_after:g}s)" if retry_after is not None else ""))

    def _set(self, limit: int, reason: str) -> None:
        self.limit = limit
        self.peak = max(self.peak, limit)
        self.low = min(self.low, limit)
        change = Change(round(time.monotonic() - self._t0, 3), limit, reason)
        if len(self._head) < TRACE_LIMIT // 2:
            self._head.append(change)
        else:
            if len(self._tail) == self._tail.maxlen:
                self._dropped += 1
            self._tail.append(change)
        now = time.monotonic()
        # Decreases are news (at most one a second); increases are logged every LOG_EVERY_S.
        if now - self._last_log >= (LOG_EVERY_S if reason in ("increase", "slow start") else 1.0):
            self._last_log = now
            log.info("%s: %d calls in flight allowed (%s)", self.name, limit, reason)
        self._wake()

    def report(self) -> dict:
        """The final limit and a bounded trace of its changes, for stats.json."""
        return {
            "endpoint": self.name, "limit": self.limit, "maximum": self.maximum, "peak": self.peak,
            "low": self.low, "increases": self.increases, "decreases": self.decreases,
            "trace": [[c.t, c.limit, c.reason] for c in [*self._head, *self._tail]],
            "trace_dropped": self._dropped,
        }


class Limits:
    """The adaptive limits of one run, one per (provider, model, api_base)."""

    def __init__(self, maximum: int, start: int | None = None) -> None:
        self.maximum = maximum
        self.start = start
        self._by_key: dict[tuple[str, str, str], AdaptiveLimit] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self, model: str, api_base: str | None, start: int | None = None) -> AdaptiveLimit:
        """The endpoint's limit; a new one starts at `start` when given (a local server's low start),
        else at this run's start."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # futures belong to one loop: a new loop starts fresh waiters
            for limit in self._by_key.values():
                limit._waiters.clear()
                limit.in_flight = 0
            self._loop = loop
        provider, _, name = model.partition("/")
        key = (provider, name, api_base or "")
        if key not in self._by_key:
            label = f"{model}" + (f" at {api_base}" if api_base else "")
            self._by_key[key] = AdaptiveLimit(label, self.maximum, self.start if start is None else start)
        return self._by_key[key]

    def in_flight(self) -> int:
        return sum(limit.in_flight for limit in self._by_key.values())

    def report(self) -> list[dict]:
        return [limit.report() for limit in self._by_key.values()]

