"""ConvRel (App. C.1): one rubric call per assistant turn (role `rubric`, prompt `eval_conv_rel`),
a grade of 1, 2 or 3 mapped to 0, 0.5 and 1. A reply with no usable grade counts as 1 (0.0):
a judge that cannot say the turn was relevant gives it no credit."""

from __future__ import annotations

import asyncio
import json
import re

from ..core.records import Message, Usage, tools_json
from ..llm.gateway import Gateway
from ..llm.replies import ReplyError, bare_json, find_object
from ..llm.requests import RubricRequest, RubricTurn, said
from ..settings.templates import load_prompt
from ..synthesis.roles import history_text
from .cases import Case

SCORE = {1: 0.0, 2: 0.5, 3: 1.0}
GRADE_SCHEMA = {"type": "object", "properties": {"grade": {"type": "integer", "enum": [1, 2, 3]},
                                                 "reason": {"type": "string"}},
                "required": ["grade"], "additionalProperties": False}


def parse_grade(text: str) -> int | None:
    """The grade a rubric reply gives (1-3), or None (a reply that is JSON but not an object gives none)."""
    if bare_json(text):
        return None
    try:
        grade = int(find_object(text).get("grade", ""))
    except (ReplyError, TypeError, ValueError):
        match = re.search(r"\b([123])\b", text)
        grade = int(match.group(1)) if match else 0
    return grade if grade in SCORE else None


def show_turn(m: Message) -> str:
    """An assistant turn as the rubric reads it: its public words and its calls (never its thought)."""
    if m.parse_error:
        return "(an unreadable reply)"
    calls = [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls]
    return m.content + (("\nTool calls: " + json.dumps(calls, ensure_ascii=False)) if calls else "")


async def conv_rel(gateway: Gateway, case: Case, messages: list[Message], usage: Usage) -> list[float]:
    """The ConvRel score of every assistant turn of `messages`, in order; charges `usage`."""
    tools = tools_json(case.shown)

    async def grade(i: int) -> float:
        before, turn = messages[:i], messages[i]
        prompt = load_prompt("eval_conv_rel").render(tools=tools, transcript=history_text(before), turn=show_turn(turn))
        request = RubricRequest(turn=RubricTurn(**turn.model_dump(include={"content", "tool_calls", "parse_error"})),
                                candidates=case.shown, history=said(before))
        reply = await gateway.chat(request, prompt, nonce=f"eval-rubric/{case.id}/{i}", schema=GRADE_SCHEMA)
        usage.add(reply.usage)
        found = parse_grade(reply.text)
        return SCORE[found] if found is not None else 0.0

    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    return list(await asyncio.gather(*(grade(i) for i in turns)))
