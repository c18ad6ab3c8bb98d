"""Dialogues that go on after the call, as a run with `execution.results` on records them: a `tool` turn
naming the call's id, then the assistant's answer; optionally an error result first, the user's
correction and a second call."""

from __future__ import annotations

import json
from typing import Any

from utcgen.pipeline.core.records import Dialogue, Message, ToolCall, Verdict
from utcgen.pipeline.dialogue.results import call_id
from utcgen.validators.cascade import LLM_STAGES


def _call(messages: list[Message]) -> tuple[int, ToolCall]:
    at = max(i for i, m in enumerate(messages) if m.role == "assistant" and m.tool_calls)
    return at, messages[at].tool_calls[0]


def with_results(d: Dialogue, error_first: bool = False) -> Dialogue:
    """`d` (ending in a call) continued with the call's result and an answer from it. `error_first`: the first
    result is an `invalid_value` error, the assistant asks, the user corrects, and a second call succeeds."""
    messages = list(d.messages)
    at, call = _call(messages)
    if error_first:
        key, value = next(iter(call.arguments.items()))
        error = {"error": {"type": "invalid_value", "message": f"No record matches {key} {value}."}}
        messages += [
            Message(role="tool", tool_call_id=call_id(at, 0), content=json.dumps(error)),
            Message(role="assistant", thought="The value was refused; ask the user to check it.",
                    content=f"The system found nothing for {value}. Could you check that {key} for me?",
                    phase="argument_filling", action="ask", act="ask_parameter"),
            Message(role="user", content=f"Sorry, it is {value} as I said, please try once more."),
            Message(role="assistant", thought="Calling again with the value the user confirmed.", content="",
                    tool_calls=[call], phase="argument_filling", action="call"),
        ]
        at = len(messages) - 1
    result: dict[str, Any] = {"status": "ok", "id": "REQ-4821", **call.arguments}
    messages += [
        Message(role="tool", tool_call_id=call_id(at, 0), content=json.dumps(result)),
        Message(role="assistant", thought="The result came back; tell the user what it holds.",
                content="Done: the request REQ-4821 is raised, status ok.", phase="argument_filling",
                action="answer"),
    ]
    validation = list(d.validation)
    rules = sum(v.validator not in LLM_STAGES for v in validation)
    validation.insert(rules, Verdict(validator="answers", passed=True, reason=""))
    return d.model_copy(update={"messages": messages, "validation": validation if d.accepted else d.validation})
