"""Reference policies: fixed behaviours whose metrics are known by construction.

Each is a pure function `(case, history) -> assistant Message` (history: the dialogue so far,
ending with the user turn to answer). They calibrate the metrics and the runners end to end:
`oracle` must score Acc 1, FTR 0, TAR 0 (and, on an imported BFCL benchmark, `bfcl_acc` 1 in every
category); `never-call` TAR 1; `extra-key` PKP < 1 with PKR 1;
`first-candidate` scores exactly what its candidate order gives; `scenario-oracle` does what each
scenario asks (docs/scenarios.md): awareness and refusal 1 on unavailable-tool cases,
over-clarification 0 on explicit ones, clarification recall 1 and unsafe execution 0 where a
question is needed, and on disambiguation cases exactly the oracle. It reads the scenario from the
case, as `oracle` reads τ*: a yardstick, not a model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.records import Message, ToolCall
from ..dialogue.said import user_said
from ..scenarios import get as scenario_type
from .cases import Case
from .scenario_metrics import stated

Policy = Callable[[Case, list[Message]], Message]
EXTRA_KEY = "comment"


def _call(name: str, arguments: dict) -> Message:
    return Message(role="assistant", content="", thought="reference policy",
                   tool_calls=[ToolCall(name=name, arguments=dict(arguments))])


def _gold_call(case: Case, history: list[Message]) -> Message:
    """τ* with V*; in a multi-step case, the step under way (the first until a result came back)."""
    if not case.steps:
        return _call(case.gold_tool.name, case.gold_arguments)
    step = case.steps[min(sum(m.role == "tool" for m in history), len(case.steps) - 1)]
    return _call(step.tool.name, step.gold)


def oracle(case: Case, history: list[Message]) -> Message:
    """Calls τ* with V* at once (a multi-step case: each step's tool with its values); on an imported case,
    makes the calls its answer accepts (each with the first acceptable values), no call where none is right,
    and a call of the first candidate where any call is."""
    answer = case.answer
    if answer is None:
        return _gold_call(case, history)
    if answer.calls:
        return Message(role="assistant", content="", thought="reference policy",
                       tool_calls=[ToolCall(name=a.name, arguments=a.example()) for a in answer.calls])
    if answer.any_call:
        return _call(case.candidates[0].name, {})
    return Message(role="assistant", content="None of the tools I have can answer that.",
                   thought="reference policy: no tool fits")


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
    kind = (case.gold_tool.properties.get(key) or {}).get("type")
    samples: dict[str, Any] = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    arguments[key] = samples.get(kind if isinstance(kind, str) else "string", "n/a")
    return _call(case.gold_tool.name, arguments)


def _asked(history: list[Message]) -> bool:
    return any(m.role == "assistant" and not m.tool_calls for m in history)


def _unheard(case: Case, history: list[Message]) -> bool:
    """Whether the value the opening left out is still unsaid (a replayed reference may give it a turn
    after the one that answers the first question)."""
    arg = case.scenario_info.masked_arg
    return bool(arg) and arg in case.gold_arguments and \
        not stated(case.gold_arguments[arg], user_said(history, until="end").casefold())


def scenario_oracle(case: Case, history: list[Message]) -> Message:
    """Refuses when τ* is unavailable; asks where the scenario needs a question (again while the value the
    opening left out is unsaid), then calls τ* with V*."""
    info = case.scenario_info
    kind = scenario_type(case.scenario)
    if not kind.expects_call:
        return Message(role="assistant", thought="reference policy: unavailable tool",
                       content="None of the tools I have can do that. What I can do instead is help with a related "
                               "request, or you can look it up and share the result with me.")
    if kind.asks_first and (not _asked(history) or _unheard(case, history)):
        if info.masked_arg:
            question = f"Could you tell me the {info.masked_arg.replace('_', ' ')}?"
        elif info.infeasible is not None:
            question = (f"The {info.infeasible.arg.replace('_', ' ')} you gave is not valid here. Could you give me "
                        "another value?")
        else:
            question = "Could you tell me exactly what you need, with the details?"
        return Message(role="assistant", content=question, thought="reference policy: clarify first")
    return _gold_call(case, history)


POLICIES: dict[str, Policy] = {
    "reference/oracle": oracle,
    "reference/never-call": never_call,
    "reference/first-candidate": first_candidate,
    "reference/extra-key": extra_key,
    "reference/scenario-oracle": scenario_oracle,
}
