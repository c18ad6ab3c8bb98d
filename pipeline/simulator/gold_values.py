"""Schema-driven gold values, and how a value is said and read back.

Used by the offline slot generator (values that validate against each parameter's schema and
fit its meaning and the persona's world, on any catalog) and by the offline user and assistant,
which say values under a spoken label and read them back losslessly (`say_value` / `read`).

Numbers: whole numbers for counts, pages, limits, offsets, numbers and ids even when typed
`number`; ranges by meaning (a page is small, a limit a round size) within the schema's bounds.
Strings: the persona's own attributes where the key names one, the schema's pattern where it
has one, else a value by meaning (`value_text`).

Values are said under the labels of `pipeline.dialogue.parameter_labels`.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from ..core.records import Persona, Tool
from ..dialogue.parameter_labels import spoken_key
from ..dialogue.values import WHOLE_WORDS as WHOLE
from ..dialogue.values import implausible
from . import value_text

TRIES = 6  # draws of a string value before the last one is kept, plausible or not
CURRENCIES = ["EUR", "USD", "GBP", "JPY", "CHF", "INR", "BRL", "SGD", "AUD", "CAD", "ZAR", "AED"]
COUNTRIES = ["DE", "US", "GB", "JP", "CH", "IN", "BR", "SG", "AU", "CA", "ZA", "AE", "FR", "MX"]
_PATTERN_TOKEN = re.compile(r"\[(A-Z|0-9|A-Z0-9|a-z|a-z0-9|A-Za-z0-9)\](?:\{(\d+)\})?|([A-Za-z0-9_\- ./:@])(?:\{(\d+)\})?")
_CLASSES = {"A-Z": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0-9": "0123456789", "a-z": "abcdefghijklmnopqrstuvwxyz"}


class UnsupportedSchema(ValueError):
    """The schema asks for something the offline generator cannot produce."""


def from_pattern(pattern: str, rng: random.Random) -> str:
    """A string matching an anchored pattern of literals and [A-Z]/[0-9]-style classes with {n}."""
    body = pattern.removeprefix("^").removesuffix("$")
    out, pos = [], 0
    while pos < len(body):
        m = _PATTERN_TOKEN.match(body, pos)
        if not m:
            raise UnsupportedSchema(f"pattern {pattern!r} uses syntax beyond literals and simple classes")
        cls, cls_n, lit, lit_n = m.groups()
        if cls:
            alphabet = "".join(_CLASSES[c] for c in re.findall(r"A-Z|a-z|0-9", cls))
            out.extend(rng.choice(alphabet) for _ in range(int(cls_n or 1)))
        else:
            out.append(lit * int(lit_n or 1))
        pos = m.end()
    return "".join(out)



# ---- numbers ----------------------------------------------------------------------------------------

def _bounds(schema: dict, lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] narrowed to the schema's minimum/maximum (exclusive ones too), never empty."""
    smin, smax = schema.get("minimum"), schema.get("maximum")
    xmin, xmax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(xmin, int | float) and not isinstance(xmin, bool):
        smin = xmin + 1 if smin is None else max(smin, xmin + 1)
    if isinstance(xmax, int | float) and not isinstance(xmax, bool):
        smax = xmax - 1 if smax is None else min(smax, xmax - 1)
    if smin is not None:
        lo = max(lo, float(smin))
        hi = max(hi, lo)
    if smax is not None:
        hi = min(hi, float(smax))
        lo = min(lo, hi)
    return lo, hi


def _key_words(key: str) -> set[str]:
    """The key's spoken words, a trailing number dropped ('point1' is a point, 'side2' a side)."""
    return {re.sub(r"\d+$", "", w) for w in spoken_key(key).split()}


