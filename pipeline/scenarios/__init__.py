"""Scenario types as registered objects: look a type up by name, never compare names.

`get(name)` gives the registered `ScenarioType` (pipeline/scenarios/base.py), `all()` every
one in registration order, `names()` their names (what the config's `scenarios:` mix and a
record's `scenario` accept). Code asks the type what it needs (`get(d.scenario).expects_call`,
`.asks_first`, `.unsafe(info)`, `.problems(view)`, `.user_section(...)`) rather than testing
which scenario a dialogue plays.

Adding a scenario type: write one module here with a `ScenarioType` subclass (its `name`, the
attributes that differ from the defaults, and the methods it changes: `pool`, `prepare`,
`user_section`/`user_note`, `problems`, `unsafe`, ...), then add an instance to `_BUILT_IN`
below (or call `register(MyType())`, as a plug-in or a test does). Generation draws it from the
config's mix, the roles render its prompt sections, the scenario validator runs its rules and
the evaluation scores it by its facts, with no other change. A hook that needs a higher layer
(the offline backend's user, the evaluation's reference policy) reads the type's attributes.

May import: core, dialogue.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

from ..core.records import DEFAULT_SCENARIO, SCENARIO_NAMES, Dialogue, ScenarioInfo, Tool
from ..dialogue.values import invented_values
from .base import DialogueView, ScenarioType, UnsafeValue
from .disambiguation import Disambiguation
from .explicit import Explicit
from .infeasible_arguments import InfeasibleArguments
from .input_fault import FAULT_HINTS, InputFaultType
from .multi_step import MultiStep, offered, step_views
from .unavailable_tool import UnavailableTool
from .underspecified import Underspecified

__all__ = [
    "DEFAULT_SCENARIO",
    "FAULT_HINTS",
    "DialogueView",
    "ScenarioType",
    "UnsafeValue",
    "all",
    "get",
    "names",
    "offered",
    "plain_dialogue",
    "prepare",
    "problems",
    "register",
    "section_versions",
    "step_views",
    "unregister",
]

_BUILT_IN: tuple[ScenarioType, ...] = (Disambiguation(), Explicit(), Underspecified(), UnavailableTool(),
                                       InfeasibleArguments(), InputFaultType(), MultiStep())
_REGISTRY: dict[str, ScenarioType] = {t.name: t for t in _BUILT_IN}
SCENARIO_NAMES.update(dict.fromkeys(_REGISTRY))  # what a record's `scenario` may name


class UnknownScenario(ValueError):
    """A scenario name no registered type has."""


def register(kind: ScenarioType) -> ScenarioType:
    """Adds a scenario type (its `name` must be new); returns it."""
    if not getattr(kind, "name", ""):
        raise ValueError(f"{type(kind).__name__}: a scenario type needs a name")
    if kind.name in _REGISTRY:
        raise ValueError(f"scenario type '{kind.name}' is already registered")
    _REGISTRY[kind.name] = kind
    SCENARIO_NAMES[kind.name] = None
    return kind


def unregister(name: str) -> None:
    """Removes a type added by `register` (the built-in ones stay)."""
    if any(t.name == name for t in _BUILT_IN):
        raise ValueError(f"scenario type '{name}' is built in")
    _REGISTRY.pop(name, None)
    SCENARIO_NAMES.pop(name, None)


def get(name: str) -> ScenarioType:
    """The registered type called `name`."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownScenario(f"unknown scenario '{name}'; known: {', '.join(_REGISTRY)}") from None


def all() -> list[ScenarioType]:  # the registry's vocabulary: get / all
    return list(_REGISTRY.values())


def names() -> tuple[str, ...]:
    """Every registered scenario name, in registration order (reports and tables follow it)."""
    return tuple(_REGISTRY)


def section_versions(switched_on: Collection[str] = ()) -> dict[str, str]:
    """The versions of the prompt sections the registered types add, by recorded prompt name; a chained
    type's (it needs tool results) only when `execution.results` is among the switches on."""
    return {name: version for t in _REGISTRY.values() if not t.chained or "execution.results" in switched_on
            for name, version in t.prompt_versions}


def plain_dialogue(scenario: str, info: ScenarioInfo) -> bool:
    """True for a dialogue of the plain protocol with no decision style: the roles are told nothing of
    a scenario (the prompts and state of dialogues made before scenario types existed)."""
    return get(scenario).plain and info.decision_style is None


def prepare(scenario: str, tool: Tool, gold: dict[str, Any], rng: random.Random,
            style: str | None = None) -> tuple[str, ScenarioInfo]:
    """(scenario actually played, its facts) once the gold values are known; a type that cannot apply
    to the tool (no value to mask, no domain to break) falls back to the default scenario."""
    info = get(scenario).prepare(tool, gold, rng)
    if info is None:
        scenario, info = DEFAULT_SCENARIO, ScenarioInfo()
    return scenario, info.model_copy(update={"decision_style": style})


def problems(d: Dialogue) -> list[tuple[str, str]]:
    """(rule, message) for every rule of its scenario type `d` breaks, plus `user_invented` for every
    type but the plain one. Shared by the scenario validator and the offline critic.

    Rules (code: meaning): explicit_asked; masked_volunteered / masked_not_asked (underspecified);
    lookalike_called / no_refusal / no_offer / seed_offered (unavailable_tool); bad_value_missing /
    bad_value_called / bad_value_not_raised (infeasible_arguments); fault_missing /
    fault_not_clarified (input_fault); user_invented: a user turn states a value the user was never
    given (`values.invented_values`)."""
    kind = get(d.scenario)
    view = DialogueView.of(d)
    out = kind.problems(view)
    if not kind.plain:
        out += _invented(d, view)
    return out


def _invented(d: Dialogue, view: DialogueView) -> list[tuple[str, str]]:
    """Values the user says but was never given (against the gold values, the scenario's wrong value or
    decoy, the persona, the goal)."""
    info = d.scenario_info
    held = [*map(str, _flatten(d.gold_arguments)), d.user_persona.text, d.goal,
            *d.user_persona.attributes.values()]
    if info.infeasible:
        held.append(str(info.infeasible.value))
    if info.fault is not None and info.fault.decoy is not None:
        held.append(str(info.fault.decoy))
    given = " ".join(held)
    for m in view.users:
        if found := invented_values(m.content, given):
            return [("user_invented", f"the user states '{found[0]}', which it was never given")]
    return []


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    return [value]
