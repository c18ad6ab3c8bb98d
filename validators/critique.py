"""LLM critique (paper A.2): a judge checks the flow and the roles, which rules cannot read.

Two-phase structure, user proxy staying a user, assistant staying an assistant, persona
and goal respected, a vague opening, and no argument value the user never gave.
"""

from __future__ import annotations

from typing import Any

from ..pipeline import scenarios
from ..pipeline.llm.requests import CriticRequest
from ..pipeline.prompts import load_prompt
from ..pipeline.records import Dialogue, Verdict
from .judge import ChatGateway, ask, transcript

NAME = "critique"

def render(d: Dialogue) -> list[dict[str, str]]:
    """The critic's messages: persona, goal, seed tool, candidate names, transcript with thoughts, and
    what the dialogue's scenario type expects (its `critique_note`; none for the plain protocol)."""
    names = ", ".join(sorted({t.name for t in d.candidate_tools} | {d.seed_tool.name}))
    return load_prompt("critique").render(
        scenario=scenarios.get(d.scenario).critique_note,
        persona=d.user_persona.text,
        goal=d.goal,
        tool=d.seed_tool.spec_json(),
        candidates=names,
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
    return await ask(NAME, CriticRequest(dialogue=d), gateway, render(d), "passed", _verdict)
