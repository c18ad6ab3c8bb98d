"""Tool results: which call each `tool` turn answers, whether it is an error, and what it holds.

A `tool` turn answers the assistant call whose id it names (`call_id`: `call_<assistant turn index
in messages>_<call index>`); its content is the result as a JSON object, an error result being
`{"error": {"type": ..., "message": ...}}`. A result is read as JSON; text that is not JSON is kept
as one string, so it is still a source of values.

`Known` is everything an answer after a result may state without inventing it: every key and value
of the results so far (flattened: nested objects and lists walked), each list's length and the
counts of its items sharing a value ("2 of the 3 are open"), the user's words and the earlier calls'
arguments, and the called tools' names and descriptions. It answers whether one stated value
(`stated.Stated`) is among them:
* numbers by value: 1200 == "1,200" == 1200.0; a number rounded to the digits it is written with;
  a percentage of a ratio; a negative number said without its sign; a duration in milliseconds or
  seconds said as minutes ("3:20"); a position within the longest list;
* dates in any written form (`mentions.date_spans`), a day without its year by month and day;
* codes and quoted strings case-insensitively, as substrings of a source (`mentions.mentioned`);
* names word by word: each word of the name is a word of some source.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.records import Message, Tool, ToolCall
from ..core.text import ID_WORDS, LABELS, key_words, split_words, spoken
from .arguments import value_fits
from .mentions import date_spans, mentioned, month_day_spans, number_spans
from .stated import Stated, times_in


def call_id(turn: int, index: int) -> str:
    """The id of call `index` of the assistant turn at `turn` in the messages, as its `tool` turn names it."""
    return f"call_{turn}_{index}"


@dataclass(frozen=True)
class Result:
    """One `tool` turn: where it is, the id it names, the call of that id (None when no call has it), its value."""

    at: int
    call_id: str
    call: ToolCall | None
    value: Any

    @property
    def error(self) -> dict[str, Any] | None:
        """The error object of an error result (`{"error": {...}}`), else None."""
        if isinstance(self.value, dict) and isinstance(self.value.get("error"), dict):
            return self.value["error"]
        return None


def parse(content: str) -> Any:
    """A result's value: its JSON, or the text itself when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return content


def calls(messages: Sequence[Message]) -> dict[str, tuple[int, ToolCall]]:
    """Every assistant call by its id: (the index of its turn, the call)."""
    return {call_id(i, j): (i, c) for i, m in enumerate(messages) if m.role == "assistant"
            for j, c in enumerate(m.tool_calls)}


def results(messages: Sequence[Message]) -> list[Result]:
    """The `tool` turns, in order, each with the call it answers."""
    by_id = calls(messages)
    return [Result(i, m.tool_call_id or "", by_id[m.tool_call_id][1] if m.tool_call_id in by_id else None,
                   parse(m.content)) for i, m in enumerate(messages) if m.role == "tool"]


def fed_by_results(messages: Sequence[Message]) -> bool:
    """Whether a call takes a value (a code, id or name of three characters or more, or a number) that an
    earlier successful result returned and no user turn before it said: a call chained to another's result."""
    seen: set[str] = set()
    said = ""
    for m in messages:
        if m.role == "user":
            said += f"\n{m.content}"
        elif m.role == "tool":
            value = parse(m.content)
            if not (isinstance(value, dict) and isinstance(value.get("error"), dict)):
                seen |= {str(v) for _, v in leaves(value) if not isinstance(v, bool) and len(str(v)) >= 3}
        elif m.role == "assistant" and seen:
            for call in m.tool_calls:
                for _, v in leaves(call.arguments):
                    if str(v) in seen and str(v) not in said:
                        return True
    return False


def transcript(messages: Sequence[Message], width: int = 240) -> list[dict[str, str]]:
    """The dialogue as a reader skims it: each turn's role and text, a call as `name(arguments)`, a result
    cut to `width` characters."""
    out = []
    for m in messages:
        if m.role == "system":
            continue
        calls = "; ".join(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})" for c in m.tool_calls)
        text = " ".join(part for part in (m.content, calls) if part)
        out.append({"role": m.role, "text": text if len(text) <= width else text[: width - 1] + "…"})
    return out


