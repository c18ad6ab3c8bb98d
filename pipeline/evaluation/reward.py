"""A reward for reinforcement learning on single tool-calling turns, for TRL's `GRPOTrainer`.

It scores a sampled assistant turn against the row's gold next action (the `sft` columns `action`
and `gold_call`), in the shape of SAGE-Agent's baseline reward (format + action class + tool call,
summed), with the penalties a disambiguation dialogue needs:

    reward = format + act + tool + arguments + valid - penalties

* format, 0.5: the turn could be read (a conversational message, or text in the format below);
  an unreadable turn scores 0 and nothing else;
* act, up to 2.0: 2.0 when the turn's next action (`labels.action_of`: call, ask, refuse, answer)
  is the gold one; 1.0 when both only talk (ask and answer);
* tool, 1.0: the gold turn calls a tool and the turn calls that tool;
* arguments, up to 1.0: the share of the gold call's arguments the turn gives with a value
  `arguments.equal` to the gold one and of the type the schema asks for (`arguments.type_ok`),
  less 0.25 for each argument the gold call does not have (a name the tool lacks, a value not needed);
* valid, 0.5: that call passes the tool's JSON Schema (`arguments.schema_errors`): a strict API
  would take it (SAGE's "correct schema" share);
* penalties: 1.5 for a call when the gold turn makes none (premature, or a look-alike when the
  needed tool is not offered) or for a call to another tool than the gold one; up to 1.0 for
  asking when the gold turn calls, scaled by the share of the gold call's values the user has
  already stated (`mentions.mentioned` over the prompt's user turns): asking about a value already given;
  2.0 when the prompt holds tool results and the turn breaks a rule of `validators/answers.py`
  that the prompt alone does not (`answer_problems`): it states a value no result, user turn or
  call gave, contradicts a result or miscounts it, claims success after an error result, or
  repeats a call whose successful result came back.

So the gold turn scores 5.0 on a calling turn and 2.5 on any other, and a call to another
candidate at most 1.0 (calling turn) or -1.0 (any other): the gold turn always ranks first. After
a result, an answer that invents or contradicts scores at most 0.5 where the faithful one scores
2.5, a success claimed after an error at most 0.5, and the answered call made again -3.0.

A prompt's tool results are read in either sft format: `{"role": "tool", "tool_call_id", "content"}`
messages, or the `json` format's user message `Tool result for <id>:` (`slicing.result_text`). Each
result answers the call of its id, or else the earliest call not yet answered.

Completions are either conversational (a list of messages whose last is the assistant turn, with
`tool_calls` as `{"type": "function", "function": {"name", "arguments"}}` or `{"name", "arguments"}`,
arguments an object or its JSON text) or plain text, read as `evaluation.models.parse_generation`
reads a local model's output: an optional `<think>...</think>`, then `<tool_call>{"name": ...,
"arguments": {...}}</tool_call>` blocks, else the JSON reply of the `json` sft format
(`{"thought", "content", "tool_calls": [{"name", "arguments"}]}`), else plain text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...validators.answers import check_answers
from ..core.records import Dialogue, GenerationInfo, Message, Persona, Tool, ToolCall
from ..dialogue.arguments import equal, schema_errors, type_ok
from ..dialogue.labels import action_of
from ..dialogue.mentions import mentioned
from ..dialogue.results import call_id, has_results
from ..dialogue.said import user_said
from ..export.reading import tool_from_spec
from ..export.slicing import result_text
from .models import parse_generation

FORMAT, ACT, TALK, TOOL, ARGUMENTS, SCHEMA = 0.5, 2.0, 1.0, 1.0, 1.0, 0.5
EXTRA_ARGUMENT, WRONG_CALL, REDUNDANT_QUESTION, UNGROUNDED = 0.25, 1.5, 1.0, 2.0
# The `json` format's result message, split around the call id (one home: `slicing.result_text`).
_RESULT_HEAD, _RESULT_TAIL = result_text(Message(role="tool", tool_call_id="\0", content="")).split("\0")


class RewardParts(BaseModel):
    """One scored turn, part by part (`total` is what the trainer gets)."""

    model_config = ConfigDict(extra="forbid")

    format: float = 0.0
    act: float = 0.0
    tool: float = 0.0
    arguments: float = 0.0
    valid: float = 0.0
    penalty: float = 0.0

    @property
    def total(self) -> float:
        return round(self.format + self.act + self.tool + self.arguments + self.valid - self.penalty, 6)


def _call(raw: Mapping[str, Any]) -> ToolCall:
    fn = raw.get("function", raw)
    arguments = fn.get("arguments") or {}
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    if not isinstance(arguments, dict):
        raise ValueError("tool call arguments are not an object")
    return ToolCall(name=str(fn["name"]), arguments=arguments)


def read_turn(completion: Any) -> Message:
    """A completion (message list, one message or text) as an assistant turn; `parse_error` set when unreadable."""
    if isinstance(completion, str):
        return parse_generation(completion)
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        completion = completion[-1]
    if not isinstance(completion, Mapping):
        return Message(role="assistant", parse_error=f"not a message: {type(completion).__name__}")
    content = completion.get("content") or ""
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    raw_calls = completion.get("tool_calls") or []
    if not raw_calls:
        turn = parse_generation(str(content)) if content else Message(role="assistant", parse_error="empty turn")
        thought = completion.get("reasoning_content")
        return turn.model_copy(update={"thought": turn.thought or thought})
    try:
        calls = [_call(c) for c in raw_calls]
    except (KeyError, TypeError, ValueError) as exc:
        return Message(role="assistant", parse_error=f"unreadable tool call: {exc}")
    return Message(role="assistant", content=str(content), thought=completion.get("reasoning_content"),
                   tool_calls=calls)


def _said(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return user_said([m for m in prompt or [] if isinstance(m, Mapping)])


def _prompt_turn(raw: Mapping[str, Any]) -> tuple[Message, list[str | None]] | None:
    """One prompt message as a stored turn, with the ids its calls carry (None: no id); None for the system."""
    role, content = raw.get("role"), raw.get("content") or ""
    if role == "tool":
        return Message(role="tool", content=str(content), tool_call_id=str(raw.get("tool_call_id") or "")), []
    if role == "user" and isinstance(content, str) and content.startswith(_RESULT_HEAD) and _RESULT_TAIL in content:
        head, body = content[len(_RESULT_HEAD):].split(_RESULT_TAIL, 1)
        return Message(role="tool", content=body, tool_call_id=head), []
    if role == "assistant":
        ids = [c.get("id") if isinstance(c, Mapping) else None for c in raw.get("tool_calls") or []]
        return read_turn(raw), ids
    if role == "system":
        return None
    return Message(role="user", content=str(content)), []


def _answering(prompt: Sequence[Any], turn: Message | None, tools: Sequence[Tool]) -> Dialogue:
    """The prompt and the turn as a dialogue the answers rules read: each result names its call by the
    call's place in these messages (by the id it named, else the earliest call not yet answered)."""
    messages: list[Message] = []
    renamed: dict[str, str] = {}
    waiting: list[str] = []
    read = [_prompt_turn(raw) for raw in prompt if isinstance(raw, Mapping)]
    for message, ids in [r for r in read if r is not None] + ([] if turn is None else [(turn, [])]):
        if message.role == "tool":
            mine = renamed.pop(message.tool_call_id or "", None) or (waiting[0] if waiting else "")
            waiting = [w for w in waiting if w != mine]
            message = message.model_copy(update={"tool_call_id": mine})
        for j in range(len(message.tool_calls)):
            waiting.append(call_id(len(messages), j))
            if j < len(ids) and ids[j]:
                renamed[str(ids[j])] = waiting[-1]
        messages.append(message)
    seed = tools[0] if tools else Tool(name="tool", description="")
    return Dialogue(id="reward", seed_tool=seed, user_persona=Persona(id="", text=""), goal="", gold_arguments={},
                    distractor_tools=[], candidate_tools=list(tools), messages=messages,
                    generation=GenerationInfo(utcgen_version="", backend="", models={}, prompt_versions={}, seed=0,
                                              created_at=""))


