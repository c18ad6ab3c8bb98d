"""Tool-catalog importers: turn parsed OpenAI, MCP, OpenAPI 3.x and BFCL documents into
dicts shaped like our `Tool` (name, description, parameters, line_of_business, tags).

This module only reshapes already-parsed data and reports what it cannot reshape; it
does not validate the result (utcgen.pipeline.catalog.reader does, uniformly for every format) and
imports nothing beyond the standard library so the CLI can use `FORMATS` cheaply.

Format detection (`detect_format`) looks at the parsed top level, then at each item:

* a mapping with an ``openapi`` key is an OpenAPI 3.x document (``swagger`` 2.0 is refused);
* ``{"tools": [...]}``, a JSON-RPC ``{"result": {"tools": [...]}}`` envelope, a plain list
  (or the lines of a JSONL file) are lists of items; a lone mapping is a one-item list;
* an item with ``"type": "function"`` is OpenAI (chat ``{"function": {...}}`` or flat
  responses style) and so is one with ``strict``; one with ``inputSchema`` is MCP; one with
  ``line_of_business`` or ``tags`` is native; a BFCL test entry
  (``{"id", "question", "function": [...]}``) is BFCL. These markers are decisive;
* an item whose ``parameters`` use BFCL's type names anywhere (``dict``, ``float``,
  ``tuple``, ``any``, ...) but has no marker hints BFCL: the file is BFCL unless another
  item carries a marker, in which case those type names are reported as unknown types;
* any other item (plain ``name``/``description``/``parameters``) fits native, OpenAI and BFCL
  alike and takes the format of its neighbours; a list of only such items is native;
* markers of two different formats in one file are an error: split it or force a format.
"""

from __future__ import annotations

import copy
import re
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

FORMATS: tuple[str, ...] = ("native", "openai", "mcp", "openapi", "bfcl")

JSON_TYPES: frozenset[str] = frozenset(
    {"string", "integer", "number", "boolean", "array", "object", "null"}
)

# BFCL (and the Python/Java/JS docs it was built from) spell types their own way.
BFCL_TYPE_MAP: dict[str, str | None] = {
    "dict": "object",
    "hashmap": "object",
    "float": "number",
    "double": "number",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "str": "string",
    "char": "string",
    "bool": "boolean",
    "tuple": "array",
    "list": "array",
    "arraylist": "array",
    "any": None,  # no constraint: the "type" keyword is dropped
}

HTTP_METHODS: tuple[str, ...] = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Keywords whose value is one subschema / a mapping of subschemas / a list of subschemas.
_SUB_ONE = (
    "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema",
)
_SUB_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUB_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")

_JSON_MEDIA = re.compile(r"^application/([\w.-]+\+)?json(\s*;.*)?$", re.IGNORECASE)


class FormatError(Exception):
    """The file's top level matches no supported format (reported as one problem)."""


@dataclass
class Candidate:
    """One tool as found in a source file, before validation.

    `data` is the tool in native shape (or the raw item if it could not be reshaped).
    `problems` are (field, message) pairs found while reshaping, with fields named as in
    the source file. `field_map` renames native fields to the source's own names in
    validation messages (e.g. parameters -> inputSchema for MCP), so users can find them.
    """

    index: int
    data: Any
    line: int | None = None
    origin: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
    field_map: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str | None:
        name = self.data.get("name") if isinstance(self.data, dict) else None
        return name if isinstance(name, str) and name.strip() else None


# --------------------------------------------------------------------------- schema walking


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
    """Yield (path, node) for `schema` and every nested subschema, depth first."""
    yield path, schema
    for sub_path, sub in iter_subschemas(schema, path):
        yield from walk_schema(sub, sub_path)


def _map_schema(schema: Any, fn: Callable[[dict[str, Any]], None]) -> None:
    """Apply `fn` in place to every schema node (mappings only) of `schema`."""
    for _, node in walk_schema(schema):
        if isinstance(node, dict):
            fn(node)


