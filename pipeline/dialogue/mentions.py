"""Whether the user's text states an argument value: found, absent (made up) or unverifiable.

The grounding half of the toolargs validator, also used by the question planner and the
offline critic, so all three hold one notion of "the user said it". The rules are in
`mentioned`'s docstring. Values are read through the one schema-aware normaliser
(`arguments.normalise`), so "250" under an integer schema is looked for as the number 250.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, Literal

from .arguments import Schema, normalise, schema_types

Mention = Literal["found", "absent", "unverifiable"]

_MONTHS = {
    name: i
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    (re.compile(rf"(?<![a-z0-9]){_DAY}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})(?!\d)"), ("d", "m", "y")),
    (re.compile(rf"(?<![a-z0-9]){_MONTH}\s+{_DAY},?\s+(\d{{4}})(?!\d)"), ("m", "d", "y")),
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), ("y", "mn", "d")),
    (re.compile(r"(?<!\d)(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?!\d)"), ("ambiguous",)),
]
_MONTH_DAY = [
    (re.compile(rf"(?<![a-z0-9]){_DAY}\s+(?:of\s+)?{_MONTH}(?![a-z0-9])"), ("d", "m")),
    (re.compile(rf"(?<![a-z0-9]){_MONTH}\s+{_DAY}(?![0-9])"), ("m", "d")),
]
_RELATIVE_DATE = re.compile(
    r"\b(today|tomorrow|yesterday|tonight|next|last|this|coming|end of|start of|beginning of|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|quarter|year)\b"
)
# numbers said as words (up to twenty, and a few idioms)
NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"a dozen": 12, "dozen": 12, "a couple": 2, "a pair": 2, "single": 1}
_NUMBER_TOKEN = re.compile(r"(?<![A-Za-z0-9.])(-?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_DECIMAL_COMMA = re.compile(r"(?<![A-Za-z0-9.,])(\d+),(\d{1,2})(?![\d,])")


def _flat(text: str) -> str:
    return " ".join(text.casefold().split())


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def date_spans(text: str) -> list[tuple[int, int, frozenset[dt.date]]]:
    """Each calendar date written explicitly in `text` (ISO, written-month or numeric forms): its span in
    `text.casefold()` and the dates it may denote. A numeric d/m/y form is read both ways (day-first
    and month-first), so it may denote two."""
    found: list[tuple[int, int, frozenset[dt.date]]] = []
    low = text.casefold()
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(low):
            groups = m.groups()
            candidates: list[tuple[int, int, int]] = []
            if order == ("ambiguous",):
                a, b, y = int(groups[0]), int(groups[1]), int(groups[2])
                candidates = [(y, b, a), (y, a, b)]
            else:
                parts = dict(zip(order, groups))
                month = _MONTHS[parts["m"]] if "m" in parts else int(parts["mn"])
                candidates = [(int(parts["y"]), month, int(parts["d"]))]
            days = set()
            for y, mo, d in candidates:
                try:
                    days.add(dt.date(y, mo, d))
                except ValueError:
                    continue
            if days:
                found.append((m.start(), m.end(), frozenset(days)))
    return found


def _dates_in(text: str) -> set[dt.date]:
    """Calendar dates written explicitly in `text` (`date_spans`): an ambiguous form counts as a mention of either date."""
    return {day for _, _, days in date_spans(text) for day in days}


def month_day_spans(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """Each day written with its month and no year ("March 4", "4th of March", "Mar 4"): its span in
    `text.casefold()` and (month, day). A date with its year (`date_spans`) is read by that first."""
    out = []
    for pattern, order in _MONTH_DAY:
        for m in pattern.finditer(text.casefold()):
            parts = dict(zip(order, m.groups()))
            if 1 <= int(parts["d"]) <= 31:
                out.append((m.start(), m.end(), (_MONTHS[parts["m"]], int(parts["d"]))))
    return out


def number_spans(text: str) -> list[tuple[int, int, float]]:
    """Each number written in digits in `text` (1,250 / 12.50 / -40; the '-' of MAT-10442 is not a
    sign): its span in `text.casefold()` and its value."""
    return [(m.start(), m.end(), float(m.group(1) + m.group(2).replace(",", "")))
            for m in _NUMBER_TOKEN.finditer(text.casefold())]


def _numbers_in(text: str) -> list[float]:
    low = text.casefold()
    out = [value for _, _, value in number_spans(text)]
    out += [float(f"{a}.{b}") for a, b in _DECIMAL_COMMA.findall(low)]
    flat = f" {_flat(re.sub(r'[^a-z ]', ' ', low))} "
    out += [float(v) for w, v in NUMBER_WORDS.items() if f" {w} " in flat]
    return out


def _mentioned_date(iso: str, text: str) -> Mention:
    try:
        day = dt.date.fromisoformat(iso[:10])
    except ValueError:
        return "absent" if _flat(iso) not in _flat(text) else "found"
    if day in _dates_in(text):
        return "found"
    return "unverifiable" if _RELATIVE_DATE.search(text.casefold()) else "absent"


def _mentioned_string(value: str, text: str) -> Mention:
    flat_value, flat_text = _flat(value), _flat(text)
    if not flat_value or flat_value in flat_text:
        return "found"
    squeezed = _alnum(value)
    if any(c.isdigit() for c in squeezed) and len(squeezed) >= 4 and squeezed in _alnum(text):
        return "found"  # "MAT 10442" or "mat10442" for MAT-10442
    value_words = re.findall(r"[a-z0-9]+", flat_value)
    if len(value_words) >= 3:
        text_words = set(re.findall(r"[a-z0-9]+", flat_text))
        if sum(w in text_words for w in value_words) / len(value_words) >= 0.5:
            return "unverifiable"  # free text the assistant may have tidied up
    return "absent"


def mentioned(value: Any, schema: Schema | None, text: str) -> Mention:
    """Whether the user's `text` states `value`: found, absent (hallucinated) or unverifiable.

    Rules, chosen so that "absent" is only said when a mention would have to be visible:
    * None, "" and booleans: unverifiable (yes/no answers carry no literal to look for)
    * enums: found if the code appears literally (or with _ / - read as spaces), else
      unverifiable: users describe an enum member in their own words
    * integers/numbers: found if the number appears as digits (1,250 / 12,5 / 12.50 / -40
      read too; the '-' of MAT-10442 is not a sign) or as a word up to twenty; a negative
      value said without its sign is unverifiable ("reduce by 40"); else absent
    * dates and date-times: found if the calendar date appears in ISO, "4 March 2026",
      "March 4, 2026" or d/m/y-m/d/y form (the time of day is not checked); else
      unverifiable when the user used a relative date ("next Friday"), else absent
    * other strings: found on case-insensitive containment, or for identifiers with
      digits on containment ignoring punctuation and spaces; free text of three or
      more words half of whose words appear is unverifiable (paraphrase); else absent
    * arrays and objects: every element checked; absent if any is, unverifiable if any is
    """
    schema = schema or {}
    if value is None or value == "" or isinstance(value, bool):
        return "unverifiable"
    if "enum" in schema:
        code = _flat(str(value))
        flat_text = _flat(text)
        variants = {code, code.replace("_", " "), code.replace("-", " ")}
        return "found" if any(v in flat_text for v in variants) else "unverifiable"
    if isinstance(value, list | tuple):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return _combine([mentioned(v, items, text) for v in value])
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return _combine([mentioned(v, props.get(k) or {}, text) for k, v in value.items()])
    kinds = schema_types(schema)
    if "string" not in kinds and {"integer", "number"} & set(kinds) and isinstance(value, str):
        value = normalise(value, schema)  # "250" under an integer schema is the number 250
    if isinstance(value, int | float) and not isinstance(value, bool) and "string" not in kinds:
        said = _numbers_in(text)
        if any(math.isclose(n, float(value), abs_tol=1e-9) for n in said):
            return "found"
        if value < 0 and any(math.isclose(n, -float(value), abs_tol=1e-9) for n in said):
            return "unverifiable"  # the sign may be in words: "reduce by 40", "down 40"
        return "absent"
    fmt = schema.get("format")
    if fmt in ("date", "date-time") and isinstance(value, str):
        return _mentioned_date(value.strip(), text)
    return _mentioned_string(str(value), text)


def _combine(results: list[Mention]) -> Mention:
    if "absent" in results:
        return "absent"
    return "unverifiable" if "unverifiable" in results else "found"
