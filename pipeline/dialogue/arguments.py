"""Argument values: the one schema-aware comparison, and the schema check.

Every place that asks whether two argument values are "the same" uses `equal` (or `diff_arguments` / `same_arguments`,
built on it): the engine's stopping criterion, the toolargs validator, Acc and every other evaluation metric, and the
error patterns. A dialogue the validators accept as correct is therefore never scored wrong, and the reverse.

Normalisation (`normalise`) maps a value to a canonical form driven by its JSON Schema:

* integer: 42, 42.0, "42", " 42 " -> 42 (booleans are never numbers; 4.5 stays 4.5)
* number: 1, 1.0, "1.0" -> 1.0
* boolean: True, "true", " TRUE " -> True (nothing else: "yes" is not a boolean literal)
* string with format date: the calendar date it denotes, read by `date.fromisoformat` (ISO 8601, extended
  or basic: "2025-01-05" and "20250105" are the same date) -> "YYYY-MM-DD"
* string with format date-time: ISO 8601 -> isoformat, converted to UTC when it has an offset
* string with format email: stripped, domain lower-cased (domains are case-insensitive)
* other strings: stripped, case kept. A JSON number given for a string becomes its text (5 and 5.0 -> "5"), but two
  strings are compared as text: "5" != "5.0". The schema says the API receives text, and text that looks numeric is
  often a code whose spelling is the value ("02134" is not "2134", version "1.10" is not "1.1"); a parameter that means
  a quantity declares `type: number` or `integer`, and is then compared by value. Case is kept for the same reason.
* enum: the value maps to the enum's own spelling of a member when it is that member stripped, or differs from it only
  in case AND the enum's string members stay distinct under case-folding ("eur" -> "EUR" for ["EUR", "USD"]); for
  ["team", "Team"] case decides, so it is kept. A value that matches no member is normalised by the schema's type.
* array: element-wise with `items`; object: key-wise with `properties`

A value that cannot be converted is returned unchanged, so it simply fails to compare equal.
Whether the raw value is what a strict API accepts ("eur" is not in ["EUR", "USD"], "20250105" is not
an RFC 3339 full-date) is another question: `schema_errors` (toolargs' schema problem), `value_fits`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator

from ..core.records import Tool

Schema = dict[str, Any]

_INT_TEXT = re.compile(r"[+-]?\d+(?:\.0*)?")
_NUM_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _Unconvertible(Exception):
    """Internal: the value has no canonical form for this type."""


def schema_types(schema: Schema) -> list[str]:
    """The JSON types a schema allows, as a list (empty when it names none)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        return [str(k) for k in kind]
    return [kind] if isinstance(kind, str) else []


def _native(value: Any, kind: str) -> bool:
    """Whether the value already is of JSON type `kind` (bool is not a number here)."""
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list | tuple)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return False


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list, tuple),
    "object": (dict,), "null": (type(None),),
}


def type_ok(value: Any, schema: Schema) -> bool:
    """Whether `value` has one of the JSON Schema types the parameter allows (no `type`: anything goes)."""
    kinds = schema.get("type")
    if kinds is None:
        return True
    for kind in [kinds] if isinstance(kinds, str) else list(kinds):
        allowed = _JSON_TYPES.get(kind)
        if allowed is None:
            return True  # a type we do not know is not held against the model
        if isinstance(value, bool) and kind in ("integer", "number"):
            continue  # JSON booleans are not numbers
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if isinstance(value, allowed):
            return True
    return False


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise _Unconvertible
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return int(value.strip().split(".", 1)[0])  # the regex allows only ".000" after the digits
    raise _Unconvertible


def _to_number(value: Any) -> float:
    if isinstance(value, bool):
        raise _Unconvertible
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUM_TEXT.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        raise _Unconvertible
    if math.isnan(number):
        raise _Unconvertible
    return number


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _Unconvertible


def _to_date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        raise _Unconvertible  # a timestamp is not a calendar date
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError as exc:
            raise _Unconvertible from exc
    raise _Unconvertible


def _to_datetime(value: Any) -> str:
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise _Unconvertible from exc
    else:
        raise _Unconvertible
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.isoformat()


