"""The generation roles: goal and slot-value generators, user proxy, assistant.

Each renders its prompt file, calls the gateway with the structured state, and parses
the reply. Parsing is tolerant where a real model is sloppy (code fences, prose around
the JSON) and strict where the data depends on it (schema-valid slot values).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from utcgen.pipeline.llm.gateway import Gateway
from utcgen.pipeline.prompts import load_prompt
from utcgen.pipeline.records import Message, Persona, Tool, ToolCall, Usage, tools_json


class ReplyError(ValueError):
    """A model reply that cannot be used, even after re-asking."""


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply, tolerating code fences and prose around it."""
    cleaned = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
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


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def persona_text(p: Persona) -> str:
    parts = [p.text]
    if p.style:
        parts.append(f"Way of talking: {p.style}.")
    if p.attributes:
        parts.append("Facts: " + ", ".join(f"{k} {v}" for k, v in p.attributes.items()) + ".")
    return "\n".join(parts)


def transcript(history: list[Message]) -> str:
    if not history:
        return "(nothing yet: you open the conversation)"
    return "\n".join(f"{m.role}: {m.content}" for m in history if m.content)


@dataclass
class Roles:
    """Role calls for one dialogue: shares the gateway, accumulates this dialogue's usage."""

    gateway: Gateway
    reply_retries: int = 2
    usage: Usage = field(default_factory=Usage)
    attempt_tag: str = ""

    async def _chat(self, role: str, messages: list[dict], state: dict, retry: int) -> str:
        reply = await self.gateway.chat(role, messages, state=state, nonce=f"{self.attempt_tag}/{retry}")
        self.usage.add(reply.usage)
        return reply.text

    async def goal(self, tool: Tool, persona: Persona, seed: int) -> str:
        messages = load_prompt("goal").render(persona=persona_text(persona), tool=tool.spec_json())
        state = {"tool": tool.model_dump(), "persona": persona.model_dump(), "seed": seed}
        last = ""
        for retry in range(self.reply_retries + 1):
            text = await self._chat("goal", messages, state, retry)
            try:
                goal = parse_json_object(text).get("goal")
            except ReplyError:
                goal = text.strip() if text.strip() and "{" not in text else None
            if isinstance(goal, str) and goal.strip():
                return goal.strip()
            last = text
        raise ReplyError(f"goal generator gave no usable goal: {last[:200]!r}")

    async def slots(self, tool: Tool, persona: Persona, seed: int, retries: int) -> dict[str, Any]:
        """Gold values for every required argument, re-drawn until they validate against the schema."""
        required = tool.required
        if not required:
            return {}
        schema = {"type": "object", "properties": {k: tool.properties.get(k, {}) for k in required},
                  "required": required, "additionalProperties": False}
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        feedback = ""
        for attempt in range(retries + 1):
            messages = load_prompt("slots").render(
                persona=persona_text(persona), tool=tool.spec_json(),
                required=", ".join(required), feedback=feedback)
            state = {"tool": tool.model_dump(), "persona": persona.model_dump(), "seed": seed,
                     "required": required, "attempt": attempt}
            text = await self._chat("slots", messages, state, attempt)
            try:
                args = parse_json_object(text).get("arguments")
                if not isinstance(args, dict):
                    raise ReplyError("no 'arguments' object")
            except ReplyError as exc:
                feedback = f"\nYour previous reply was unusable ({exc}). Reply with the JSON object only."
                last = f"the last reply had no usable JSON arguments object ({exc})"
                continue
            errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
            if not errors:
                return args
            problems = "; ".join(f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in errors[:5])
            feedback = f"\nYour previous values were invalid: {problems}. Fix them."
            last = f"the last reply's values failed their schema ({problems})"
        raise ReplyError(f"no usable slot values for {tool.name} in {retries + 1} replies; {last}")

    async def user(self, phase: str, tool: Tool, persona: Persona, goal: str, distractors: list[Tool],
                   gold: dict[str, Any], history: list[Message], seed: int) -> str:
        if phase == "tool_selection":
            messages = load_prompt("user_tool_selection").render(
                persona=persona_text(persona), goal=goal, tool=tool.spec_json(),
                distractors=tools_json(distractors), transcript=transcript(history))
        else:
            messages = load_prompt("user_argument_filling").render(
                persona=persona_text(persona), goal=goal, gold_arguments=_dump(gold), transcript=transcript(history))
        state = {"phase": phase, "tool": tool.model_dump(), "persona": persona.model_dump(), "goal": goal,
                 "distractors": [d.model_dump() for d in distractors], "gold_arguments": gold,
                 "history": [m.model_dump(include={"role", "content"}) for m in history], "seed": seed}
        for retry in range(self.reply_retries + 1):
            text = _clean_user(await self._chat("user", messages, state, retry))
            if text:
                return text
        raise ReplyError("user proxy gave an empty message")

    async def assistant(self, phase: str, candidates: list[Tool], tool: Tool | None,
                        history: list[Message], seed: int) -> Message:
        if phase == "tool_selection":
            system = load_prompt("assistant_tool_selection").render(
                tools=tools_json(candidates))
        else:
            assert tool is not None
            system = load_prompt("assistant_argument_filling").render(tool=tool.spec_json())
        messages = system + [
            {"role": m.role, "content": m.reply_json() if m.role == "assistant" else m.content} for m in history
        ]
        state = {"phase": phase, "candidates": [c.model_dump() for c in candidates],
                 "tool": tool.model_dump() if tool else None,
                 "history": [m.model_dump(include={"role", "content"}) for m in history], "seed": seed}
        error = ""
        for retry in range(self.reply_retries + 1):
            text = await self._chat("assistant", messages, state, retry)
            try:
                return parse_assistant(text, phase)
            except ReplyError as exc:
                error = f"{exc}; reply was {text[:160]!r}"
        return Message(role="assistant", content="", phase=phase, parse_error=error)


def _clean_user(text: str) -> str:
    text = text.strip().strip('"').strip()
    return re.sub(r"^(user|employee)\s*:\s*", "", text, flags=re.IGNORECASE).strip()


def parse_assistant(text: str, phase: str) -> Message:
    """Reads the assistant wire format; a missing thought is kept as missing (the format validator judges it)."""
    data = parse_json_object(text)
    thought = data.get("thought")
    content = data.get("content") or ""
    if not isinstance(content, str):
        raise ReplyError("'content' must be a string")
    calls = []
    for raw in data.get("tool_calls") or []:
        if not isinstance(raw, dict):
            raise ReplyError("each tool call must be an object")
        fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        args = fn.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                raise ReplyError(f"tool call arguments are not JSON: {exc.msg}") from None
        if not isinstance(fn.get("name"), str) or not isinstance(args, dict):
            raise ReplyError("a tool call needs a string 'name' and an object 'arguments'")
        calls.append(ToolCall(name=fn["name"], arguments=args))
    if not content and not calls and not thought:
        raise ReplyError("empty reply: no thought, content or tool call")
    return Message(role="assistant", content=content, thought=thought if isinstance(thought, str) and thought.strip() else None,
                   tool_calls=calls, phase=phase)
