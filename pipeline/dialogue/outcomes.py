"""Whether a tool call's result is an error, and which kind: decided by the pipeline before the
tool-result role is asked, so the share of failed calls is the configured one
(`execution.error_share`) whatever model plays the tool.

The draw has a random stream of its own per (run seed, seed job, call), like the scenario draw
(`synthesis.draw`): every attempt of a job gets the same outcome for its n-th call, and no other
random choice moves with it.
"""

from __future__ import annotations

import random
from typing import Literal, get_args

# The kinds of error a tool result may be, as its `{"error": {"type": ...}}` names them.
ResultError = Literal["not_found", "permission_denied", "invalid_value", "rate_limited"]
ERROR_KINDS: tuple[str, ...] = get_args(ResultError)


def result_error(seed: int, job: int, call: int | str, share: float) -> ResultError | None:
    """The error the result of call `call` (its index in the job, or its id) of seed job `job`
    returns, or None for a successful result; an error with probability `share` (0 never, 1 always),
    its kind drawn evenly from `ERROR_KINDS`."""
    if not 0 <= share <= 1:
        raise ValueError(f"error share must be in [0, 1], got {share}")
    rng = random.Random(f"{seed}:{job}:{call}:result")
    failed = rng.random() < share
    kind = rng.choice(ERROR_KINDS)  # drawn either way: the kind of a call does not move with the share
    return kind if failed else None  # type: ignore[return-value]
