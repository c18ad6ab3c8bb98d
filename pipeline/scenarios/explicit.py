"""Explicit: the opening says what is wanted and every value; the assistant calls at once, asking nothing."""

from __future__ import annotations

from typing import Any

from ..core.records import ScenarioInfo
from .base import DialogueView, ScenarioType


class Explicit(ScenarioType):
    name = "explicit"
    asks_nothing = True
    summary = "fully specified: call at once"
    headline = "over_clarification"
    critique_note = "the opening states what is wanted and every value; the assistant calls the tool at once."
    prompt_versions = (("scenario_user_explicit", "user-explicit/2"),)

    def user_section(self, info: dict, scenario: dict) -> str:
        return ("How to behave:\n"
                "- Your first message says plainly what you want done, in your own words, with enough\n"
                "  detail to tell your task apart from the similar ones (what it acts on or produces, never\n"
                "  the words of the tool's name the checks below forbid), and gives every value you hold.\n"
                "- If the assistant still asks something, answer it briefly and truthfully.")

    def tool_known_from_opening(self, info: ScenarioInfo) -> bool:
        return True

    def opening(self, gold: dict[str, Any], info: dict) -> tuple[list[str], dict[str, Any]]:
        return sorted(gold), {}

    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        if any(m.action != "call" for m in view.asked):
            return [("explicit_asked", "the opening specified everything, yet the assistant asked before calling")]
        return []
