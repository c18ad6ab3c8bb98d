"""Wrong assistant turns of named patterns, made from a gold turn: the `rejected` side of preference pairs.

Each maker takes one gold assistant turn in its context (the dialogue, the messages before it, a
seeded random source) and returns the mistake a tool-calling model realistically makes there, or
None when the pattern does not fit that turn. The patterns follow ToolScan's error taxonomy, cut
to what a disambiguation dialogue can show:

- `premature_call`: while the tool is still open (tool-selection phase, gold turn asks), a call to
  the nearest near-duplicate offered, with whatever values the user has stated;
- `unavailable_call`: the needed tool is not offered (`expects_call` is False), yet a look-alike is
  called instead of refusing;
- `missing_argument`: the gold call without one required argument, or, on an argument-filling
  question, a call of the right tool with only the values said so far;
- `hallucinated_argument`: the gold call with one key renamed to a parameter the tool does not have;
- `wrong_argument_type`: the gold call with one value in the wrong JSON type ("12" for 12);
- `wrong_argument_value`: the gold call with one value the user never said;
- `unneeded_question`: instead of the call, a question about a value the user already stated.

A call mistake keeps the gold turn's words (the error is in the call, as with real models); the
turns that act differently get words of their own. Spoken text names parameters by their spoken
label (`parameter_labels.label`) and never names a tool or a key.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import scenarios
from ..core.records import Dialogue, Message, Tool, ToolCall
from ..dialogue.arguments import equal, schema_types
from ..dialogue.mentions import mentioned
from ..dialogue.parameter_labels import copula, label
from ..dialogue.said import user_said

# Pattern -> what its rejected turn is, in the card's words; the order is the card's and the stats'.
PATTERN_DOCS = {
    "premature_call": "a call to the nearest near-duplicate while the tool is still open (the gold turn asks)",
    "unavailable_call": "a call to the nearest look-alike when the needed tool is not offered (the gold turn refuses)",
    "missing_argument": "the call without a required argument, or a call before a required value was given",
    "hallucinated_argument": "the gold call with one argument under a name the tool does not have",
    "wrong_argument_type": "the gold call with one value of the wrong JSON type (a quoted number, a list as text)",
    "wrong_argument_value": "the gold call with one value the user never said",
    "unneeded_question": "a question about a value the user already gave, instead of the call",
    "run_attempt": "the run's own rejected attempt at this turn, whose dialogue so far is the accepted one's",
}
PATTERNS = tuple(PATTERN_DOCS)


@dataclass(frozen=True)
class GoldTurn:
    """One gold assistant turn with what a maker needs: its dialogue, the messages before it, a seed, and its
    index in the dialogue's messages when the dialogue holds tool results (`wrong_answers` reads them)."""

    dialogue: Dialogue
    history: list[Message]
    gold: Message
    seed: str
    at: int | None = None

    def rng(self, pattern: str) -> random.Random:
        return random.Random(f"{self.seed}:{pattern}")

    @property
    def said(self) -> str:
        return user_said(self.history)

    def stated(self, tool: Tool) -> dict[str, Any]:
        """The gold values the user has stated so far, under the keys `tool` has."""
        return {k: v for k, v in self.dialogue.gold_arguments.items()
                if k in tool.properties and mentioned(v, tool.properties[k], self.said) == "found"}

    def gold_call(self) -> ToolCall | None:
        """The turn's call of the seed tool, if it makes one."""
        return next((c for c in self.gold.tool_calls if c.name == self.dialogue.seed_tool.name), None)


def _pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


def _nearest_offered(d: Dialogue) -> Tool | None:
    """The nearest near-duplicate of the seed tool that the assistant sees (distractors are kept nearest first)."""
    offered = {t.name for t in d.candidate_tools}
    return next((t for t in d.distractor_tools if t.name in offered and t.name != d.seed_tool.name), None)


_GO_AHEAD = ["Sure, I'll take care of that right away.", "Got it. I'm putting that through for you now.",
             "Okay, running that for you now.", "Understood, I'll get that started straight away."]


