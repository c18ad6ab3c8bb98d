"""The scenario type interface: what one scenario type owns, as data and pure functions over records.

A scenario type says what it changes in a seed job (`pool`, `prepare`), what its user proxy is
told (`user_section`, `user_note`) and its critic (`critique_note`), what a finished dialogue
must show (`problems`), and what an evaluation counts as right for it (`expects_call`,
`asks_first`, `asks_nothing`, `clarification_expected`, `unsafe`, `headline`). Everything
here reads records only (Tool, Dialogue, Message, ScenarioInfo), so every layer may ask it.

Hooks that need a higher layer's types (the offline backend's openings, the evaluation's
reference policy) live in that layer and read these attributes, never a scenario's name.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, ClassVar

from ..core.records import Dialogue, Message, ScenarioInfo, Tool, ToolCall
from ..dialogue.labels import label_turn
from ..dialogue.mentions import mentioned


@dataclass(frozen=True)
class UnsafeValue:
    """What makes a call unsafe in a scenario: giving `arg` the value `value`; with `made_up`, giving
    `arg` any value no user turn before the call stated; with `arg` None, calling before any question."""

    arg: str | None = None
    value: Any = None
    made_up: bool = False


@dataclass(frozen=True)
class DialogueView:
    """The parts of a finished dialogue the scenario rules read, computed once."""

    dialogue: Dialogue
    messages: list[Message]      # every turn, assistant turns labelled (`labels.label_turn`) when unlabelled
    users: list[Message]
    opening: str                 # the first user turn
    asked: list[Message]         # assistant turns before the first call
    calls: list[ToolCall]        # every tool call of the dialogue

    @classmethod
    def of(cls, d: Dialogue) -> DialogueView:
        names = [t.name for t in d.candidate_tools]
        msgs = [m if m.role != "assistant" or m.action else label_turn(m, names) for m in d.messages]
        users = [m for m in msgs if m.role == "user"]
        asked: list[Message] = []
        for m in msgs:
            if m.role == "assistant":
                if m.tool_calls:
                    break
                asked.append(m)
        calls = [c for m in msgs if m.role == "assistant" for c in m.tool_calls]
        return cls(d, msgs, users, users[0].content if users else "", asked, calls)


def prompt_value(value: Any) -> str:
    """A value as a prompt states it: text as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def literal(value: Any, text: str) -> bool:
    """Whether `value` is said as such in `text` (`mentions.mentioned`)."""
    return mentioned(value, {}, text) == "found"


class ScenarioType:
    """One scenario type. Subclasses set `name` and override what they change; the defaults are a
    dialogue that needs nothing beyond the plain protocol."""

    name: ClassVar[str]
    # What the type is, in a few words (the dataset card's column description lists it).
    summary: ClassVar[str] = ""
    # The plain DiaFORGE protocol (vague opening, clarify the tool, collect the values, call) with the
    # plain prompts; every other type uses the prompts that also cover refusing and invalid values.
    plain: ClassVar[bool] = False
    # Whether a call is right at all: False when the needed tool is not among the candidates.
    expects_call: ClassVar[bool] = True
    # The assistant must ask before calling (something is missing, invalid or unclear).
    asks_first: ClassVar[bool] = False
    # Every value was given: any question is one too many (over-clarification).
    asks_nothing: ClassVar[bool] = False
    # The metric the evaluation summary shows for this type.
    headline: ClassVar[str] = "acc"
    # What the critic is told the scenario expects; "" keeps the plain critique.
    critique_note: ClassVar[str] = ""
    # A type whose opening is a request rewritten with its fault: the type whose prompt writes that
    # request as meant (`Roles.fault_opening`); None for every other type.
    original_opening: ClassVar[ScenarioType | None] = None
    # A task of two calls, the first drawn from the catalog's chain pairs (`synthesis.chain`); its calls get results.
    chained: ClassVar[bool] = False
    # Prompt versions recorded for the sections this type adds, (name, version) pairs like a prompt file's.
    prompt_versions: ClassVar[tuple[tuple[str, str], ...]] = ()

    # ---- preparation -------------------------------------------------------------------------------
    def pool(self, tool: Tool, candidates: list[Tool]) -> list[Tool]:
        """The candidates the assistant sees."""
        return candidates

    def prepare(self, tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo | None:
        """The facts of this scenario once the gold values exist; None when it cannot apply to the tool."""
        return ScenarioInfo()

    # ---- prompts -----------------------------------------------------------------------------------
    def user_section(self, info: dict, scenario: dict) -> str | None:
        """How the user proxy behaves, as its prompt says it; None keeps the plain phase prompts."""
        return None

    def user_note(self, info: dict, scenario: dict) -> str:
        """The scenario's facts as the user proxy's prompt states them."""
        return ""

    def tool_known_from_opening(self, info: ScenarioInfo) -> bool:
        """Whether the opening singles the needed tool out (the planner starts with it known)."""
        return False

    def opening(self, gold: dict[str, Any], info: dict) -> tuple[list[str], dict[str, Any]] | None:
        """A specific opening's values: (keys stated, values said instead of the gold ones); None when
        the opening is not a plain specific request (the vague one, or one written otherwise)."""
        return None

    # ---- rules and evaluation ----------------------------------------------------------------------
    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        """(rule, message) for every rule of this type the dialogue breaks (see `scenarios.problems`)."""
        return []

    def clarification_expected(self, near_duplicate: bool) -> bool:
        """Whether a question is expected before the call (clarification recall applies)."""
        return self.asks_first

    def unsafe(self, info: ScenarioInfo) -> UnsafeValue | None:
        """What would make a call unsafe; None when the scenario has no such value."""
        return None
