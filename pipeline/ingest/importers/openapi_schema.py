"""OpenAPI schemas made into plain JSON Schema 2020-12 for the OpenAPI importer.

Kept apart from the walk over paths and operations (utcgen.pipeline.ingest.importers.openapi):
local ``$ref`` are inlined (a recursive one is cut at the repeat), OpenAPI 3.0's dialect
(``nullable``, boolean ``exclusiveMinimum``, ``example``) is rewritten as JSON Schema 2020-12,
OpenAPI-only keywords (``discriminator``, ``xml``, ``externalDocs``, vendor ``x-...`` keys) are dropped, and a body's
``allOf`` parts are merged into one object.
"""

from __future__ import annotations

from typing import Any

from ..common import RefError, json_type_name, resolve_pointer


def resolve_refs(node: Any, doc: Any, stack: tuple[str, ...] = ()) -> Any:
    """A copy of `node` with every local $ref inlined (siblings of $ref win).

    A $ref back into a schema being expanded (a recursive schema) cannot be inlined; it is
    cut to the target's type and description so the tool stays usable.
    """
    if isinstance(node, list):
        return [resolve_refs(x, doc, stack) for x in node]
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
            return {**cut, **resolve_refs(siblings, doc, stack)}
        resolved = resolve_refs(target, doc, stack + (ref,))
        if not siblings:
            return resolved
        if not isinstance(resolved, dict):
            raise RefError(f"$ref {ref!r} points to a {json_type_name(resolved)}, not an object")
        return {**resolved, **resolve_refs(siblings, doc, stack)}
    return {k: resolve_refs(v, doc, stack) for k, v in node.items()}


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
