"""LLM critique (paper A.2): a judge checks the flow and the roles, which rules cannot read.

Two-phase structure, user proxy staying a user, assistant staying an assistant, persona
and goal respected, a vague opening, and no argument value the user never gave.
"""

from __future__ import annotations

import json
from typing import Any

from ..pipeline import scenarios
from ..pipeline.core.records import Dialogue, Verdict, persona_text, tools_json
from ..pipeline.llm.requests import CriticRequest
from ..pipeline.settings.templates import load_prompt
from .judge import ChatGateway, ask, judge_view, transcript

NAME = "critique"

def render(d: Dialogue) -> list[dict[str, str]]:
    """The critic's messages: the persona's traits, goal, the values the user held, the scenario (its
    protocol and facts), the seed tool, every candidate's spec and the transcript with thoughts."""
    facts = d.scenario_info.model_dump(exclude_none=True)
    return load_prompt("critique").render(
        scenario=scenarios.get(d.scenario).critique_note,
        scenario_name=d.scenario,
        scenario_facts=json.dumps(facts, ensure_ascii=False, default=str) if facts else "none",
        persona=persona_text(d.user_persona, d.scenario_info.decision_style),
        goal=d.goal,
        gold_arguments=json.dumps(d.gold_arguments, ensure_ascii=False, default=str),
        tool=d.seed_tool.spec_json(),
        candidates=tools_json(d.candidate_tools),
        transcript=transcript(d, thoughts=True),
    )


def _verdict(reply: dict[str, Any]) -> Verdict:
    raw = reply.get("issues")
    issues = [str(i) for i in raw] if isinstance(raw, list) else ([str(raw)] if raw else [])
    passed = reply["passed"]
    reason = str(reply.get("reason") or "").strip()
    if not reason:
        reason = "; ".join(issues) if issues else ("no issues found" if passed else "critic rejected the dialogue")
    return Verdict(validator=NAME, passed=passed, reason=reason, details={"issues": issues})


async def check_critique(d: Dialogue, gateway: ChatGateway) -> Verdict:
    """Asks the critic; a failing, erroring or unparseable critic rejects the dialogue."""
    view = judge_view(d, critic=True)
    return await ask(NAME, CriticRequest(dialogue=view), gateway, render(view), "passed", _verdict)