def _to_string(value: Any, schema: Schema) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float | dt.date):
        raise _Unconvertible
    fmt = schema.get("format")
    if fmt == "date":
        return _to_date(value)
    if fmt == "date-time":
        return _to_datetime(value)
    if isinstance(value, dt.date):
        raise _Unconvertible
    text = value.strip() if isinstance(value, str) else _number_text(value)
    if fmt == "email" and "@" in text:
        local, _, domain = text.rpartition("@")
        return f"{local}@{domain.lower()}"
    return text


def _number_text(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _convert(value: Any, kind: str, schema: Schema) -> Any:
    if kind == "integer":
        return _to_int(value)
    if kind == "number":
        return _to_number(value)
    if kind == "boolean":
        return _to_bool(value)
    if kind == "string":
        return _to_string(value, schema)
    if kind == "array":
        if not isinstance(value, list | tuple):
            raise _Unconvertible
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [normalise(v, items) for v in value]
    if kind == "object":
        if not isinstance(value, dict):
            raise _Unconvertible
        props = schema.get("properties") or {}
        return {k: normalise(v, props.get(k) or {}) for k, v in value.items()}
    if kind == "null":
        if value is None:
            return None
        raise _Unconvertible
    raise _Unconvertible


def _enum_member(value: Any, members: list[Any]) -> tuple[Any] | None:
    """(the member) that `value` names under the enum rule of the module docstring, or None."""
    if not isinstance(value, str):
        return next(((m,) for m in members if _same(value, m)), None)
    text = value.strip()
    if text in members:
        return (text,)
    spelled = [m for m in members if isinstance(m, str)]
    folded = {m.casefold() for m in spelled}
    if len(folded) < len(set(spelled)):
        return None  # two members differ only in case: case decides
    return next(((m,) for m in spelled if m.casefold() == text.casefold()), None)


def normalise(value: Any, schema: Schema | None = None) -> Any:
    """The canonical form of `value` under `schema` (see the module docstring for the rules)."""
    schema = schema or {}
    if isinstance(schema.get("enum"), list):
        member = _enum_member(value, schema["enum"])
        if member is not None:
            return member[0]
    kinds = schema_types(schema)
    if not kinds:
        if isinstance(value, str):
            return value.strip()
        if isinstance(value, list | tuple):
            return [normalise(v) for v in value]
        if isinstance(value, dict):
            return {k: normalise(v) for k, v in value.items()}
        return value
    # A value already of one of the allowed types is normalised within that type first,
    # so "42" stays a string under {"type": ["string", "integer"]}.
    ordered = sorted(kinds, key=lambda k: not _native(value, k))
    for kind in ordered:
        try:
            return _convert(value, kind, schema)
        except _Unconvertible:
            continue
    return value


def _same(a: Any, b: Any) -> bool:
    """Structural equality that, unlike ==, never equates True with 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def equal(a: Any, b: Any, schema: Schema | None = None) -> bool:
    """Whether two values are the same argument value under `schema` after normalisation."""
    return _same(normalise(a, schema), normalise(b, schema))


@dataclass
class ArgumentDiff:
    """How a call's arguments differ from the gold map: keys missing, extra, or with other values."""

    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    mismatched: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.missing or self.extra or self.mismatched)


def diff_arguments(call_args: dict[str, Any], gold: dict[str, Any], tool: Tool) -> ArgumentDiff:
    """Key-by-key comparison of a call against the gold map, values compared with `equal`.

    A required parameter absent from both counts as missing: the call cannot be schema-valid.
    """
    props = tool.properties
    diff = ArgumentDiff()
    diff.missing = [k for k in gold if k not in call_args]
    diff.missing += [k for k in tool.required if k not in call_args and k not in gold]
    diff.extra = [k for k in call_args if k not in gold]
    for key in gold:
        if key in call_args and not equal(call_args[key], gold[key], props.get(key) or {}):
            diff.mismatched[key] = {"got": call_args[key], "expected": gold[key]}
    return diff


