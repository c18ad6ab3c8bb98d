"""What a call asks of the model's output: structured output (`response_format`) and native tools.

Modes (`llm.structured_output`, per role `llm.structured_output_roles`):
* `json_schema`: OpenAI's form, `{"type": "json_schema", "json_schema": {"name", "strict": true,
  "schema"}}` (OpenAI, vLLM, llama.cpp's llama-server, most hosted APIs; litellm hands it to
  Ollama as its `format`). Every reply schema meets strict mode (`strict_problems`).
* `json_object`: `{"type": "json_object", "schema": {...}}`: llama-cpp-python's server
  constrains decoding to the schema; servers that ignore `schema` still return JSON.
* `off`: nothing is sent; the prompt alone describes the format.
* `auto`: `json_schema` when litellm knows the model supports response schemas or the
  provider honours the form (`hosted_vllm/`, `ollama/`, `ollama_chat/`: `SCHEMA_PROVIDERS`),
  else `json_object`; a server that refuses the form (a 4xx/5xx naming response_format or
  the schema, or a validation error) moves that (model, api_base) one step down the
  ladder json_schema -> json_object -> json_object without schema -> off, with one
  warning, and the rest of the run uses the form that worked.

Roles whose reply is free text get no `response_format`; neither does the assistant in
`native` tool format (its calls come back as `tool_calls`, its words as text).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

from .registry import quiet_litellm

log = logging.getLogger("utcgen.llm")

# What `auto` walks down when a server refuses a form. "json_object_bare" is json_object
# without the schema: for servers that accept JSON mode but choke on the schema itself.
LADDER = ("json_schema", "json_object", "json_object_bare", "off")


@dataclass(frozen=True)
class Shape:
    """What one call asks for besides its messages: the reply's schema and native tools."""

    schema: dict[str, Any] | None = None
    name: str = "reply"
    tools: list[dict[str, Any]] | None = None


def response_format(mode: str, shape: Shape) -> dict[str, Any] | None:
    """The `response_format` a mode sends for a shape (None: send nothing)."""
    if shape.schema is None or mode == "off":
        return None
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": shape.name, "strict": True, "schema": shape.schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": shape.schema}
    if mode == "json_object_bare":
        return {"type": "json_object"}
    raise ValueError(f"unknown structured output mode {mode!r}")


_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema|grammar|validation error|"
                           r"unsupported param|does not support param", re.IGNORECASE)


def refuses_format(exc: Exception) -> bool:
    """A server (or litellm) error that says the request's response_format was the problem."""
    status = getattr(exc, "status_code", None)
    if status in (401, 403, 404, 408, 429):
        return False
    if status == 422:
        return True
    text = f"{type(exc).__name__} {exc}"
    if status is None and "UnsupportedParams" not in text:
        return False
    return bool(_NAMES_FORMAT.search(text))


# Providers whose servers honour OpenAI's json_schema form though litellm cannot say so for a model
# name it does not know: vLLM (litellm's hosted_vllm passes response_format through unchanged) and
# Ollama (litellm maps json_schema's schema to Ollama's `format`, but json_object to `format:
# "json"`, dropping the schema).
SCHEMA_PROVIDERS = ("hosted_vllm/", "ollama/", "ollama_chat/")


def supports_schema(model: str) -> bool:
    litellm = quiet_litellm()
    if model.startswith(SCHEMA_PROVIDERS):
        return True
    try:
        return bool(litellm.supports_response_schema(model))
    except Exception:
        return False


class Formats:
    """The structured-output mode of each call: configured per role, or learnt per server by `auto`."""

    def __init__(self, default: str = "auto", by_role: dict[str, str] | None = None) -> None:
        self.default = default
        self.by_role = dict(by_role or {})
        self._learnt: dict[tuple[str, str | None], str] = {}
        self._lock = threading.Lock()
        self.fallbacks: list[str] = []  # the warnings given, in order (one per server and step)

    def configured(self, role: str) -> str:
        return self.by_role.get(role, self.default)

    def mode(self, role: str, model: str, api_base: str | None) -> str:
        """The concrete mode (never `auto`) the next call of `role` to this server uses."""
        mode = self.configured(role)
        if mode != "auto":
            return mode
        with self._lock:
            found = self._learnt.get((model, api_base))
            if found is None:
                found = self._learnt[(model, api_base)] = "json_schema" if supports_schema(model) else "json_object"
        return found

    def refused(self, role: str, model: str, api_base: str | None, mode: str, exc: Exception) -> str | None:
        """The mode to try next after the server refused `mode`, or None if this is not ours to fix
        (the role's mode is configured, or the error is not about the format)."""
        if self.configured(role) != "auto" or mode == "off" or not refuses_format(exc):
            return None
        step = LADDER[LADDER.index(mode) + 1]
        with self._lock:
            current = self._learnt.get((model, api_base))
            if current is not None and LADDER.index(current) > LADDER.index(mode):
                return current  # a concurrent call has already stepped down (and warned)
            self._learnt[(model, api_base)] = step
        where = f"{model} at {api_base}" if api_base else model
        message = (f"structured output: {where} refused response_format {mode} "
                   f"({type(exc).__name__}: {' '.join(str(exc).split())[:160]}); using {step} for the rest of the run")
        self.fallbacks.append(message)
        log.warning("%s", message)
        return step


