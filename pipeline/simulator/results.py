"""The tool's backend, offline: the result of one call, from the tool-result role's typed request.

A result follows the request's result schema (`ToolResultRequest.result_schema`): every property of
every object (required or not), values of their type, enum and format, lists of one to three items.
A field named as an argument of the call holds that argument's value, so a call that asks for an id
gets that id back; every other value comes from the values machinery the slot writer uses
(`gold_values`: ids, dates, e-mails, addresses and names by what the field holds). A tool with no
output schema gets a small object read from its description and arguments: a status, an id, the
arguments, and a few fields named after the description's nouns (`nounphrases`). An error request
gets the error object a real API writes for its kind, naming the argument it is about.

Everything is drawn from the request's seed, the tool and the arguments, so the same call gets the
same result; the policy reads nothing the prompt does not show.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from ..core.records import Persona, Tool
from ..core.text import split_words
from ..dialogue.arguments import type_ok
from ..dialogue.parameter_labels import is_plural
from ..llm.requests import ToolResultRequest
from . import gold_values
from .dispatch import policy
from .nounphrases import BLAND, noun_phrases
from .seeding import seeded

MAX_DEPTH = 6  # nested objects deeper than this are left empty: a schema may refer to itself
_ID_WORDS = frozenset({"id", "ids", "key", "code", "number", "no", "num", "slug", "name", "uuid", "ref", "sku"})
# field names that say what kind of value, not of what: read with their object's name
_BARE = frozenset({"id", "name", "title", "type", "email", "url", "code", "key", "number", "description"})
_CONTAINERS = frozenset({"result", "results", "items", "data", "records", "entries", "list"})


@policy("tool_result")
def tool_result(request: ToolResultRequest, messages: list[dict]) -> str:
    """The call's result object, or its error object, as JSON."""
    rng = seeded(request.seed, request.tool.name, "tool_result", json.dumps(request.arguments, sort_keys=True, default=str))
    if request.error is not None:
        return json.dumps({"error": {"type": request.error, "message": error_message(request, rng)}}, ensure_ascii=False)
    world = _World(request.tool, request.persona, request.arguments, rng)
    schema = request.result_schema()
    result = world.value(thing(request.tool), schema, 0) if schema is not None else loose_result(world)
    result = result if isinstance(result, dict) else {"result": result}
    for name, field in request.holds.items():  # what a later step reads from it
        result.setdefault(name, world.value(name, field, 0))
    return json.dumps(result, ensure_ascii=False)


def thing(tool: Tool) -> str:
    """What the tool works on, by its name's last word ('listPets' -> pet): a result's bare `id` or `name`
    is read as that thing's."""
    words = [w for w in split_words(tool.name)[1:] if w not in _ID_WORDS] or ["record"]
    last = words[-1]
    return last[:-1] if last.endswith("s") and not last.endswith("ss") and len(last) > 3 else last


def _norm(name: str) -> str:
    return "".join(split_words(name))


