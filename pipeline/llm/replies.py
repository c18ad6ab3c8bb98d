"""The reply of every role, as one pydantic model each: what the parsers validate and what
structured output constrains.

A model's reply is read in two steps: `find_object` pulls a JSON object out of the text
(tolerating code fences and prose around it, as small and chatty models write), then the
role's model validates it. The same models give the JSON Schema sent as `response_format`
(`schema_of`, in the form OpenAI's strict mode accepts: `strict.py`), so the constraint a server
enforces and the check the parser makes are one definition. Each model accepts a little more than its schema asks for where real models
are sloppy in harmless ways ("true" for true, a tool call in OpenAI's nested form,
arguments as a JSON string).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..core.records import Tool
from .strict import ENCODED, arguments_schema, from_strict, portable
from .structured import strict_problems


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


def _json_object(value: Any) -> Any:
    """A JSON-encoded object as the object (an empty text as {}); anything else unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value) if value.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not JSON: {exc.msg}") from None


class GoalReply(_Reply):
    """The goal generator: one or two sentences of what the employee wants done."""

    goal: str = Field(description="The employee's goal, in their own words")

    _check = field_validator("goal")(_nonblank)


class SlotsReply(_Reply):
    """The slot-value generator: a value for every required argument of the seed tool."""

    arguments: dict[str, Any] = Field(description="Argument name -> value, valid against the tool's schema")

    @field_validator("arguments", mode="before")
    @classmethod
    def _decode(cls, value: Any) -> Any:  # the unnarrowed schema asks for a JSON-encoded object
        return _json_object(value)


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
            data = {**data, "arguments": _json_object(data["arguments"])}
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
# Every schema meets OpenAI's strict mode (`structured.strict_problems` lists what would not):
# each object closed and all its properties required. A value strict mode cannot describe (a
# free-form object) is a JSON-encoded string, decoded on the way in (`ToolCallReply`,
# `SlotsReply`, `from_strict`).
_STRING = {"type": "string"}
_ARGUMENTS = {"type": "string", "description": f"The call's arguments object. {ENCODED}"}


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_CALL = _closed({"name": _STRING, "arguments": _ARGUMENTS})
_SCHEMAS: dict[str, dict[str, Any]] = {
    "goal": _closed({"goal": _STRING}),
    "slots": _closed({"arguments": _ARGUMENTS}),
    "user": _closed({"message": _STRING}),
    "assistant": _closed({"thought": _STRING, "content": _STRING, "tool_calls": {"type": "array", "items": _CALL}}),
    "relevancy": _closed({"relevant": {"type": "boolean"}, "reason": _STRING}),
    "critic": _closed({"passed": {"type": "boolean"}, "issues": {"type": "array", "items": _STRING},
                       "reason": _STRING}),
}


# ---- the tool-result role: its reply is the tool's own result object, so it has no fixed model ----------


class ResultErrorBody(_Reply):
    type: str
    message: str

    _check = field_validator("message")(_nonblank)


class ErrorResult(_Reply):
    """A tool result that is an error: `{"error": {"type": <kind>, "message": ...}}`."""

    error: ResultErrorBody


def result_reply_schema(result: dict[str, Any] | None, error: str | None = None) -> dict[str, Any] | None:
    """The strict schema of the tool-result role's reply: the error object of kind `error` when the call
    fails, else the result schema (`ToolResultRequest.result_schema`) in strict form (`strict.portable`:
    a free-form value inside is a JSON-encoded string, `parse_result` decodes it). None when strict mode
    cannot hold it (no schema, or a root that is not an object with properties): the prompt alone asks."""
    if error is not None:
        return _closed({"error": _closed({"type": {"type": "string", "enum": [error]}, "message": _STRING})})
    if result is None:
        return None
    strict = portable(result)
    return None if strict_problems(strict) else strict


def parse_result(text: str, error: str | None = None, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The tool-result role's reply read from `text`: the error object of kind `error` when one was asked
    for, else the result object, read back as `schema` means it (`from_strict`) and valid against it.
    ReplyError naming the role and the field otherwise."""
    try:
        found = find_object(text)
    except ReplyError as exc:
        raise ReplyError(f"tool_result reply: {exc}") from None
    if error is not None:
        try:
            failed = ErrorResult.model_validate(found)
        except ValidationError as exc:
            raise ReplyError(f"tool_result reply: {_problems(exc)}") from None
        if failed.error.type != error:
            raise ReplyError(f"tool_result reply: error.type: expected '{error}', got '{failed.error.type}'")
        return {"error": failed.error.model_dump()}
    if set(found) == {"error"}:
        raise ReplyError("tool_result reply: error: the call succeeds, so the reply is its result, not an error")
    if schema is None:
        return found
    result = from_strict(found, schema)
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    if errors := sorted(checker.iter_errors(result), key=lambda e: [str(p) for p in e.path]):
        shown = "; ".join(f"{'.'.join(map(str, e.path)) or 'result'}: {e.message}" for e in errors[:3])
        raise ReplyError(f"tool_result reply: {shown}")
    return result


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:3])


def _call_branch(name: str, parameters: dict[str, Any], every_nullable: bool) -> dict[str, Any]:
    return _closed({"name": {"type": "string", "enum": [name]},
                    "arguments": arguments_schema(parameters, every_nullable=every_nullable)})


def schema_of(role: str, *, arguments: dict[str, Any] | None = None, tool_names: list[str] | None = None,
              max_calls: int | None = None, tools: list[Tool] | None = None, selecting: bool = False) -> dict[str, Any]:
    """The JSON Schema of `role`'s reply, strict (see above).

    `tools` constrains the assistant's calls to those tools: one `anyOf` branch per tool, its
    name the only one the branch allows and its arguments that tool's own (`arguments_schema`);
    `selecting` (tool selection, where a call's values are not yet asked for and not kept) lets
    every argument be null. Without `tools`, `tool_names` narrows the names and the arguments are
    a JSON-encoded object. `arguments` (an object schema) narrows the slot generator's
    `arguments`. `max_calls` is how many calls one reply may hold (generation allows one;
    evaluation sets no limit, since extra calls are what FTR measures)."""
    schema = json.loads(json.dumps(_SCHEMAS[role]))
    if role == "slots" and arguments is not None:
        schema["properties"]["arguments"] = arguments_schema(arguments)
    if role == "assistant":
        calls = schema["properties"]["tool_calls"]
        if tools:
            branches = [_call_branch(t.name, t.parameters, selecting) for t in tools]
            calls["items"] = branches[0] if len(branches) == 1 else {"anyOf": branches}
        elif tool_names:
            calls["items"]["properties"]["name"] = {"type": "string", "enum": tool_names}
        if max_calls is not None:
            calls["maxItems"] = max_calls
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
        raise ReplyError(_problems(exc)) from None


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
