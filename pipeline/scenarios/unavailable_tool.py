"""Unavailable tool: the tool that would do it is not offered, its look-alikes are. The assistant says
that no candidate can do it and offers what can be done; it never calls a look-alike."""

from __future__ import annotations

import random
import re
from typing import Any

from ..core.records import ScenarioInfo, Tool
from ..dialogue.labels import action_of
from .base import DialogueView, ScenarioType

# Tools whose result a user could produce or look up elsewhere and hand over: read-only verbs.
_READ_VERBS = {"get", "list", "search", "find", "view", "show", "check", "lookup", "fetch", "retrieve", "read",
               "query", "browse", "track", "calculate", "convert", "estimate", "compare", "preview"}


def replaceable(tool: Tool) -> bool:
    """Whether the user could do without the tool (look the result up and hand it over): read-only tools."""
    first = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", tool.name).lower().split("_")[0]
    return first in _READ_VERBS


class UnavailableTool(ScenarioType):
    name = "unavailable_tool"
    expects_call = False
    summary = "the needed tool is not offered: refuse and offer an alternative, call nothing"
    headline = "awareness"
    critique_note = ("the tool the user needs is not among the assistant's tools, only look-alikes; the "
                     "assistant says none can do it, offers what it can do, and calls nothing.")
    prompt_versions = (("scenario_user_unavailable", "user-unavailable/1"),)

    def pool(self, tool: Tool, candidates: list[Tool]) -> list[Tool]:
        return [c for c in candidates if c.name != tool.name]

    def prepare(self, tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo:
        return ScenarioInfo(replaceable=replaceable(tool))

    def user_section(self, info: dict, scenario: dict) -> str:
        return ("How to behave:\n"
                "- Your first message says plainly what you want done, in your own words, with enough\n"
                "  detail to tell your task apart from the similar ones. No values yet.\n"
                "- If the assistant offers an alternative, respond to it as the persona would.\n"
                f"Note: {self.user_note(info, scenario)}")

    def user_note(self, info: dict, scenario: dict) -> str:
        return ("The assistant cannot reach the tool you need, only the similar ones. Say exactly what you need; "
                "do not accept a similar tool that does something else.")

    def opening(self, gold: dict[str, Any], info: dict) -> tuple[list[str], dict[str, Any]]:
        return [], {}

    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        d, out = view.dialogue, []
        if view.calls:
            out.append(("lookalike_called", f"the needed tool is unavailable, yet '{view.calls[0].name}' was called"))
        last = next((m for m in reversed(view.messages) if m.role == "assistant"), None)
        if last is None or (last.action or action_of(last)) != "refuse":
            out.append(("no_refusal", "the dialogue does not end by saying no available tool can do it"))
        elif last.act != "propose_solution":
            out.append(("no_offer", "the refusal offers nothing the assistant can do instead"))
        if d.seed_tool.name in {t.name for t in d.candidate_tools}:
            out.append(("seed_offered", "the unavailable tool is among the candidates"))
        return out