@dataclass
class _World:
    """What a result's values are drawn from: the tool, the employee, the call's arguments, one generator."""

    tool: Tool
    persona: Persona
    arguments: dict[str, Any]
    rng: random.Random

    def echoed(self, key: str, schema: dict[str, Any]) -> tuple[bool, Any]:
        """(True, the argument's value) when an argument of this field's name holds a value it allows."""
        for name, value in self.arguments.items():
            if _norm(name) == _norm(key) and _allows(schema, value):
                return True, value
        return False, None

    def value(self, key: str, schema: Any, depth: int) -> Any:
        """A value for field `key` that `schema` allows."""
        schema = _resolved(schema)
        if schema.get("enum"):
            return self.rng.choice(schema["enum"])
        if "const" in schema:
            return schema["const"]
        kind = _kind(schema)
        if kind == "object":
            return self.object(schema, depth, key)
        if kind == "array":
            return self.array(key, schema, depth)
        if kind == "null":
            return None
        if (kind or "string") == "string" and not schema.get("format") and (split_words(key)[-1:] or [""])[0] in _KINDS:
            return self.rng.choice(_options(str(schema.get("description") or "")) or ["standard", "default", "primary"])
        try:
            return gold_values.gold_value(key, {**schema, "type": kind or "string"}, self.persona, self.rng, self.tool)
        except gold_values.UnsupportedSchema:
            return gold_values.gold_value(key, {"type": "string"}, self.persona, self.rng, self.tool)

    def field(self, parent: str, key: str, schema: Any, depth: int) -> Any:
        """A property's value: an argument of its name, else drawn by what it holds, a bare `name` or `id`
        read with its object's name (a customer's `name` is a person's)."""
        schema = _resolved(schema)
        if (found := self.echoed(key, schema))[0]:
            return found[1]
        words = split_words(key)
        within = split_words(parent)
        if words and set(words) <= _CONTAINERS and within:
            key = parent  # `{"items": [...]}` holds the things its object is about
        elif words and set(words) <= _BARE and within:
            key = "_".join([*within[-1:], *words])
        return self.value(key, schema, depth)

    def object(self, schema: dict[str, Any], depth: int, parent: str = "") -> dict[str, Any]:
        found = schema.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        if depth >= MAX_DEPTH:
            properties = {k: v for k, v in properties.items() if k in (schema.get("required") or [])}
        out = {k: self.field(parent, k, s, depth + 1) for k, s in properties.items()}
        extra = schema.get("additionalProperties")
        if not properties and isinstance(extra, dict):  # a map: a key or two of what it maps
            for word in self.nouns()[:2] or ["entry"]:
                out[word] = self.value(word, extra, depth + 1)
        return out

    def array(self, key: str, schema: dict[str, Any], depth: int) -> list[Any]:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
        low = max(1, int(schema.get("minItems") or 1))
        high = max(low, min(3, int(schema.get("maxItems") or 3)))
        out: list[Any] = []
        for _ in range(self.rng.randint(low, high) * 4):
            item = self.value(key.removesuffix("s"), items, depth + 1)
            if item not in out or not schema.get("uniqueItems"):
                out.append(item)
            if len(out) >= high or (len(out) >= low and self.rng.random() < 0.5):
                break
        return out

    def nouns(self) -> list[str]:
        """Field names from the description's noun phrases ('shipping address' -> shipping_address), none an argument's."""
        taken = {_norm(a) for a in self.arguments}
        out: list[str] = []
        for phrase in noun_phrases(self.tool.description, set()):
            words = [w.lower() for w in phrase.split()][-2:]
            name = "_".join(words)
            if words[-1] not in BLAND and _norm(name) not in taken and name not in out and name.isascii():
                out.append(name)
        return out


# fields that name a kind of thing: a code from the field's description ('C = the copyright'), never a name
_KINDS = frozenset({"type", "kind", "category", "mode", "format", "level", "state", "class", "tier"})


def _options(description: str) -> list[str]:
    """The codes a field's description lists: `C = ...`, "quoted" or `backticked` words."""
    found = re.findall(r"\b([A-Za-z][\w-]{0,15})\s*=\s", description)
    found += re.findall(r"[\"'`]([A-Za-z][\w-]{0,15})[\"'`]", description)
    return list(dict.fromkeys(found))


def _resolved(schema: Any) -> dict[str, Any]:
    """A schema with `allOf` folded in and the first non-null branch of an `anyOf` / `oneOf` taken."""
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or [] if isinstance(b, dict) and b.get("type") != "null"]
        if branches:
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            return _resolved({**rest, **branches[0]})
    parts = schema.get("allOf")
    if isinstance(parts, list):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in map(_resolved, parts):
            merged["properties"] = {**(part.get("properties") or {}), **(merged.get("properties") or {})}
            merged["required"] = list(dict.fromkeys([*(merged.get("required") or []), *(part.get("required") or [])]))
            merged.update({k: v for k, v in part.items() if k not in ("properties", "required") and k not in merged})
        return merged
    return schema


