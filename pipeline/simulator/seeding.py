"""The offline roles' random draws: each from its own generator, seeded by the request's sampling
seed and the names of what is drawn, so a reply never depends on the order calls arrive in."""

from __future__ import annotations

import random
from typing import Any


def seeded(seed: int, *parts: Any) -> random.Random:
    """A generator for one draw: the sampling `seed` and `parts` (a tool's name, a role, a turn) joined."""
    return random.Random(":".join(str(p) for p in (seed, *parts)))
