"""Static evaluation (§3.3): the reference dialogue's user turns, replayed in order.

For each reference user turn, the model under test writes the assistant turn after it, seeing
the reference user turns so far and its OWN earlier turns (never the reference assistant's).
The first turn with a tool call ends the dialogue; `first_calls` is every call of that turn.
An unparseable turn stays in the history (counted as an invalid format) and the replay goes on.
"""

from __future__ import annotations

import time

from ..core.records import Message, Usage
from ..llm.gateway import Gateway
from .cases import Case, CaseResult
from .models import ModelUnderTest
from .rubric import conv_rel


async def evaluate_static(case: Case, model: ModelUnderTest, *, rubric: Gateway | None = None,
                          messages: list[Message] | None = None) -> CaseResult:
    """One case replayed against the model (see the module docstring); ConvRel when `rubric` is given.
    `messages` (empty) receives the dialogue as it grows, so a caller keeps it when a call fails."""
    start = time.monotonic()
    usage = Usage()
    messages = [] if messages is None else messages
    first_calls = []
    for turn in case.reference:
        if turn.role != "user":
            continue
        messages.append(Message(role="user", content=turn.content))
        reply, spent = await model.reply(case, messages)
        usage.add(spent)
        messages.append(reply)
        if reply.tool_calls:
            first_calls = list(reply.tool_calls)
            break
    scores = await conv_rel(rubric, case, messages, usage) if rubric is not None else []
    return CaseResult(case_id=case.id, model=model.name, mode="static", messages=messages, first_calls=first_calls,
                      conv_rel=scores, usage=usage, elapsed_s=round(time.monotonic() - start, 3))
