"""Token lengths of the training rows, so a trainer's `max_length` can be chosen before training.

With a tokenizer (a local folder that `transformers.AutoTokenizer` loads) the rows are
rendered by its chat template exactly as TRL does: prompt with the generation prompt,
then prompt + completion, with the row's `tools`. Without one, lengths are an estimate:
the UTF-8 bytes of a ChatML-like rendering (tools as JSON in the system turn, the
reasoning and tool calls as JSON) divided by BYTES_PER_TOKEN.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

BYTES_PER_TOKEN = 3.6  # SmolLM2 tokenizer + ChatML with tools on offline data: ~3.7 bytes per token
# Per message: '<|im_start|>role\n' ... '<|im_end|>\n' is about this many tokens.
MESSAGE_OVERHEAD = 5
QUANTILES = {"min": 0.0, "median": 0.5, "p95": 0.95, "p99": 0.99, "max": 1.0}


def summarize(values: Sequence[int]) -> dict[str, int | None]:
    """min/median/p95/p99/max (nearest rank), None for no values."""
    return summarize_counts(Counter(values))


def summarize_counts(counts: Counter[int]) -> dict[str, int | None]:
    """`summarize` of values kept as counts (value -> how many): nearest rank over the sorted values."""
    n = sum(counts.values())
    if not n:
        return {name: None for name in QUANTILES}
    out: dict[str, int | None] = {}
    for name, q in QUANTILES.items():
        rank, seen = min(n - 1, max(0, math.ceil(q * n) - 1)), 0
        for value in sorted(counts):
            seen += counts[value]
            if seen > rank:
                out[name] = value
                break
    return out


def _estimate_message(message: dict[str, Any]) -> int:
    text = str(message.get("content") or "")
    if message.get("reasoning_content"):
        text += str(message["reasoning_content"])
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], ensure_ascii=False)
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD


def estimate_counter() -> Callable[[list[dict], list[dict], list[dict]], tuple[int, int]]:
    """(prompt, completion) token estimates of a row from its bytes."""

    def count(prompt: list[dict], completion: list[dict], tools: list[dict]) -> tuple[int, int]:
        tool_bytes = sum(len(json.dumps(t, ensure_ascii=False).encode("utf-8")) + 1 for t in tools)
        p = sum(_estimate_message(m) for m in prompt) + math.ceil(tool_bytes / BYTES_PER_TOKEN)
        return p, sum(_estimate_message(m) for m in completion)

    return count


def tokenizer_counter(path: str) -> Callable[[list[dict], list[dict], list[dict]], tuple[int, int]]:
    """(prompt, completion) token counts of a row under the chat template of a local tokenizer."""
    from transformers import AutoTokenizer  # lazy: seconds to import, only with a --tokenizer folder

    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)

    def ids(messages: list[dict], tools: list[dict], generation_prompt: bool) -> list[int]:
        out = tok.apply_chat_template(
            messages, tools=tools or None, add_generation_prompt=generation_prompt, tokenize=True, return_dict=True
        )
        return list(out["input_ids"])

    def count(prompt: list[dict], completion: list[dict], tools: list[dict]) -> tuple[int, int]:
        p = len(ids(prompt, tools, True))
        total = len(ids(prompt + completion, tools, False))
        return p, max(0, total - p)

    return count


def suggested_max_length(p99: int | None, multiple: int = 64) -> int | None:
    """The 99th percentile of the total length, rounded up to a multiple of `multiple`."""
    return None if p99 is None else max(multiple, math.ceil(p99 / multiple) * multiple)


class Lengths:
    """Token lengths counted row by row (as counts per length, so an export can stream its rows)."""

    def __init__(self, tokenizer: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.count = tokenizer_counter(tokenizer) if tokenizer else estimate_counter()
        self.prompt: Counter[int] = Counter()
        self.completion: Counter[int] = Counter()
        self.total: Counter[int] = Counter()
        self.dialogues: Counter[int] = Counter()

    def add_dialogue(self, rows: Sequence[Any]) -> None:
        """The `sft` rows of one dialogue; its last slice (prompt + completion) is the whole dialogue."""
        last = None
        for row in rows:
            p, c = self.count(list(row.prompt), list(row.completion), list(row.tools))
            self.prompt[p] += 1
            self.completion[c] += 1
            self.total[p + c] += 1
            last = p + c
        if last is not None:
            self.dialogues[last] += 1

    def result(self) -> dict[str, Any]:
        return _report(self.tokenizer, summarize_counts(self.prompt), summarize_counts(self.completion),
                       summarize_counts(self.total), summarize_counts(self.dialogues))



def _report(tokenizer: str | None, prompt: dict[str, int | None], completion: dict[str, int | None],
            sft_total: dict[str, int | None], dialogues: dict[str, int | None]) -> dict[str, Any]:
    return {
        "method": "tokenizer" if tokenizer else "estimate",
        "tokenizer": tokenizer,
        "note": (
            f"Tokens under the chat template of the tokenizer at {tokenizer}, tools passed as tools=."
            if tokenizer
            else f"Estimate, no tokenizer given: UTF-8 bytes / {BYTES_PER_TOKEN:g} plus {MESSAGE_OVERHEAD} per "
            "message, tools counted as JSON. Real tokenizers and chat templates differ; pass --tokenizer for counts."
        ),
        "sft": {"prompt": prompt, "completion": completion, "total": sft_total},
        "dialogues": {"total": dialogues},
        "suggested_max_length": suggested_max_length(sft_total["p99"]),
    }
