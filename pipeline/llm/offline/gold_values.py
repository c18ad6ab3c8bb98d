"""Schema-driven value generation and the plain-language phrasing of values.

Used by the offline slot generator (persona-consistent values that validate against
each parameter's schema) and by the offline user and assistant, which must say and
read back values losslessly.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

FIRST = ["Amara", "Bjorn", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jonas",
         "Keiko", "Luis", "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rania", "Sven", "Tariq"]
LAST = ["Okafor", "Lindqvist", "Wei", "Haddad", "Novak", "Ibarra", "Tanaka", "Mensah", "Kowalski",
        "Fischer", "Rossi", "Khan", "Moreau", "Silva", "Dubois", "Larsen", "Patel", "Nakamura"]
PHRASES = ["quarterly planning offsite", "new hire onboarding", "customer escalation follow-up",
           "annual audit preparation", "vendor consolidation project", "regional sales kickoff",
           "system migration cutover", "compliance refresher", "budget reforecast", "site safety review",
           "product launch support", "contract renewal cycle", "peak season readiness", "team expansion"]
CURRENCIES = ["EUR", "USD", "GBP", "JPY", "CHF", "INR", "BRL", "SGD", "AUD", "CAD", "ZAR", "AED"]
COUNTRIES = ["DE", "US", "GB", "JP", "CH", "IN", "BR", "SG", "AU", "CA", "ZA", "AE", "FR", "MX"]
_PATTERN_TOKEN = re.compile(r"\[(A-Z|0-9|A-Z0-9|a-z|a-z0-9|A-Za-z0-9)\](?:\{(\d+)\})?|([A-Za-z0-9_\- ./:@])(?:\{(\d+)\})?")
_CLASSES = {"A-Z": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0-9": "0123456789", "a-z": "abcdefghijklmnopqrstuvwxyz"}


class UnsupportedSchema(ValueError):
    """The schema asks for something the offline generator cannot produce."""


def words(key: str) -> str:
    """`po_number` -> `po number`: how people say a parameter name."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").lower().strip()


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


def _date(rng: random.Random) -> dt.date:
    return dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 540))


def _string(key: str, schema: dict, persona: dict, rng: random.Random) -> str:
    attrs = persona.get("attributes") or {}
    fmt = schema.get("format")
    k = key.lower()
    if fmt == "date":
        return _date(rng).isoformat()
    if fmt == "date-time":
        d = _date(rng)
        return f"{d.isoformat()}T{rng.choice([8, 9, 10, 11, 13, 14, 15, 16]):02d}:{rng.choice([0, 15, 30, 45]):02d}:00Z"
    if fmt == "email":
        company = re.sub(r"[^a-z]", "", (attrs.get("company") or "example").lower()) or "example"
        return f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}@{company}.com"
    by_attribute = {
        "currency": "currency", "country_code": "country", "country": "country", "city": "city",
        "timezone": "timezone", "department": "department", "company": "company",
        "cost_center": "cost_center", "employee_id": "employee_id",
    }
    if k.endswith("_currency") or k.endswith("_country_code"):
        # a pair (from/to, base/quote, origin/destination): vary it, keep one side the persona's
        pool = CURRENCIES if k.endswith("currency") else COUNTRIES
        own = attrs.get("currency" if k.endswith("currency") else "country")
        if own and k.startswith(("from", "base", "origin", "home", "source")):
            return own
        return rng.choice([c for c in pool if c != own])
    for suffix, attr in by_attribute.items():
        if k == suffix and attrs.get(attr):
            value = attrs[attr]
            if not schema.get("pattern") or re.fullmatch(schema["pattern"].strip("^$"), value):
                return value
    if schema.get("pattern"):
        return from_pattern(schema["pattern"], rng)
    if "name" in k:
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    if any(w in k for w in ("location", "site", "office", "address")):
        return f"{attrs.get('city', 'Head')} office, floor {rng.randint(1, 12)}"
    if k.endswith("id") or k.endswith("number") or k.endswith("code") or k.endswith("ref"):
        prefix = "".join(w[0] for w in words(key).split()[:-1]).upper() or "REF"
        return f"{prefix}-{rng.randint(10000, 99999)}"
    text = rng.choice(PHRASES)
    return text if "title" not in k else text.title()


def generate(key: str, schema: dict, persona: dict, rng: random.Random) -> Any:
    """One value for parameter `key` that validates against `schema`."""
    if "enum" in schema and schema["enum"]:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "string")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        lo = int(schema.get("minimum", 1))
        hi = int(schema.get("maximum", max(lo + 1, 10 if any(w in key for w in ("day", "night", "quantity", "count")) else 500)))
        return rng.randint(lo, hi)
    if kind == "number":
        lo = float(schema.get("minimum", 10))
        hi = float(schema.get("maximum", max(lo + 1, 5000)))
        return round(rng.uniform(lo, hi), 2)
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        n = rng.randint(max(1, schema.get("minItems", 1)), max(1, min(schema.get("maxItems", 3), 3)))
        values: list[Any] = []
        for _ in range(n * 4):
            v = generate(key.removesuffix("s"), items, persona, rng)
            if v not in values:
                values.append(v)
            if len(values) == n:
                break
        return values
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: generate(k, s, persona, rng) for k, s in props.items() if k in (schema.get("required") or [])}
    if kind in (None, "string"):
        value = _string(key, schema, persona, rng)
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if hi is not None and len(value) > hi:
            value = value[:hi].rstrip()
        if lo is not None and len(value) < lo:
            value = value + " " + rng.choice(PHRASES)
        return value
    raise UnsupportedSchema(f"parameter '{key}': type {kind!r}")


def say(value: Any) -> str:
    """How a user says a value; `read` inverts it for every generated value."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [say(v) for v in value]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read(text: str, schema: dict) -> Any:
    """Parses a spoken value back to the schema's type; returns the text when it cannot."""
    text = text.strip().strip('"').strip()
    kind = schema.get("type")
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
        if kind == "array":
            items = [p for p in re.split(r",\s*|\s+and\s+", text) if p]
            return [read(p, schema.get("items") or {"type": "string"}) for p in items]
    except ValueError:
        return text
    return text
