"""The scenario type and decision style of each seed job, drawn from the configured mixes.

A seed job's scenario is drawn from the configured mix (`RunConfig.scenarios`) with a random
stream of its own (seed, job), so every attempt of a job plays the same scenario and the draw
does not move any other random choice; the same holds for the user's decision style. What a
scenario type then changes in the job (its candidates, its facts once the gold values exist)
is the type's own (`pipeline/scenarios/`).
"""

from __future__ import annotations

import random

from ..core.records import DEFAULT_SCENARIO


def _draw(weights: dict[str, float], rng: random.Random) -> str | None:
    names = [k for k, w in weights.items() if w > 0]
    if not names:
        return None
    return rng.choices(names, weights=[weights[k] for k in names])[0]


def draw_scenario(config_seed: int, job: int, mix: dict[str, float]) -> str:
    """The scenario of seed job `job`: the same for every attempt, independent of every other draw."""
    if set(k for k, w in mix.items() if w > 0) == {DEFAULT_SCENARIO}:
        return DEFAULT_SCENARIO
    return _draw(mix, random.Random(f"{config_seed}:{job}:scenario")) or DEFAULT_SCENARIO


def draw_style(config_seed: int, job: int, styles: dict[str, float]) -> str | None:
    """The user's decision style for seed job `job`; None when no style is configured."""
    return _draw(styles, random.Random(f"{config_seed}:{job}:style")) if styles else None
