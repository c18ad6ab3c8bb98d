"""Whether a parameter value could be right, and whether the user made it up: pure functions on
values, strings and schemas, shared (like `shortcuts`) by the rule validators and the offline backend.

* implausible values (`implausible`): a value that its schema or its parameter's name says cannot
  be right (a year far from today, a date outside PLAUSIBLE_DATES, a month 13, a phone number
  without digits, a surname of two unrelated words, a negative amount, ...);
* shared values (`shared_values`): one string given to two or more parameters;
* invented values (`invented_values`): a number of 3+ digits, an ISO date, an e-mail address or a
  code with digits that a user says although the text it was given does not hold it (digits said
  with other separators, "1,250.50" for 1250.5 or "04/03/2026" for 2026-03-04, count as given;
  short numbers such as the parts of a time of day are not checked).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import jsonschema

from ..core.text import STOP, split_words, stem
from .person_names import looks_like_person_name, means_person

PLAUSIBLE_YEARS = (2015, 2032)
PLAUSIBLE_DATES = (dt.date(2015, 1, 1), dt.date(2032, 12, 31))
BIRTH_DATES = (dt.date(1900, 1, 1), dt.date(2025, 12, 31))  # a person's date of birth: never in the future
BIRTH_WORDS = frozenset({"birth", "birthday", "birthdate", "dob", "born"})
NAME_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "la", "le", "du", "dos",
                  "das", "al", "el", "bin", "ibn", "ter", "st", "mac", "o"}

# words of a key that make its number a whole one, whatever the schema's type says
WHOLE_WORDS = frozenset(
    "id ids number num no count page pages limit per offset index idx quantity qty seats nights guests attendees "
    "headcount units rank position top results items year month day days week weeks age level port floor retries "
    "attempts depth size k n skip take first last".split()
)
# head words of a key whose value is an identifier-like token (a handle, a slug, a path, an address), never a phrase
SHAPED = frozenset(
    "owner user username login org organization organisation handle repo repository branch ref path filepath "
    "filename file dir directory folder url uri link href email sha hash uuid guid id ids slug sku".split()
)
# head words of a key whose value is a search made of words about the tool or parameter
SEARCH = frozenset("q query search keyword keywords term terms".split())
_PHRASE = re.compile(r"[^\W\d_]+(?:[ ,'’-]+[^\W\d_]+)+")
_PHONE = re.compile(r"^\+?[0-9][0-9 ().\-]{5,20}[0-9]$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def _parse_date(value: str) -> dt.date | None:
    m = _DATE.match(value)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def schema_fault(value: Any, schema: dict) -> str | None:
    """The first way `value` breaks its schema (enum, bounds, pattern, length, type, format), or None."""
    if not schema:
        return None
    try:
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        error = next(iter(validator.iter_errors(value)), None)
    except (jsonschema.SchemaError, re.error, TypeError):
        return None
    if error is not None:
        return f"breaks its schema: {error.message}"
    if schema.get("format") in ("uri", "url") and isinstance(value, str) and not re.match(r"^[a-z][a-z0-9+.-]*://[^\s/]+", value):
        return f"'{value}' is not a URL"
    return None


def _item_schema(schema: dict) -> dict:
    """An array's item schema, carrying the array's description when the items have none."""
    items = dict(schema.get("items") or {})
    if schema.get("description") and not items.get("description"):
        items["description"] = schema["description"]
    return items


def _stems(text: str) -> set[str]:
    """Stems of content words, identifiers split and whole ("GitHub" gives git, hub and github)."""
    ws = split_words(text) + re.findall(r"[a-z0-9]+", text.lower())
    return {stem(w) for w in ws if w not in STOP and len(w) > 2}


def _text_fault(key: str, text: str, schema: dict, context: str) -> str | None:
    """A string value that is not about its parameter: a person's name for a thing, a phrase of
    words for an identifier-like key, a search sharing no word with what it searches."""
    ws = split_words(key)
    description = str(schema.get("description") or "")
    if looks_like_person_name(text) and not means_person(key, description) and "phone" not in ws:
        return f"'{text}' is a person's name, but '{key}' is not about a person"
    head = ws[-2] if len(ws) >= 2 and ws[-1] == "name" else ws[-1] if ws else ""
    if head in SHAPED and " " in text and (_PHRASE.fullmatch(text) or len(text.split()) >= 4) and not (means_person(key, description) and looks_like_person_name(text)):
        article = "an" if head[:1] in "aeiou" else "a"
        return f"'{text}' is a phrase of words, not {article} {head} ('{key}' takes a token without spaces)"
    if head in SEARCH or ws == ["q"]:
        about, said = _stems(f"{key} {description} {context}"), _stems(text)
        if len(about) >= 3 and said and not re.search(r"\d", text) and not said & about:
            return f"search '{text}' shares no word with the parameter or its tool"
    return None


def implausible(key: str, value: Any, schema: dict | None = None, context: str = "") -> str | None:
    """Why `value` cannot be right for parameter `key`, or None when nothing is wrong with it.
    `context` (the tool's name and description) lets a search be checked against its tool."""
    schema = schema or {}
    ws = split_words(key)
    if fault := schema_fault(value, schema):
        return fault
    if isinstance(value, list):
        return next((r for v in value if (r := implausible(key.removesuffix("s"), v, _item_schema(schema), context))), None)
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        return None
    if isinstance(value, int | float):
        if isinstance(value, float) and not value.is_integer() and (schema.get("type") == "integer" or WHOLE_WORDS & set(ws)):
            return f"{' '.join(ws)} {value} is not a whole number (a count, number or id)"
        if "year" in ws and not (PLAUSIBLE_YEARS[0] <= value <= PLAUSIBLE_YEARS[1]):
            return f"year {value} is outside {PLAUSIBLE_YEARS[0]}-{PLAUSIBLE_YEARS[1]}"
        if "month" in ws and not (1 <= value <= 12):
            return f"month {value} does not exist"
        if any(w in ws for w in ("amount", "price", "cost", "total", "budget", "salary", "quantity", "count",
                                 "days", "hours", "nights", "headcount", "seats", "units")) and value < 0 \
                and not any(w in ws for w in ("delta", "change", "adjustment", "difference", "variance")):
            return f"{' '.join(ws)} {value} is negative"
        if any(w in ws for w in ("percent", "percentage", "pct")) and not (0 <= value <= 100):
            return f"percentage {value} is outside 0-100"
        if any(w in ws for w in ("quantity", "headcount", "seats", "units", "nights", "guests", "attendees")) and value > 10000:
            return f"{' '.join(ws)} {value} is unrealistically large"
        return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return "empty value"
    fmt = schema.get("format")
    if fmt in ("date", "date-time") or (("date" in ws or BIRTH_WORDS & set(ws)) and _DATE.match(text)):
        d = _parse_date(text)
        if d is None:
            return f"'{text}' is not a real date"
        low, high = BIRTH_DATES if BIRTH_WORDS & set(ws) else PLAUSIBLE_DATES
        if not (low <= d <= high):
            return f"date {text} is outside {low} to {high}"
    if m := _YEAR_MONTH.match(text):
        year, month = int(m[1]), int(m[2])
        if not (PLAUSIBLE_YEARS[0] <= year <= PLAUSIBLE_YEARS[1]) or not 1 <= month <= 12:
            return f"'{text}' is not a plausible year-month"
    if "year" in ws and re.fullmatch(r"(FY)?\d{4}", text, re.IGNORECASE):
        year = int(text[-4:])
        if not (PLAUSIBLE_YEARS[0] <= year <= PLAUSIBLE_YEARS[1]):
            return f"year {text} is outside {PLAUSIBLE_YEARS[0]}-{PLAUSIBLE_YEARS[1]}"
    if (any(w in ws for w in ("phone", "mobile", "telephone", "fax")) and "id" not in ws
            and (not _PHONE.match(text) or sum(c.isdigit() for c in text) < 7)):
            return f"'{text}' is not a phone number"
    if ((fmt == "email" or "email" in ws)
            and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", text, re.IGNORECASE)):
            return f"'{text}' is not an email address"
    if "name" in ws and any(w in ws for w in ("first", "last", "given", "family", "surname")):
        parts = text.split()
        if not re.fullmatch(r"[^\W\d_][^\W\d_'’ .\-]*(?:[ '’.\-]+[^\W\d_]+)*\.?", text):
            return f"'{text}' is not a person's name"
        plain = [p for p in parts if p.lower() not in NAME_PARTICLES]
        if len(plain) > 1 and not any(p.lower() in NAME_PARTICLES for p in parts) and "-" not in text:
            return f"'{text}' is two names, not one {' '.join(ws)}"
    return _text_fault(key, text, schema, context)


def shared_values(args: dict[str, Any], schemas: dict[str, dict]) -> dict[str, list[str]]:
    """String value -> the 2+ parameters of `args` given that same value (parameters whose
    schema fixes the value, by enum or const, left out: a shared word there is the catalog's)."""
    by_value: dict[str, list[str]] = {}
    for k, v in args.items():
        schema = schemas.get(k) or {}
        if isinstance(v, str) and v.strip() and not schema.get("enum") and "const" not in schema:
            by_value.setdefault(v.strip().lower(), []).append(k)
    return {v: ks for v, ks in by_value.items() if len(ks) >= 2}


VALUE_LIKE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\b\d{4}-\d{2}-\d{2}\b|\b[A-Za-z]*-?\d[\w-]*\b")


def _value_digits(text: str) -> str:
    return re.sub(r"[^0-9a-z@.]", "", text.lower())


def invented_values(text: str, allowed: str) -> list[str]:
    """Value-like tokens of `text` (3+ digits, dates, e-mails, codes) that `allowed` does not contain."""
    known = _value_digits(allowed)
    plain = allowed.lower()
    out = []
    for token in VALUE_LIKE.findall(text):
        digits = re.sub(r"\D", "", token)
        if "@" not in token and len(digits) < 3:
            continue
        if token.lower() in plain or _value_digits(token) in known:
            continue
        # a number said with separators ("1,250") or a date said in parts is fine if its digits are known
        if digits and all(part in known for part in re.findall(r"\d{3,}", token)):
            continue
        out.append(token)
    return out