def answer_problems(prompt: Any, turn: Message, tools: Sequence[Tool]) -> list[str]:
    """The rules of `validators/answers.py` the turn breaks after the prompt's tool results (rule codes, one per
    problem): the problems of prompt and turn that the prompt alone does not have. Empty without results."""
    if isinstance(prompt, str) or not prompt or turn.parse_error:
        return []
    before = _answering(prompt, None, tools)
    if not has_results(before.messages):
        return []

    def problems(d: Dialogue) -> list[tuple[str, str]]:
        return [(p["rule"], p["message"]) for p in check_answers(d).details.get("problems", [])]

    seen = problems(before)
    return [rule for rule, message in problems(_answering(prompt, turn, tools)) if (rule, message) not in seen]


def score_turn(turn: Message, action: str | None, gold_call: Mapping[str, Any] | None, tools: Sequence[Tool],
               said: str) -> RewardParts:
    """The reward of one read turn against the gold next action (module docstring)."""
    parts = RewardParts()
    if turn.parse_error:
        return parts
    parts.format = FORMAT
    mine = action_of(turn)
    gold_action = "call" if gold_call else (action or "answer")
    if mine == gold_action:
        parts.act = ACT
    elif {mine, gold_action} <= {"ask", "answer"}:
        parts.act = TALK
    if not gold_call:
        parts.penalty += WRONG_CALL if turn.tool_calls else 0.0
        return parts
    gold = _call(gold_call)
    schemas = next((t.properties for t in tools if t.name == gold.name), {})
    if not turn.tool_calls:
        if mine == "ask" and gold.arguments:
            stated = sum(mentioned(v, schemas.get(k) or {}, said) == "found" for k, v in gold.arguments.items())
            parts.penalty += REDUNDANT_QUESTION * stated / len(gold.arguments)
        return parts
    call = next((c for c in turn.tool_calls if c.name == gold.name), None)
    if call is None:
        parts.penalty += WRONG_CALL
        return parts
    parts.tool = TOOL
    right = sum(k in call.arguments and type_ok(call.arguments[k], schemas.get(k) or {})
                and equal(call.arguments[k], v, schemas.get(k) or {}) for k, v in gold.arguments.items())
    extra = sum(k not in gold.arguments for k in call.arguments)
    parts.arguments = ARGUMENTS * (right / len(gold.arguments) if gold.arguments else 1.0) - EXTRA_ARGUMENT * extra
    tool = next((t for t in tools if t.name == gold.name), None)
    parts.valid = SCHEMA if tool is not None and not schema_errors(call.arguments, tool) else 0.0
    return parts


