"""Near-duplicate distractor retrieval: tool embeddings in a faiss inner-product index.

D_k(tool) = the k tools (other than itself) whose embeddings have the highest cosine
with the tool's, over its name, description and parameter names (DiaFORGE §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..records import Tool
from .embeddings import Embedder
from .similarity import composite_similarity


def tool_text(tool: Tool) -> str:
    """What the encoder sees: the name in words, the description and the parameter names."""
    params = ", ".join(k.replace("_", " ") for k in tool.properties)
    text = f"{tool.name.replace('_', ' ')}: {tool.description}"
    return f"{text} Parameters: {params}." if params else text


@dataclass(frozen=True)
class Neighbour:
    tool: Tool
    cosine: float


class ToolIndex:
    """Exact cosine search over a catalog. Flat inner product: exact, and fast enough for 10^5 tools."""

    def __init__(self, tools: list[Tool], embedder: Embedder, show_progress: bool = False) -> None:
        import faiss

        self.tools = tools
        self.embedder = embedder
        self.position = {t.name: i for i, t in enumerate(tools)}
        self.vectors = embedder.encode([tool_text(t) for t in tools], show_progress=show_progress)
        self.index = faiss.IndexFlatIP(self.vectors.shape[1])
        self.index.add(self.vectors)
        self._neighbours: tuple[np.ndarray, np.ndarray] | None = None
        self._desc_vectors: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.tools)

    def vector(self, tool: Tool) -> np.ndarray:
        i = self.position.get(tool.name)
        if i is not None and self.tools[i] == tool:
            return self.vectors[i]
        return self.embedder.encode([tool_text(tool)])[0]

    def all_neighbours(self, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """(cosines, ids), each of shape (n, k): every tool's k nearest other tools, self excluded."""
        if self._neighbours is not None and self._neighbours[1].shape[1] >= k:
            cos, ids = self._neighbours
            return cos[:, :k], ids[:, :k]
        n = len(self.tools)
        want = min(k + 1, n)
        cos, ids = self.index.search(self.vectors, want)
        out_cos = np.full((n, k), np.nan, dtype=np.float32)
        out_ids = np.full((n, k), -1, dtype=np.int64)
        for i in range(n):
            keep = ids[i] != i
            row_ids, row_cos = ids[i][keep][:k], cos[i][keep][:k]
            out_ids[i, : len(row_ids)], out_cos[i, : len(row_cos)] = row_ids, row_cos
        self._neighbours = (out_cos, out_ids)
        return out_cos, out_ids

    def distractors(self, tool: Tool, k: int = 5) -> list[Neighbour]:
        """The k nearest other tools of `tool` (which need not be in the catalog)."""
        i = self.position.get(tool.name)
        if i is not None and self.tools[i] == tool:
            cos, ids = self.all_neighbours(k)
            pairs = zip(ids[i], cos[i])
        else:
            found_cos, found_ids = self.index.search(self.vector(tool)[None, :], k + 1)
            pairs = ((j, c) for j, c in zip(found_ids[0], found_cos[0]) if self.tools[j].name != tool.name)
        return [Neighbour(self.tools[j], float(c)) for j, c in list(pairs)[:k] if j >= 0]

    def description_vectors(self) -> np.ndarray:
        if self._desc_vectors is None:
            self._desc_vectors = self.embedder.encode([t.description for t in self.tools])
        return self._desc_vectors

    def neighbour_similarities(self, k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cosines, ids, composite A.4 scores) of every tool's k retrieved distractors."""
        cos, ids = self.all_neighbours(k)
        desc = self.description_vectors()
        scores = np.full(ids.shape, np.nan, dtype=np.float32)
        for i, row in enumerate(ids):
            for col, j in enumerate(row):
                if j >= 0:
                    d_cos = float(desc[i] @ desc[j])
                    scores[i, col] = composite_similarity(self.tools[i], self.tools[j], d_cos)
        return cos, ids, scores
