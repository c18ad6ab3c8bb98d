"""Grounded selection: did the user say what sets the chosen tool apart from each other candidate?

One definition, shared by the `grounding` validator (which rejects a dialogue whose call the
conversation never earned), the offline assistant (which commits only once the rule holds and
otherwise asks) and the offline user (which says what makes the rule hold). The rule:

* vocab(tool): stems (`text.stems`) of the content words of the tool's description, of its
  name, of its parameters' keys (split into words), their descriptions and their enum values
  (array parameters: their items' enum values too); words found only inside codes (URLs, link
  targets, example ids: `text.code_words`) are no one's words and do not count;
* said: the content stems of every user turn before the first assistant turn that carries a
  tool call (`said.user_turns(..., until="call")`);
* two stems *match* when they are equal, or when the shorter has 5 or more letters and is a
  prefix of the other ("sched" matches "schedu");
* the chosen tool c is *separated* from another candidate o when the user said a stem that
  matches a stem of vocab(c) and none of vocab(o): something that fits c and not o; or, where
  no word can do that (every stem of c's description and name fits vocab(o)), when the user
  said everything c's name says it acts on and not everything o's does (`named_apart`: "delete
  the repository" sets delete_repository apart from delete_file);
* a dialogue ending in a call to c is *grounded* when c is separated from every other tool
  offered (its candidates and distractors other than c). A dialogue without a tool call, or
  with a single candidate, has nothing to separate and is grounded.

Evidence said after the first call does not count: the choice had already been made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..core.records import Tool
from ..core.text import STOP, code_words, content_words, key_words, split_words, stem
from .said import Spoken, Until, user_said
from .shortcuts import GENERIC

PREFIX_MIN = 5  # a stem this long or longer also matches the stems it is a prefix of

ToolLike = Tool | Mapping[str, Any]


def _field(tool: ToolLike, name: str) -> Any:
    return tool.get(name) if isinstance(tool, Mapping) else getattr(tool, name, None)


def tool_name(tool: ToolLike) -> str:
    return str(_field(tool, "name") or "")


def tool_description(tool: ToolLike) -> str:
    return str(_field(tool, "description") or "")


def _stem_words(text: str) -> list[tuple[str, str]]:
    """(stem, word) for each content word of `text` (the shared stop words left out)."""
    return [(stem(w), w) for w in content_words(text, STOP)]


def vocab_words(tool: ToolLike) -> dict[str, str]:
    """Each stem of vocab(tool) -> the first word it came from (description first, then name, then
    parameters), so a caller can say the stem as a word."""
    texts: list[str] = [tool_description(tool), tool_name(tool)]
    params = _field(tool, "parameters") or {}
    properties = params.get("properties") if isinstance(params, Mapping) else None
    for key, schema in (properties or {}).items():
        texts.append(" ".join(key_words(str(key), schema)))
        if isinstance(schema, Mapping):
            texts.append(str(schema.get("description") or ""))
            items = schema.get("items")
            enums = list(schema.get("enum") or [])
            if isinstance(items, Mapping):
                enums += list(items.get("enum") or [])
            texts += [str(v) for v in enums if v is not None]
    out: dict[str, str] = {}
    for text in texts:
        codes = code_words(text)
        for s, w in _stem_words(text):
            if w not in codes:
                out.setdefault(s, w)
    return out


@lru_cache(maxsize=4096)
def _told(name: str, description: str) -> frozenset[str]:
    codes = code_words(description)
    return frozenset(s for text in (description, name) for s, w in _stem_words(text) if w not in codes)


def told(tool: ToolLike) -> frozenset[str]:
    """The stems of what a tool says it does: its description's and name's words, not its
    parameters' (a part of vocab(tool)). A tool whose told stems all fit another's vocab does
    nothing the other does not say it does."""
    return _told(tool_name(tool), tool_description(tool))


_VOCABS: dict[str, frozenset[str]] = {}


def vocab(tool: ToolLike) -> frozenset[str]:
    """vocab(tool): the stems of its description, name, parameter keys, their descriptions and enums."""
    key = json.dumps([tool_name(tool), _field(tool, "description"), _field(tool, "parameters")],
                     sort_keys=True, default=str)
    found = _VOCABS.get(key)
    if found is None:
        if len(_VOCABS) > 4096:
            _VOCABS.clear()
        found = _VOCABS[key] = frozenset(vocab_words(tool))
    return found


def said_stems(messages: Iterable[Spoken], until: Until = "call") -> frozenset[str]:
    """said: the content stems of the user's turns up to `until` (the rule reads up to the first call)."""
    return text_stems(user_said(messages, until=until, sep=" "))


