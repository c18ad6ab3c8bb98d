"""The values a text states: what an answer says that a tool result, the user or a call must have given.

`stated(text)` reads, each span once and in this order: quoted text ("...", '...', `...`, curly
quotes), URLs and e-mail addresses, dates (`mentions.date_spans`), times of day and durations
("14:30", "2:30 pm", "3:35"), days without a year ("March 4"), codes (`text.codes`: a token holding a digit, a mixed-case id; one
that is a number, "$1,200.50", "45%", "1.2k", "#412", is a number), the number words two to twenty,
and names (a capitalised word, or a run of them, inside a sentence).

Words that count or point rather than state a fact are not read, so natural text passes:
* 0 and 1 ("one of them", "1 result"), "zero", "one", and idioms ("a couple", "a dozen");
* list markers ("1." or "2)" at the start of a line) and ordinals ("1st", "2nd");
* a number after a word that points into a list ("the top 5", "the first 3", "item 2", "#2") is
  marked `position`: it needs no source when it is within the longest list of the results;
* a capitalised word that starts a sentence, a line, a list item or follows a colon (it may be
  capitalised for that alone), "I" and its contractions, courtesy words, weekdays and months,
  and words in capitals (acronyms: "API", "PR").
A number after "about", "around", "roughly", "nearly", "almost", "over", "under", "some" or "~" is
`approximate`; a number matches a source rounded to the digits it is written with (`tolerance`:
4.6 for 4.57, 1.3k for 1,284, 72% for 0.7249).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ..core.text import codes
from .mentions import NUMBER_WORDS, date_spans, month_day_spans, number_spans

Kind = Literal["quoted", "code", "date", "time", "number", "name"]


@dataclass(frozen=True)
class Stated:
    """One value a text states: its kind, its text as written, its value (a float; for a date the dates it may
    denote, or (month, day) pairs when written without a year; (hour, minute) for a time)."""

    kind: Kind
    text: str
    value: Any
    start: int
    position: bool = False
    percent: bool = False
    approximate: bool = False
    tolerance: float = 0.0  # half a unit of the last digit written: a source rounded to it matches


_QUOTED = re.compile(r"“([^”\n]{2,150})”|‘([^’\n]{2,150})’|\"([^\"\n]{2,150})\"|`([^`\n]{2,150})`"
                     r"|(?<![A-Za-z0-9])'([^'\n]{2,150}?)'(?![A-Za-z0-9])")
_ADDRESS = re.compile(r"https?://[^\s)\]>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_TIME = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*([ap])\.?m\b\.?)?(?![\d:])"
                   r"|(?<![\d:.])(\d{1,2})\s*([ap])\.?m\b\.?")
_NUMBER = re.compile(r"^(?:[#$€£¥+]|us\$)?([-−]?\d[\d,]*(?:\.\d+)?)(%|k|m|bn|°?[a-z]{1,5}|°)?$", re.I)
# numbers joined by a range or a slash ("8–11", "+1,240/−310"): each one read on its own
_JOINED = re.compile(r"[+\-−]?[$€£]?\d[\d.,]*%?(?:[–—/\-−]+[+\-−]?[$€£]?\d[\d.,]*%?)+")
_PART = re.compile(r"[$€£]?\d[\d.,]*%?")
_ORDINAL = re.compile(r"^\d+(st|nd|rd|th)$", re.I)
_NAME = re.compile(r"(?<![\w'’])[A-Z][A-Za-z]*[a-z][A-Za-z]*(?:['’]s)?(?![\w])")
_STRIP = "([{\"'*_“‘<–—"
_STRIP_END = ".,;:!?)]}\"'*_”’>"
_POINTING = {"top", "first", "last", "item", "items", "number", "no", "position", "rank", "step", "option",
             "#", "entry", "result", "page"}
_ROUGHLY = {"about", "around", "roughly", "approximately", "nearly", "almost", "over", "under", "some", "~",
            "approx", "circa", "than"}
_COUNTING = {w: v for w, v in NUMBER_WORDS.items() if " " not in w and 2 <= v <= 20 and w != "dozen"}
_NOT_NAMES = frozenset(
    "i i'm i've i'll i'd ok okay sure yes no hi hello hey thanks thank please sorry great done here "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december jan feb mar apr jun jul aug sep sept oct nov dec".split())
_STARTS = ".!?:;\n-*•>#|(\"“'‘[=+"
_INSIDE = ",)’'”\"&/]"  # marks after which a sentence goes on


def times_in(text: str) -> set[tuple[int, int]]:
    """(hour, minute) of each time or duration written in `text` ("14:30", "2:30 pm", "3 pm", "3:35")."""
    return {t for _, _, t in _times(text)}


def _times(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    out = []
    for m in _TIME.finditer(text.casefold()):
        hour, minute, half = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), "0", m.group(5))
        h, mi = int(hour), int(minute)
        if half == "p" and h < 12:
            h += 12
        elif half == "a" and h == 12:
            h = 0
        out.append((m.start(), m.end(), (h, mi)))
    return out


def _fold(text: str) -> str:
    """`text` case-folded character by character, so every span in it is a span in `text`."""
    return "".join(c.casefold() if len(c.casefold()) == 1 else c for c in text)


class _Reader:
    """The text with the spans read so far blanked, so each span is read once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.left = list(text)
        self.found: list[Stated] = []

    @property
    def rest(self) -> str:
        """The text with every span read so far blanked (offsets kept)."""
        return "".join(" " if c == "\0" else c for c in self.left)

    def take(self, start: int, end: int, value: Stated | None) -> None:
        if any(c == "\0" for c in self.left[start:end]):
            return
        self.left[start:end] = ["\0"] * (end - start)
        if value is not None:
            self.found.append(value)

    def words_before(self, start: int, n: int = 2) -> list[str]:
        return re.findall(r"[a-z~#]+", self.text[max(0, start - 30):start].casefold())[-n:]

    def line_start(self, start: int) -> bool:
        return not self.text[self.text.rfind("\n", 0, start) + 1:start].strip()


