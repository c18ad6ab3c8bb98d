"""The generation roles: goal and slot-value generators, user proxy, assistant.

Each builds its typed request (`utcgen.pipeline.llm.requests`: the facts its prompt carries),
renders its prompt file from the same facts, calls the gateway with both and its reply
schema (`utcgen.pipeline.llm.replies`, sent as response_format where the config asks for
structured output), and validates the reply through the same reply model. Parsing is
tolerant where a real model is sloppy (code fences, prose around the JSON) and strict
where the data depends on it (schema-valid slot values).

The assistant's tool calls come in one of two formats (`llm.tool_format`):
* json: inside its JSON reply, `{"thought", "content", "tool_calls": [{name, arguments}]}`;
* native: the candidate tools go in the request's `tools` and the calls come back as the
  API's own `tool_calls`. The private thought is the provider's `reasoning_content` when
  it sends one; otherwise a leading `<think>...</think>` block of the content (the native
  prompts ask for it), and the rest of the content is the public message. A content that
  is the JSON reply object after all is read as in json format. Without any of these the
  turn has no thought, which the format validator accepts in this format only (a provider's
  usual call is content null plus tool_calls).
In json format a reasoning block before the JSON, or the provider's `reasoning_content`, is
the thought when the JSON's own is empty. Both give the same Message for the same model
behaviour. A reply that cannot be used is asked again (`reask`): the original messages, the
reply, and a user turn saying what was wrong with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from ...validators.answers import instructions as answer_rules
from ...validators.contract import instructions
from .. import scenarios
from ..core.records import Message, Persona, Tool, ToolCall, Usage, persona_text, tools_json
from ..dialogue.planning import TOOL, given_arguments
from ..dialogue.results import call_id
from ..dialogue.said import user_said
from ..dialogue.shortcuts import distinctive_name_words
from ..export.slicing import result_text
from ..llm import replies
from ..llm.gateway import Gateway, LLMReply
from ..llm.replies import ReplyError
from ..llm.requests import (
    AssistantRequest,
    GoalRequest,
    Request,
    SlotsRequest,
    UserRequest,
    UserScenario,
    said,
)
from ..llm.strict import from_strict
from ..settings.templates import load_prompt

__all__ = ["ReplyError", "Roles", "parse_assistant", "parse_json_object", "parse_native"]

parse_json_object = replies.find_object


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def history_text(history: list[Message]) -> str:
    """The transcript the user proxy reads: the public turns, never a tool's raw result."""
    if not history:
        return "(nothing yet: you open the conversation)"
    return "\n".join(f"{m.role}: {m.content}" for m in history if m.content and m.role != "tool")