def text_stems(text: str) -> frozenset[str]:
    """The content stems of `text` as the rule reads them (`said_stems` of turns already joined)."""
    return frozenset(s for s, _ in _stem_words(text))


def match(a: str, b: str) -> bool:
    """Equal stems, or the shorter (5+ letters) is a prefix of the other."""
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= PREFIX_MIN and long.startswith(short)


@lru_cache(maxsize=4096)
def _prefixes(stems: frozenset[str]) -> frozenset[str]:
    """Every prefix of PREFIX_MIN or more letters of each stem, shorter than the stem itself."""
    return frozenset(s[:k] for s in stems for k in range(PREFIX_MIN, len(s)))


def fits(word: str, stems: Iterable[str]) -> bool:
    """Whether stem `word` matches one of `stems` (`match`)."""
    return _fits(word, stems if isinstance(stems, frozenset) else frozenset(stems))


@lru_cache(maxsize=1 << 16)  # the offline assistant asks of the same vocabularies at every turn
def _fits(word: str, pool: frozenset[str]) -> bool:
    if word in pool:
        return True
    if len(word) >= PREFIX_MIN and word in _prefixes(pool):
        return True  # word is a prefix of a longer stem
    return any(word[:k] in pool for k in range(PREFIX_MIN, len(word)))  # a stem is a prefix of word


def separating(said: Iterable[str], chosen: Iterable[str], other: Iterable[str]) -> list[str]:
    """The said stems that fit vocab `chosen` and not vocab `other`, sorted (empty: not separated)."""
    mine, theirs = frozenset(chosen), frozenset(other)
    return sorted(s for s in set(said) if fits(s, mine) and not fits(s, theirs))


@lru_cache(maxsize=4096)
def named(name: str) -> frozenset[str]:
    """The stems of what a tool's name says it acts on: its words but the general ones ('get', 'list',
    'details'): {'repositori'} of delete_repository."""
    return frozenset(stem(w) for w in split_words(name) if w not in GENERIC and w not in STOP)


def named_apart(said: Iterable[str], chosen: ToolLike, other: ToolLike) -> bool:
    """Whether the said stems set `chosen` apart from `other` by their names, where no word can: all
    that `chosen` says it does fits `other` too (`told`), and the user said all that `chosen`'s name
    says it acts on and not all of `other`'s (both names saying something)."""
    return names_apart(frozenset(said), tool_name(chosen), told(chosen), tool_name(other), vocab(other))


def names_apart(heard: frozenset[str], chosen: str, chosen_told: frozenset[str], other: str,
                other_vocab: frozenset[str]) -> bool:
    """`named_apart` on names, `told(chosen)` and `vocab(other)`, for callers that hold them already."""
    mine, theirs = named(chosen), named(other)
    return bool(mine and theirs) and all(fits(s, heard) for s in mine) and not all(fits(s, heard) for s in theirs) \
        and all(fits(s, other_vocab) for s in chosen_told)


def distinct(chosen: Iterable[str], others: Sequence[Iterable[str]]) -> list[str]:
    """The stems of vocab `chosen` that match no stem of any vocab in `others`: what a user could say
    to set `chosen` apart from all of them at once. Sorted."""
    theirs = [frozenset(o) for o in others]
    return sorted(s for s in set(chosen) if not any(fits(s, t) for t in theirs))


def unseparated(said: Iterable[str], chosen: ToolLike, others: Sequence[ToolLike]) -> list[str]:
    """The names of `others` (in order, `chosen` itself and repeated names skipped) that the said
    stems do not separate `chosen` from. Empty: the choice of `chosen` is grounded."""
    heard, mine = frozenset(said), vocab(chosen)
    out: list[str] = []
    for other in others:
        name = tool_name(other)
        if name == tool_name(chosen) or name in out:
            continue
        if not separating(heard, mine, vocab(other)) and not named_apart(heard, chosen, other):
            out.append(name)
    return out


def grounded(said: Iterable[str], chosen: ToolLike, others: Sequence[ToolLike]) -> bool:
    """Whether `chosen` is separated from every one of `others` by the said stems."""
    return not unseparated(said, chosen, others)
