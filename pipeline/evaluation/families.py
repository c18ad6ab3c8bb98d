"""Near-duplicate families of a catalog: the connected components of the graph whose nodes are its tools
and whose edges join two tools with A.4 composite similarity >= 0.70.

A benchmark holds out whole families (utcgen.pipeline.evaluation.holdout), so that no near-duplicate
of a held-out tool reaches training data. Similarities: S(τ*, τ) of A.4 with the description cosine
from the packaged sentence encoder (cached embeddings). Every pair of the catalog is scored when it
has at most `ALL_PAIRS_LIMIT` tools; above that, each tool's `NEIGHBOURS` nearest descriptions (larger
catalogs would make the quadratic pass too slow, and a near-duplicate has a close description by
construction: S >= 0.70 needs the description term).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from ..core.records import Tool
from ..retrieval.similarity import NEAR_DUPLICATE_THRESHOLD, composite_similarity

ALL_PAIRS_LIMIT = 4000
NEIGHBOURS = 50


class Similarity:
    """A.4 scores between tools, with description cosines from one encoding of every description."""

    def __init__(self, tools: list[Tool], embedder: Any) -> None:
        self.tools = tools
        self.position = {t.name: i for i, t in enumerate(tools)}
        vectors = embedder.encode([t.description for t in tools])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors = vectors / np.where(norms == 0, 1, norms)

    def score(self, a: Tool, b: Tool) -> float:
        i, j = self.position[a.name], self.position[b.name]
        return composite_similarity(a, b, float(self.vectors[i] @ self.vectors[j]))

    def edges(self) -> list[tuple[int, int]]:
        """Pairs (i, j), i < j, with S >= 0.70: all pairs up to ALL_PAIRS_LIMIT tools, else nearest neighbours."""
        n = len(self.tools)
        out: list[tuple[int, int]] = []
        if n <= ALL_PAIRS_LIMIT:
            pairs = ((i, j) for i in range(n) for j in range(i + 1, n))
        else:
            pairs = set()
            for start in range(0, n, 1024):
                block = self.vectors[start:start + 1024] @ self.vectors.T
                nearest = np.argsort(-block, axis=1)[:, :NEIGHBOURS + 1]
                for row, cols in enumerate(nearest):
                    i = start + row
                    pairs.update((min(i, int(j)), max(i, int(j))) for j in cols if int(j) != i)
            pairs = sorted(pairs)
        for i, j in pairs:
            if self.score(self.tools[i], self.tools[j]) >= NEAR_DUPLICATE_THRESHOLD:
                out.append((i, j))
        return out


def near_duplicate_families(similarity: Similarity) -> dict[str, str]:
    """Tool name -> family id: connected components of the A.4 >= 0.70 graph; a family's id is the
    alphabetically first tool name in it, so ids do not depend on catalog order."""
    parent = list(range(len(similarity.tools)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in similarity.edges():
        parent[find(i)] = find(j)
    members: dict[int, list[str]] = defaultdict(list)
    for i, t in enumerate(similarity.tools):
        members[find(i)].append(t.name)
    return {name: min(names) for names in members.values() for name in names}