# ---- OpenAI's strict mode: what a schema sent with "strict": true may hold --------------------------

STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
    "description", "title", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "$ref", "$defs", "definitions"})
STRICT_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
MAX_DEPTH, MAX_PROPERTIES, MAX_ENUM_VALUES = 10, 5000, 1000  # OpenAI's published limits


def strict_problems(schema: Any) -> list[str]:
    """Every way `schema` breaks OpenAI's strict mode, one line each, named by its JSON path ($ is
    the root): an object not closed, a property missing from `required`, a free-form value, a
    keyword strict mode does not support, a root that is not an object, a limit passed."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0}
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append("$: the root must be an object schema")
    _walk(schema, "$", 1, problems, counts)
    if counts["properties"] > MAX_PROPERTIES:
        problems.append(f"$: {counts['properties']} properties in all, more than strict mode's {MAX_PROPERTIES}")
    if counts["enum"] > MAX_ENUM_VALUES:
        problems.append(f"$: {counts['enum']} enum values in all, more than strict mode's {MAX_ENUM_VALUES}")
    return problems


def _walk(node: Any, path: str, depth: int, problems: list[str], counts: dict[str, int]) -> None:
    if not isinstance(node, dict):
        problems.append(f"{path}: {json_kind(node)} is not a schema")
        return
    problems += [f"{path}: '{key}' is not supported in strict mode" for key in node if key not in STRICT_KEYWORDS]
    for key in ("$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            _walk(sub, f"{path}.{key}.{name}", depth, problems, counts)
    if "$ref" in node:
        return
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if not kinds and not {"anyOf", "enum", "const"} & node.keys():
        problems.append(f"{path}: no type (a value of any type cannot be strict)")
    problems += [f"{path}: unknown type {k!r}" for k in kinds if k not in STRICT_TYPES]
    if "object" in kinds:
        properties = node.get("properties")
        if not isinstance(properties, dict):
            problems.append(f"{path}: an object without properties (free-form) cannot be strict")
        else:
            counts["properties"] += len(properties)
            if depth > MAX_DEPTH:
                problems.append(f"{path}: objects nested {depth} deep, more than strict mode's {MAX_DEPTH}")
            required = node.get("required")
            missing = [p for p in properties if not isinstance(required, list) or p not in required]
            if missing:
                problems.append(f"{path}: properties not in required: {', '.join(missing)}")
            for name, sub in properties.items():
                _walk(sub, f"{path}.properties.{name}", depth + 1, problems, counts)
        if node.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
    if "array" in kinds:
        if "items" not in node:
            problems.append(f"{path}: an array without items cannot be strict")
        else:
            _walk(node["items"], f"{path}.items", depth, problems, counts)
    if "anyOf" in node:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            problems.append(f"{path}: anyOf must be a non-empty list of schemas")
        else:
            for i, branch in enumerate(branches):
                _walk(branch, f"{path}.anyOf[{i}]", depth, problems, counts)
    if "enum" in node:
        if isinstance(node["enum"], list) and node["enum"]:
            counts["enum"] += len(node["enum"])
        else:
            problems.append(f"{path}: enum must be a non-empty list")
    if "format" in node and node["format"] not in STRICT_FORMATS:
        problems.append(f"{path}: format {node['format']!r} is not supported in strict mode")
    if "pattern" in node and not isinstance(node["pattern"], str):
        problems.append(f"{path}: pattern must be a string")


def json_kind(value: Any) -> str:
    return "null" if value is None else {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number")
