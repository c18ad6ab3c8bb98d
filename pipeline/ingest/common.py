"""What every importer shares: the `Candidate` a source item becomes, JSON Schema walking and
local JSON pointers (``#/a/b``), which the OpenAPI importer follows and the checks verify.

Standard library only, like the importers, so the CLI can load the format list cheaply.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

JSON_TYPES: frozenset[str] = frozenset(
    {"string", "integer", "number", "boolean", "array", "object", "null"}
)

# Keywords whose value is one subschema / a mapping of subschemas / a list of subschemas.
_SUB_ONE = (
    "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema",
)
_SUB_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUB_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")

Note = tuple[str, str]  # (field as named in the source file, message)


@dataclass
class Candidate:
    """One tool as found in a source file, before validation.

    `data` is the tool in native shape (or the raw item if it could not be reshaped).
    `problems` are (field, message) pairs that stop the import; `warnings` are (field,
    message) pairs saying what was changed or left out to make the tool importable. Both
    name fields as in the source file. `field_map` renames native fields to the source's
    own names in validation messages (e.g. parameters -> inputSchema for MCP). A field in
    `optional` the importer derived itself (an OpenAPI response's output schema): a problem with it
    leaves it out with a warning instead of stopping the tool.
    """

    index: int
    data: Any
    line: int | None = None
    origin: str | None = None
    problems: list[Note] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)
    field_map: dict[str, str] = field(default_factory=dict)
    optional: tuple[str, ...] = ()

    @property
    def name(self) -> str | None:
        name = self.data.get("name") if isinstance(self.data, dict) else None
        return name if isinstance(name, str) and name.strip() else None


@dataclass
class Extracted:
    """What an importer found in one file: candidates, plus file-level problems and warnings."""

    candidates: list[Candidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def json_type_name(value: Any) -> str:
    """A JSON-ish name for a value's type, for messages."""
    if value is None:
        return "null"
    names = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


def not_object(index: int, item: Any, line: int | None) -> Candidate:
    return Candidate(index, item, line, problems=[("", f"expected a tool object, got a {json_type_name(item)}")])


def iter_subschemas(schema: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Yield (path, subschema) for each direct subschema of `schema`, paths dotted."""
    if not isinstance(schema, dict):
        return
    for key in _SUB_ONE:
        if key not in schema:
            continue
        value = schema[key]
        if isinstance(value, list):  # draft-04 style tuple `items`
            for i, sub in enumerate(value):
                yield f"{path}.{key}[{i}]", sub
        else:
            yield f"{path}.{key}", value
    for key in _SUB_MAP:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield f"{path}.{key}.{name}", sub
    for key in _SUB_LIST:
        value = schema.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                yield f"{path}.{key}[{i}]", sub


def walk_schema(schema: Any, path: str = "parameters") -> Iterator[tuple[str, Any]]:
    """Yield (path, node) for `schema` and every nested subschema, depth first.

    A node may be changed in place when it is yielded: its subschemas are read afterwards.
    """
    yield path, schema
    for sub_path, sub in iter_subschemas(schema, path):
        yield from walk_schema(sub, sub_path)


def map_schema(schema: Any, fn: Callable[[dict[str, Any]], None]) -> None:
    """Apply `fn` in place to every schema node (mappings only) of `schema`."""
    for _, node in walk_schema(schema):
        if isinstance(node, dict):
            fn(node)


def type_names(node: dict[str, Any]) -> list[str]:
    """The type names a schema node declares (none if it declares no type)."""
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


class RefError(Exception):
    """A $ref that cannot be followed (external, dangling, or pointing at a non-object)."""


def resolve_pointer(doc: Any, ref: str) -> Any:
    """The node a local JSON-pointer $ref ('#/a/b') names inside `doc`."""
    if not ref.startswith("#"):
        raise RefError(f"external $ref {ref!r} is not supported (only '#/...')")
    node = doc
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = urllib.parse.unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise RefError(f"$ref {ref!r} does not resolve")
    return node