def has_results(messages: Sequence[Message]) -> bool:
    """Whether any turn is a tool result: only then is there an answer after a call to judge."""
    return any(m.role == "tool" for m in messages)


# ---------------------------------------------------------------- flattening


def leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """(key, scalar) for every scalar in `value`, nested objects and lists walked; a list's items take its key."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v, key)
    else:
        yield key, value


def lists(value: Any, key: str = "") -> Iterator[tuple[str, list[Any]]]:
    """(key, list) for every list in `value` (the root's key is "")."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from lists(v, str(k))
    elif isinstance(value, list):
        yield key, value
        for v in value:
            yield from lists(v, key)


def keys(value: Any) -> Iterator[str]:
    """Every key of every object in `value`."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys(v)


def read_field(value: Any, key: str, schema: object = None) -> Any:
    """The scalar of a result a reader takes for parameter `key`: a field of that very name, else for a
    reference (`album_id`, `ids`) its id word (`id`) and for a named thing (`owner`) a label (`login`,
    `name`) of an object called after it; a field whose path names the key's thing is preferred, then the
    shallowest, then the first in reading order. None when the result holds no such field."""
    words = key_words(key, schema)
    ref = bool(words) and words[-1] in ID_WORDS
    thing = {w.rstrip("s") for w in words[:-1]} if ref else {key.lower().rstrip("s")}
    wanted = [key.lower()] + ([ID_WORDS[words[-1]]] if ref else list(LABELS))
    best: tuple[tuple[int, int, int], Any] | None = None
    for path, leaf in _paths(value):
        name = path[-1].lower() if path else ""
        if name not in wanted or leaf in (None, "") or isinstance(leaf, bool | float):
            continue
        about = {w.rstrip("s") for part in path[:-1] for w in split_words(part)}
        exact = name == key.lower()
        if not exact and not ref and not about & thing:
            continue  # a named thing's label only inside an object called after it (`owner.login`)
        rank = (0 if exact else 1, 0 if about & thing else 1, len(path))
        if best is None or rank < best[0]:
            best = (rank, leaf)
    return None if best is None else best[1]


def read_argument(result: Any, key: str, schema: dict[str, Any]) -> Any:
    """`read_field` in the type the parameter's `schema` asks for (a list for an array); None when the
    result holds no such field or its value does not fit the schema (another thing's id: `SUP-26351` for
    an `rfq_id` written `RFQ-` and six digits)."""
    value, kind = read_field(result, key, schema), schema.get("type")
    if value is None:
        return None
    if kind == "array":
        value = [value]
    elif kind == "integer":
        value = value if isinstance(value, int) else int(value) if str(value).isdigit() else None
    elif kind == "string" and not isinstance(value, str):
        value = str(value)
    return value if value is not None and value_fits(value, schema) else None


def _paths(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(keys down to it, scalar) for every scalar of `value`, a list's first item alone walked (what its
    items hold, once)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, str(k)))
    elif isinstance(value, list):
        if value:
            yield from _paths(value[0], path)
    else:
        yield path, value


def group_counts(items: list[Any]) -> set[int]:
    """How many items of a list share each value of each field (a list field counts an item per value it
    holds): the counts an answer may give of part of a list."""
    counts: Counter[tuple[str, str]] = Counter()
    for item in items:
        if isinstance(item, dict):
            counts.update({(k, " ".join(str(v).casefold().split())) for k, v in leaves(item)})
    return set(counts.values())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _durations(key: str, value: float) -> list[float]:
    """The seconds a duration field holds, when its key says it is one (`duration_ms`, `length_seconds`)."""
    words = split_words(key)
    if "ms" in words or "millis" in words or "milliseconds" in words:
        return [value / 1000]
    if {"duration", "seconds", "secs", "length"} & set(words):
        return [value]
    return []


# ---------------------------------------------------------------- what an answer may state


@dataclass
class Known:
    """The values an answer may state: gathered from results, user turns, calls and the called tools."""

    texts: list[str] = field(default_factory=list)
    numbers: set[float] = field(default_factory=set)
    dates: set[dt.date] = field(default_factory=set)
    times: set[tuple[int, int]] = field(default_factory=set)
    month_days: set[tuple[int, int]] = field(default_factory=set)  # days said without a year ("March 12")
    longest: int = 0  # the longest list in the results: a position up to it is no fact

    def add_text(self, text: str) -> None:
        if not text.strip():
            return
        self.texts.append(text)
        self.numbers.update(v for _, _, v in number_spans(text))
        self.dates.update(day for _, _, days in date_spans(text) for day in days)
        self.month_days.update(month_day for _, _, month_day in month_day_spans(text))
        self.times.update(times_in(text))

    def add_value(self, value: Any) -> None:
        """A result or a call's arguments: every key (as written and said aloud) and every value."""
        for key in set(keys(value)):
            self.add_text(f"{key} {spoken(key)}")
        for key, leaf in leaves(value):
            if _is_number(leaf):
                self.numbers.add(float(leaf))
                for seconds in _durations(key, float(leaf)):
                    self.numbers.add(seconds)
                    self.times.add((int(seconds // 60), round(seconds % 60)))
            elif leaf is not None and not isinstance(leaf, bool):
                self.add_text(str(leaf))
        for _, items in lists(value):
            self.numbers.add(float(len(items)))
            self.numbers.update(float(n) for n in group_counts(items))
            self.longest = max(self.longest, len(items))

    @property
    def _joined(self) -> str:
        return "\n".join(self.texts)

    def _number(self, s: Stated) -> bool:
        value = float(s.value)
        if s.position and 1 <= value <= max(self.longest, 1):
            return True
        wanted = [value] + ([value / 100] if s.percent else [])
        tolerance = [s.tolerance] + ([s.tolerance / 100] if s.percent else [])
        for known in self.numbers:
            for target, tol in zip(wanted, tolerance):
                for k in {known, abs(known)}:  # a sign is often said in words: "down 1.85%"
                    if math.isclose(k, target, rel_tol=1e-9, abs_tol=1e-9) or abs(k - target) <= tol * (1 + 1e-9):
                        return True
                    if s.approximate and math.isclose(k, target, rel_tol=0.05):
                        return True  # "about 1,200" for 1,187
        return False

    def _words(self) -> set[str]:
        return {w for t in self.texts for w in split_words(t)}

    def grounds(self, s: Stated) -> bool:
        """Whether stated value `s` is among the known values (module docstring)."""
        if s.kind == "number":
            return self._number(s)
        if s.kind == "date":
            month_days = self.month_days | {(d.month, d.day) for d in self.dates}
            return any(x in self.dates if isinstance(x, dt.date) else x in month_days for x in s.value)
        if s.kind == "time":
            return s.value in self.times
        if s.kind == "name":
            words = split_words(s.text)
            return mentioned(s.text, {}, self._joined) == "found" or (bool(words) and set(words) <= self._words())
        text = s.text.rstrip(".…").strip() if s.kind == "quoted" else s.text  # a title cut short: 'Login fails…'
        return mentioned(text, {}, self._joined) == "found"


def known_before(messages: Sequence[Message], turn: int, tools: Sequence[Tool] = ()) -> Known:
    """What the answer at message index `turn` may state: the results, user turns and calls before it,
    and the descriptions of the tools called before it (from `tools`, by name)."""
    known = Known()
    described = {t.name: t for t in tools}
    for m in messages[:turn]:
        if m.role == "user":
            known.add_text(m.content)
        elif m.role == "tool":
            known.add_value(parse(m.content))
        elif m.role == "assistant":
            for c in m.tool_calls:
                known.add_value(c.arguments)
                tool = described.get(c.name)
                known.add_text(f"{c.name} {spoken(c.name)} {tool.description if tool else ''}")
    return known

