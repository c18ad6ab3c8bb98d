"""Turn slicing (DiaFORGE §3.2, App. B): one SFT example per assistant turn.

A dialogue <(u1,a1),...,(uT,aT)> yields T examples. Example t has the prompt
``[SYS] u1 a1 ... ut`` and the completion ``at``. Rows use TRL's conversational
prompt/completion format, so TRL computes the loss on the completion only,
which is the loss masking the paper asks for.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, TypedDict

from pipeline.schema import Dialogue, Message, Tool

SFT_SYSTEM_TEMPLATE = Path(__file__).resolve().parent.parent / "prompts" / "sft_system.txt"

_VERSION_LINE = re.compile(r"^version:\s*(\S+)\s*$")
_SYSTEM_HEADER = "=== system"
# Same file layout as every prompt in prompts/ (version line, `=== system`, `{{name}}`
# placeholders), so the literal JSON example in the template needs no escaping.
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class ChatMessage(TypedDict):
    role: str
    content: str


class SftRow(TypedDict):
    """One row of the `sft` config; the column order here is the parquet column order."""

    dialogue_id: str
    turn_index: int
    phase: str | None
    seed_tool: str
    tools: list[str]
    prompt: list[ChatMessage]
    completion: list[ChatMessage]


@lru_cache(maxsize=4)
def _load_template(path: Path = SFT_SYSTEM_TEMPLATE) -> tuple[str, str]:
    """Split the template file into (version, system text): one version line, one system section."""
    text = path.read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    match = _VERSION_LINE.match(first)
    if match is None:
        raise ValueError(f"{path}: first line must be 'version: <id>', got {first!r}")
    header, _, body = rest.lstrip("\n").partition("\n")
    if header.strip() != _SYSTEM_HEADER:
        raise ValueError(f"{path}: expected a '{_SYSTEM_HEADER}' line after the version line")
    return match.group(1), body.strip("\n")


def _render(body: str, values: dict[str, str]) -> str:
    """Fill `{{name}}` placeholders; a placeholder without a value is a template bug."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"sft system template: no value for placeholder {{{{{name}}}}}")
        return values[name]

    return _PLACEHOLDER.sub(fill, body)


def sft_prompt_version() -> str:
    """Version id of the SFT system template, recorded in the dataset card."""
    return _load_template()[0]


def tool_spec_json(tool: Tool) -> str:
    """A tool as a JSON string: parquet keeps one string type whatever the tool's schema."""
    return json.dumps(tool.openai_spec(), ensure_ascii=False)


def build_system_prompt(tools: list[Tool]) -> str:
    """The system message of every slice: the candidate tools, one JSON spec per line."""
    _, body = _load_template()
    listing = "\n".join(tool_spec_json(t) for t in tools)
    return _render(body, {"tools": listing, "num_tools": str(len(tools))})


def _as_chat(message: Message) -> ChatMessage:
    """Assistant turns are shown in their wire format, so earlier turns look like targets."""
    if message.role == "assistant":
        return {"role": "assistant", "content": message.reply_json()}
    return {"role": message.role, "content": message.content}


def slice_dialogue(dialogue: Dialogue) -> list[SftRow]:
    """One row per assistant turn, whatever the dialogue's verdict (callers filter).

    System messages stored in the dialogue (generation-time instructions) are
    dropped: the SFT system prompt replaces them, as the fine-tuned model will
    see only that at inference.
    """
    system: ChatMessage = {"role": "system", "content": build_system_prompt(dialogue.candidate_tools)}
    tools = [tool_spec_json(t) for t in dialogue.candidate_tools]
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
