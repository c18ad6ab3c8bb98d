"""LLM critique (paper A.2): a judge checks the flow and the roles, which rules cannot read.

Two-phase structure, user proxy staying a user, assistant staying an assistant, persona
and goal respected, a vague opening, and no argument value the user never gave.
"""

from __future__ import annotations

from typing import Any

from ..pipeline.llm.requests import CriticRequest
from ..pipeline.prompts import load_prompt
from ..pipeline.records import Dialogue, Verdict
from .judge import ChatGateway, ask, transcript

NAME = "critique"

# What each scenario expects of the assistant, as the critic is told (disambiguation: critique.txt).
SCENARIO_PROTOCOLS = {
    "explicit": "the opening states what is wanted and every value; the assistant calls the tool at once.",
    "underspecified": "the opening leaves one required value out; the assistant asks for it, then calls.",
    "unavailable_tool": "the tool the user needs is not among the assistant's tools, only look-alikes; the "
                        "assistant says none can do it, offers what it can do, and calls nothing.",
    "infeasible_arguments": "the user gives one value its parameter does not accept; the assistant points "
                            "it out, gets a valid one, and calls with that.",
    "input_fault": "the opening is faulty (unclear intent, a false premise, two values for one detail, or "
                   "garbled wording); the assistant asks until it is clear, then calls.",
}


def render(d: Dialogue) -> list[dict[str, str]]:
    """The critic's messages: persona, goal, seed tool, candidate names, transcript with thoughts."""
    names = ", ".join(sorted({t.name for t in d.candidate_tools} | {d.seed_tool.name}))
    if d.scenario != "disambiguation":
        return load_prompt("scenario_critique").render(
            scenario=SCENARIO_PROTOCOLS[d.scenario], persona=d.user_persona.text, goal=d.goal,
            tool=d.seed_tool.spec_json(), candidates=names, transcript=transcript(d, thoughts=True))
    return load_prompt("critique").render(
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
