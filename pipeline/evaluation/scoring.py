"""c(d), the calls a case is scored on, and the dialogue-level indicators of one case.

The definitions are in `metrics`' docstring. A call's arguments are right by the one verdict
the toolargs validator uses too (`arguments.correct_arguments`: the gold values under τ*'s
parameter schemas, in a spelling the schema accepts), so a dialogue accepted as correct scores
Acc 1 and a call the validator would reject scores 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..arguments import correct_arguments, same_arguments
from ..records import Message, ToolCall
from ..text import word_tokens
from .cases import Case, CaseResult


def first_tool_turn(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call of the first assistant turn that calls a tool; [] when none does."""
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            return list(m.tool_calls)
    return []


def prediction(result: CaseResult) -> list[ToolCall]:
    """The calls c(d) is made of: `first_calls` when the runner recorded them, else from the messages."""
    return list(result.first_calls) or first_tool_turn(result.messages)


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
