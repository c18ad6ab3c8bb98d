"""The reply of every role, as one pydantic model each: what the parsers validate and what
structured output constrains.

A model's reply is read in two steps: `find_object` pulls a JSON object out of the text
(tolerating code fences and prose around it, as small and chatty models write), then the
role's model validates it. The same models give the JSON Schema sent as `response_format`
(`schema_of`), so the constraint a server enforces and the check the parser makes are one
definition. Each model accepts a little more than its schema asks for where real models
are sloppy in harmless ways ("true" for true, a tool call in OpenAI's nested form,
arguments as a JSON string).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ReplyError(ValueError):
    """A model reply that cannot be used (no JSON object, or one of the wrong shape)."""


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _nonblank(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be blank")
    return value.strip() if isinstance(value, str) else value


def _flag(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


class GoalReply(_Reply):
    """The goal generator: one or two sentences of what the employee wants done."""

    goal: str = Field(description="The employee's goal, in their own words")

    _check = field_validator("goal")(_nonblank)


class SlotsReply(_Reply):
    """The slot-value generator: a value for every required argument of the seed tool."""

    arguments: dict[str, Any] = Field(description="Argument name -> value, valid against the tool's schema")


class UserReply(_Reply):
    """The user proxy: the employee's next message."""

    message: str = Field(description="The employee's next message, plain text")

    _check = field_validator("message")(_nonblank)


