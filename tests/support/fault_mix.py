"""A flaky endpoint for `ScriptedOpenAIServer`: faults drawn at random, in given shares, over every request.

    with ScriptedOpenAIServer(simulator_responder, faults=FaultMix(rate_limited=0.1, slow=0.05)) as srv:
        ...

Used by the fault soak (`bench/bench_faults.py`) and its slow test.
"""

from __future__ import annotations

import random
import threading
from collections import Counter

from tests.support.openai_server import ChatRequest, Fault, Malformed, RateLimited, Reply, ServerError, Slow

# Replies of the wrong shape: JSON, but not the object any role asks for.
WRONG_SHAPES = ('"just a string"', "[1, 2, 3]", '{"unexpected": true}', "null")


class FaultMix:
    """A seeded random mix of faults over every request, as a flaky endpoint gives them.

    Shares are of all requests: e.g. ``FaultMix(rate_limited=0.1, server_error=0.05, slow=0.05,
    slow_delay=3.0, malformed=0.05, empty=0.05, wrong_shape=0.05)``; the rest are answered
    normally. Slow replies wait ``slow_delay`` seconds (set it above the client's timeout);
    wrong-shape replies cycle through ``WRONG_SHAPES``. ``fired`` counts what was injected."""

    def __init__(self, *, seed: int = 0, rate_limited: float = 0.0, server_error: float = 0.0, slow: float = 0.0,
                 slow_delay: float = 5.0, malformed: float = 0.0, empty: float = 0.0, wrong_shape: float = 0.0,
                 retry_after: float = 0.2) -> None:
        self.shares: list[tuple[float, str]] = [
            (rate_limited, "rate_limited"), (server_error, "server_error"), (slow, "slow"),
            (malformed, "malformed"), (empty, "empty"), (wrong_shape, "wrong_shape")]
        if sum(share for share, _ in self.shares) > 1:
            raise ValueError("fault shares add up to more than 1")
        self.slow_delay, self.retry_after = slow_delay, retry_after
        self.fired: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Fault | None:
        with self._lock:
            draw = self._random.random()
            kind = None
            for share, name in self.shares:
                if draw < share:
                    kind = name
                    break
                draw -= share
            if kind is None:
                return None
            self.fired[kind] += 1
            shape = WRONG_SHAPES[self.fired[kind] % len(WRONG_SHAPES)]
        return {"rate_limited": RateLimited(self.retry_after), "server_error": ServerError(500),
                "slow": Slow(self.slow_delay), "malformed": Malformed(), "empty": Reply(""),
                "wrong_shape": Reply(shape)}[kind]
