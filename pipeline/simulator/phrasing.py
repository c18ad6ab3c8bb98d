"""How the offline user states values, and how they are read back: the one home for both.

The offline user states each value by a spoken label in one of several everyday forms
("the due date is ...", "due date: ...", "use ... as the amount", "for the cost centre, ...");
the offline assistants read them back with `read_values`, so a form added here is one the
reader knows. Values that could be mistaken for sentence punctuation are quoted, so every
generated value survives the round trip exactly.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any

from ..core.records import Tool
from ..dialogue.parameter_labels import copula, label
from . import gold_values as values

SEP = "; "  # between two statements in one sentence (never inside an unquoted value)
FORMS = ("is", "colon", "use", "for")
_QUOTE_NEEDED = re.compile(r"[;\"\n?!]|\.\s|\.$|\s\(|\sas the\s")
_QUOTE_ITEM = re.compile(r"[;\"\n?!]|\.\s|\.$|\s\(|\sas the\s|,|\sand\s")


def verb(name: str) -> str:
    """'is' or 'are', agreeing with the label."""
    return copula(name)


def article(phrase: str) -> str:
    """'a' or 'an' before `phrase`, by its sound: an hour, an HR form, a user, a one-off."""
    word = phrase.strip().split(" ")[0] if phrase.strip() else ""
    low = word.lower()
    if not word:
        return "a"
    if word.isupper() and len(word) > 1:  # read letter by letter
        return "an" if word[0] in "AEFHILMNORSX" else "a"
    if low.startswith(("hour", "honest", "honou", "heir")):
        return "an"
    if low.startswith(("uni", "use", "usu", "uti", "eu", "one", "once", "ur")):
        return "a"
    return "an" if low[:1] in "aeiou" else "a"


def _quoted(text: str) -> str:
    return f"“{text}”" if '"' in text else f'"{text}"'


def _say(value: Any) -> str:
    """A value as said; a string that could run into the sentence around it is quoted."""
    if isinstance(value, list) and any(isinstance(v, str) and (_QUOTE_ITEM.search(v) or not v.strip()) for v in value):
        parts = [_quoted(values.say_value(v)) for v in value]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    text = values.say_value(value)
    if isinstance(value, str) and (_QUOTE_NEEDED.search(text) or text != text.strip() or not text):
        return _quoted(text)
    return text


def state(name: str, value: Any, rng: random.Random, form: str | None = None) -> str:
    """One value stated by its label, in one of `FORMS` (chosen by `rng` unless given)."""
    said = _say(value)
    form = "colon" if isinstance(value, bool) else form or rng.choice(("is", "is", "colon", "use", "for"))
    if form == "colon":
        return f"{name}: {said}"
    if form == "use":
        return f"use {said} as the {name}"
    if form == "for":
        return f"for the {name}, {rng.choice(['', 'it is ', 'go with '])}{said}"
    return f"the {name} {verb(name)} {said}"


def sentence(pairs: list[tuple[str, Any]], rng: random.Random) -> str:
    """Several values in one sentence, each in its own form, capitalised and closed."""
    text = SEP.join(state(name, value, rng) for name, value in pairs)
    return (text[:1].upper() + text[1:] + ".") if text else ""


_Q = r'(?:"[^"\n]*"|“[^”\n]*”)'
_END = r"(?=;\s|\.\s|\.$|\.?\n|\.?$|\?|!|\s+\()"
_CLAUSE = r"(?:^|(?<=[;.!?:\n(])\s*|(?<=\s)(?:but|and|so|also|then|oh|ok|sure|right|said|told|say|think|guess|believe)[,]?\s+|(?<=,)\s+)"


@lru_cache(maxsize=1024)
def _patterns(name: str) -> tuple[re.Pattern[str], ...]:
    n = re.escape(name)
    value = rf'({_Q}(?:(?:,\s*|\s+and\s+){_Q})*|(?:(?!;\s|\.\s)[^\n])+?)'
    return tuple(re.compile(p, re.IGNORECASE) for p in (
        rf"{_CLAUSE}the {n} (?:is|are) {value}{_END}",
        rf"{_CLAUSE}(?:\d+[.)]\s*)?{n}: {value}{_END}",
        rf"\buse {value} as the {n}{_END}",
        rf"{_CLAUSE}for the {n}, (?:it is |go with )?{value}{_END}",
    ))


def _unquote(text: str, schema: dict) -> Any:
    text = text.strip()
    if schema.get("type") == "array" and text[:1] in '"“':
        items = [a or b for a, b in re.findall(r'"([^"\n]*)"|“([^”\n]*)”', text)]
        item = schema.get("items") or {"type": "string"}
        return [p if item.get("type") in (None, "string") else values.read(p, item) for p in items]
    if len(text) >= 2 and text[0] + text[-1] in ('""', "“”"):
        return text[1:-1] if schema.get("type") in (None, "string") else values.read(text[1:-1], schema)
    return values.read(text, schema)


def read_values(text: str, tool: Tool, names: dict[str, list[str]] | None = None,
                keys: list[str] | None = None) -> dict[str, Any]:
    """The values `text` states for `tool`'s parameters (its required ones unless `keys` is given),
    under each key's label or the extra `names` given for it; the last statement of a key wins.
    Longer labels are read first and their statements masked, so 'date' never reads 'due date'."""
    props = tool.properties
    wanted = keys if keys is not None else tool.required
    spoken = [(n, k) for k in wanted for n in {label(k, props.get(k) or {}), *((names or {}).get(k) or [])}]
    masked = text
    found: dict[str, tuple[int, str]] = {}
    for name, key in sorted(spoken, key=lambda nk: -len(nk[0])):
        for pattern in _patterns(name):
            for m in pattern.finditer(masked):
                if key not in found or m.start() > found[key][0]:
                    found[key] = (m.start(), m.group(1))
                masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    return {k: _unquote(found[k][1], props.get(k) or {}) for k in wanted if k in found}