def _number(reader: _Reader, start: int, token: str) -> Stated | None:
    """A code that is a number ("$1,200.50", "45%", "1.2k", "#412") as a stated number; None when it
    counts or points (0, 1, a list marker, an ordinal)."""
    m = _NUMBER.match(token)
    if _ORDINAL.match(token):
        return None
    if not m or not (spans := number_spans(m.group(1))):
        return None
    value, suffix = spans[0][2], (m.group(2) or "").casefold()
    scale = {"k": 1e3, "bn": 1e9}.get(suffix, 1e6 if m.group(2) == "M" else 1.0)
    before = reader.words_before(start)
    percent, position = suffix == "%", token.startswith("#") or bool(set(before[-1:]) & _POINTING)
    if value in (0, 1) and not percent:
        return None
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    return Stated("number", token, value * scale, start, position=position, percent=percent,
                  approximate=bool(set(before) & _ROUGHLY), tolerance=0.5 * 10 ** -decimals * scale)


def _codes(reader: _Reader) -> None:
    for m in codes(reader.rest):
        start, token = m.start(), m.group(0)
        while token and token[0] in _STRIP:
            token, start = token[1:], start + 1
        if reader.line_start(start) and re.fullmatch(r"\d+[.)]", token):
            reader.take(start, start + len(token), None)  # a list marker
            continue
        token = token.rstrip(_STRIP_END)
        if not token:
            continue
        if _JOINED.fullmatch(token):
            for part in _PART.finditer(token):
                at, text = start + part.start(), part.group(0).rstrip(".,")
                reader.take(at, at + len(text), _number(reader, at, text))
            reader.take(start, start + len(token), None)
            continue
        if (any(c.isdigit() for c in token) and _NUMBER.match(token)) or _ORDINAL.match(token):
            reader.take(start, start + len(token), _number(reader, start, token))
        else:
            reader.take(start, start + len(token), Stated("code", token, token, start))


def _sentence_start(text: str, start: int) -> bool:
    """Whether a word at `start` may be capitalised for its place alone: nothing before it on its line but a
    list marker, or a mark that ends or opens a sentence, a list item or a heading (or an emoji) before it."""
    before = text[:start].rstrip(" \t")
    if not before or re.search(r"(?:^|\n)\s*\d+[.)]$", before):
        return True
    return before[-1] in _STARTS or not (before[-1].isalnum() or before[-1] in _INSIDE)


def _names(reader: _Reader) -> None:
    rest, run = reader.rest, []
    for m in _NAME.finditer(rest):
        word = re.sub(r"['’]s$", "", m.group(0))
        skip = word.casefold() in _NOT_NAMES or _sentence_start(rest, m.start())
        if run and not skip and rest[run[-1][1]:m.start()] == " ":
            run.append((m.start(), m.start() + len(word)))
            continue
        _name(reader, run)
        run = [] if skip else [(m.start(), m.start() + len(word))]
    _name(reader, run)


def _name(reader: _Reader, run: list[tuple[int, int]]) -> None:
    if run:
        start, end = run[0][0], run[-1][1]
        reader.take(start, end, Stated("name", reader.text[start:end], reader.text[start:end], start))


def stated(text: str) -> list[Stated]:
    """Every value `text` states, in the order of the module docstring (each span read once)."""
    reader, fold = _Reader(text), _fold(text)
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None)
        reader.take(m.start(), m.end(), Stated("quoted", inner.strip(), inner.strip(), m.start()))
    for m in _ADDRESS.finditer(reader.rest):
        token = m.group(0).rstrip(_STRIP_END)
        reader.take(m.start(), m.start() + len(token), Stated("code", token, token, m.start()))
    for start, end, days in date_spans(fold):
        reader.take(start, end, Stated("date", text[start:end], days, start))
    for start, end, month_day in month_day_spans(fold):
        reader.take(start, end, Stated("date", text[start:end], frozenset({month_day}), start))
    for start, end, hm in _times(_fold(reader.rest)):
        reader.take(start, end, Stated("time", text[start:end], hm, start))
    _codes(reader)
    for m in re.finditer(r"[a-z]+", _fold(reader.rest)):
        if m.group(0) in _COUNTING:
            reader.take(m.start(), m.end(), Stated("number", m.group(0), float(_COUNTING[m.group(0)]), m.start(),
                                                   approximate=bool(set(reader.words_before(m.start())) & _ROUGHLY)))
    _names(reader)
    return sorted(reader.found, key=lambda s: s.start)
