"""What the scenario types' user and assistant share: how a parameter is called in these
scenarios (the disambiguation user's words without any word of a candidate's name, told apart by
an ordinal), whether a turn mentions it, the values a user's words state under those names, and
the line a premise-fault user writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import scenarios
from ..core.records import Tool
from ..dialogue import shortcuts
from ..dialogue.parameter_labels import label
from ..llm.requests import AssistantRequest, Said, UserRequest
from . import phrasing, user_words
from .assistant import settled_tool

# a user of the scenario types, or an assistant under the prompts that also cover refusing
Speaker = UserRequest | AssistantRequest

PREMISE = "Could you just do it the same way as last time? You should still have the details from my earlier request."


def speaker_tool(request: Speaker) -> Tool:
    """The tool in play: the user's own, or the one the assistant settled on."""
    return request.tool if isinstance(request, UserRequest) else settled_tool(request)


def plays_plain(request: Speaker) -> bool:
    """Whether the user plays the plain protocol (its scenario type says so); an assistant has no scenario."""
    return isinstance(request, UserRequest) and request.scenario is not None and \
        scenarios.get(request.scenario.name).plain


def _other_names(request: Speaker) -> list[str]:
    """The names of the candidates other than the tool in play: a user's distractors, or the other
    candidates an assistant sees (the names it chose over, in argument filling)."""
    if isinstance(request, UserRequest):
        return [d.name for d in request.distractors]
    tool = speaker_tool(request)
    return [c.name for c in request.candidates if c.name != tool.name] or list(request.considered)


def spoken_label(key: str, request: Speaker) -> str:
    """`unnamed_label`, told apart by an ordinal when two of the tool's parameters would be called alike."""
    name = unnamed_label(key, request)
    if plays_plain(request):
        return name
    props = list(speaker_tool(request).properties)
    same = [k for k in props if unnamed_label(k, request) == name]
    if len(same) > 1 and key in same:
        return f"{('first', 'second', 'third', 'fourth', 'fifth')[min(same.index(key), 4)]} {name}"
    return name


def unnamed_label(key: str, request: Speaker) -> str:
    """How a parameter is called in these scenarios: the disambiguation user's words for it without any
    word of a candidate's name (a specific opening states values while the tool is being chosen, so a
    label such as 'reversal date' would give 'reverse_journal_entry' away)."""
    tool = speaker_tool(request)
    spoken = label(key, tool.properties.get(key) or {})
    if plays_plain(request):
        return spoken  # its assistant reads values under these names (`assistant.stated_arguments`)
    banned = user_words.banned_stems(tool, _other_names(request))
    kept = [w for w in spoken.split() if shortcuts.stem(w.lower()) not in banned]
    while kept and kept[-1].lower() in ("for", "the", "it", "of", "to"):
        kept.pop()
    if kept and kept[0].lower() in ("it", "for", "of", "to"):  # 'cost center it comes from' without its noun
        kept.insert(0, "one")
    return " ".join(kept) if kept else "detail you need"


def mentions(text: str, key: str, request: Speaker) -> bool:
    """Whether `text` names the parameter `key`, under either of its names."""
    low = text.lower()
    return spoken_label(key, request).lower() in low or label(key).lower() in low


def stated_scenario_arguments(request: Speaker, history: Sequence[Said]) -> dict[str, Any]:
    """The required values the user stated, under either name of each parameter (the last statement wins)."""
    tool = speaker_tool(request)
    said = "\n".join(m.content for m in history if m.role == "user")
    return phrasing.read_values(said, tool, names={k: [spoken_label(k, request)] for k in tool.required})
