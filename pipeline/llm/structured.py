"""What a call asks of the model's output: structured output (`response_format`) and native tools.

Modes (`llm.structured_output`, per role `llm.structured_output_roles`):
* `json_schema`: OpenAI's form, `{"type": "json_schema", "json_schema": {"name", "schema"}}`
  (OpenAI, vLLM, llama.cpp's llama-server, most hosted APIs).
* `json_object`: `{"type": "json_object", "schema": {...}}`: llama-cpp-python's server
  constrains decoding to the schema; servers that ignore `schema` still return JSON.
* `off`: nothing is sent; the prompt alone describes the format.
* `auto`: `json_schema` when litellm knows the model supports response schemas, else
  `json_object`; a server that refuses the form (a 4xx/5xx naming response_format or
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
        return {"type": "json_schema", "json_schema": {"name": shape.name, "schema": shape.schema}}
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


def supports_schema(model: str) -> bool:
    import litellm

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
