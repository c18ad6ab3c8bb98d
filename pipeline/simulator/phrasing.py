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
from ..core.text import key_words
from ..dialogue.parameter_labels import copula, label
from . import gold_values as values
from .value_kinds import string_kind

SEP = "; "  # between two statements in one sentence (never inside an unquoted value)
AND = " and "  # between the two statements of a pair ("the A is x and the B is y")
FORMS = ("is", "colon", "use", "for")
_NEXT = r"(?:the|for|use)\s"  # how a statement that follows 'and' begins
# what a person may add after stating values, in the same sentence; the reader stops a value before it
AFTERWORDS = (", thank you for your help", ", and let me know if you need anything else", ", if that helps",
              ", and that should be everything you need", ", I hope that helps", ", thanks for checking",
              ", so you should have what you need now", ", and thanks for your patience")
# what a person may say of the value they just stated, by what it holds (`value_kinds.string_kind`): the
# project it lives in, where they found an id ("The repo is ledger-api, which is the one I'm working on.")
REMARKS = {"handle_org": (", which is the account we use for work", ", which is where our team keeps its work"),
           "repo": (", which is the one I'm working on", ", that's the one our team uses",
                    ", which is the project I look after"),
           "branch": (", which is where my changes are", ", that's the branch I've been working on"),
           "identifier": (", it's the one I was looking at earlier", ", that's the one I mean",
                          ", I copied it from the page I had open")}
_AFTER = "|".join(re.escape(a) for a in (*AFTERWORDS, *(r for rs in REMARKS.values() for r in rs)))
_QUOTE_NEEDED = re.compile(rf"[;\"\n?!]|\.\s|\.$|\s\(|\sas the\s|,?\sand\s{_NEXT}|,$|\s{{2}}|{_AFTER}", re.IGNORECASE)
_QUOTE_ITEM = re.compile(rf"[;\"\n?!]|\.\s|\.$|\s\(|\sas the\s|,|\sand\s|^{_NEXT}", re.IGNORECASE)


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
    if isinstance(value, str) and (_QUOTE_NEEDED.search(text) or text != text.strip() or not text or _prose(text)):
        return _quoted(text)
    return text


def _prose(text: str) -> bool:
    """A sentence or a title ('Guard against broken link in docs'): quoted, as people quote a message they
    give, so it does not read as the speaker's own words ('the message is Guard against ...')."""
    words = text.split()
    return len(words) >= 4 and text[:1].isupper() and any(w[:1].islower() for w in words[1:])


def state(name: str, value: Any, rng: random.Random, form: str | None = None) -> str:
    """One value stated by its label, in one of `FORMS` (chosen by `rng` unless given)."""
    said = _say(value)
    form = "colon" if isinstance(value, bool) else form or "is"
    if form == "colon":
        return f"{name}: {said}"
    if form == "use":
        return f"use {said} as the {name}"
    if form == "for":
        return f"for the {name}, {rng.choice(['', 'it is ', 'go with '])}{said}"
    return f"the {name} {verb(name)} {said}"


def remark(key: str, schema: dict, value: Any, rng: random.Random) -> str | None:
    """A word on the value of `key` just stated, said after it in the same sentence (`REMARKS`), or None
    when nothing fits its kind or the value is a list (the remarks speak of one thing)."""
    if isinstance(value, (list, bool, dict)):
        return None
    kind = string_kind(key, schema) if isinstance(value, str) else \
        "identifier" if {"id", "number"} & set(key_words(key, schema)) else None
    options = REMARKS.get(kind or "")
    return rng.choice(options) if options else None


def sentence(pairs: list[tuple[str, Any]], rng: random.Random) -> str:
    """Several values as a person states them: two to a sentence joined by 'and' ("The cost center
    is CC-1 and the fiscal year is 2024."), a yes/no one on its own ("Include archived: yes."), each
    sentence capitalised and closed."""
    groups: list[list[tuple[str, Any]]] = []
    for name, value in pairs:
        if isinstance(value, bool) or not groups or len(groups[-1]) == 2 or isinstance(groups[-1][0][1], bool):
            groups.append([(name, value)])
        else:
            groups[-1].append((name, value))
    out = []
    for group in groups:
        said = AND.join(state(name, value, rng, "is" if len(group) > 1 else None) for name, value in group)
        out.append(said[:1].upper() + said[1:] + ".")
    return " ".join(out)


_Q = r'(?:"[^"\n]*"|“[^”\n]*”)'
_END = rf"(?=;\s|\.\s|\.$|\.?\n|\.?$|\?|!|\s+\(|,?\s+and\s+{_NEXT}|(?:{_AFTER})[.!?]|,?\s+and\s{{2,}}|\s{{2,}})"  # two spaces: a statement read and masked
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
