"""What every rule validator shares: named problems folded into one uniform `Verdict`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..pipeline.core.records import Dialogue, Message, ToolCall, Verdict


@dataclass(frozen=True)
class Problem:
    """One violated rule: a stable `rule` code (for tests and stats) and a readable message."""

    rule: str
    message: str


def verdict(validator: str, problems: list[Problem], ok: str, **details: Any) -> Verdict:
    """Failed with the first problem as reason (all listed in details), or passed with `ok`.

    Every problem is kept, not only the first, so an audit sees everything wrong at once.
    """
    if problems:
        return Verdict(
            validator=validator,
            passed=False,
            reason=problems[0].message,
            details={"rule": problems[0].rule, "problems": [p.__dict__ for p in problems], **details},
        )
    return Verdict(validator=validator, passed=True, reason=ok, details=details)


def assistant_turns(d: Dialogue) -> list[tuple[int, int, Message]]:
    """(assistant turn number from 1, message index from 0, message) for each assistant turn."""
    out = []
    for index, m in enumerate(d.messages):
        if m.role == "assistant":
            out.append((len(out) + 1, index, m))
    return out


def final_call(d: Dialogue) -> ToolCall | None:
    """The last tool call of the last message, if that message is an assistant turn with one."""
    if not d.messages or d.messages[-1].role != "assistant" or not d.messages[-1].tool_calls:
        return None
    return d.messages[-1].tool_calls[-1]