def _call(turn: GoldTurn, tool: Tool, arguments: dict[str, Any], rng: random.Random, why: str) -> Message:
    return Message(role="assistant", phase=turn.gold.phase, thought=why.format(tool=tool.name),
                   content=_pick(rng, _GO_AHEAD), tool_calls=[ToolCall(name=tool.name, arguments=arguments)])


def premature_call(turn: GoldTurn) -> Message | None:
    d, gold = turn.dialogue, turn.gold
    if gold.tool_calls or gold.phase != "tool_selection" or not scenarios.get(d.scenario).expects_call:
        return None
    tool = _nearest_offered(d)
    if tool is None:
        return None
    return _call(turn, tool, turn.stated(tool), turn.rng("premature_call"),
                 "This sounds like a job for {tool}; I'll call it now instead of asking which one they mean.")


def unavailable_call(turn: GoldTurn) -> Message | None:
    d, gold = turn.dialogue, turn.gold
    if gold.tool_calls or scenarios.get(d.scenario).expects_call:
        return None
    tool = _nearest_offered(d)
    if tool is None:
        return None
    return _call(turn, tool, turn.stated(tool), turn.rng("unavailable_call"),
                 "{tool} is close enough to what they need, so I'll use it.")


def _with_call(turn: GoldTurn, arguments: dict[str, Any]) -> Message:
    """The gold turn, words kept, its call carrying `arguments`."""
    return turn.gold.model_copy(update={"tool_calls": [ToolCall(name=turn.dialogue.seed_tool.name,
                                                                 arguments=arguments)]})


def missing_argument(turn: GoldTurn) -> Message | None:
    d, gold, tool = turn.dialogue, turn.gold, turn.dialogue.seed_tool
    rng = turn.rng("missing_argument")
    call = turn.gold_call()
    if call is not None:
        required = sorted(k for k in call.arguments if k in tool.required)
        if not required:
            return None
        drop = _pick(rng, required)
        return _with_call(turn, {k: v for k, v in call.arguments.items() if k != drop})
    if gold.tool_calls or gold.phase != "argument_filling" or not scenarios.get(d.scenario).expects_call:
        return None
    stated = turn.stated(tool)
    if all(k in stated for k in tool.required if k in d.gold_arguments):
        return None  # nothing required is missing yet: a call now is not this mistake
    return _call(turn, tool, stated, rng, "I have enough to go on; I'll call {tool} with what they gave me.")


# Words of a key a model swaps for a near synonym when it invents a parameter name.
_SWAPS = {"id": "number", "number": "id", "date": "day", "amount": "total", "name": "title", "quantity": "count",
          "qty": "count", "count": "quantity", "code": "identifier", "email": "email_address", "type": "kind",
          "description": "notes", "notes": "comment", "comment": "note", "reason": "justification",
          "start": "begin", "end": "finish", "from": "source", "to": "target", "status": "state",
          "price": "cost", "cost": "price", "user": "account", "account": "user", "location": "place"}


def _key_words(key: str) -> tuple[list[str], bool]:
    """(the key's words, whether it is camelCase)."""
    camel = "_" not in key and bool(re.search(r"[a-z][A-Z]", key))
    parts = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower().split("_") if camel else key.split("_")
    return [p for p in parts if p], camel


def _join(words: list[str], camel: bool) -> str:
    if not camel:
        return "_".join(words)
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def invented_key(key: str, known: set[str]) -> str:
    """A parameter name a model might write for `key` that the tool does not have."""
    words, camel = _key_words(key)
    options = []
    for i, w in enumerate(words):
        if w.lower() in _SWAPS:
            options.append(_join(words[:i] + _SWAPS[w.lower()].split("_") + words[i + 1:], camel))
    options += [_join([*words, "value"], camel), _join(["requested", *words], camel)]
    return next(o for o in options if o not in known and o != key)


def hallucinated_argument(turn: GoldTurn) -> Message | None:
    call = turn.gold_call()
    if call is None or not call.arguments:
        return None
    key = _pick(turn.rng("hallucinated_argument"), sorted(call.arguments))
    new = invented_key(key, set(turn.dialogue.seed_tool.properties))
    return _with_call(turn, {(new if k == key else k): v for k, v in call.arguments.items()})


