"""Near-duplicate distractor retrieval: tool embeddings in a faiss inner-product index.

D_k(tool) = the k tools (other than itself) whose embeddings have the highest cosine
with the tool's, over its name, description and parameter names (DiaFORGE §3.1).

Up to `EXACT_UP_TO` tools the index is exact (flat inner product). Above it, finding every
tool's neighbours exactly grows with the square of the catalog, so the index is a faiss inverted
file (IVF): the vectors are clustered by k-means, and a query scans only the `IVF_PROBES` clusters
nearest to it. Its recall@5 against the exact index is measured by `make bench-catalog` (0.9997 at
100,000 tools, where it builds in 3 s and an HNSW graph took 19 s). It is built the same way every
time (a fixed training sample and k-means seed), since a resumed run must draw the same distractors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np

from ..core.records import Tool
from ..dialogue import grounding
from .model import index_text
from .similarity import composite_similarities

if TYPE_CHECKING:  # the encoder a ToolIndex is given (`embeddings` picks the backend, which may import this module)
    from .embeddings import Embedder

EXACT_UP_TO = 50_000  # the default of synthesis.exact_search_up_to
IVF_PROBES = 8  # clusters scanned per query
SPARE = 5  # neighbours past the k nearest that may stand in for look-alikes no word tells apart (`distractors`)
IVF_TRAINING_PER_CLUSTER = 40  # k-means sample: this many vectors per cluster (faiss asks for 39 or more)


def ivf_clusters(n: int) -> int:
    """The number of k-means clusters for `n` vectors: the power of two nearest 4 sqrt(n)
    (1,024 at 100,000), so a cluster holds about sqrt(n) / 4 vectors."""
    return 1 << max(6, round(np.log2(4 * np.sqrt(n))))


def build_index(vectors: np.ndarray, exact_up_to: int = EXACT_UP_TO) -> Any:
    """A faiss inner-product index over unit vectors: flat (exact) up to `exact_up_to` rows, else an
    inverted file over `ivf_clusters` k-means clusters, trained on a fixed sample (deterministic)."""
    dim = vectors.shape[1]
    if len(vectors) <= exact_up_to:
        index = faiss.IndexFlatIP(dim)
        index.add(vectors)
        return index
    clusters = min(ivf_clusters(len(vectors)), len(vectors) // IVF_TRAINING_PER_CLUSTER or 1)
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, clusters, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed, index.cp.niter = 1234, 10
    size = min(len(vectors), clusters * IVF_TRAINING_PER_CLUSTER)
    sample = np.random.default_rng(0).choice(len(vectors), size, replace=False)
    index.train(vectors[np.sort(sample)])
    index.add(vectors)
    index.nprobe = min(IVF_PROBES, clusters)
    return index


def neighbours(index: Any, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(cosines, ids), each (n, k): the k nearest other rows of each row of `vectors` in `index`
    (which holds them, in order), itself excluded; -1 and NaN where fewer were found."""
    n = len(vectors)
    cos, ids = index.search(vectors, min(k + 1, n))
    out_cos = np.full((n, k), np.nan, dtype=np.float32)
    out_ids = np.full((n, k), -1, dtype=np.int64)
    for i in range(n):
        keep = (ids[i] != i) & (ids[i] >= 0)
        row_ids, row_cos = ids[i][keep][:k], cos[i][keep][:k]
        out_ids[i, : len(row_ids)], out_cos[i, : len(row_cos)] = row_ids, row_cos
    return out_cos, out_ids


@dataclass(frozen=True)
class Neighbour:
    tool: Tool
    cosine: float


class ToolIndex:
    """Cosine search over a catalog: exact up to `exact_up_to` tools, IVF above (`build_index`)."""

    def __init__(self, tools: list[Tool], embedder: Embedder, show_progress: bool = False,
                 exact_up_to: int = EXACT_UP_TO) -> None:
        self.tools = tools
        self.embedder = embedder
        self.position = {t.name: i for i, t in enumerate(tools)}
        self.vectors = embedder.encode([index_text(t) for t in tools], show_progress=show_progress)
        self.index = build_index(self.vectors, exact_up_to)
        self.exact = len(tools) <= exact_up_to
        self._neighbours: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.tools)

    def vector(self, tool: Tool) -> np.ndarray:
        i = self.position.get(tool.name)
        if i is not None and self.tools[i] == tool:
            return self.vectors[i]
        return self.embedder.encode([index_text(tool)])[0]

    def all_neighbours(self, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """(cosines, ids), each of shape (n, k): every tool's k nearest other tools, self excluded."""
        if self._neighbours is not None and self._neighbours[1].shape[1] >= k:
            cos, ids = self._neighbours
            return cos[:, :k], ids[:, :k]
        self._neighbours = neighbours(self.index, self.vectors, k)
        return self._neighbours

    def distractors(self, tool: Tool, k: int = 5) -> list[Neighbour]:
        """The k nearest other tools of `tool` (which need not be in the catalog) that it can be told
        apart from by what it does: a neighbour whose vocabulary holds every word of the tool's
        description and name (`grounding.told`), such as a consolidated tool that does all this one
        does and more (GitHub's update_pull_request beside update_pull_request_state), is passed
        over for the next, since only a parameter's small print could ground a choice between them.
        Among the SPARE next nearest; fewer than k when the rest are all such look-alikes."""
        i = self.position.get(tool.name)
        if i is not None and self.tools[i] == tool:
            cos, ids = self.all_neighbours(k + SPARE)
            pairs = zip(ids[i], cos[i])
        else:
            found_cos, found_ids = self.index.search(self.vector(tool)[None, :], k + SPARE + 1)
            pairs = ((j, c) for j, c in zip(found_ids[0], found_cos[0]) if j >= 0 and self.tools[j].name != tool.name)
        mine = grounding.told(tool)
        near = [Neighbour(self.tools[j], float(c)) for j, c in pairs if j >= 0]
        return [n for n in near if grounding.distinct(mine, [grounding.vocab(n.tool)])][:k]

    def neighbour_similarities(self, k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cosines, ids, composite A.4 scores) of every tool's k retrieved distractors.

        S_desc takes the cosine the retrieval found, of the index's own vectors (name, description and
        parameter names): nothing is embedded a second time."""
        cos, ids = self.all_neighbours(k)
        scores = np.full(ids.shape, np.nan, dtype=np.float32)
        found = ids >= 0
        rows = np.broadcast_to(np.arange(len(ids))[:, None], ids.shape)
        scores[found] = composite_similarities(self.tools, rows[found], ids[found], cos[found])
        return cos, ids, scores