def reward_function(prompts: Sequence[Any], completions: Sequence[Any], *, action: Sequence[str | None] | None = None,
                    gold_call: Sequence[Mapping[str, Any] | None] | None = None,
                    tools: Sequence[Sequence[Mapping[str, Any]]] | None = None, **columns: Any) -> list[float]:
    """Rewards of sampled turns against each row's gold next action: TRL's reward-function signature.

    `action`, `gold_call` and `tools` are the `sft` config's columns (GRPOTrainer passes a dataset's
    extra columns by name; other keyword arguments are ignored).

    >>> prompt = [{"role": "user", "content": "Please cancel order 42."}]
    >>> tools = [{"type": "function", "function": {"name": "cancel_order", "description": "Cancel an order.",
    ...           "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}}}}}]
    >>> gold = {"name": "cancel_order", "arguments": {"order_id": 42}}
    >>> call = '<tool_call>{"name": "cancel_order", "arguments": {"order_id": 42}}</tool_call>'
    >>> reward_function([prompt, prompt], [call, "Which order is it?"], action=["call", "call"],
    ...                 gold_call=[gold, gold], tools=[tools, tools])
    [5.0, -0.5]
    """
    n = len(completions)
    if len(prompts) != n:
        raise ValueError(f"reward_function: {len(prompts)} prompts for {n} completions")
    if gold_call is None:
        raise ValueError("reward_function needs the `gold_call` column (the `sft` config has it)")
    actions = action if action is not None else [None] * n
    specs = tools if tools is not None else [[]] * n
    out = []
    for prompt, completion, act, gold, spec in zip(prompts, completions, actions, gold_call, specs):
        candidates = [tool_from_spec(s) for s in spec or []]
        turn = read_turn(completion)
        parts = score_turn(turn, act, gold, candidates, _said(prompt))
        parts.penalty += UNGROUNDED if answer_problems(prompt, turn, candidates) else 0.0
        out.append(parts.total)
    return out