def _mistyped(value: Any, schema: dict[str, Any]) -> Any:
    """`value` as a model writes it in the wrong JSON type, or None when no such slip is natural."""
    kinds = schema_types(schema)
    if isinstance(value, bool) and "string" not in kinds:
        return "yes" if value else "no"
    if isinstance(value, int | float) and "string" not in kinds:
        return str(value)  # a quoted number
    if isinstance(value, list) and "string" not in kinds:
        return ", ".join(str(v) for v in value)
    if isinstance(value, str) and value.strip().isdigit() and kinds == ["string"]:
        return int(value)  # a numeric code read as a number
    return None


def wrong_argument_type(turn: GoldTurn) -> Message | None:
    call = turn.gold_call()
    if call is None:
        return None
    props = turn.dialogue.seed_tool.properties
    slips = {k: s for k, v in call.arguments.items() if (s := _mistyped(v, props.get(k) or {})) is not None}
    if not slips:
        return None
    key = _pick(turn.rng("wrong_argument_type"), sorted(slips))
    return _with_call(turn, {**call.arguments, key: slips[key]})


def _other_value(value: Any, schema: dict[str, Any], rng: random.Random) -> Any:
    """A plausible value of the same type that is not `value`, or None."""
    if isinstance(schema.get("enum"), list):
        others = [m for m in schema["enum"] if not equal(m, value, schema)]
        return others[rng.randrange(len(others))] if others else None
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, 2, 5, 10]) if value >= 0 else value - 1
    if isinstance(value, float):
        return round(value * rng.choice([1.5, 2.0, 0.5]) + 1, 2)
    if not isinstance(value, str):
        return None
    fmt = schema.get("format")
    if fmt in ("date", "date-time"):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        shifted = moment + dt.timedelta(days=rng.choice([1, 2, 7]))
        return shifted.date().isoformat() if fmt == "date" else shifted.isoformat()
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if digits:  # an identifier or code: one digit off, the commonest slip
        i = digits[-1]
        return value[:i] + str((int(value[i]) + rng.choice([1, 3, 7])) % 10) + value[i + 1:]
    return None


def wrong_argument_value(turn: GoldTurn) -> Message | None:
    call = turn.gold_call()
    if call is None:
        return None
    rng = turn.rng("wrong_argument_value")
    props, said = turn.dialogue.seed_tool.properties, turn.said
    swaps = {}
    for key, value in sorted(call.arguments.items()):
        schema = props.get(key) or {}
        other = _other_value(value, schema, rng)
        if other is not None and not equal(other, value, schema) and mentioned(other, schema, said) != "found":
            swaps[key] = other
    if not swaps:
        return None
    key = _pick(rng, sorted(swaps))
    return _with_call(turn, {**call.arguments, key: swaps[key]})


_RECHECK = ["Before I go ahead, could you tell me the {label} you'd like to use?",
            "Just to be sure, what {copula} the {label} for this?",
            "One more thing before I submit it: which {label} should I put down?"]


def unneeded_question(turn: GoldTurn) -> Message | None:
    """A question about a value already stated, in place of a call that had everything it needed."""
    d, call = turn.dialogue, turn.gold_call()
    if call is None or not call.arguments:
        return None
    props, said = d.seed_tool.properties, turn.said
    known = sorted(k for k, v in call.arguments.items() if mentioned(v, props.get(k) or {}, said) == "found")
    if not (scenarios.get(d.scenario).asks_nothing or len(known) == len(call.arguments)) or not known:
        return None
    rng = turn.rng("unneeded_question")
    key = _pick(rng, known)
    spoken = label(key, props.get(key))
    return Message(role="assistant", phase=turn.gold.phase,
                   thought=f"I should double-check the {spoken} before doing anything.",
                   content=_pick(rng, _RECHECK).format(label=spoken, copula=copula(spoken)))


MAKERS: dict[str, Callable[[GoldTurn], Message | None]] = {
    "premature_call": premature_call, "unavailable_call": unavailable_call, "missing_argument": missing_argument,
    "hallucinated_argument": hallucinated_argument, "wrong_argument_type": wrong_argument_type,
    "wrong_argument_value": wrong_argument_value, "unneeded_question": unneeded_question,
}
