"""c(d), the calls a case is scored on, and the dialogue-level indicators of one case.

The definitions are in `metrics`' docstring. A call's arguments are right by the one verdict
the toolargs validator uses too (`arguments.correct_arguments`: the gold values under τ*'s
parameter schemas, in a spelling the schema accepts), so a dialogue accepted as correct scores
Acc 1 and a call the validator would reject scores 0.

An imported case (`Case.answer`, BFCL) is also scored by its own benchmark's rules (`bfcl_correct`),
on the same calls c(d) and with the one argument module (`arguments.accepts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.records import Message, Tool, ToolCall
from ..core.text import word_tokens
from ..dialogue.arguments import OPTIONAL, accepts, correct_arguments, equal, same_arguments
from .cases import AcceptedCall, Case, CaseResult, Step


def first_tool_turn(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call of the first assistant turn that calls a tool; [] when none does."""
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            return list(m.tool_calls)
    return []


def prediction(result: CaseResult) -> list[ToolCall]:
    """The calls c(d) is made of: `first_calls` when the runner recorded them, else from the messages; a
    multi-step case's are its last step's (τ* and V* are that step's)."""
    if result.steps is not None:
        return list(result.steps[-1]) if result.steps else []
    return list(result.first_calls) or first_tool_turn(result.messages)