class ToolCallReply(_Reply):
    """One tool call: `{name, arguments}`, or OpenAI's `{type, function: {name, arguments}}`."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            data = data["function"]
        if isinstance(data, dict) and isinstance(data.get("arguments"), str):
            raw = data["arguments"]
            try:
                data = {**data, "arguments": json.loads(raw) if raw.strip() else {}}
            except json.JSONDecodeError as exc:
                raise ValueError(f"arguments are not JSON: {exc.msg}") from None
        if isinstance(data, dict) and data.get("arguments") is None:
            data = {**data, "arguments": {}}
        return data


class AssistantReply(_Reply):
    """The assistant: a private thought, what the user sees, and the tool calls it makes."""

    thought: str | None = Field(None, description="Private reasoning, never shown to the user")
    content: str = Field("", description="The message the user sees")
    tool_calls: list[ToolCallReply] = Field(default_factory=list, description="Empty unless calling a tool")

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _calls(cls, value: Any) -> Any:
        return [] if value is None else value

    @model_validator(mode="after")
    def _not_empty(self) -> AssistantReply:
        if self.thought is not None and not self.thought.strip():
            self.thought = None
        if not self.content and not self.tool_calls and not self.thought:
            raise ValueError("empty reply: no thought, content or tool call")
        return self


class RelevancyReply(_Reply):
    """The relevancy judge."""

    relevant: bool
    reason: str = ""

    _flag = field_validator("relevant", mode="before")(_flag)


class CritiqueReply(_Reply):
    """The critic."""

    passed: bool
    issues: list[str] = Field(default_factory=list)
    reason: str = ""

    _flag = field_validator("passed", mode="before")(_flag)

    @field_validator("issues", mode="before")
    @classmethod
    def _issues(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, list):
            return [str(v) for v in value]
        return [str(value)]


REPLIES: dict[str, type[_Reply]] = {
    "goal": GoalReply,
    "slots": SlotsReply,
    "user": UserReply,
    "assistant": AssistantReply,
    "relevancy": RelevancyReply,
    "critic": CritiqueReply,
}

# The schema a server is asked to enforce: what each field must be, without the leniencies
# the validators above add. Kept by hand because pydantic's schema of `thought: str | None`
# or of `_flatten`'s inputs would invite exactly the sloppiness we want decoding to rule out.
_STRING = {"type": "string"}
_SCHEMAS: dict[str, dict[str, Any]] = {
    "goal": {"type": "object", "properties": {"goal": _STRING}, "required": ["goal"]},
    "slots": {"type": "object", "properties": {"arguments": {"type": "object"}}, "required": ["arguments"]},
    "user": {"type": "object", "properties": {"message": _STRING}, "required": ["message"]},
    "assistant": {
        "type": "object",
        "properties": {
            "thought": _STRING,
            "content": _STRING,
            "tool_calls": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": _STRING, "arguments": {"type": "object"}},
                          "required": ["name", "arguments"]},
            },
        },
        "required": ["thought", "content", "tool_calls"],
    },
    "relevancy": {"type": "object", "properties": {"relevant": {"type": "boolean"}, "reason": _STRING},
                  "required": ["relevant", "reason"]},
    "critic": {"type": "object", "properties": {"passed": {"type": "boolean"},
                                                "issues": {"type": "array", "items": _STRING}, "reason": _STRING},
               "required": ["passed", "issues", "reason"]},
}

# Schema keywords every constrained decoder we know of handles; others are dropped from a
# tool's argument schema before it is put into a response schema (a grammar compiler that
# chokes on one keyword would otherwise refuse the whole request). `pattern` is kept when it
# is anchored at both ends (^...$), the form llama.cpp, vLLM and OpenAI compile: a small model
# then writes `BLD-ABC12` for `^BLD-[A-Z]{3}[0-9]{2}$` instead of a value the slot check rejects.
_PORTABLE = {"type", "properties", "required", "items", "enum", "const", "description", "title",
             "minimum", "maximum", "minItems", "maxItems", "additionalProperties"}


# Formats a decoder cannot know, spelled as the anchored patterns it can (only when the
# parameter has no pattern of its own): a date comes out as 2026-05-19, not a timestamp.
_FORMAT_PATTERNS = {
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "date-time": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})$",
    "time": "^[0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
}


def _anchored(pattern: Any) -> bool:
    return isinstance(pattern, str) and pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")


def portable(schema: Any) -> Any:
    """`schema` with only the keywords in `_PORTABLE` (and an anchored `pattern`), recursively."""
    if isinstance(schema, list):
        return [portable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    if "pattern" not in schema and schema.get("format") in _FORMAT_PATTERNS:
        out["pattern"] = _FORMAT_PATTERNS[schema["format"]]
    for key, value in schema.items():
        if key == "pattern" and _anchored(value):
            out[key] = value
            continue
        if key not in _PORTABLE:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: portable(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = portable(value)
        else:
            out[key] = value
    return out


def schema_of(role: str, *, arguments: dict[str, Any] | None = None,
              tool_names: list[str] | None = None, max_calls: int | None = None) -> dict[str, Any]:
    """The JSON Schema of `role`'s reply. `arguments` (an object schema) narrows the slot
    generator's `arguments`, or the arguments of the assistant's calls when it is offered one
    tool; `tool_names` narrows the names the assistant may call and
    `max_calls` how many calls one reply may hold (generation allows one; evaluation sets no
    limit, since extra calls are what FTR measures)."""
    schema = json.loads(json.dumps(_SCHEMAS[role]))
    if role == "slots" and arguments is not None:
        schema["properties"]["arguments"] = portable(arguments)
    if role == "assistant" and tool_names:
        schema["properties"]["tool_calls"]["items"]["properties"]["name"] = {"type": "string", "enum": tool_names}
    if role == "assistant" and arguments is not None:
        schema["properties"]["tool_calls"]["items"]["properties"]["arguments"] = portable(arguments)
    if role == "assistant" and max_calls is not None:
        schema["properties"]["tool_calls"]["maxItems"] = max_calls
    return schema


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def find_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply, tolerating code fences and prose around it."""
    cleaned = _FENCE.sub("", text.strip())
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError:
        start = cleaned.find("{")
        if start < 0:
            raise ReplyError("no JSON object in the reply") from None
        try:
            value, _ = json.JSONDecoder().raw_decode(cleaned[start:])
        except json.JSONDecodeError as exc:
            raise ReplyError(f"invalid JSON: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, dict):
        raise ReplyError(f"expected a JSON object, got {type(value).__name__}")
    return value


def bare_json(text: str) -> bool:
    """True when the whole reply is JSON but not an object (a bare string, number, list or null): a
    format failure for every role, never read for a number or a word inside it."""
    try:
        value = json.loads(_FENCE.sub("", text.strip()))
    except json.JSONDecodeError:
        return False
    return not isinstance(value, dict)


def validate(role: str, data: dict[str, Any]) -> _Reply:
    """`data` as `role`'s reply model; ReplyError naming the first problems otherwise."""
    try:
        return REPLIES[role].model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:3])
        raise ReplyError(problems) from None


def parse(role: str, text: str) -> Any:
    """The reply model of `role` read from `text` (see `find_object`)."""
    return validate(role, find_object(text))


def scan(role: str, text: str) -> Any | None:
    """The first JSON object anywhere in `text` that validates as `role`'s reply, or None.

    For judges, whose replies may hold an example object before the real one: every '{' is
    tried as the start of an object."""
    decoder = json.JSONDecoder()
    cleaned = text
    start = cleaned.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(cleaned, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            try:
                return REPLIES[role].model_validate(obj)
            except ValidationError:
                pass
        start = cleaned.find("{", start + 1)
    return None
