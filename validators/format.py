"""Format validator (paper A.2): the dialogue has the shape every later check relies on.

Turn alternation, who opens and who closes, non-empty turns, a private thought and a
public reply (or call) on every assistant turn, replies that parsed, phases in order
(tool selection strictly before argument filling) and well-formed tool calls, at most
one per turn. It runs first in the cascade because toolcall and toolargs assume all this.

The thought is required in the JSON reply format, whose protocol asks for it. In the native
format (the dialogue's `generation.models["assistant.tool_format"]` is "native") it is optional:
a provider's usual reply to a call is `content: null` plus `tool_calls` and no reasoning, and
such a turn is judged on what it does.

Rule codes (details["rule"]): empty, first_not_user, alternation, last_not_assistant,
user_empty, user_tool_calls, parse_error, no_thought, no_reply, no_phase, phase_order,
call_name, call_arguments, multiple_calls.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from .common import Problem, verdict

NAME = "format"


def check_format(d: Dialogue) -> Verdict:
    """All format problems of `d`; passes only when there are none."""
    msgs = d.messages
    if not msgs:
        return verdict(NAME, [Problem("empty", "dialogue has no messages")], "")
    problems: list[Problem] = []
    if msgs[0].role != "user":
        problems.append(Problem("first_not_user", f"first message is from {msgs[0].role}, expected user"))
    for i, m in enumerate(msgs):
        expected = "user" if i % 2 == 0 else "assistant"
        if i > 0 and m.role != expected:
            problems.append(Problem("alternation", f"message {i + 1} is from {m.role}, expected {expected}"))
            break  # after one slip every later position is off too: report it once
    if msgs[-1].role != "assistant":
        problems.append(Problem("last_not_assistant", f"last message is from {msgs[-1].role}, expected assistant"))

    native = d.generation.models.get("assistant.tool_format") == "native"
    user_no = assistant_no = 0
    argument_filling_seen_at: int | None = None
    for i, m in enumerate(msgs):
        error = getattr(m, "parse_error", None)
        if m.role == "user":
            user_no += 1
            who = f"user turn {user_no} (message {i + 1})"
            if not m.content.strip():
                problems.append(Problem("user_empty", f"{who} is empty"))
            if m.tool_calls:
                problems.append(Problem("user_tool_calls", f"{who} carries tool calls"))
            if error:
                problems.append(Problem("parse_error", f"{who} could not be parsed: {error}"))
            continue
        if m.role != "assistant":
            continue  # a stray system message is already reported by alternation
        assistant_no += 1
        who = f"assistant turn {assistant_no} (message {i + 1})"
        if error:
            problems.append(Problem("parse_error", f"{who} could not be parsed: {error}"))
        if not native and not (m.thought or "").strip():
            problems.append(Problem("no_thought", f"{who} has no thought"))
        if not m.content.strip() and not m.tool_calls:
            problems.append(Problem("no_reply", f"{who} has neither content nor a tool call"))
        if m.phase is None:
            problems.append(Problem("no_phase", f"{who} has no phase"))
        elif m.phase == "argument_filling" and argument_filling_seen_at is None:
            argument_filling_seen_at = assistant_no
        elif m.phase == "tool_selection" and argument_filling_seen_at is not None:
            problems.append(
                Problem(
                    "phase_order",
                    f"{who} is in tool_selection after argument_filling began at assistant turn {argument_filling_seen_at}",
                )
            )
        if len(m.tool_calls) > 1:
            problems.append(Problem("multiple_calls", f"{who} makes {len(m.tool_calls)} tool calls; at most one is allowed"))
        for call in m.tool_calls:
            if not isinstance(call.name, str) or not call.name.strip():
                problems.append(Problem("call_name", f"{who} calls a tool with an empty name"))
            if not isinstance(call.arguments, dict):
                problems.append(
                    Problem("call_arguments", f"{who} calls {call.name!r} with {type(call.arguments).__name__} arguments, expected an object")
                )
    return verdict(
        NAME,
        problems,
        f"{len(msgs)} messages, {assistant_no} assistant turns well formed",
        checked_turns=assistant_no,
    )
