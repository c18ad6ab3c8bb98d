"""Strict structured output: a tool's parameter schema in the form OpenAI's strict mode accepts,
and a value written under it read back as the tool's own schema means it.

Strict mode asks that every object be closed (`additionalProperties: false`) with every
property in `required`, and knows only some keywords (no allOf, oneOf, not, patternProperties).
So a parameter the tool lets be absent becomes nullable, allOf is folded in, oneOf and type
lists become anyOf, and a value strict mode cannot describe at all (an object without
properties, an array without items, a value of no type) is asked for as a JSON-encoded string.
`from_strict` undoes both: it decodes those strings and leaves out the nulls that mean
"absent", so the arguments recorded are the ones the model meant and are compared
(`pipeline/dialogue/arguments.py`) exactly as before. `structured.strict_problems` checks the result.
"""

from __future__ import annotations

import json
from typing import Any

ENCODED = "A JSON value, written as a JSON-encoded string."

# Formats a decoder cannot know, spelled as the anchored patterns it can (only when the
# parameter has no pattern of its own): a date comes out as 2026-05-19, not a timestamp.
# Other keywords of a tool's schema are left out of a response schema but for those every
# constrained decoder we know of handles (a grammar compiler that chokes on one keyword would
# otherwise refuse the whole request); `pattern` is kept when anchored at both ends (^...$), the
# form llama.cpp, vLLM and OpenAI compile: a small model then writes `BLD-ABC12` for
# `^BLD-[A-Z]{3}[0-9]{2}$` instead of a value the slot check rejects.
_FORMAT_PATTERNS = {
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "date-time": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})$",
    "time": "^[0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
}
_SCALARS = ("string", "number", "integer", "boolean", "null")


def _anchored(pattern: Any) -> bool:
    return isinstance(pattern, str) and pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []
    if schema.get("nullable") is True and kinds and "null" not in kinds:  # OpenAPI 3.0's spelling
        kinds.append("null")
    return kinds


def _merged(schema: dict[str, Any]) -> dict[str, Any]:
    """`allOf` folded into its schema: properties and required joined, any other keyword the first one's."""
    parts = schema.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return schema
    out = {k: v for k, v in schema.items() if k != "allOf"}
    for part in map(_merged, parts):
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                out["properties"] = {**value, **(out.get("properties") or {})}
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys([*(out.get("required") or []), *value]))
            else:
                out.setdefault(key, value)
    return out


