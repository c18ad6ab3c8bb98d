"""OpenAPI schemas made into plain JSON Schema 2020-12 for the OpenAPI importer.

Kept apart from the walk over paths and operations (utcgen.pipeline.ingest.importers.openapi):
local ``$ref`` are inlined (a recursive one is cut at the repeat), OpenAPI 3.0's dialect
(``nullable``, boolean ``exclusiveMinimum``, ``example``) is rewritten as JSON Schema 2020-12,
OpenAPI-only keywords (``discriminator``, ``xml``, ``externalDocs``, vendor ``x-...`` keys) are dropped, and a body's
``allOf`` parts are merged into one object.

A success response's schema becomes the tool's output schema cut to `OUTPUT_DEPTH` levels of nested
objects and `OUTPUT_PROPERTIES` properties an object (`trim_output`), so one tool record stays small.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.text import sentences
from ..common import RefError, json_type_name, resolve_pointer


def resolve_refs(node: Any, doc: Any, stack: tuple[str, ...] = (), titled: bool = False) -> Any:
    """A copy of `node` with every local $ref inlined (siblings of $ref win).

    A $ref back into a schema being expanded (a recursive schema) cannot be inlined; it is
    cut to the target's type and description so the tool stays usable. With `titled`, an
    inlined schema without a `title` takes the name the $ref gave it (`PlaylistObject`): an
    output schema keeps what each object is, which chain planning reads.
    """
    if isinstance(node, list):
        return [resolve_refs(x, doc, stack, titled) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = resolve_pointer(doc, ref)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if ref in stack:
            cut: dict[str, Any] = {}
            if isinstance(target, dict):
                cut = {k: target[k] for k in ("type", "description") if k in target}
            return {**cut, **resolve_refs(siblings, doc, stack, titled)}
        resolved = resolve_refs(target, doc, stack + (ref,), titled)
        if titled and isinstance(resolved, dict) and "title" not in resolved and ref.startswith(_NAMED_SCHEMAS):
            resolved = {"title": ref.rsplit("/", 1)[-1], **resolved}
        if not siblings:
            return resolved
        if not isinstance(resolved, dict):
            raise RefError(f"$ref {ref!r} points to a {json_type_name(resolved)}, not an object")
        return {**resolved, **resolve_refs(siblings, doc, stack, titled)}
    return {k: resolve_refs(v, doc, stack, titled) for k, v in node.items()}


# Where a document keeps its named schemas: OpenAPI's components, JSON Schema's $defs (and draft-07's definitions).
_NAMED_SCHEMAS = ("#/components/schemas/", "#/$defs/", "#/definitions/")


def from_openapi30(node: dict[str, Any]) -> None:
    """OpenAPI 3.0's schema dialect -> JSON Schema 2020-12 (3.1 already is 2020-12)."""
    if node.pop("nullable", False) is True:
        t = node.get("type")
        if isinstance(t, str):
            node["type"] = [t, "null"]
        elif isinstance(t, list) and "null" not in t:
            node["type"] = [*t, "null"]
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
    for excl, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(excl) is True and bound in node:
            node[excl] = node.pop(bound)
        elif isinstance(node.get(excl), bool):
            del node[excl]
    if "example" in node:
        example = node.pop("example")
        node.setdefault("examples", [example])


def drop_openapi_only(node: dict[str, Any]) -> None:
    """Drop the keywords that mean something to OpenAPI tooling only: ``discriminator``, ``xml``,
    ``externalDocs`` and every vendor extension (``x-...``). Silently: a document may carry
    hundreds, and none says anything about a value a user gives."""
    for key in [k for k in node if k in _OPENAPI_ONLY or (isinstance(k, str) and k.startswith("x-"))]:
        del node[key]


_OPENAPI_ONLY = frozenset({"discriminator", "xml", "externalDocs"})