@dataclass
class Roles:
    """Role calls for one dialogue: shares the gateway, accumulates this dialogue's usage."""

    gateway: Gateway
    reply_retries: int = 2
    usage: Usage = field(default_factory=Usage)
    attempt_tag: str = ""
    # role -> the structured-output mode its last reply was made under (and the assistant's tool format)
    formats: dict[str, str] = field(default_factory=dict)

    async def _call(self, request: Request, messages: list[dict], retry: int, *,
                    schema: dict | None = None, tools: list[dict] | None = None) -> LLMReply:
        reply = await self.gateway.chat(request, messages, nonce=f"{self.attempt_tag}/{retry}",
                                        schema=schema, tools=tools)
        self.note(request.role, reply)
        return reply

    def note(self, role: str, reply: LLMReply) -> None:
        """Charges a reply to this dialogue and remembers the form it was asked in."""
        self.usage.add(reply.usage)
        self.formats[f"{role}.structured_output"] = reply.structured_output

    async def _chat(self, request: Request, messages: list[dict], retry: int, *, schema: dict | None = None) -> str:
        return (await self._call(request, messages, retry, schema=schema)).text

    @property
    def tool_format(self) -> str:
        return self.gateway.settings.tool_format

    async def goal(self, tool: Tool, persona: Persona, seed: int, gold: dict[str, Any] | None = None) -> str:
        """The employee's goal; it is written after the gold values and shown them, so any value it
        states is one of them."""
        request = GoalRequest(tool=tool, persona=persona, gold_arguments=gold or {}, seed=seed)
        messages = render_goal(request)
        last, sent = "", messages
        for retry in range(self.reply_retries + 1):
            text = await self._chat(request, sent, retry, schema=replies.schema_of("goal"))
            try:  # only the reply object: a bare string or list is a format failure, never a goal
                return replies.parse("goal", text).goal
            except ReplyError as exc:
                last, sent = f"{exc}; reply was {text[:160]!r}", reask(messages, text, exc)
        raise ReplyError(f"goal generator gave no usable goal in {self.reply_retries + 1} replies: {last}")

    async def slots(self, tool: Tool, persona: Persona, seed: int, retries: int) -> dict[str, Any]:
        """Gold values for every required argument, re-drawn until they validate against the schema."""
        required = tool.required
        if not required:
            return {}
        schema = {"type": "object", "properties": {k: tool.properties.get(k, {}) for k in required},
                  "required": required, "additionalProperties": False}
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        reply_schema = replies.schema_of("slots", arguments=schema)
        feedback = ""
        for attempt in range(retries + 1):
            request = SlotsRequest(tool=tool, persona=persona, required=required, attempt=attempt, seed=seed)
            messages = render_slots(request, feedback)
            text = await self._chat(request, messages, attempt, schema=reply_schema)
            try:
                args = from_strict(replies.parse("slots", text).arguments, schema)
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
                   gold: dict[str, Any], history: list[Message], seed: int, scenario: dict | None = None) -> str:
        """The user proxy's next message. `scenario` (name, info, the opening as meant and as said)
        is None for a disambiguation dialogue without a decision style: today's prompts."""
        request = UserRequest(phase=phase, tool=tool, persona=persona, goal=goal,  # type: ignore[arg-type]
                              distractors=distractors, gold_arguments=gold, history=said(history, results=False),
                              seed=seed,
                              scenario=None if scenario is None else UserScenario(**scenario))
        return await self._user_reply(request, render_user(request, history))

    async def fault_opening(self, tool: Tool, persona: Persona, goal: str, distractors: list[Tool],
                            gold: dict[str, Any], seed: int, scenario: dict) -> tuple[str, str]:
        """(original, faulted) opening of an input-fault dialogue: the request as meant, then the
        same request with the scenario's fault written in."""
        base = UserRequest(phase="tool_selection", tool=tool, persona=persona, goal=goal, distractors=distractors,
                           gold_arguments=gold, history=[], seed=seed, scenario=UserScenario(**scenario))
        assert base.scenario is not None
        info = base.scenario.info
        kind = scenarios.get(base.scenario.name)
        if kind.original_opening is None:
            raise ValueError(f"scenario '{kind.name}' does not rewrite its opening")
        # the request as meant is written as the opening type writes it, knowing nothing of the fault
        first = base.model_copy(update={"scenario": UserScenario(
            name=kind.original_opening.name, info={k: v for k, v in info.items() if k != "fault"})})
        original = await self._user_reply(first, render_user(first, []))
        second = base.model_copy(update={"scenario": base.scenario.model_copy(
            update={"write": "faulted", "original": original})})
        faulted = await self._user_reply(second, render_user(second, []))
        return original, faulted

    async def _user_reply(self, request: UserRequest, messages: list[dict]) -> str:
        last, sent = "", messages
        for retry in range(self.reply_retries + 1):
            text = await self._chat(request, sent, retry, schema=replies.schema_of("user"))
            try:  # only the reply object: a bare string or list is a format failure, never a user turn
                message = _clean_user(replies.parse("user", text).message)
                if not message:
                    raise ReplyError("message: must not be empty")
            except ReplyError as exc:
                message, last, sent = "", f"{exc}; reply was {text[:160]!r}", reask(messages, text, exc)
            if message:
                return message
        raise ReplyError(f"user proxy gave no usable message in {self.reply_retries + 1} replies: "
                         f"{last or 'empty message'}")

    async def assistant(self, phase: str, candidates: list[Tool], tool: Tool | None,
                        history: list[Message], seed: int, scenario: dict | None = None,
                        hint: str | None = None, results: bool = False) -> Message:
        """One assistant turn; `hint` (see `plan_hint`) is added to the system prompt when given;
        `results`: calls get results, and the prompt says how to answer from them."""
        native = self.tool_format == "native"
        reply_format = load_prompt("assistant_reply_native" if native else "assistant_reply_json").render()
        reply_format = reply_format[0]["content"]
        # every scenario but the plain one uses prompts that also cover refusing and invalid values;
        # they never say which scenario is played
        may_decline = scenario is not None and not scenarios.get(scenario["name"]).plain
        # once the tool is settled its prompt shows that tool and the other candidates' names, and so does its request
        request = AssistantRequest(phase=phase, candidates=[] if tool else candidates, tool=tool,  # type: ignore[arg-type]
                                   considered=[t.name for t in candidates if tool and t.name != tool.name],
                                   history=said(history),
                                   may_decline=may_decline, hint=hint, results=results, seed=seed)
        messages = render_assistant(request, history, reply_format, native)
        offered = [request.tool] if request.tool is not None else request.candidates
        self.formats["assistant.tool_format"] = self.tool_format
        error, sent = "", messages
        for retry in range(self.reply_retries + 1):
            if native:
                reply = await self._call(request, sent, retry, tools=[t.openai_spec() for t in offered])
            else:
                reply = await self._call(request, sent, retry,
                                         schema=replies.schema_of("assistant", tools=offered, max_calls=1,
                                                                  selecting=request.tool is None))
            try:
                return (parse_native(reply, phase) if native
                        else parse_assistant(reply.text, phase, tools=offered, reasoning=reply.reasoning))
            except ReplyError as exc:
                shown = reply.text if not reply.tool_calls else f"{reply.text} + tool_calls {reply.tool_calls}"
                error, sent = f"{exc}; reply was {shown[:160]!r}", reask(messages, reply.text, exc, native=native)
        return Message.model_validate({"role": "assistant", "content": "", "phase": phase, "parse_error": error})


