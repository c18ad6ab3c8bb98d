"""Wrong turns after tool results: the `rejected` side of preference pairs where the gold turn answers a result.

A gold turn answers a result when the message before it is a `tool` turn (runs with `execution.results`
on; `GoldTurn.at` is then its index in the dialogue's messages). Each maker builds the mistake from
the real answer and the real result, or returns None when the pattern does not fit:

- `contradicted_result`: the answer with one value it reads back from the result (a number, a count,
  a code or id, a status) changed to another of the same kind that no result holds;
- `invented_field`: the answer with one more sentence giving a field the result does not have, its
  value plausible in shape and found in no result, user turn or call;
- `repeated_call`: the call whose successful result came back, made again with the same arguments,
  instead of the answer;
- `success_after_error`: after an error result, a claim that the request went through.

Each is a turn `validators.answers.check_answers` refuses where the gold turn passes (invented_value,
contradicted_value or wrong_count; invented_value; repeated_call; success_after_error): what an
answer "may state" is `dialogue.results.Known`, so a made-up value is one it does not ground. The
spoken words name no tool and no key (`parameter_labels.label`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from ..core.records import Message, ToolCall
from ..core.text import sentences, split_words, spoken
from ..dialogue.parameter_labels import label
from ..dialogue.results import Known, Result, known_before, leaves, results
from ..dialogue.stated import stated
from .wrong_turns import GoldTurn

# Pattern -> what its rejected turn is, in the card's words.
ANSWER_PATTERN_DOCS = {
    "contradicted_result": "the answer after a result with one value it reads back (a number, count, code or "
                           "status) changed to one the result does not hold",
    "invented_field": "the answer after a result with one more field stated, its value found in no result, "
                      "user turn or call",
    "repeated_call": "the call whose successful result came back, made again with the same arguments, instead "
                     "of the answer",
    "success_after_error": "a claim that the request went through, right after an error result",
}
ANSWER_PATTERNS = tuple(ANSWER_PATTERN_DOCS)

# A status a result reads, and the one a model misreporting it would say.
_OTHER_STATUS = {"ok": "failed", "success": "failed", "succeeded": "failed", "created": "pending",
                 "updated": "pending", "deleted": "pending", "open": "closed", "closed": "open",
                 "active": "inactive", "inactive": "active", "pending": "completed", "completed": "pending",
                 "approved": "rejected", "rejected": "approved", "scheduled": "cancelled",
                 "cancelled": "scheduled", "confirmed": "cancelled", "sent": "queued", "queued": "sent",
                 "submitted": "draft", "draft": "submitted", "available": "unavailable", "resolved": "open"}
_FIELDS = ["confirmation number", "reference number", "tracking number", "case number"]
_AGAIN = ["Let me run that once more to make sure it's right.", "I'll check that one more time for you.",
          "Just to be safe, I'm running that again."]
_CLAIMS = ["All set: that went through for the {what}.", "Done, the {what} went through successfully.",
           "That went through for the {what}, all set."]
_CLOSINGS = ["Is there anything else you need?", "Let me know if you need more from it."]


def _pick(rng: random.Random, options: list[Any]) -> Any:
    return options[rng.randrange(len(options))]


def _answered(turn: GoldTurn) -> tuple[list[Message], list[Result]] | None:
    """(the messages before the gold turn, the results right before it), when it answers results."""
    if turn.at is None or turn.at == 0:
        return None
    before = turn.dialogue.messages[:turn.at]
    if before[-1].role != "tool":
        return None
    last = max((i for i, m in enumerate(before) if m.role == "assistant"), default=-1)
    return before, [r for r in results(before) if r.at > last]


def _known(turn: GoldTurn, before: list[Message]) -> Known:
    d = turn.dialogue
    return known_before(before, len(before), [*d.candidate_tools, *d.distractor_tools, d.seed_tool])


def _succeeded(turn: GoldTurn) -> tuple[list[Message], list[Result]] | None:
    """As `_answered`, when every result right before the gold turn succeeded and the turn answers in words."""
    found = _answered(turn)
    if found is None or not found[1] or any(r.error is not None for r in found[1]):
        return None
    return found


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(round(value, 2))


def _unknown(text: str, start: int, known: Known) -> bool:
    """Whether the value `text` states at `start` is one `known` does not ground (a made-up value)."""
    here = [s for s in stated(text) if s.start == start]
    return bool(here) and not any(known.grounds(s) for s in here)


def _number_swaps(turn: GoldTurn, read: Known, known: Known, rng: random.Random) -> list[str]:
    """The answer with one number or code it reads back from the result changed to one nothing grounds."""
    text, out = turn.gold.content, []
    for s in stated(text):
        if s.kind not in ("number", "code") or s.position or s.approximate or s.percent or not read.grounds(s):
            continue
        if s.kind == "number":
            others = [_number(float(s.value) + k) for k in rng.sample([1, 2, 3, 5, 10], 5)]
        else:
            digits = [i for i, c in enumerate(s.text) if c.isdigit()]
            if not digits:
                continue
            i = digits[-1]
            others = [s.text[:i] + str((int(s.text[i]) + k) % 10) + s.text[i + 1:] for k in rng.sample([1, 3, 7], 3)]
        for other in others:
            new = text[:s.start] + other + text[s.start + len(s.text):]
            if _unknown(new, s.start, known):
                out.append(new)
                break
    return out


def _status_swaps(turn: GoldTurn, found: list[Result]) -> list[str]:
    """The answer with a status it reads back after the field's name ('the status is now created') swapped."""
    text, out = turn.gold.content, []
    held = {str(v).casefold() for r in found for _, v in leaves(r.value) if isinstance(v, str)}
    for r in found:
        for key, value in leaves(r.value):
            other = _OTHER_STATUS.get(str(value).casefold()) if isinstance(value, str) else None
            if not key or other is None or other in held:
                continue
            m = re.search(rf"\b{re.escape(spoken(key))}\b[^.?!]{{0,20}}?\b({re.escape(str(value))})\b", text, re.I)
            if m:
                out.append(text[:m.start(1)] + other + text[m.end(1):])
    return out