def flatten_allof(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge a body schema's allOf parts into one object schema (properties, required)."""
    parts = schema.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return schema
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[Any] = list(merged.get("required") or [])
    for part in parts:
        flat = flatten_allof(part)
        props.update(flat.get("properties") or {})
        required += [r for r in flat.get("required") or [] if r not in required]
        for key in ("type", "description"):
            if key in flat:
                merged.setdefault(key, flat[key])
    merged["properties"] = props
    merged["required"] = required
    return merged


def is_object_schema(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    return t == "object" or (t is None and isinstance(schema.get("properties"), dict))


# How much of a response schema a tool keeps: objects nested at most this deep (the response itself is
# level 1; an array's items are at its own level), each with at most this many properties (the first
# ones, in document order); a deeper object keeps its type, title and description only. Every
# description is cut to its first sentence, at most `OUTPUT_DESCRIPTION` characters: descriptions are most
# of a real API's response schemas (Spotify's player queue is 33 kB of JSON inlined whole, 27 kB so).
OUTPUT_DEPTH = 3
OUTPUT_PROPERTIES = 40
OUTPUT_DESCRIPTION = 120
# ... and a schema still over this many characters of JSON is cut one level shallower, until it fits
# or only the response's own properties are left.
OUTPUT_CHARACTERS = 8000
_SUBSCHEMA_LISTS = ("anyOf", "oneOf")


def _first_sentence(text: str) -> str:
    first = (sentences(text) or [""])[0]
    return first if len(first) <= OUTPUT_DESCRIPTION else first[: OUTPUT_DESCRIPTION - 3].rstrip() + "..."


def _may_be_object(node: dict[str, Any]) -> bool:
    """Whether a schema node describes an object, possibly among other types (`["object", "null"]`)."""
    t = node.get("type")
    return t is None or t == "object" or (isinstance(t, list) and "object" in t)


def fit_output(schema: dict[str, Any]) -> dict[str, Any]:
    """A response schema trimmed (`trim_output`) at the greatest depth, up to `OUTPUT_DEPTH`, whose JSON
    is at most `OUTPUT_CHARACTERS` long (or at depth 1)."""
    for depth in range(OUTPUT_DEPTH, 0, -1):
        trimmed = trim_output(schema, depth=depth)
        if depth == 1 or len(json.dumps(trimmed, ensure_ascii=False, default=str)) <= OUTPUT_CHARACTERS:
            return trimmed
    raise AssertionError("unreachable: depth 1 always returns")


def trim_output(schema: Any, level: int = 1, depth: int = OUTPUT_DEPTH) -> Any:
    """A response schema cut to `OUTPUT_DEPTH`, `OUTPUT_PROPERTIES` and `OUTPUT_DESCRIPTION` (see above),
    `allOf` parts merged (titled by the first titled part when the whole has no title), `oneOf` read as
    `anyOf`."""
    if not isinstance(schema, dict):
        return schema
    node = dict(schema)
    if isinstance(schema.get("allOf"), list):
        titles = [p["title"] for p in schema["allOf"] if isinstance(p, dict) and isinstance(p.get("title"), str)]
        node = flatten_allof(schema)
        if titles and "title" not in node:
            node = {"title": titles[0], **node}
    if isinstance(node.get("description"), str):
        node["description"] = _first_sentence(node["description"])
    if node.get("properties") == {} and node.get("type") not in (None, "object"):  # allOf of a scalar
        node.pop("properties")
        if not node.get("required"):
            node.pop("required", None)
    if isinstance(node.get("properties"), dict) and _may_be_object(node):
        if level > depth:
            return {"type": "object", **{k: node[k] for k in ("title", "description") if k in node}}
        kept = list(node["properties"].items())[:OUTPUT_PROPERTIES]
        node["properties"] = {k: trim_output(v, level + 1, depth) for k, v in kept}
        if isinstance(node.get("required"), list):
            node["required"] = [r for r in node["required"] if r in node["properties"]]
            if not node["required"]:
                del node["required"]
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = trim_output(node["additionalProperties"], level + 1, depth)
    if isinstance(node.get("items"), dict):
        node["items"] = trim_output(node["items"], level, depth)
    for key in _SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [trim_output(sub, level, depth) for sub in node[key]]
    if isinstance(node.get("oneOf"), list) and "anyOf" not in node:
        # alternatives cut shallower may no longer tell a value apart (a track and an episode cut to objects
        # both fit {}), which `oneOf` refuses: a result of either alternative is a result of the response
        node["anyOf"] = node.pop("oneOf")
    return node
