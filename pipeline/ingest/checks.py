"""The checks every tool passes, whatever its source format: our rules for names, descriptions and
`parameters`, then the JSON Schema 2020-12 metaschema.

Each problem is a (field, message) pair with the field named in native shape;
utcgen.pipeline.ingest.reader turns it into ``FILE: tool #N 'name': field: message``.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from jsonschema import Draft202012Validator

from ..core.records import Tool
from .common import JSON_TYPES, RefError, json_type_name, resolve_pointer, walk_schema

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
MAX_NAME_LENGTH = 64  # what OpenAI-style function calling accepts
TOOL_FIELDS = tuple(Tool.model_fields)

Problem = tuple[str, str]  # (field, message)


def check_tool(data: Any) -> list[Problem]:
    """Every problem with one tool in native shape, as (field, message) pairs."""
    if not isinstance(data, dict):
        return []  # already reported by the importer
    problems: list[Problem] = []
    for key in data:
        if key not in TOOL_FIELDS:
            problems.append((str(key), f"unknown field (a tool has: {', '.join(TOOL_FIELDS)})"))
    problems += _check_name(data)
    description = data.get("description")
    if "description" not in data:
        problems.append(("description", "missing"))
    elif not isinstance(description, str):
        problems.append(("description", f"must be a string, got a {json_type_name(description)}"))
    elif not description.strip():
        problems.append(("description", "is empty"))
    if "parameters" in data:
        problems += check_parameters(data["parameters"])
    lob = data.get("line_of_business")
    if lob is not None and not isinstance(lob, str):
        problems.append(("line_of_business", f"must be a string or null, got a {json_type_name(lob)}"))
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        problems.append(("tags", "must be a list of strings"))
    if data.get("output_schema") is not None:
        problems += check_output_schema(data["output_schema"])
    return problems


def check_output_schema(schema: Any) -> list[Problem]:
    """Problems with a tool's `output_schema` (null or absent when the catalog does not say what a call
    returns): a JSON Schema object whose nodes are schemas, valid under the 2020-12 metaschema."""
    if not isinstance(schema, dict):
        return [("output_schema", f"must be a JSON Schema object or null, got a {json_type_name(schema)}")]
    problems: list[Problem] = []
    for path, node in walk_schema(schema, "output_schema"):
        if not isinstance(node, dict | bool):
            problems.append((path, f"must be a schema object, got a {json_type_name(node)}"))
    ours = [where for where, _ in problems]
    problems += [(where, message) for where, message in _metaschema_errors(schema, "output_schema")
                 if not any(_overlaps(where, other) for other in ours)]
    return problems


def _check_name(data: dict[str, Any]) -> list[Problem]:
    if "name" not in data:
        return [("name", "missing")]
    name = data["name"]
    if not isinstance(name, str):
        return [("name", f"must be a string, got a {json_type_name(name)}")]
    if not name.strip():
        return [("name", "is empty")]
    problems: list[Problem] = []
    if len(name) > MAX_NAME_LENGTH:
        problems.append(("name", f"is {len(name)} characters long (at most {MAX_NAME_LENGTH})"))
    if not NAME_RE.fullmatch(name):
        bad = "".join(sorted(set(re.sub(r"[A-Za-z0-9_.-]", "", name))))
        problems.append(
            ("name", f"{name!r} contains {bad!r}: only letters, digits, '_', '.' and '-' are allowed")
        )
    return problems


def check_parameters(params: Any) -> list[Problem]:
    """Problems with a tool's `parameters` schema: our rules first, then the 2020-12 metaschema
    (whose findings are skipped where ours already explain the same spot)."""
    if not isinstance(params, dict):
        return [("parameters", f"must be a JSON Schema object, got a {json_type_name(params)}")]
    problems: list[Problem] = []
    if params.get("type") != "object":
        got = f"got {params['type']!r}" if "type" in params else "it is missing"
        problems.append(("parameters.type", f"must be 'object' (arguments are a JSON object); {got}"))
    for path, node in walk_schema(params):
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            problems.append((path, f"must be a schema object, got a {json_type_name(node)}"))
            continue
        problems += _check_node(node, path, params, is_root=path == "parameters")
    ours = [where for where, _ in problems]
    for where, message in _metaschema_errors(params):
        if not any(_overlaps(where, other) for other in ours):
            problems.append((where, message))
    return list(dict.fromkeys(problems))


def _overlaps(a: str, b: str) -> bool:
    """Whether one field path is the other or lies inside it."""
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith((short + ".", short + "["))


def _check_node(node: dict[str, Any], path: str, root: dict[str, Any], is_root: bool) -> list[Problem]:
    problems: list[Problem] = []
    declared: list[str] = []
    if "type" in node and not is_root:  # the root's type is check_parameters' business
        t = node["type"]
        names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
        if names is None:
            problems.append((f"{path}.type", f"must be a type name or a list of them, got a {json_type_name(t)}"))
        for name in names or []:
            if isinstance(name, str) and name in JSON_TYPES:
                declared.append(name)
            else:
                problems.append(
                    (f"{path}.type", f"unknown type {name!r} (allowed: {', '.join(sorted(JSON_TYPES))})")
                )
    props = node.get("properties", {})
    if not isinstance(props, dict):
        problems.append((f"{path}.properties", f"must be a mapping of name to schema, got a {json_type_name(props)}"))
        props = {}
    for key, sub in props.items():
        if not isinstance(key, str):
            problems.append((f"{path}.properties", f"property name {key!r} is not a string (quote it in YAML)"))
        if isinstance(sub, bool):
            problems.append((f"{path}.properties.{key}", "must be a schema object, got a boolean"))
    if "required" in node:
        problems += _check_required(node["required"], props, f"{path}.required",
                                    check_names=is_root or "properties" in node)
    for keyword in ("enum", "const"):
        if keyword not in node:
            continue
        values = node[keyword] if keyword == "enum" else [node[keyword]]
        if keyword == "enum" and not isinstance(values, list):
            problems.append((f"{path}.enum", f"must be a list of values, got a {json_type_name(values)}"))
            continue
        if keyword == "enum" and not values:
            problems.append((f"{path}.enum", "is empty: no value could ever be valid"))
        if declared:
            for value in values:
                if not any(_is_type(value, t) for t in declared):
                    problems.append(
                        (f"{path}.{keyword}", f"value {value!r} is not of the declared type {' or '.join(declared)}")
                    )
    if "pattern" in node:
        problems += _check_regex(node["pattern"], f"{path}.pattern")
    if isinstance(node.get("patternProperties"), dict):
        for rx in node["patternProperties"]:
            problems += _check_regex(rx, f"{path}.patternProperties")
    ref = node.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#"):
            problems.append((f"{path}.$ref", f"{ref!r}: only local references ('#/...') are supported"))
        else:
            try:
                resolve_pointer(root, ref)
            except RefError:
                problems.append((f"{path}.$ref", f"{ref!r} does not resolve within parameters"))
    return problems


def _check_required(required: Any, props: dict[str, Any], field: str, check_names: bool) -> list[Problem]:
    if not isinstance(required, list):
        return [(field, f"must be a list of property names, got a {json_type_name(required)}")]
    problems: list[Problem] = []
    seen: set[str] = set()
    for name in required:
        if not isinstance(name, str):
            problems.append((field, f"{name!r} is not a property name (a string)"))
            continue
        if name in seen:
            problems.append((field, f"{name!r} is listed twice"))
        seen.add(name)
        if check_names and name not in props:
            problems.append((field, f"{name!r} is not in properties"))
    return problems


def _check_regex(pattern: Any, field: str) -> list[Problem]:
    if not isinstance(pattern, str):
        return [(field, f"must be a string, got a {json_type_name(pattern)}")]
    try:
        re.compile(pattern)
    except re.error as exc:
        return [(field, f"{pattern!r} does not compile: {exc}")]
    return []


def _is_type(value: Any, type_name: str) -> bool:
    """JSON Schema's notion of a value's type (1.0 is an integer; True is not a number)."""
    if isinstance(value, bool):
        return type_name == "boolean"
    if type_name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, {
        "string": str, "number": (int, float), "boolean": bool,
        "null": type(None), "array": list, "object": dict,
    }[type_name])


@functools.cache
def _metaschema_validator() -> Any:
    return Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _metaschema_errors(params: dict[str, Any], root: str = "parameters") -> list[Problem]:
    if _shape_is_valid(params):
        return []
    out: list[Problem] = []
    for err in _metaschema_validator().iter_errors(params):
        field = root + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path
        )
        out.append((field, f"invalid JSON Schema: {err.message}"))
    return out


# Keywords whose value, when a string, the metaschema takes whatever it says.
_TEXT_KEYWORDS = frozenset({"description", "title", "$comment"})


def _shape(node: Any) -> Any:
    """`node` as the metaschema sees it: description, title and $comment text blanked, the names under
    `properties` and in `required` numbered (uniqueness kept). It is valid exactly when `node` is, and
    the tools of a catalog share a few shapes: the 2020-12 metaschema costs about 1 ms a tool (100 s for
    100,000 tools), a shape seen before nothing."""
    if isinstance(node, list):
        return [_shape(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _TEXT_KEYWORDS and isinstance(value, str):
            out[key] = ""
        elif key == "properties" and isinstance(value, dict):
            out[key] = {f"p{i}": _shape(v) for i, v in enumerate(value.values())}
        elif key == "required" and isinstance(value, list) and all(isinstance(x, str) for x in value):
            numbers: dict[str, str] = {}
            out[key] = [numbers.setdefault(x, f"r{len(numbers)}") for x in value]
        else:
            out[key] = _shape(value)
    return out


def _shape_is_valid(params: Any) -> bool:
    """True when `params` passes the metaschema, known from shapes seen before where it can be. The
    metaschema checks each schema under `properties` on its own, as a schema, so those are looked up one by
    one (a catalog has few kinds of parameter, many combinations of them). False also when a shape cannot
    be written as JSON: the full check then says what is wrong."""
    if isinstance(params, dict) and isinstance(params.get("properties"), dict):
        properties = params["properties"]
        outer = {**params, "properties": {f"p{i}": {} for i in range(len(properties))}}
        return _seen_valid(outer) and all(_shape_is_valid(v) for v in properties.values())
    return _seen_valid(params)


def _seen_valid(node: Any) -> bool:
    try:
        key = json.dumps(_shape(node), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return _shape_check(key)


@functools.lru_cache(maxsize=8192)
def _shape_check(shape: str) -> bool:
    return _metaschema_validator().is_valid(json.loads(shape))