def _right(calls: Sequence[ToolCall], tool: Tool, gold: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """(whether the turn calls `tool` alone, the one argument map it gives `tool`: None when it does not call
    it or gives it two different maps)."""
    mine = [c.arguments for c in calls if c.name == tool.name]
    one = bool(mine) and all(same_arguments(mine[0], other, tool) for other in mine[1:])
    return int({c.name for c in calls} == {tool.name}), (mine[0] if one else None)


def _fed(given: dict[str, Any], key: str, value: Any, step: Step) -> bool:
    """Whether the call passes `key` as the first result returned it (or as V* spells that value)."""
    schema = step.tool.properties.get(key) or {}
    return key in given and any(equal(given[key], v, schema) for v in (value, step.gold.get(key, value)))


def step_scores(case: Case, result: CaseResult) -> dict[str, int | None]:
    """A multi-step case, step by step (k = 1, 2): `stepk_tool` 1 when the step's tool-bearing turn calls
    that step's tool alone; `stepk_args` (None when the step's tool was not called) 1 when its arguments are
    right (`arguments.correct_arguments`, the fed values included); `step2_fed` (None likewise) 1 when every
    value the first result gave is passed as it was returned; `final_call` 1 when the dialogue's last
    tool-bearing turn calls the last step's tool alone with its values. {} for a case of one call, or a
    result not played step by step."""
    out: dict[str, int | None] = {}
    if result.steps is None:
        return out  # not played step by step (a dynamic run)
    steps = result.steps
    for k, step in enumerate(case.steps, 1):
        tool_right, given = _right(steps[k - 1] if k <= len(steps) else [], step.tool, step.gold)
        out[f"step{k}_tool"] = tool_right
        out[f"step{k}_args"] = None if given is None else int(correct_arguments(given, step.gold, step.tool))
        if step.fed:
            out[f"step{k}_fed"] = None if given is None else int(all(
                _fed(given, key, value, step) for key, value in step.fed.items()))
    if case.steps:
        last = case.steps[-1]
        calls = next((m.tool_calls for m in reversed(result.messages) if m.role == "assistant" and m.tool_calls), [])
        tool_right, given = _right(calls, last.tool, last.gold)
        out["final_call"] = int(bool(tool_right) and given is not None
                                and correct_arguments(given, last.gold, last.tool))
    return out


@dataclass
class Scored:
    """What the corpus metrics need of one case, computed once."""

    case: Case
    result: CaseResult
    acc: int
    ftr: int
    tar: int
    aligned: bool
    called: int            # |tnames(c)|
    hit: int               # |tnames(c) ∩ tnames(g)| when aligned, else 0
    keys_predicted: int    # |keys(c)|, every call of the turn
    keys_hit: int          # |keys(c[τ*]) ∩ keys(V*)| when aligned, else 0
    keys_gold: int         # |keys(V*)|
    conv_rel: float | None
    ngrams: list[list[tuple[str, ...]]] = field(default_factory=list)  # index n-1: the case's n-grams


def visible_turns(result: CaseResult) -> list[str]:
    """The user-visible text of the model's assistant turns: content only (no thought, no tool call)."""
    return [m.content for m in result.messages if m.role == "assistant" and m.content.strip()]


def ngrams(turns: Iterable[str], n: int) -> list[tuple[str, ...]]:
    """The word n-grams of each turn (`text.word_tokens`), never crossing a turn boundary."""
    out: list[tuple[str, ...]] = []
    for text in turns:
        words = word_tokens(text)
        out.extend(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return out


def score_case(case: Case, result: CaseResult) -> Scored:
    """The dialogue-level indicators and the per-case counts behind the corpus ratios."""
    calls = prediction(result)
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_tool.setdefault(call.name, []).append(call.arguments)
    gold, gold_args = case.gold_tool.name, case.gold_arguments
    names = set(by_tool)
    aligned = bool(names) and gold in names
    gold_calls = by_tool.get(gold, [])
    one_map = bool(gold_calls) and all(same_arguments(gold_calls[0], other, case.gold_tool) for other in gold_calls[1:])
    acc = int(names == {gold} and one_map and correct_arguments(gold_calls[0], gold_args, case.gold_tool))
    # keys(c): per distinct tool, the union of the keys its calls supplied
    keys_of = {name: set().union(*(set(a) for a in args)) for name, args in by_tool.items()}
    turns = visible_turns(result)
    return Scored(
        case=case, result=result, acc=acc, ftr=len(names - {gold}), tar=int(not names), aligned=aligned,
        called=len(names), hit=int(aligned), keys_predicted=sum(len(k) for k in keys_of.values()),
        keys_hit=len(keys_of.get(gold, set()) & set(gold_args)) if aligned else 0, keys_gold=len(gold_args),
        conv_rel=sum(result.conv_rel) / len(result.conv_rel) if result.conv_rel else None,
        ngrams=[ngrams(turns, n) for n in (1, 2, 3, 4)],
    )


# ---------------------------------------------------------------------------------------- BFCL's rules


def stored_name(name: str) -> str:
    """A function name as the BFCL import stores it: dots become underscores (the form OpenAI-style APIs take),
    so a model that answers with BFCL's dotted original is matched too."""
    return name.replace(".", "_")


def _call_fits(call: ToolCall, accepted: AcceptedCall, tool: Tool | None) -> bool:
    """One call against one accepted call: same function, every required argument given, no argument the
    answer does not list, each value acceptable, and every argument left out marked optional."""
    if tool is None or stored_name(call.name) != accepted.name or not isinstance(call.arguments, dict):
        return False
    given, props = call.arguments, tool.properties
    if any(k not in given for k in tool.required):
        return False
    if any(k not in props or k not in accepted.arguments for k in given):
        return False
    if any(k not in given and OPTIONAL not in options for k, options in accepted.arguments.items()):
        return False
    return all(accepts(v, accepted.arguments[k], props.get(k) or {}) for k, v in given.items())


def _matched(fits: list[list[bool]]) -> bool:
    """Whether every accepted call (row) can be paired with its own call (column): a perfect bipartite matching."""
    owner: dict[int, int] = {}

    def place(row: int, seen: set[int]) -> bool:
        for col, ok in enumerate(fits[row]):
            if ok and col not in seen:
                seen.add(col)
                if col not in owner or place(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    return all(place(row, set()) for row in range(len(fits)))


def bfcl_correct(case: Case, calls: Sequence[ToolCall]) -> bool:
    """BFCL's AST verdict on the calls of the first tool-bearing turn: irrelevance wants no call, relevance
    some call; otherwise exactly as many calls as the answer lists, each accepted call matched by its own
    call in any order (`_call_fits`)."""
    answer = case.answer
    if answer is None:
        raise ValueError(f"case {case.id!r} has no imported answer")
    if not answer.calls:
        return bool(calls) if answer.any_call else not calls
    if len(calls) != len(answer.calls):
        return False
    tools = {t.name: t for t in case.candidates}
    return _matched([[_call_fits(c, a, tools.get(a.name)) for c in calls] for a in answer.calls])
