"""Turn slicing (DiaFORGE §3.2, App. B): one SFT example per assistant turn.

A dialogue <(u1,a1),...,(uT,aT)> yields T examples. Example t has the prompt
``[SYS] u1 a1 ... ut`` and the completion ``at``. Rows use TRL's conversational
prompt/completion format, so TRL computes the loss on the completion only,
which is the loss masking the paper asks for.

Two formats of the assistant turns:

- ``chat`` (default): OpenAI-style messages that Hugging Face chat templates
  render natively: ``content``, ``reasoning_content`` (the private thought) and
  ``tool_calls`` (``[{"type": "function", "function": {"name", "arguments"}}]``,
  arguments as an object, present only when the turn calls a tool). The system
  prompt describes the task; the tools reach the model through the template's
  ``tools=`` (the row's ``tools`` column).
- ``json``: for models whose template cannot render tools or reasoning. The
  system prompt lists the tools as JSON and every assistant turn is one JSON
  string ``{"thought", "content", "tool_calls"}`` in ``content``.

In both formats ``tools`` holds the candidates as function spec objects.

Tool results (runs with ``execution.results`` on) are prompt messages, never
completions; every assistant turn after them is sliced like any other. ``chat``:
the message the chat templates and TRL take, ``{"role": "tool", "tool_call_id",
"content"}``, and each call of a dialogue holding results carries the ``id`` its
result names (``dialogue.results.call_id``) and ``"type": "function"``; a
dialogue without results is sliced exactly as before. ``json``: a user message
``Tool result for <id>:`` and the result on the next line, the way a
JSON-protocol model reads results while the dialogue is generated (user and
assistant turns still alternate, which some templates require).
"""

from __future__ import annotations

from typing import Any

from ..core.records import Dialogue, Message, Tool
from ..dialogue.labels import label_turn
from ..dialogue.results import call_id, has_results
from ..scenarios import offered
from ..settings.templates import load_prompt
from .rows import DEFAULT_SFT_FORMAT, SFT_FORMATS, SftRow

# The system prompt file of each format.
SYSTEM_PROMPTS = {"chat": "sft_system_chat", "json": "sft_system"}


def _check(sft_format: str) -> str:
    if sft_format not in SFT_FORMATS:
        raise ValueError(f"unknown sft format {sft_format!r}; expected one of {', '.join(SFT_FORMATS)}")
    return sft_format


def build_system_prompt(tools: list[Tool], sft_format: str = "json") -> str:
    """The system message of every slice. `json`: lists the candidate tools, one JSON spec per line;
    `chat`: names only their number (the chat template renders the `tools` column)."""
    prompt = load_prompt(SYSTEM_PROMPTS[_check(sft_format)])
    values: dict[str, Any] = {"num_tools": len(tools)}
    if "tools" in prompt.placeholders:
        values["tools"] = "\n".join(t.spec_json() for t in tools)
    return prompt.render(**values)[0]["content"]


def result_text(message: Message) -> str:
    """A tool turn as the user-side text a JSON-protocol model reads: the call's id, then the result."""
    return f"Tool result for {message.tool_call_id}:\n{message.content}"


def chat_message(message: Message, sft_format: str = DEFAULT_SFT_FORMAT, at: int | None = None) -> dict[str, Any]:
    """One stored message as a training message of the given format. `at`: the message's index in its
    dialogue when the dialogue holds tool results, so each call carries the id its result names."""
    if message.role == "tool":
        if sft_format == "json":
            return {"role": "user", "content": result_text(message)}
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role != "assistant":
        return {"role": message.role, "content": message.content}
    if sft_format == "json":
        return {"role": "assistant", "content": message.reply_json()}
    out: dict[str, Any] = {"role": "assistant", "content": message.content, "reasoning_content": message.thought or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {**({} if at is None else {"id": call_id(at, j)}), "type": "function",
             "function": {"name": c.name, "arguments": dict(c.arguments)}}
            for j, c in enumerate(message.tool_calls)
        ]
    return out


def slice_dialogue(dialogue: Dialogue, sft_format: str = DEFAULT_SFT_FORMAT) -> list[SftRow]:
    """One row per assistant turn, whatever the dialogue's verdict (callers filter).

    System messages stored in the dialogue (generation-time instructions) are
    dropped: the SFT system prompt replaces them, as the fine-tuned model will
    see only that at inference.
    """
    _check(sft_format)
    offer = offered(dialogue)  # a multi-step task's rows offer both steps' pools
    system = {"role": "system", "content": build_system_prompt(offer, sft_format)}
    tools = [t.openai_spec() for t in offer]
    rows: list[SftRow] = []
    history: list[dict[str, Any]] = []
    ids = has_results(dialogue.messages)
    for at, message in enumerate(dialogue.messages):
        if message.role == "system":
            continue
        turn = chat_message(message, sft_format, at if ids else None)
        if message.role == "assistant":
            labelled = message if message.action else label_turn(message, [t.name for t in offer])
            rows.append(
                SftRow(
                    dialogue_id=dialogue.id,
                    turn_index=len(rows),
                    phase=message.phase,
                    seed_tool=dialogue.seed_tool.name,
                    tools=tools,
                    prompt=[system, *history],
                    completion=[turn],
                    scenario=dialogue.scenario,
                    action=labelled.action,
                    act=labelled.act,
                    gold_call=message.tool_calls[0].model_dump() if message.tool_calls else None,
                )
            )
        history.append(turn)
    return rows
