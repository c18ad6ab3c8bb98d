"""Static evaluation (§3.3): the reference dialogue's user turns, replayed in order.

For each reference user turn, the model under test writes the assistant turn after it, seeing
the reference user turns so far and its OWN earlier turns (never the reference assistant's).
The first turn with a tool call ends the dialogue; `first_calls` is every call of that turn.
An unparseable turn stays in the history (counted as an invalid format) and the replay goes on.

A multi-step case (`Case.steps`) is replayed step by step, in one transcript. Its first step's user
turns come first; the model's first tool-bearing turn ends that step, and each call of it gets a
`tool` turn: a call of the first step's tool the reference's result (what the tool returned for the
task), any other call an error result saying the tool was not run. The model then answers the result
(a turn of its own, which may already call), and the second step's user turns follow until its next
tool-bearing turn. `CaseResult.steps` holds each step's calls ([] when a step made none); `first_calls`
the first step's.
"""

from __future__ import annotations

import json
import time

from ..core.records import Message, ToolCall, Usage
from ..dialogue.results import call_id
from ..llm.gateway import Gateway
from .cases import Case, CaseResult
from .models import ModelUnderTest
from .rubric import conv_rel

NOT_RUN = {"error": {"type": "not_run", "message": "This call was not run in the replay."}}


async def _turn(case: Case, model: ModelUnderTest, messages: list[Message], usage: Usage) -> list[ToolCall]:
    """The model's next turn, appended to `messages`; its calls."""
    reply, spent = await model.reply(case, messages)
    usage.add(spent)
    messages.append(reply)
    return list(reply.tool_calls)


async def _replay(case: Case, model: ModelUnderTest, users: list[Message], messages: list[Message],
                  usage: Usage) -> list[ToolCall]:
    """The user turns in order, each answered by the model, to its first tool-bearing turn: its calls."""
    for turn in users:
        messages.append(Message(role="user", content=turn.content))
        if calls := await _turn(case, model, messages, usage):
            return calls
    return []


def result_boundary(case: Case) -> int:
    """Where a multi-step case's reference holds its first step's (successful) result."""
    return max(i for i, m in enumerate(case.reference) if m.role == "tool")


def tool_turns(case: Case, calls: list[ToolCall], at: int) -> list[Message]:
    """A `tool` turn for each call of the model's turn at `at` in its transcript: a call of the first step's
    tool gets the reference's result, any other call an error result saying it was not run."""
    first, result = case.steps[0].tool.name, case.reference[result_boundary(case)].content
    return [Message(role="tool", tool_call_id=call_id(at, j),
                    content=result if c.name == first else json.dumps(NOT_RUN)) for j, c in enumerate(calls)]


async def _replay_steps(case: Case, model: ModelUnderTest, messages: list[Message],
                        usage: Usage) -> list[list[ToolCall]]:
    """A multi-step case (see the module docstring): each step's calls."""
    boundary = result_boundary(case)
    users = [m for m in case.reference if m.role == "user"]
    before = [m for m in case.reference[:boundary] if m.role == "user"]
    after = users[len(before):]
    first = await _replay(case, model, before, messages, usage)
    second: list[ToolCall] = []
    if first:
        messages.extend(tool_turns(case, first, len(messages) - 1))
        second = await _turn(case, model, messages, usage)
    if not second:
        second = await _replay(case, model, after, messages, usage)
    return [first, second]


async def evaluate_static(case: Case, model: ModelUnderTest, *, rubric: Gateway | None = None,
                          messages: list[Message] | None = None) -> CaseResult:
    """One case replayed against the model (see the module docstring); ConvRel when `rubric` is given.
    `messages` (empty) receives the dialogue as it grows, so a caller keeps it when a call fails."""
    start = time.monotonic()
    usage = Usage()
    messages = [] if messages is None else messages
    steps = await _replay_steps(case, model, messages, usage) if case.steps else None
    if steps is None:
        first_calls = await _replay(case, model, [m for m in case.reference if m.role == "user"], messages, usage)
    else:
        first_calls = steps[0]
    scores = await conv_rel(rubric, case, messages, usage) if rubric is not None else []
    return CaseResult(case_id=case.id, model=model.name, mode="static", messages=messages, first_calls=first_calls,
                      steps=steps, conv_rel=scores, usage=usage, elapsed_s=round(time.monotonic() - start, 3))
