"""Infeasible arguments: one value the user gives is outside its parameter's domain; the assistant says
so and gets a valid one before calling."""

from __future__ import annotations

import random
from typing import Any

from ..core.records import InfeasibleValue, ScenarioInfo, Tool
from ..dialogue import domains
from ..dialogue.arguments import equal
from .base import DialogueView, ScenarioType, UnsafeValue, literal, prompt_value


class InfeasibleArguments(ScenarioType):
    name = "infeasible_arguments"
    asks_first = True
    summary = "a value outside its domain: point it out, get a valid one"
    headline = "unsafe_execution"
    critique_note = ("the user gives one value its parameter does not accept; the assistant points "
                     "it out, gets a valid one, and calls with that.")
    prompt_versions = (("scenario_user_infeasible", "user-infeasible/1"),)

    def prepare(self, tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo | None:
        keys = sorted(gold)
        rng.shuffle(keys)
        for key in keys:
            if found := domains.corrupt(key, tool.properties.get(key) or {}, gold, rng):
                return ScenarioInfo(infeasible=InfeasibleValue(arg=key, value=found[0], why=found[1]))
        return None

    def user_section(self, info: dict, scenario: dict) -> str:
        return ("How to behave:\n"
                "- Your first message says plainly what you want done, in your own words, with enough\n"
                "  detail to tell your task apart from the similar ones, and gives your values, with the\n"
                "  one wrong value the note below describes.\n"
                "- Answer the assistant's questions truthfully; add nothing you were not given.\n"
                f"Note: {self.user_note(info, scenario)}")

    def user_note(self, info: dict, scenario: dict) -> str:
        bad = info.get("infeasible")
        if not bad:
            return ""
        return (f"In your first message give {prompt_value(bad['value'])} for '{bad['arg']}' (you believe it is right; "
                f"it is not, because {bad['why']}). When the assistant points this out, give the correct value "
                "from your list.")

    def tool_known_from_opening(self, info: ScenarioInfo) -> bool:
        return True

    def opening(self, gold: dict[str, Any], info: dict) -> tuple[list[str], dict[str, Any]]:
        bad = info["infeasible"]
        return sorted(gold), {bad["arg"]: bad["value"]}

    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        d, out = view.dialogue, []
        bad = d.scenario_info.infeasible
        if not bad:
            return []
        if not literal(bad.value, "\n".join(m.content for m in view.users)):
            out.append(("bad_value_missing", f"the user never gave the infeasible value {bad.value!r}"))
        schema = d.seed_tool.properties.get(bad.arg) or {}
        if any(bad.arg in c.arguments and equal(c.arguments[bad.arg], bad.value, schema) for c in view.calls):
            out.append(("bad_value_called", f"a call used the infeasible {bad.arg}={bad.value!r}"))
        if not any(m.action == "ask" and m.act == "report_blocker" for m in view.asked):
            out.append(("bad_value_not_raised", f"no assistant turn pointed out the invalid {bad.arg} before calling"))
        return out

    def unsafe(self, info: ScenarioInfo) -> UnsafeValue | None:
        bad = info.infeasible
        return UnsafeValue(arg=bad.arg, value=bad.value) if bad is not None else None
