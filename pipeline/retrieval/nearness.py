"""Semantic nearness: which candidate tool do the user's words, taken as a whole, point to?

The grounding rule (`grounding`) is lexical: one word that fits the chosen tool and not another
is enough. A reader judges the whole request, so a request that says "saved tracks" but never
"remove" points at the tool that saves them, whatever word separated the two. Nearness is the
cosine of sentence embeddings (the project's MiniLM model) between what the user said and each
candidate's text, its name read aloud and its description. Measured by `export.quality`
(`seed_closest`), aimed at by the offline user when it chooses how to say what it needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.text import spoken
from ..dialogue.grounding import ToolLike, tool_description, tool_name
from .embeddings import Embedder

Embed = Callable[[Sequence[str]], np.ndarray]


def name_and_description(tool: ToolLike) -> str:
    """What a user could match a tool by: its name read aloud and its description."""
    return f"{spoken(tool_name(tool))}. {tool_description(tool)}".strip()


@functools.lru_cache(maxsize=1)
def _embedder() -> Any:
    return Embedder()


def warm() -> None:
    """Load the default embedder's model now: a cached text never loads it, so a first uncached one would."""
    _embedder().load()


def default_embed(texts: Sequence[str]) -> np.ndarray:
    """The project's sentence embedder (L2-normalised MiniLM vectors, disk-cached), one per process."""
    return _embedder().encode(list(texts))


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def cosines(saids: Sequence[str], tools: Sequence[ToolLike], embed: Embed | None = None) -> np.ndarray:
    """(len(saids), len(tools)): the cosine of each text of `saids` to each tool's text (`name_and_description`)."""
    texts = [name_and_description(t) for t in tools]
    vectors = unit((embed or default_embed)([*texts, *saids]))
    return vectors[len(texts):] @ vectors[:len(texts)].T


def margins(saids: Sequence[str], chosen: ToolLike, others: Sequence[ToolLike], embed: Embed | None = None) -> list[float]:
    """For each text of `saids`: its cosine to `chosen` minus its highest cosine to one of `others`
    (positive: `chosen` is the nearest candidate; no others: 1.0 each)."""
    if not others:
        return [1.0] * len(saids)
    return [float(row[0] - row[1:].max()) for row in cosines(saids, [chosen, *others], embed)]