def correct_arguments(call_args: Any, gold: dict[str, Any], tool: Tool) -> bool:
    """The one verdict on a call's arguments, shared by the toolargs validator and Acc: exactly the
    gold values (`diff_arguments` finds nothing) in a spelling the tool's schema accepts. "eur" for
    the enum member "EUR" is the same value but not an accepted spelling, so the call is wrong for
    both: a strict API would refuse it."""
    return isinstance(call_args, dict) and diff_arguments(call_args, gold, tool).empty \
        and not schema_errors(call_args, tool)


def same_arguments(a: dict[str, Any], b: dict[str, Any], tool: Tool) -> bool:
    """Two argument maps of `tool` with the same keys and `equal` values under each key's schema."""
    props = tool.properties
    return set(a) == set(b) and all(equal(a[k], b[k], props.get(k) or {}) for k in a)


@lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def value_fits(value: Any, schema: Schema) -> bool:
    """Whether one value is valid under its parameter's JSON Schema, as `schema_errors` checks a call's."""
    try:
        return _validator(json.dumps(schema, sort_keys=True)).is_valid(value)
    except jsonschema.SchemaError:  # a broken schema fits nothing
        return False


def schema_errors(arguments: Any, tool: Tool) -> list[str]:
    """Every JSON Schema (Draft 2020-12, with date/date-time/email format checks) violation.

    The raw arguments are validated, not their normal form: the call is the training
    target and must be what a strict API would accept. A broken tool schema is reported
    as an error too rather than raised.
    """
    try:
        validator = _validator(json.dumps(tool.parameters, sort_keys=True))
    except jsonschema.SchemaError as exc:
        return [f"the tool's parameter schema is invalid: {exc.message}"]
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    out = []
    for err in errors:
        where = "/".join(str(p) for p in err.absolute_path)
        out.append(f"{where}: {err.message}" if where else err.message)
    return out


# ---------------------------------------------------------------------------------------- BFCL's answers
# An imported BFCL case lists, per argument, the values it accepts (`evaluation.cases.AcceptedCall`).
# Its own rules differ from `equal` on purpose: strings match loosely (`loose_text`), and a value of the
# answer's own type where the schema wants another (a variable name written as text) is compared as is.

OPTIONAL = ""  # among an argument's acceptable values: the argument may be left out
_LOOSE_DROP = re.compile(r"[ ,./\-_*^]")


def loose_text(text: str) -> str:
    """BFCL's spelling-blind form of a string: lower case, without spaces or `, . / - _ * ^`, ' read as "."""
    return _LOOSE_DROP.sub("", text).lower().replace("'", '"')


def _fits(value: Any, schema: Schema) -> bool:
    kinds = schema_types(schema)
    return not kinds or any(_native(value, k) for k in kinds)


def _loose_same(value: Any, option: Any, schema: Schema) -> bool:
    """One value against one acceptable value: strings loosely, lists element by element, dicts key by key."""
    if isinstance(value, str) or isinstance(option, str):
        return isinstance(value, str) and isinstance(option, str) and loose_text(value) == loose_text(option)
    if isinstance(value, dict):
        if not isinstance(option, dict) or any(k not in option for k in value):
            return False
        props = schema.get("properties") or {}
        missing_ok = all(k in value or OPTIONAL in (v if isinstance(v, list) else [v]) for k, v in option.items())
        return missing_ok and all(
            accepts(v, option[k] if isinstance(option[k], list) else [option[k]], props.get(k) or {})
            for k, v in value.items())
    if isinstance(value, list | tuple):
        items = schema.get("items")
        items = items if isinstance(items, dict) else {}
        return isinstance(option, list) and len(option) == len(value) and all(
            _loose_same(v, o, items) for v, o in zip(value, option))
    return _same(value, option)


def accepts(value: Any, options: list[Any], schema: Schema | None = None) -> bool:
    """Whether `value` is among an argument's acceptable `options` under BFCL's rules: the value must have
    the schema's type (an integer is taken for a number), unless it has the type of the first real option
    (then it must equal one exactly); strings match by `loose_text`, lists element by element in order,
    dicts key by key with their own lists of acceptable values."""
    schema = schema or {}
    real = [o for o in options if not (isinstance(o, str) and o == OPTIONAL)]
    if not _fits(value, schema):
        return bool(real) and type(value) is type(real[0]) and any(_same(value, o) for o in real)
    return any(_loose_same(value, o, schema) for o in options)