def _branches(schema: dict[str, Any]) -> list[Any] | None:
    """The alternatives of a value (anyOf, oneOf, or one per type of a type list), or None."""
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "description", "title")}
            return [_merged({**base, **b}) if isinstance(b, dict) else b for b in schema[key]]
    kinds = _types(schema)
    if len(kinds) > 1 and "enum" not in schema and "const" not in schema:
        base = {k: v for k, v in schema.items() if k not in ("type", "nullable", "description", "title")}
        return [{**base, "type": kind} for kind in kinds]
    return None


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _free(schema: Any) -> bool:
    """True for a value strict mode cannot describe (no type, an object without properties, an array
    without items): it is sent as a JSON-encoded string."""
    if not isinstance(schema, dict):
        return True
    schema = _merged(schema)
    if (branches := _branches(schema)) is not None:
        return any(_free(b) for b in branches)
    if "enum" in schema or "const" in schema:
        values = schema.get("enum") if "enum" in schema else [schema.get("const")]
        return not isinstance(values, list) or not all(map(_scalar, values))
    kinds = _types(schema)
    if not kinds:
        return True
    if kinds[0] == "object":
        properties = schema.get("properties")
        return not isinstance(properties, dict) or (not properties and schema.get("additionalProperties") is not False)
    if kinds[0] == "array":
        return not isinstance(schema.get("items"), dict)
    return kinds[0] not in _SCALARS


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` that also allows null: a value that may be absent, in a closed object."""
    if "anyOf" in schema:
        return schema if {"type": "null"} in schema["anyOf"] else {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    if "enum" in schema:
        kinds = _types(schema)
        return {**schema, **({"type": [*kinds, "null"]} if kinds and "null" not in kinds else {}),
                "enum": schema["enum"] if None in schema["enum"] else [*schema["enum"], None]}
    kind = schema.get("type")
    if kind in ("string", "number", "integer", "boolean"):
        return {**schema, "type": [kind, "null"]}
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return schema
    head = {k: schema[k] for k in ("description",) if k in schema}
    return {**head, "anyOf": [schema, {"type": "null"}]}


def portable(schema: Any, *, nullable: bool = False) -> dict[str, Any]:
    """One value's schema in strict form, of keywords every constrained decoder handles (see above);
    `nullable` when the value may be absent."""
    return _nullable(_strict(schema)) if nullable else _strict(schema)


def _strict(schema: Any) -> dict[str, Any]:
    if _free(schema):
        about = schema.get("description") if isinstance(schema, dict) else None
        return {"type": "string", "description": f"{about} ({ENCODED})" if isinstance(about, str) and about else ENCODED}
    schema = _merged(schema)
    out: dict[str, Any] = {k: schema[k] for k in ("description", "title") if isinstance(schema.get(k), str)}
    if (branches := _branches(schema)) is not None:
        return {**out, "anyOf": [_strict(b) for b in branches]}
    kinds = _types(schema)
    if kinds:
        out["type"] = kinds if len(kinds) > 1 else kinds[0]
    if "enum" in schema or "const" in schema:
        key = "enum" if "enum" in schema else "const"
        return {**out, key: schema[key]}
    kind = kinds[0]
    if kind == "object":
        out.update(_object(schema))
    elif kind == "array":
        out["items"] = _strict(schema["items"])
        out.update((k, schema[k]) for k in ("minItems", "maxItems") if type(schema.get(k)) is int)
    elif kind == "string":
        pattern = schema.get("pattern") if _anchored(schema.get("pattern")) else _FORMAT_PATTERNS.get(schema.get("format"))
        out.update({"pattern": pattern} if pattern else {})
    elif kind in ("number", "integer"):
        out.update((k, schema[k]) for k in ("minimum", "maximum") if _number(schema.get(k)))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _object(schema: dict[str, Any], every_nullable: bool = False) -> dict[str, Any]:
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or []) if not every_nullable else set()
    return {"properties": {k: portable(v, nullable=k not in required) for k, v in properties.items()},
            "required": list(properties), "additionalProperties": False}


def arguments_schema(parameters: dict[str, Any], *, every_nullable: bool = False) -> dict[str, Any]:
    """A tool's parameters as the strict object a call's `arguments` must be: its own keys only, each
    required, an optional one (or, with `every_nullable`, any one) nullable."""
    return {"type": "object", **_object(_merged(parameters) if isinstance(parameters, dict) else {}, every_nullable)}


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    schema = _merged(schema)
    if (branches := _branches(schema)) is not None:
        return any(_allows_null(b) for b in branches)
    return "null" in _types(schema) or None in (schema.get("enum") or []) or ("const" in schema and schema["const"] is None)


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    kinds = set(_types(schema))
    known = {"object": dict, "array": list, "string": str, "boolean": bool, "number": int | float, "integer": int}
    return not kinds or not kinds <= known.keys() | {"null"} or any(
        isinstance(value, known[k]) for k in kinds if k in known) or (value is None and "null" in kinds)


def from_strict(value: Any, schema: Any) -> Any:
    """`value`, written under `portable(schema)`, as `schema` means it: a JSON-encoded string at a free-form
    place decoded, and an argument that is null where null means "absent" left out (one the schema
    does not require, or requires but does not let be null): the call recorded is the call meant."""
    if not isinstance(schema, dict):
        return value
    if _free(schema):
        if not isinstance(value, str):
            return value
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return decoded if _fits(decoded, schema) else value
    schema = _merged(schema)
    if (branches := _branches(schema)) is not None:
        for branch in branches:
            if isinstance(branch, dict) and ((isinstance(value, dict) and "object" in _types(branch) and
                                              set(value) <= set(branch.get("properties") or {}))
                                             or (isinstance(value, list) and "array" in _types(branch))):
                return from_strict(value, branch)
        return value
    if isinstance(value, dict) and "object" in _types(schema):
        properties, required = schema.get("properties") or {}, set(schema.get("required") or [])
        return {k: from_strict(v, properties.get(k)) for k, v in value.items()
                if v is not None or (k in required and _allows_null(properties.get(k)))}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [from_strict(v, schema["items"]) for v in value]
    return value
