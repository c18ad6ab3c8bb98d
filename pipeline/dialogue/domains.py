"""Argument domains: whether a value is outside what its parameter accepts, and how to make one that is.

Used by the infeasible-arguments scenario (to corrupt a gold value), by the offline
assistant (to notice it) and by the scenario validator (to check it was never called
with). A value is out of domain when it fails its own JSON Schema (enum, range, format,
pattern), when an origin/destination pair names the same place, or when an identifier is
all zeros (a pattern no real record has).
"""

from __future__ import annotations

import random
import re
from typing import Any

import jsonschema

PAIRS = (("origin", "destination"), ("from", "to"), ("source", "target"), ("departure", "arrival"),
         ("base", "quote"), ("sender", "recipient"))
_ENUM_DECOYS = ("express", "premium", "other", "misc", "unknown", "gold", "urgent-plus")
_PATTERN_DECOYS = ("N/A", "12", "abc", "ZZ-??", "0")


def _partner(key: str, args: dict[str, Any]) -> str | None:
    """The other end of an origin/destination-like pair that `key` is the second half of."""
    low = key.lower()
    for first, second in PAIRS:
        if second in low.split("_") or low.startswith(second + "_") or low.endswith("_" + second):
            other = re.sub(rf"(^|_){second}(_|$)", rf"\g<1>{first}\g<2>", low)
            match = next((k for k in args if k.lower() == other), None)
            if match and match != key:
                return match
    return None


def problem(key: str, value: Any, schema: dict, args: dict[str, Any]) -> str | None:
    """Why `value` cannot be used for `key`, in the user's terms; None when it can."""
    validator = jsonschema.Draft202012Validator(schema or {}, format_checker=jsonschema.FormatChecker())
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        if error.validator == "enum":
            return "it is not one of the accepted options (" + ", ".join(map(str, schema["enum"])) + ")"
        if error.validator in ("maximum", "exclusiveMaximum"):
            return f"it is above the allowed maximum of {schema.get('maximum', schema.get('exclusiveMaximum'))}"
        if error.validator in ("minimum", "exclusiveMinimum"):
            return f"it is below the allowed minimum of {schema.get('minimum', schema.get('exclusiveMinimum'))}"
        if error.validator == "format":
            return f"it is not a valid {schema.get('format')}"
        if error.validator == "pattern":
            return "it does not have the expected format"
        return "it does not fit what this field accepts"
    partner = _partner(key, args)
    if partner is not None and value == args.get(partner) and value not in (None, ""):
        return f"it is the same as the {partner.replace('_', ' ')}"
    if isinstance(value, str) and key.lower().endswith("id") and re.fullmatch(r"[A-Z]*-?0{4,}", value):
        return "no record has an identifier like that"
    return None


def corrupt(key: str, schema: dict, args: dict[str, Any], rng: random.Random) -> tuple[Any, str] | None:
    """A value for `key` that `problem` rejects, and why; None when the parameter has no domain to break."""
    schema = schema or {}
    tries: list[Any] = []
    if schema.get("enum"):
        tries += [d for d in _ENUM_DECOYS if d not in schema["enum"]][:1]
    if schema.get("type") in ("integer", "number"):
        if "maximum" in schema:
            tries.append(int(schema["maximum"]) + rng.randint(5, 50) if schema["type"] == "integer"
                         else float(schema["maximum"]) + rng.randint(5, 50))
        if "minimum" in schema and schema["minimum"] >= 0:
            tries.append(-rng.randint(1, 9))
    if schema.get("format") == "date":
        tries.append("2026-02-30")  # February has no 30th
    if schema.get("format") == "email":
        tries.append("name.at.company")
    if schema.get("pattern"):
        tries += list(_PATTERN_DECOYS)
    partner = _partner(key, args)
    if partner is not None and schema.get("type") in (None, "string"):
        tries.append(args[partner])
    if (schema.get("type") in (None, "string") and key.lower().endswith("id") and not schema.get("pattern")
            and not schema.get("enum")):
        tries.append("ID-0000000")
    for value in tries:
        if value != args.get(key) and (why := problem(key, value, schema, args)):
            return value, why
    return None
