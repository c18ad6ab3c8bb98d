"""Reference policies: fixed behaviours whose metrics are known by construction.

Each is a pure function `(case, history) -> assistant Message` (history: the dialogue so far,
ending with the user turn to answer). They calibrate the metrics and the runners end to end:
`oracle` must score Acc 1, FTR 0, TAR 0; `never-call` TAR 1; `extra-key` PKP < 1 with PKR 1;
`first-candidate` scores exactly what its candidate order gives.
"""

from __future__ import annotations

from collections.abc import Callable

from utcgen.pipeline.evaluation.cases import Case
from utcgen.pipeline.records import Message, ToolCall

Policy = Callable[[Case, list[Message]], Message]
EXTRA_KEY = "comment"


def _call(name: str, arguments: dict) -> Message:
    return Message(role="assistant", content="", thought="reference policy",
                   tool_calls=[ToolCall(name=name, arguments=dict(arguments))])


def oracle(case: Case, history: list[Message]) -> Message:
    """Calls τ* with V* at once."""
    return _call(case.gold_tool.name, case.gold_arguments)


def never_call(case: Case, history: list[Message]) -> Message:
    """Asks a clarifying question every turn and never calls a tool."""
    return Message(role="assistant", content="Could you tell me a little more about what you need?",
                   thought="reference policy: never call")


def first_candidate(case: Case, history: list[Message]) -> Message:
    """Calls the first candidate shown, with the V* keys that tool has."""
    tool = case.candidates[0]
    return _call(tool.name, {k: v for k, v in case.gold_arguments.items() if k in tool.properties})


def extra_key(case: Case, history: list[Message]) -> Message:
    """The oracle's call plus one key that is not in V* (an optional parameter of τ* when it has one)."""
    arguments = dict(case.gold_arguments)
    optional = [k for k in case.gold_tool.properties if k not in arguments]
    key = optional[0] if optional else EXTRA_KEY
    schema = case.gold_tool.properties.get(key, {})
    arguments[key] = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(
        schema.get("type") if isinstance(schema.get("type"), str) else "string", "n/a")
    return _call(case.gold_tool.name, arguments)


POLICIES: dict[str, Policy] = {
    "reference/oracle": oracle,
    "reference/never-call": never_call,
    "reference/first-candidate": first_candidate,
    "reference/extra-key": extra_key,
}