def render_goal(request: GoalRequest) -> list[dict]:
    """The goal writer's prompt, from its request."""
    return load_prompt("goal").render(persona=persona_text(request.persona), tool=request.tool.spec_json(),
                                      gold_arguments=_dump(request.gold_arguments), rules=instructions("goal"))


def render_slots(request: SlotsRequest, feedback: str = "") -> list[dict]:
    """The slot writer's prompt, from its request; `feedback` says what was wrong with the last reply."""
    return load_prompt("slots").render(persona=persona_text(request.persona), tool=request.tool.spec_json(),
                                       required=", ".join(request.required), feedback=feedback,
                                       rules=instructions("slots"))


def render_assistant(request: AssistantRequest, history: list[Message], reply_format: str,
                     native: bool) -> list[dict]:
    """The assistant's prompt, from its request: the candidates while selecting, the settled tool
    while filling arguments, the planner's note if any, then the dialogue (its own turns as it
    wrote them)."""
    if request.tool is None:
        system = load_prompt("assistant_tool_selection").render(
            tools=tools_json(request.candidates), reply_format=reply_format, may_decline=request.may_decline,
            rules=instructions("assistant"))
    else:
        rules = instructions("assistant") + (f"\n{answer_rules()}" if request.results else "")
        system = load_prompt("assistant_argument_filling").render(
            tool=request.tool.spec_json(), reply_format=reply_format, may_decline=request.may_decline,
            considered=", ".join(request.considered), rules=rules)
    if request.hint:
        system = [{**system[0], "content": f"{system[0]['content']}\n\n{request.hint}"}, *system[1:]]
    return system + [_turn(i, m, native) for i, m in enumerate(history)]