def contradicted_result(turn: GoldTurn) -> Message | None:
    found = _succeeded(turn)
    if found is None or turn.gold.tool_calls or not turn.gold.content.strip():
        return None
    before, latest = found
    read = Known()
    for r in latest:
        read.add_value(r.value)
    rng = turn.rng("contradicted_result")
    options = _number_swaps(turn, read, _known(turn, before), rng) + _status_swaps(turn, latest)
    if not options:
        return None
    return turn.gold.model_copy(update={"content": _pick(rng, sorted(set(options)))})


def _code(found: list[Result], rng: random.Random) -> str:
    """A made-up code shaped as the ids the result gave (not those the call sent): their letters, other digits."""
    sent = {str(v) for r in found if r.call is not None for _, v in leaves(r.call.arguments)}
    prefixes = sorted({m.group(1) for r in found for _, v in leaves(r.value) if isinstance(v, str) and v not in sent
                       for m in [re.fullmatch(r"([A-Z]{2,5}-)\d{3,}", v)] if m})
    prefix = _pick(rng, prefixes) if prefixes else "REF-"
    return prefix + str(rng.randrange(10000, 99999))


def invented_field(turn: GoldTurn) -> Message | None:
    found = _succeeded(turn)
    if found is None or turn.gold.tool_calls or not turn.gold.content.strip():
        return None
    before, latest = found
    rng = turn.rng("invented_field")
    words = {w for r in latest for k, _ in leaves(r.value) for w in split_words(k)}
    fields = [f for f in _FIELDS if not set(f.split()) <= words]  # a field no result has
    if not fields:
        return None
    known = _known(turn, before)
    for _ in range(5):
        value = _code(latest, rng)
        sentence = f"The {_pick(rng, fields)} is {value}."
        if _unknown(sentence, len(sentence) - len(value) - 1, known):
            break
    else:
        return None
    parts = sentences(turn.gold.content)
    content = " ".join([*parts[:1], sentence, *parts[1:]])
    return turn.gold.model_copy(update={"content": content})


def repeated_call(turn: GoldTurn) -> Message | None:
    found = _succeeded(turn)
    if found is None:
        return None
    done = [r.call for r in found[1] if r.call is not None]
    if not done or any(c.name == done[-1].name and c.arguments == done[-1].arguments for c in turn.gold.tool_calls):
        return None
    rng = turn.rng("repeated_call")
    return Message(role="assistant", phase=turn.gold.phase, content=_pick(rng, _AGAIN),
                   thought="I'm not sure that worked; I'll make the same call again.",
                   tool_calls=[ToolCall(name=done[-1].name, arguments=dict(done[-1].arguments))])


def _what(turn: GoldTurn, call: ToolCall | None) -> str:
    """The request as the user knows it: an argument the failed call named (its label and value), else 'request'."""
    if call is None:
        return "request"
    props = turn.dialogue.seed_tool.properties if call.name == turn.dialogue.seed_tool.name else {}
    named = [(k, v) for k, v in call.arguments.items() if isinstance(v, str | int) and not isinstance(v, bool)
             and len(str(v)) <= 40]
    if not named:
        return "request"
    key, value = named[0]
    return f"{label(key, props.get(key))} {value}"


def success_after_error(turn: GoldTurn) -> Message | None:
    found = _answered(turn)
    if found is None:
        return None
    failed = next((r for r in found[1] if r.error is not None), None)
    if failed is None:
        return None
    rng = turn.rng("success_after_error")
    claim = _pick(rng, _CLAIMS).format(what=_what(turn, failed.call))
    return Message(role="assistant", phase=turn.gold.phase, content=f"{claim} {_pick(rng, _CLOSINGS)}",
                   thought="The call is done, so I can tell them it worked.")


ANSWER_MAKERS: dict[str, Callable[[GoldTurn], Message | None]] = {
    "contradicted_result": contradicted_result, "invented_field": invented_field, "repeated_call": repeated_call,
    "success_after_error": success_after_error,
}
