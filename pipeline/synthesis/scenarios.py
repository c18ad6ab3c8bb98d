"""Scenario types: what each changes in a seed job, one small function per scenario.

A seed job's scenario is drawn from the configured mix (`RunConfig.scenarios`) with a
random stream of its own (seed, job), so every attempt of a job plays the same scenario and
the draw does not move any other random choice. Setup happens in two steps: `pool` before
the goal (unavailable_tool takes the seed tool out of the candidates), `prepare` after the
gold values exist (mask an argument, corrupt a value, pick the fault). A scenario that
cannot apply to a tool (no required argument to mask, no domain to break) falls back to
disambiguation, and the record says so by its `scenario`.

What is right for the assistant, per scenario:
* disambiguation: clarify which tool, collect the values, call (DiaFORGE).
* explicit: the opening says what and every value: call at once, ask nothing.
* underspecified: one required value is missing and cannot be inferred: ask for it.
* unavailable_tool: the tool that would do it is not offered, its look-alikes are: say that
  no candidate can do it and offer what can be done; never call a look-alike.
* infeasible_arguments: one value is outside its parameter's domain: say so, get a valid one.
* input_fault: the opening carries one fault (intention, premise, parameter, expression);
  clarify until it is resolved, then call.
"""

from __future__ import annotations

import random
import re
from typing import Any

from .. import domains
from ..records import FAULT_KINDS, InfeasibleValue, ScenarioInfo, Tool

# Tools whose result a user could produce or look up elsewhere and hand over: read-only verbs.
_READ_VERBS = {"get", "list", "search", "find", "view", "show", "check", "lookup", "fetch", "retrieve", "read",
               "query", "browse", "track", "calculate", "convert", "estimate", "compare", "preview"}


def _draw(weights: dict[str, float], rng: random.Random) -> str | None:
    names = [k for k, w in weights.items() if w > 0]
    if not names:
        return None
    return rng.choices(names, weights=[weights[k] for k in names])[0]


def draw_scenario(config_seed: int, job: int, mix: dict[str, float]) -> str:
    """The scenario of seed job `job`: the same for every attempt, independent of every other draw."""
    if set(k for k, w in mix.items() if w > 0) == {"disambiguation"}:
        return "disambiguation"
    return _draw(mix, random.Random(f"{config_seed}:{job}:scenario")) or "disambiguation"


def draw_style(config_seed: int, job: int, styles: dict[str, float]) -> str | None:
    """The user's decision style for seed job `job`; None when no style is configured."""
    return _draw(styles, random.Random(f"{config_seed}:{job}:style")) if styles else None


def pool(scenario: str, tool: Tool, candidates: list[Tool]) -> list[Tool]:
    """The candidates the assistant sees: without the seed tool when it is unavailable."""
    if scenario == "unavailable_tool":
        return [c for c in candidates if c.name != tool.name]
    return candidates


def replaceable(tool: Tool) -> bool:
    """Whether the user could do without the tool (look the result up and hand it over): read-only tools."""
    first = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", tool.name).lower().split("_")[0]
    return first in _READ_VERBS


def prepare(scenario: str, tool: Tool, gold: dict[str, Any], rng: random.Random,
            style: str | None = None) -> tuple[str, ScenarioInfo]:
    """(scenario actually played, its facts) once the gold values are known."""
    setup = {"disambiguation": _plain, "explicit": _plain, "underspecified": _underspecified,
             "unavailable_tool": _unavailable, "infeasible_arguments": _infeasible,
             "input_fault": _input_fault}[scenario]
    info = setup(tool, gold, rng)
    if info is None:
        scenario, info = "disambiguation", ScenarioInfo()
    return scenario, info.model_copy(update={"decision_style": style})


def _plain(tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo:
    return ScenarioInfo()


def _underspecified(tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo | None:
    if not gold:
        return None
    return ScenarioInfo(masked_arg=rng.choice(sorted(gold)))


def _unavailable(tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo:
    return ScenarioInfo(replaceable=replaceable(tool))


def _infeasible(tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo | None:
    keys = sorted(gold)
    rng.shuffle(keys)
    for key in keys:
        if found := domains.corrupt(key, tool.properties.get(key) or {}, gold, rng):
            return ScenarioInfo(infeasible=InfeasibleValue(arg=key, value=found[0], why=found[1]))
    return None


def _input_fault(tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo | None:
    """Only the kind (and, for a parameter fault, which value and its decoy) is chosen here; the
    user proxy writes the original and the faulted opening (`Roles.fault_opening`)."""
    from ..records import InputFault

    kinds = [k for k in FAULT_KINDS if gold or k in ("intention", "expression")]
    kind = rng.choice(kinds)
    arg = decoy = None
    if kind == "parameter":
        arg = rng.choice(sorted(gold))
        decoy = _decoy(gold[arg], tool.properties.get(arg) or {}, rng)
        if decoy is None:
            kind, arg = "intention", None
    return ScenarioInfo(fault=InputFault(kind=kind, original="", faulted="", arg=arg, decoy=decoy))


def _decoy(value: Any, schema: dict, rng: random.Random) -> Any:
    """A valid value other than `value`: what a user unsure of the right one might also say."""
    if schema.get("enum"):
        others = [v for v in schema["enum"] if v != value]
        return rng.choice(others) if others else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value + 1 if value + 1 <= schema.get("maximum", value + 1) else value - 1
    if isinstance(value, float):
        return round(value * 1.1 + 1, 2)
    if isinstance(value, str) and value:
        digits = [i for i, ch in enumerate(value) if ch.isdigit()]
        if digits:
            i = digits[-1]
            swapped = value[:i] + str((int(value[i]) + 3) % 10) + value[i + 1:]
            return swapped if not domains.problem("x", swapped, schema, {}) else None
    return None