def _type_names(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


# --------------------------------------------------------------------------- detection


def _is_bfcl_type(name: str) -> bool:
    return name not in JSON_TYPES and (
        name.lower() in BFCL_TYPE_MAP or name.lower() in JSON_TYPES
    )


def _uses_bfcl_types(schema: Any) -> bool:
    return any(
        isinstance(node, dict) and any(_is_bfcl_type(t) for t in _type_names(node))
        for _, node in walk_schema(schema)
    )


def _is_bfcl_entry(item: dict[str, Any]) -> bool:
    return "question" in item and isinstance(item.get("function"), (list, dict))


def item_format(item: Any) -> str | None:
    """The format an item alone points to, or None when it fits several (see module doc)."""
    signal = _item_signal(item)
    return signal[0] if signal else None


def _item_signal(item: Any) -> tuple[str, bool] | None:
    """(format, strong): BFCL type names alone are a weak hint that a marked item overrides."""
    if not isinstance(item, dict):
        return None
    if item.get("type") == "function" or "strict" in item:
        return "openai", True
    if "inputSchema" in item:
        return "mcp", True
    if _is_bfcl_entry(item):
        return "bfcl", True
    if "line_of_business" in item or "tags" in item:
        return "native", True
    if isinstance(item.get("parameters"), dict) and _uses_bfcl_types(item["parameters"]):
        return "bfcl", False
    return None


def unwrap_items(data: Any) -> list[Any] | None:
    """The item list of a non-OpenAPI document, or None if the top level is not one."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if "tools" in data:
        return data["tools"] if isinstance(data["tools"], list) else None
    result = data.get("result")
    if "jsonrpc" in data and isinstance(result, dict) and isinstance(result.get("tools"), list):
        return result["tools"]
    if "name" in data or "function" in data or "inputSchema" in data:
        return [data]
    return None


_EXPECTED = (
    "expected a list of tools, {\"tools\": [...]}, an MCP tools/list result "
    "or an OpenAPI 3.x document"
)


def detect_format(data: Any) -> str:
    """Name the format of a parsed catalog file; raise FormatError if there is none."""
    if isinstance(data, dict) and "openapi" in data:
        return "openapi"
    if isinstance(data, dict) and "swagger" in data:
        raise FormatError("unknown format: Swagger 2.0 is not supported; convert it to OpenAPI 3.x")
    items = unwrap_items(data)
    if items is None:
        if isinstance(data, dict) and "tools" in data:
            raise FormatError(f"unknown format: 'tools' is a {kind_of(data['tools'])}, not a list")
        raise FormatError(f"unknown format: top level is a {kind_of(data)}; {_EXPECTED}")
    strong: dict[str, int] = {}
    weak: dict[str, int] = {}
    for i, item in enumerate(items):
        signal = _item_signal(item)
        if signal is not None:
            (strong if signal[1] else weak).setdefault(signal[0], i)
    if len(strong) > 1:
        found = ", ".join(f"tool #{i} looks {fmt}" for fmt, i in strong.items())
        raise FormatError(
            f"unknown format: items disagree ({found}); split the file or pass a format"
        )
    return next(iter(strong), next(iter(weak), "native"))


def kind_of(value: Any) -> str:
    """A JSON-ish name for a value's type, for messages."""
    if value is None:
        return "null"
    names = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- list formats


def _not_object(index: int, item: Any, line: int | None) -> Candidate:
    return Candidate(index, item, line, problems=[("", f"expected a tool object, got a {kind_of(item)}")])


def _native(items: list[Any], lines: list[int | None]) -> list[Candidate]:
    return [
        Candidate(i, dict(item), lines[i]) if isinstance(item, dict) else _not_object(i, item, lines[i])
        for i, item in enumerate(items)
    ]


_OPENAI_FN_KEYS = {"name", "description", "parameters", "strict"}


def _openai(items: list[Any], lines: list[int | None]) -> list[Candidate]:
    out: list[Candidate] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(_not_object(i, item, lines[i]))
            continue
        fn: Any = item
        field_map: dict[str, str] = {}
        problems: list[tuple[str, str]] = []
        if "type" in item and item["type"] != "function":
            problems.append(("type", f"only 'function' tools can be imported, got {item['type']!r}"))
        if "function" in item:
            fn = item["function"]
            field_map = {k: f"function.{k}" for k in ("name", "description", "parameters")}
            if not isinstance(fn, dict):
                problems.append(("function", f"expected an object, got a {kind_of(fn)}"))
                fn = {}
        # OpenAI's function spec is closed: a stray key (say MCP's inputSchema under a
        # forced format) would otherwise vanish silently with the arguments it describes.
        known = _OPENAI_FN_KEYS | ({"type", "function"} if fn is item else set())
        prefix = "function." if fn is not item else ""
        problems += [(f"{prefix}{k}", "unknown field in an OpenAI function") for k in fn if k not in known]
        data = {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
        out.append(Candidate(i, data, lines[i], problems=problems, field_map=field_map))
    return out


def _mcp(items: list[Any], lines: list[int | None]) -> list[Candidate]:
    out: list[Candidate] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(_not_object(i, item, lines[i]))
            continue
        data = {k: item[k] for k in ("name", "description") if k in item}
        problems: list[tuple[str, str]] = []
        if "inputSchema" in item:
            data["parameters"] = item["inputSchema"]
        else:
            problems.append(("inputSchema", "missing"))
        out.append(Candidate(i, data, lines[i], problems=problems, field_map={"parameters": "inputSchema"}))
    return out


def _bfcl_fix_types(node: dict[str, Any]) -> None:
    t = node.get("type")
    names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
    if names is None:
        return
    mapped: list[str] = []
    for name in names:
        if not isinstance(name, str) or name in JSON_TYPES:
            mapped.append(name)
        elif name.lower() in JSON_TYPES:
            mapped.append(name.lower())
        elif name.lower() in BFCL_TYPE_MAP:
            target = BFCL_TYPE_MAP[name.lower()]
            if target is None:  # "any" anywhere means unconstrained
                del node["type"]
                return
            mapped.append(target)
        else:
            mapped.append(name)  # left for validation to report
    node["type"] = mapped[0] if isinstance(t, str) else list(dict.fromkeys(mapped))


def _bfcl_doc(fn: dict[str, Any]) -> dict[str, Any]:
    data = {k: copy.deepcopy(fn[k]) for k in ("name", "description", "parameters") if k in fn}
    if "parameters" in data:
        _map_schema(data["parameters"], _bfcl_fix_types)
    return data


def _bfcl(items: list[Any], lines: list[int | None]) -> list[Candidate]:
    """BFCL function docs, or BFCL test entries whose `function` lists hold the docs.

    Test entries repeat the same function across entries; exact repeats are kept once.
    """
    out: list[Candidate] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(_not_object(len(out), item, lines[i]))
            continue
        if not _is_bfcl_entry(item):
            out.append(Candidate(len(out), _bfcl_doc(item), lines[i]))
            continue
        fns = item["function"] if isinstance(item["function"], list) else [item["function"]]
        origin = f"entry {item['id']!r}" if "id" in item else f"entry #{i}"
        for fn in fns:
            if not isinstance(fn, dict):
                out.append(_not_object(len(out), fn, lines[i]))
                continue
            key = repr(sorted(fn.items(), key=lambda kv: str(kv[0])))
            if key in seen:
                continue
            seen.add(key)
            out.append(Candidate(len(out), _bfcl_doc(fn), lines[i], origin=origin))
    return out


# --------------------------------------------------------------------------- OpenAPI


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


def _resolve(node: Any, doc: Any, stack: tuple[str, ...] = ()) -> Any:
    """A copy of `node` with every local $ref inlined (siblings of $ref win).

    A $ref back into a schema being expanded (a recursive schema) cannot be inlined; it is
    cut to the target's type and description so the tool stays usable.
    """
    if isinstance(node, list):
        return [_resolve(x, doc, stack) for x in node]
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
            return {**cut, **_resolve(siblings, doc, stack)}
        resolved = _resolve(target, doc, stack + (ref,))
        if not siblings:
            return resolved
        if not isinstance(resolved, dict):
            raise RefError(f"$ref {ref!r} points to a {kind_of(resolved)}, not an object")
        return {**resolved, **_resolve(siblings, doc, stack)}
    return {k: _resolve(v, doc, stack) for k, v in node.items()}


def _from_openapi30(node: dict[str, Any]) -> None:
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


def _drop_openapi_only(node: dict[str, Any]) -> None:
    for key in ("discriminator", "xml", "externalDocs"):
        node.pop(key, None)


def _flatten_allof(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge a body schema's allOf parts into one object schema (properties, required)."""
    parts = schema.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return schema
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[Any] = list(merged.get("required") or [])
    for part in parts:
        flat = _flatten_allof(part)
        props.update(flat.get("properties") or {})
        required += [r for r in flat.get("required") or [] if r not in required]
        for key in ("type", "description"):
            if key in flat:
                merged.setdefault(key, flat[key])
    merged["properties"] = props
    merged["required"] = required
    return merged


def _is_object_schema(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    return t == "object" or (t is None and isinstance(schema.get("properties"), dict))


def _join_text(*parts: Any) -> str:
    texts = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    if len(texts) == 2 and texts[1].startswith(texts[0]):
        texts = texts[1:]
    out = ""
    for text in texts:
        if out:
            out += " " if out[-1] in ".!?:" else ". "
        out += text
    return out


def _slug(method: str, path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", f"{method}_{path}").strip("_")


def _openapi_operation(
    doc: dict[str, Any], path: str, method: str, op: dict[str, Any], common: list[Any], is30: bool
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    where = f"paths.{path}.{method}"
    problems: list[tuple[str, str]] = []
    fix: Callable[[dict[str, Any]], None] = _from_openapi30 if is30 else (lambda _n: None)

    def schema_of(raw: Any, at: str) -> dict[str, Any] | None:
        try:
            schema = _resolve(raw, doc)
        except RefError as exc:
            problems.append((at, str(exc)))
            return None
        if not isinstance(schema, dict):
            problems.append((at, f"expected a schema object, got a {kind_of(schema)}"))
            return None
        _map_schema(schema, fix)
        _map_schema(schema, _drop_openapi_only)
        return schema

    props: dict[str, Any] = {}
    required: list[str] = []
    source: dict[str, str] = {}

    # Operation parameters override path-level ones with the same (name, in).
    params: dict[tuple[Any, Any], tuple[str, Any]] = {}
    op_params = op.get("parameters", [])
    for at, plist in ((f"paths.{path}.parameters", common), (f"{where}.parameters", op_params)):
        if not isinstance(plist, list):
            problems.append((at, f"expected a list, got a {kind_of(plist)}"))
            continue
        for i, raw in enumerate(plist):
            try:
                param = _resolve(raw, doc)
            except RefError as exc:
                problems.append((f"{at}[{i}]", str(exc)))
                continue
            if not isinstance(param, dict):
                problems.append((f"{at}[{i}]", f"expected a parameter object, got a {kind_of(param)}"))
                continue
            params[(param.get("name"), param.get("in"))] = (f"{at}[{i}]", param)

    for at, param in params.values():
        name, loc = param.get("name"), param.get("in")
        if loc in ("header", "cookie"):
            continue  # transport detail, not something a user says
        if loc not in ("path", "query"):
            problems.append((f"{at}.in", f"expected path, query, header or cookie, got {loc!r}"))
            continue
        if not isinstance(name, str) or not name:
            problems.append((f"{at}.name", "missing or not a string"))
            continue
        raw_schema: Any = param.get("schema")
        if raw_schema is None and isinstance(param.get("content"), dict) and param["content"]:
            media_obj = next(iter(param["content"].values()))
            raw_schema = media_obj.get("schema") if isinstance(media_obj, dict) else None
        schema = schema_of(raw_schema if raw_schema is not None else {"type": "string"}, f"{at}.schema")
        if schema is None:
            continue
        if isinstance(param.get("description"), str) and "description" not in schema:
            schema = {**schema, "description": param["description"]}
        props[name] = schema
        source[name] = f"{loc} parameter"
        if loc == "path" or param.get("required") is True:
            required.append(name)

    body_at = f"{where}.requestBody"
    try:
        body = _resolve(op.get("requestBody"), doc)
    except RefError as exc:
        problems.append((body_at, str(exc)))
        body = None
    if isinstance(body, dict) and isinstance(body.get("content"), dict):
        media = next((m for m in body["content"] if _JSON_MEDIA.match(str(m))), None)
        media_obj = body["content"].get(media) if media is not None else None
        if isinstance(media_obj, dict) and "schema" in media_obj:
            schema = schema_of(media_obj["schema"], f"{body_at}.content.{media}.schema")
            if schema is not None:
                schema = _flatten_allof(schema)
                schema_at = f"{body_at}.content.{media}.schema"
                if _is_object_schema(schema):
                    fields = schema.get("properties") or {}
                    body_required = schema.get("required") or []
                else:  # arrays and scalars travel whole, as one "body" argument
                    fields = {"body": schema}
                    body_required = ["body"] if body.get("required") is True else []
                if not isinstance(fields, dict):
                    problems.append((f"{schema_at}.properties", f"expected a mapping, got a {kind_of(fields)}"))
                    fields = {}
                if not isinstance(body_required, list):
                    problems.append((f"{schema_at}.required", f"expected a list, got a {kind_of(body_required)}"))
                    body_required = []
                left_out: set[str] = set()
                for name, sub in fields.items():
                    if isinstance(sub, dict) and sub.get("readOnly") is True:
                        left_out.add(name)  # readOnly fields are never sent in requests
                        continue
                    if name in props and props[name] != sub:
                        problems.append(
                            (f"{schema_at}.properties.{name}", f"clashes with the {source[name]} of the same name")
                        )
                        left_out.add(name)
                        continue
                    props[name] = sub
                    source[name] = "request body field"
                # Names required but never defined stay, so validation reports them.
                required += [r for r in body_required if r not in left_out and r not in required]

    tags = op.get("tags") if isinstance(op.get("tags"), list) else []
    data: dict[str, Any] = {
        "name": op["operationId"] if "operationId" in op else _slug(method, path),
        "description": _join_text(op.get("summary"), op.get("description")),
        "parameters": {"type": "object", "properties": props, "required": required},
        "tags": tags,
    }
    if tags and isinstance(tags[0], str):
        data["line_of_business"] = tags[0]
    return data, problems


def _openapi(doc: Any) -> tuple[list[Candidate], list[str]]:
    """One candidate per operation of an OpenAPI 3.x document, in document order.

    Path and query parameters plus the JSON request body's fields become one object schema
    (header and cookie parameters are dropped; non-JSON bodies are skipped). Required = path
    parameters, required query parameters and the body schema's required fields.
    """
    if not isinstance(doc, dict):
        return [], [f"expected an OpenAPI 3.x document (a mapping), got a {kind_of(doc)}"]
    version = doc.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        return [], [f"openapi: unsupported version {version!r} (expected 3.x)"]
    paths = doc.get("paths")
    if not isinstance(paths, dict):
        return [], ["paths: missing or not a mapping"]
    out: list[Candidate] = []
    file_problems: list[str] = []
    for path, item in paths.items():
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            # Only the path item itself: responses and the like are never read, so a
            # broken $ref there must not stop the import.
            try:
                target = resolve_pointer(doc, item["$ref"])
            except RefError as exc:
                file_problems.append(f"paths.{path}: {exc}")
                continue
            if isinstance(target, dict):
                item = {**target, **{k: v for k, v in item.items() if k != "$ref"}}
        if not isinstance(item, dict):
            file_problems.append(f"paths.{path}: expected a path item (mapping), got a {kind_of(item)}")
            continue
        for method, op in item.items():
            if not isinstance(method, str) or method.lower() not in HTTP_METHODS:
                continue
            origin = f"{method.upper()} {path}"
            if not isinstance(op, dict):
                out.append(Candidate(len(out), op, origin=origin,
                                     problems=[("", f"expected an operation object, got a {kind_of(op)}")]))
                continue
            data, problems = _openapi_operation(
                doc, str(path), method.lower(), op, item.get("parameters", []), version.startswith("3.0")
            )
            out.append(Candidate(len(out), data, origin=origin, problems=problems))
    return out, file_problems


# --------------------------------------------------------------------------- entry point


def extract(data: Any, fmt: str, lines: list[int | None] | None = None) -> tuple[list[Candidate], list[str]]:
    """Reshape a parsed document of format `fmt` into candidates, plus file-level problems.

    `lines` gives the source line of each top-level item (JSONL); absent otherwise.
    """
    if fmt == "openapi":
        if isinstance(data, list):
            return [], ["an OpenAPI document is one mapping; it cannot be split into JSONL lines"]
        return _openapi(data)
    items = unwrap_items(data)
    if items is None:
        return [], [f"not a {fmt} catalog: {_EXPECTED}"]
    line_of: list[int | None] = list(lines) if lines is not None else [None] * len(items)
    convert = {"native": _native, "openai": _openai, "mcp": _mcp, "bfcl": _bfcl}[fmt]
    return convert(items, line_of), []
