"""Turn slicing (DiaFORGE §3.2, App. B): one SFT example per assistant turn.

A dialogue <(u1,a1),...,(uT,aT)> yields T examples. Example t has the prompt
``[SYS] u1 a1 ... ut`` and the completion ``at``. Rows use TRL's conversational
prompt/completion format, so TRL computes the loss on the completion only,
which is the loss masking the paper asks for.
"""

from __future__ import annotations

from collections.abc import Iterable

from utcgen.pipeline.export.rows import ChatMessage, SftRow
from utcgen.pipeline.prompts import load_prompt
from utcgen.pipeline.records import Dialogue, Message, Tool


def build_system_prompt(tools: list[Tool]) -> str:
    """The system message of every slice: the candidate tools, one JSON spec per line."""
    listing = "\n".join(t.spec_json() for t in tools)
    return load_prompt("sft_system").render(tools=listing, num_tools=len(tools))[0]["content"]


def _as_chat(message: Message) -> ChatMessage:
    """Assistant turns are shown in their wire format, so earlier turns look like targets."""
    if message.role == "assistant":
        return ChatMessage(role="assistant", content=message.reply_json())
    return ChatMessage(role=message.role, content=message.content)


def slice_dialogue(dialogue: Dialogue) -> list[SftRow]:
    """One row per assistant turn, whatever the dialogue's verdict (callers filter).

    System messages stored in the dialogue (generation-time instructions) are
    dropped: the SFT system prompt replaces them, as the fine-tuned model will
    see only that at inference.
    """
    system = ChatMessage(role="system", content=build_system_prompt(dialogue.candidate_tools))
    tools = [t.spec_json() for t in dialogue.candidate_tools]
    rows: list[SftRow] = []
    history: list[ChatMessage] = []
    for message in dialogue.messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            rows.append(
                SftRow(
                    dialogue_id=dialogue.id,
                    turn_index=len(rows),
                    phase=message.phase,
                    seed_tool=dialogue.seed_tool.name,
                    tools=list(tools),
                    prompt=[system, *history],
                    completion=[_as_chat(message)],
                )
            )
        history.append(_as_chat(message))
    return rows


def slice_dialogues(dialogues: Iterable[Dialogue]) -> list[SftRow]:
    """Slices of the accepted dialogues only: rejected ones never reach training."""
    rows: list[SftRow] = []
    for dialogue in dialogues:
        if dialogue.accepted:
            rows.extend(slice_dialogue(dialogue))
    return rows
