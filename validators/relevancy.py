"""Relevancy validator (paper A.2): an LLM judge decides whether the dialogue is about the seed tool.

Rule checks cannot tell a dialogue that merely ends with the right call from one whose
conversation is actually about that tool's task; a judge reading the transcript can.
"""

from __future__ import annotations

from typing import Any

from ..pipeline import scenarios
from ..pipeline.core.records import Dialogue, Verdict, tools_json
from ..pipeline.llm.requests import RelevancyRequest
from ..pipeline.settings.templates import load_prompt
from .judge import ChatGateway, ask, judge_view, transcript

NAME = "relevancy"


def render(d: Dialogue) -> list[dict[str, str]]:
    """The judge's messages: seed tool spec and the public transcript (no private thoughts); a dialogue
    whose scenario expects no call is judged on the need alone."""
    return load_prompt("relevancy").render(tool=d.seed_tool.spec_json(), candidates=tools_json(d.candidate_tools),
                                           goal=d.goal, scenario=d.scenario,
                                           transcript=transcript(d, thoughts=False),
                                           no_call=not scenarios.get(d.scenario).expects_call)


def _verdict(reply: dict[str, Any]) -> Verdict:
    reason = str(reply.get("reason") or "").strip()
    relevant = reply["relevant"]
    return Verdict(
        validator=NAME,
        passed=relevant,
        reason=reason or ("judged relevant to the seed tool" if relevant else "judged not relevant to the seed tool"),
        details={"relevant": relevant},
    )


async def check_relevancy(d: Dialogue, gateway: ChatGateway) -> Verdict:
    """Asks the relevancy judge; a failing, erroring or unparseable judge rejects the dialogue."""
    view = judge_view(d, critic=False)
    return await ask(NAME, RelevancyRequest(dialogue=view), gateway, render(view), "relevant", _verdict)