def _turn(index: int, m: Message, native: bool) -> dict[str, Any]:
    """One turn of the dialogue as the assistant's model reads it. Native: its calls with their ids and
    each result as the API's `tool` message answering one; JSON: its reply objects, and each result as
    a user-side message naming the call it answers (a JSON-protocol model has no tool messages)."""
    if m.role == "tool":
        if native:
            return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
        return {"role": "user", "content": result_text(m)}
    if m.role != "assistant":
        return {"role": m.role, "content": m.content}
    if not native:
        return {"role": "assistant", "content": m.reply_json()}
    if not m.tool_calls:
        return {"role": "assistant", "content": m.content}
    return {"role": "assistant", "content": m.content or None, "tool_calls": [
        {"id": call_id(index, j), "type": "function",
         "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
        for j, c in enumerate(m.tool_calls)]}


def render_user(request: UserRequest, history: list[Message]) -> list[dict]:
    """The user proxy's prompt, from its request: the phase's prompt, or the section the scenario
    type adds (`ScenarioType.user_section`, with its note)."""
    persona, tool = request.persona, request.tool
    scenario = request.scenario.model_dump(exclude_none=True) if request.scenario is not None else {}
    info = request.scenario.info if request.scenario is not None else {}
    kind = scenarios.get(request.scenario.name) if request.scenario is not None else None
    if kind is not None and scenario.get("write") == "faulted":  # the opening as meant, to rewrite with its fault
        behaviour = load_prompt("user_fault_rewrite").render(
            kind=info["fault"]["kind"], original=scenario["original"], note=kind.user_note(info, {}))[0]["content"]
    else:
        behaviour = kind.user_section(info, scenario) if kind is not None else None
    words = distinctive_name_words(tool.name, [t.name for t in request.distractors if t.name != tool.name])
    return load_prompt("user").render(
        behaviour=behaviour or "", tool_selection=request.phase == "tool_selection",
        area=(tool.line_of_business or "").replace("_", " "),
        persona=persona_text(persona, info.get("decision_style")), goal=request.goal, tool=tool.spec_json(),
        distractors=tools_json(request.distractors), gold_arguments=_dump(request.gold_arguments),
        rules=instructions("user", name_words=", ".join(f'"{w}"' for w in words) or "(none)"),
        transcript=history_text(history))


def plan_hint(question: tuple[str, str] | bool | None, phase: str, tool: Tool, gold: dict[str, Any],
              history: list[Message]) -> str | None:
    """The private note that tells the assistant the planner's best next question
    (`planning.next_question`): which tool, which argument, or act now; None when there is
    nothing to plan (the needed tool is not a candidate: the assistant must find that out itself).
    In tool selection an argument question means the tool is clear: the note says to act (select
    it), so no argument of a tool not yet chosen is named."""
    if question is False or question is True:
        return None
    if question is None or (phase == "tool_selection" and question[0] != TOOL):
        return load_prompt("assistant_hint_act").render()[0]["content"]
    if question[0] == TOOL:
        return load_prompt("assistant_hint_tool").render()[0]["content"]
    arg = question[1]
    given = [a for a in given_arguments(tool, gold, user_said(history)) if a != arg]
    about = str((tool.properties.get(arg) or {}).get("description") or "no description").rstrip(".")
    return load_prompt("assistant_hint_argument").render(
        argument=arg, about=about, given=", ".join(given) or "nothing yet")[0]["content"]


def reask(messages: list[dict], bad: str, error: Exception, *, native: bool = False) -> list[dict]:
    """The messages of a retry: the original ones, the reply that could not be used (as the model's
    own turn) and a user turn saying exactly what was wrong with it."""
    again = ("Reply again: call a tool as a function call, or write your message." if native
             else "Reply again with the corrected JSON object only.")
    return [*messages, {"role": "assistant", "content": bad},
            {"role": "user", "content": f"Your last reply could not be used: {error}. {again}"}]


def _clean_user(text: str) -> str:
    text = text.strip().strip('"').strip()
    return re.sub(r"^(user|employee)\s*:\s*", "", text, flags=re.IGNORECASE).strip()


def parse_assistant(text: str, phase: str, tools: list[Tool] | None = None, reasoning: str | None = None) -> Message:
    """Reads the assistant's JSON reply. Its thought is the JSON's own, else the provider's reasoning
    (`reasoning`), else a reasoning block before the JSON (`<think>...</think>`, R1-style), which
    is never read as part of the reply; a missing thought is kept as missing (the format validator
    judges it). With `tools` (those the reply's schema offered), each call's arguments are read
    back as the tool's schema means them (`from_strict`: JSON-encoded values decoded, nulls that
    mean "absent" left out)."""
    thought, text = _split_think(text)
    reply = replies.parse("assistant", text)
    assert isinstance(reply, replies.AssistantReply)
    if reply.thought is None and (reasoning or thought):
        reply.thought = reasoning or thought
    schemas = {t.name: t.parameters for t in tools or []}
    for call in reply.tool_calls:
        if call.name in schemas:
            call.arguments = from_strict(call.arguments, schemas[call.name])
    return _message(reply, phase)


_THINK = re.compile(r"^\s*<(think|thought|reasoning)>(.*?)</\1>\s*", re.DOTALL | re.IGNORECASE)
_THINK_END = re.compile(r"^(.*?)</think>\s*", re.DOTALL | re.IGNORECASE)


def _split_think(text: str) -> tuple[str | None, str]:
    """(the reasoning block a reply opens with, the rest): `<think>...</think>`, or everything up to a
    `</think>` whose opening tag was in the prompt (R1's chat template puts it there)."""
    match = _THINK.match(text) or _THINK_END.match(text)
    if match is None:
        return None, text
    return match.group(match.lastindex or 1).strip() or None, text[match.end():]


def parse_native(reply: LLMReply, phase: str) -> Message:
    """Reads a native tool-calling reply (see the module docstring for where the thought comes from)."""
    thought, text = _split_think(reply.text or "")
    thought = reply.reasoning or thought
    data: dict[str, Any] = {"thought": thought, "content": text.strip(), "tool_calls": reply.tool_calls}
    if thought is None and text.strip().startswith(("{", "```")):
        try:  # the JSON protocol after all: take its parts, the API's calls first
            found = replies.find_object(text)
        except ReplyError:
            found = None
        if found is not None and {"thought", "content"} & found.keys():
            data = {**found, "tool_calls": reply.tool_calls or found.get("tool_calls") or []}
    try:
        parsed = replies.validate("assistant", data)
        assert isinstance(parsed, replies.AssistantReply)
        return _message(parsed, phase)
    except ReplyError as exc:
        raise ReplyError(f"native reply: {exc}") from None


def _message(reply: replies.AssistantReply, phase: str) -> Message:
    return Message.model_validate({"role": "assistant", "content": reply.content, "thought": reply.thought, "phase": phase,
                                   "tool_calls": [ToolCall(name=c.name, arguments=c.arguments) for c in reply.tool_calls]})
