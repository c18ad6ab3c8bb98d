"""Argument values: schema-aware normalisation, exact matching, schema checks, mention checks.

One place decides when two argument values are "the same", so the engine's stopping
criterion (`arguments_match`) and the toolargs validator can never disagree.

Normalisation (`normalise`) maps a value to a canonical form driven by its JSON Schema:

* integer: 42, 42.0, "42", " 42 " -> 42 (booleans are never numbers; 4.5 stays 4.5)
* number: 1, 1.0, "1.0" -> 1.0
* boolean: True, "true", " TRUE " -> True (nothing else: "yes" is not a boolean literal)
* string with format date: any ISO 8601 date `date.fromisoformat` reads -> "YYYY-MM-DD"
* string with format date-time: ISO 8601 -> isoformat, converted to UTC when it has an offset
* string with format email: stripped, domain lower-cased (domains are case-insensitive)
* other strings: stripped, case kept; a number given for a string becomes its text
* enum: compared exactly as given (an enum member is a code, not prose)
* array: element-wise with `items`; object: key-wise with `properties`

A value that cannot be converted is returned unchanged, so it simply fails to compare equal.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import jsonschema
from jsonschema import Draft202012Validator

from .records import Tool

Schema = dict[str, Any]
Mention = Literal["found", "absent", "unverifiable"]

_INT_TEXT = re.compile(r"[+-]?\d+(?:\.0*)?")
_NUM_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _Unconvertible(Exception):
    """Internal: the value has no canonical form for this type."""


def _types(schema: Schema) -> list[str]:
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


def normalise(value: Any, schema: Schema | None = None) -> Any:
    """The canonical form of `value` under `schema` (see the module docstring for the rules)."""
    schema = schema or {}
    if "enum" in schema:
        return value
    kinds = _types(schema)
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


def arguments_match(call_args: Any, gold: dict[str, Any], tool: Tool) -> bool:
    """The stopping criterion: the call has exactly the gold keys, each value `equal` to gold.

    Exact means no missing and no superfluous key (paper §3.1, stopping criterion i).
    Schema conformance of the call is checked separately (`schema_errors`).
    """
    if not isinstance(call_args, dict) or not isinstance(gold, dict):
        return False
    return diff_arguments(call_args, gold, tool).empty


@lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


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


# ---- was a value said by the user? ---------------------------------------------------------------

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
_RELATIVE_DATE = re.compile(
    r"\b(today|tomorrow|yesterday|tonight|next|last|this|coming|end of|start of|beginning of|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|quarter|year)\b"
)
_NUMBER_WORDS = {
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


def _dates_in(text: str) -> set[dt.date]:
    """Calendar dates written explicitly in `text`, in ISO, written-month or numeric forms.

    Numeric d/m/y forms are read both ways (day-first and month-first): an ambiguous
    form counts as a mention of either date.
    """
    found: set[dt.date] = set()
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
            for y, mo, d in candidates:
                try:
                    found.add(dt.date(y, mo, d))
                except ValueError:
                    continue
    return found


def _numbers_in(text: str) -> list[float]:
    low = text.casefold()
    out = [float(m.group(1) + m.group(2).replace(",", "")) for m in _NUMBER_TOKEN.finditer(low)]
    out += [float(f"{a}.{b}") for a, b in _DECIMAL_COMMA.findall(low)]
    flat = f" {_flat(re.sub(r'[^a-z ]', ' ', low))} "
    out += [float(v) for w, v in _NUMBER_WORDS.items() if f" {w} " in flat]
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
    kinds = _types(schema)
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