def _whole(key: str, schema: dict, rng: random.Random) -> int:
    ws = _key_words(key)
    if "year" in ws:
        lo, hi = _bounds(schema, 2024, 2027)
    elif "years" in ws:  # a span in years: 419 is nobody's plan
        lo, hi = _bounds(schema, 1, 30)
    elif "age" in ws:
        lo, hi = _bounds(schema, 1, 70)
    elif ws & {"percent", "percentage", "pct", "volume"}:
        lo, hi = _bounds(schema, 1, 100)
    elif "month" in ws:
        lo, hi = _bounds(schema, 1, 12)
    elif ws & {"ms", "millis", "milliseconds"}:  # a time said in milliseconds: whole seconds, as a person picks it
        lo, hi = _bounds(schema, 1000, 600000)
        seconds = [v for v in range(1000, 600001, 1000) if lo <= v <= hi]
        if seconds:
            return rng.choice(seconds)
    elif ws & {"page", "pages"} and not ws & {"per", "size"}:
        lo, hi = _bounds(schema, 1, 5)
    elif ws & {"limit", "per", "size", "top", "take", "first", "last", "results", "k", "n"}:
        lo, hi = _bounds(schema, 5, 100)
        rounds = [v for v in (5, 10, 20, 25, 50, 100) if lo <= v <= hi]
        if rounds:
            return rng.choice(rounds)
    elif ws & {"offset", "skip"}:
        lo, hi = _bounds(schema, 0, 200)
        tens = [v for v in range(0, 201, 10) if lo <= v <= hi]
        if tens:
            return rng.choice(tens)
    elif ws & {"day", "night", "nights", "days", "quantity", "qty", "count", "seats", "guests", "attendees",
               "units", "headcount", "retries", "attempts", "depth", "level", "floor", "rank", "position",
               "passengers", "people", "persons", "adults", "children", "travelers", "travellers", "players",
               "tickets", "rooms", "bedrooms", "bathrooms", "beds"}:
        lo, hi = _bounds(schema, 1, 12)
    elif ws & {"id", "ids"}:
        lo, hi = _bounds(schema, 10000, 9999999)
    elif ws & {"trials", "successes", "tries", "samples", "draws"}:  # counts someone works out by hand
        lo, hi = _bounds(schema, 1, 60)
    elif ws & {"number", "num", "no"}:
        lo, hi = _bounds(schema, 1, 3000)
    else:
        lo, hi = _bounds(schema, 1, 500)
    value = rng.randint(int(-(-lo // 1)), max(int(-(-lo // 1)), int(hi // 1)))
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step and float(step).is_integer():
        value = max(int(step), value - value % int(step))
    return value


def _number(key: str, schema: dict, rng: random.Random) -> float:
    ws = _key_words(key)
    if "latitude" in ws or "lat" in ws:
        lo, hi, places = *_bounds(schema, -60, 65), 4
    elif ws & {"longitude", "lng", "lon"}:
        lo, hi, places = *_bounds(schema, -150, 150), 4
    elif ws & {"point", "points", "coordinate", "coordinates", "x", "y", "z"}:  # a point on a plot, not 4641.02
        lo, hi, places = *_bounds(schema, -20, 20), 1
    elif ws & {"return", "yield", "growth", "inflation"}:  # a yearly return in percent, as people expect one
        lo, hi, places = *_bounds(schema, 1, 12), 1
    elif ws & {"percent", "percentage", "pct", "rate", "ratio", "share"}:
        lo, hi, places = *_bounds(schema, 1, 60), 1
    elif ws & {"rating", "score"}:
        lo, hi, places = *_bounds(schema, 1, 5), 1
    elif ws & {"salary", "income", "wage", "compensation"}:  # a year's pay, in round hundreds
        lo, hi = _bounds(schema, 28000, 160000)
        return float(min(max(round(rng.uniform(lo, hi), -2), lo), hi))
    else:
        lo, hi, places = *_bounds(schema, 10, 5000), 2
    value = round(rng.uniform(lo, hi), places)
    return min(max(value, lo), hi)


# ---- strings ----------------------------------------------------------------------------------------

BY_ATTRIBUTE = {"currency": "currency", "country_code": "country", "country": "country", "city": "city",
                "timezone": "timezone", "department": "department", "company": "company",
                "cost_center": "cost_center", "employee_id": "employee_id"}


def _fits(value: str, schema: dict) -> bool:
    pattern = schema.get("pattern")
    return not pattern or re.search(str(pattern), value) is not None


def _string(key: str, schema: dict, persona: Persona, rng: random.Random, tool: Tool | None) -> str:
    attrs = persona.attributes
    k = key.lower()
    if k.endswith("_currency") or k.endswith("_country_code"):
        # a pair (from/to, base/quote, origin/destination): vary it, keep one side the persona's
        pool = CURRENCIES if k.endswith("currency") else COUNTRIES
        own = attrs.get("currency" if k.endswith("currency") else "country")
        if own and k.startswith(("from", "base", "origin", "home", "source")):
            return own
        return rng.choice([c for c in pool if c != own])
    attr = BY_ATTRIBUTE.get(k)
    if attr and attrs.get(attr) and _fits(str(attrs[attr]), schema):
        return str(attrs[attr])
    meant = value_text.string_value(key, schema, persona, rng, tool)
    if not schema.get("pattern") or _fits(meant, schema):
        return meant
    pattern = str(schema["pattern"]).removeprefix("^").removesuffix("$")
    if re.fullmatch(r"(\[0-9\]\{4\}|\\d\{4\})-(\[0-9\]\{2\}|\\d\{2\})", pattern):
        return f"{rng.randint(2026, 2027)}-{rng.randint(1, 12):02d}"  # a year-month, not any six digits
    if re.fullmatch(r"(\[0-9\]\{4\}|\\d\{4\})", pattern):
        return str(rng.randint(2025, 2027))
    return from_pattern(str(schema["pattern"]), rng)


def _sized(value: str, schema: dict, key: str, persona: Persona, rng: random.Random, tool: Tool | None) -> str:
    lo, hi = schema.get("minLength"), schema.get("maxLength")
    if hi is not None and len(value) > int(hi):
        value = value[: int(hi)].rstrip(" -_/,.")
    if lo is not None and len(value) < int(lo):
        words_of = " ".join(value_text.meaning_words(key, schema) + value_text.domain_words(tool)) or "detail"
        value = (value + " " + words_of)[: int(hi) if hi is not None else None].rstrip(" -_/,.")
    return value


def _kind(schema: dict) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "string")
    return kind


# a list whose description says how many it holds
_COUNTS = {"two": 2, "both": 2, "pair": 2, "three": 3}
_COUNTED = re.compile(r"\b(two|both|pair|three)\b(?: of)?(?: the)? \w+s\b", re.IGNORECASE)


def gold_value(key: str, schema: dict, persona: Persona, rng: random.Random, tool: Tool | None = None) -> Any:
    """One value for parameter `key` that validates against `schema` and fits its meaning;
    `tool` (name, description) gives free text its domain words."""
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = _kind(schema)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer" or (kind == "number" and set(spoken_key(key).split()) & WHOLE):
        return _whole(key, schema, rng)
    if kind == "number":
        return _number(key, schema, rng)
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        # an item says what it holds by the list's words when it has none of its own
        item_schema = {**{k: schema[k] for k in ("title", "description") if schema.get(k)}, **items}
        n = rng.randint(max(1, schema.get("minItems", 1)), max(1, min(schema.get("maxItems", 3), 3)))
        if said := _COUNTED.search(str(schema.get("description") or "")):  # 'the two teams who played'
            n = _COUNTS[said.group(1).lower()]
        values: list[Any] = []
        for _ in range(n * 4):
            v = gold_value(key.removesuffix("s"), item_schema, persona, rng, tool)
            if v not in values and not (isinstance(v, str) and re.search(r",| and ", v)):
                values.append(v)
            if len(values) == n:
                break
        return values
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: gold_value(k, s, persona, rng, tool) for k, s in props.items() if k in (schema.get("required") or [])}
    if kind in (None, "string"):
        context = tool.description if tool else ""  # the validator also reads the name: a stricter test
        for _ in range(TRIES):  # a draw the plausibility rule would refuse is drawn again
            value = _sized(" ".join(_string(key, schema, persona, rng, tool).split()), schema, key, persona, rng, tool)
            if implausible(key, value, schema, context) is None:
                break
        return value
    raise UnsupportedSchema(f"parameter '{key}': type {kind!r}")


def _number_like(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _iso_date(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?", value) is not None


# pairs of keys whose values stand in an order: the first no more than the second
_ORDERED = [("min", "max"), ("minimum", "maximum"), ("lower", "upper"), ("start", "end"), ("from", "to"), ("low", "high"),
            ("since", "until"), ("after", "before")]
# a count that is part of another ('number of successes' of 'number of trials')
_PART_OF = {"successes": "trials"}


def consistent(args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """`args` with numbers in the order their keys state: a part no more than its `total` ('desired_cards' of
    'total_cards'), a `min` or `lower` bound below its `max` or `upper` one."""
    words = {k: spoken_key(k).split() for k in args}
    for k, ws in words.items():
        total = args[k]
        if "total" not in ws or not isinstance(total, int) or total < 1:
            continue
        for other, ows in words.items():
            if other != k and isinstance(args[other], int) and set(ows) & (set(ws) - {"total"}) and args[other] > total:
                args[other] = rng.randint(1, total)  # 'desired cards' of 43 'total cards'
    for k, ws in words.items():
        whole = next((o for o in args for part in ws if _PART_OF.get(part) in words[o]), None)
        if whole and isinstance(args[k], int) and isinstance(args[whole], int) and 1 <= args[whole] < args[k]:
            args[k] = rng.randint(1, args[whole])  # 1,033 successes of 116 trials
    numbers = [k for k in args if _number_like(args[k]) or _iso_date(args[k])]  # a 'from' date before its 'to' date
    for a, b in ((a, b) for a in numbers for b in numbers if a != b):
        for low, high in _ORDERED:  # 'min_price' and 'max_price': the same words but the pair's
            same = [w for w in words[a] if w != low] == [w for w in words[b] if w != high]
            if low in words[a] and high in words[b] and same and _number_like(args[a]) == _number_like(args[b]) \
                    and args[a] > args[b]:
                args[a], args[b] = args[b], args[a]
    return args


def say_value(value: Any) -> str:
    """How a user says a value; `read` inverts it for every generated value."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [say_value(v) for v in value]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def spoken_option(value: Any, schema: dict) -> Any:
    """An option of the schema's enum as a person says it ('ergonomic chair' of 'ergonomic_chair');
    `read` takes it back to the option. Any other value as it is."""
    if isinstance(value, str) and value in (schema.get("enum") or []) and re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)+", value):
        return value.replace("_", " ")
    return value


def read(text: str, schema: dict) -> Any:
    """Parses a spoken value back to the schema's type; returns the text when it cannot."""
    text = text.strip().strip('"').strip()
    options = [o for o in schema.get("enum") or [] if isinstance(o, str)]
    if text not in options:  # an option said in words ('ergonomic chair'): the option it names
        text = next((o for o in options if o.replace("_", " ").lower() == text.lower()), text)
    kind = _kind(schema)
    try:
        if kind == "boolean":
            low = text.lower()
            if low in ("yes", "true", "y"):
                return True
            if low in ("no", "false", "n"):
                return False
            return text
        if kind == "integer":
            return int(text.replace(",", ""))
        if kind == "number":
            number = float(text.replace(",", ""))
            return int(number) if number.is_integer() else number
        if kind == "object" and text.startswith("{"):
            parsed = json.loads(text)
            return parsed if isinstance(parsed, dict) else text
        if kind == "array":
            items = [p for p in re.split(r",\s*|\s+and\s+", text) if p]
            return [read(p, schema.get("items") or {"type": "string"}) for p in items]
    except ValueError:
        return text
    return text