def _kind(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        return "object"
    if kind is None and "items" in schema:
        return "array"
    return kind if isinstance(kind, str) else None


def _allows(schema: dict[str, Any], value: Any) -> bool:
    """Whether the field's schema allows `value` (its type, enum, format and bounds)."""
    if not type_ok(value, schema):
        return False
    if "$ref" in json.dumps(schema, default=str):
        return True  # its type is all that can be checked without the document the reference points into
    try:
        return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(value)
    except SchemaError:  # a schema jsonschema cannot read: nothing is echoed into it
        return False


# ---- no output schema ----------------------------------------------------------------------------------

_STATUS = (("creat", "created"), ("add", "created"), ("regist", "created"), ("open", "created"),
           ("updat", "updated"), ("edit", "updated"), ("set", "updated"), ("chang", "updated"),
           ("delet", "deleted"), ("remov", "deleted"), ("cancel", "cancelled"), ("send", "sent"),
           ("submit", "submitted"), ("approv", "approved"), ("reject", "rejected"), ("book", "confirmed"),
           ("schedul", "scheduled"), ("assign", "assigned"), ("clos", "closed"))


def loose_result(world: _World) -> dict[str, Any]:
    """A small object such as an API of this kind returns: a status, an id, the call's arguments, and a
    count for each of up to three plural things the description names ('parking spaces': 12)."""
    verb = (split_words(world.tool.name) or [""])[0]
    status = next((s for lead, s in _STATUS if verb.startswith(lead)), "ok")
    out: dict[str, Any] = {"status": status}
    if not any((_ID_WORDS - {"name"}) & set(split_words(a)) for a in world.arguments):  # no second id for one thing
        out["id"] = world.value(f"{thing(world.tool)}_id", {"type": "string"}, 0)
    out.update(world.arguments)
    for name in world.nouns()[:3]:  # how many of each thing the description counts: a name made up for a
        if is_plural(name.replace("_", " ")):  # field nothing describes would be no value anyone could check
            out.setdefault(name, world.value(name, {"type": "integer", "minimum": 0, "maximum": 40}, 0))
    return out


# ---- errors --------------------------------------------------------------------------------------------


def _said(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _named(request: ToolResultRequest) -> tuple[str, Any] | None:
    """The argument a not-found error is about: one that names or identifies a thing, else the first."""
    items = [(k, v) for k, v in request.arguments.items() if isinstance(v, str | int) and not isinstance(v, bool)]
    ids = [(k, v) for k, v in items if _ID_WORDS & set(split_words(k))]
    return (ids or items or list(request.arguments.items()) or [None])[0]


def _why(schema: dict[str, Any]) -> str | None:
    """Why a value of this parameter may be refused: what its schema asks of it (None: nothing)."""
    if schema.get("enum"):
        return f"must be one of {', '.join(map(_said, schema['enum'][:6]))}"
    if schema.get("format"):
        return f"is not a valid {schema['format']}"
    if schema.get("pattern"):
        return f"does not match the expected format {schema['pattern']}"
    if "minimum" in schema or "maximum" in schema:
        return f"is out of range ({schema.get('minimum', 'no minimum')} to {schema.get('maximum', 'no maximum')})"
    return None


def _refused(request: ToolResultRequest) -> tuple[str, Any, str] | None:
    """The argument an invalid-value error is about, and why: the first whose schema constrains it, else the first."""
    found: tuple[str, Any, str | None] | None = None
    for key, value in request.arguments.items():
        schema = request.tool.properties.get(key) or {}
        why = _why(schema) if not _allows(schema, value) else None  # never a rule the value keeps
        if found is None or (why is not None and found[2] is None):
            found = (key, value, why)
    return None if found is None else (found[0], found[1], found[2] or _UNUSABLE[len(str(found[1])) % len(_UNUSABLE)])


# why a well-formed value is still refused: what the service knows and the caller may not
_UNUSABLE = ("is not accepted for this request", "refers to a record that is no longer active",
             "cannot be used with the other values of this request")


def error_message(request: ToolResultRequest, rng: random.Random) -> str:
    """What a real API writes for the request's kind of error."""
    what = " ".join(w for w in split_words(request.tool.name)[1:] if w not in _ID_WORDS) or "resource"
    if request.error == "not_found":
        if (named := _named(request)) is None:
            return f"The requested {what} was not found."
        key, value = named
        return rng.choice([f"No {what} found with {key} '{_said(value)}'.",
                           f"{what.capitalize()} not found: {key} '{_said(value)}' does not exist.",
                           f"Resource not found: no {what} matches {key}={_said(value)}."])
    if request.error == "invalid_value":
        if (refused := _refused(request)) is None:
            return "Invalid request: the parameters could not be validated."
        key, value, why = refused
        return rng.choice([f"Invalid value for '{key}': '{_said(value)}' {why}.",
                           f"Validation failed: {key} '{_said(value)}' {why}."])
    if request.error == "permission_denied":
        return rng.choice([f"Permission denied: you are not allowed to call {request.tool.name} on this {what}.",
                           f"Forbidden: the current user lacks access to this {what}.",
                           f"Access denied: your role does not have permission to {' '.join(split_words(request.tool.name))}."])
    wait = rng.choice([5, 10, 30, 60])
    return rng.choice([f"Rate limit exceeded: too many requests. Retry after {wait} seconds.",
                       f"Too many requests; please wait {wait} seconds before trying again."])

