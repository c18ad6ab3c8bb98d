"""Catalog statistics, including the share of tools with near-duplicate distractors (A.4)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from pydantic import BaseModel

from ..core.records import Tool
from .chains import plan_chains
from .embeddings import Embedder
from .index import ToolIndex
from .similarity import NEAR_DUPLICATE_THRESHOLD


class CatalogStats(BaseModel):
    tools: int
    lines_of_business: dict[str, int]
    parameter_count_distribution: dict[int, int]
    share_with_required_parameters: float
    k: int
    near_duplicate_threshold: float
    share_with_near_duplicate: float
    mean_composite_similarity: float
    mean_cosine: float
    # chain pairs (retrieval/chains.py): a tool whose result can feed another's required parameter
    chain_pairs: int = 0
    chain_pairs_by_evidence: dict[str, int] = {}
    tools_starting_chain: int = 0
    tools_ending_chain: int = 0

    def to_text(self) -> str:
        lob = ", ".join(f"{k} {v}" for k, v in sorted(self.lines_of_business.items(), key=lambda kv: -kv[1]))
        params = ", ".join(f"{k}: {v}" for k, v in sorted(self.parameter_count_distribution.items()))
        return "\n".join(
            [
                f"tools                          {self.tools}",
                f"lines of business              {len(self.lines_of_business)} ({lob})",
                f"parameters per tool            {params}",
                f"with required parameters       {self.share_with_required_parameters:.1%}",
                f"with a near-duplicate in top-{self.k} {self.share_with_near_duplicate:.1%}"
                f" (S >= {self.near_duplicate_threshold:.2f})",
                f"mean composite S of top-{self.k}    {self.mean_composite_similarity:.3f}",
                f"mean cosine of top-{self.k}         {self.mean_cosine:.3f}",
                f"chain pairs                    {self.chain_pairs}"
                + (f" ({', '.join(f'{k} {v}' for k, v in self.chain_pairs_by_evidence.items())})"
                   if self.chain_pairs else "")
                + f": {_tools(self.tools_starting_chain, 'starts', 'start')} one, "
                  f"{_tools(self.tools_ending_chain, 'ends', 'end')} one",
                "",
                f"near-duplicate (DiaFORGE A.4): a tool has one when any of its {self.k} distractors (its {self.k}",
                "nearest tools by embedding) scores S = 0.40 S_name + 0.35 S_desc + 0.25 S_param",
                f">= {self.near_duplicate_threshold:.2f}; S_name = 2 LCS / (|a| + |b|) on the names, S_desc = (1 + cosine) / 2",
                "(the retrieval's cosine, over name, description and parameter names),",
                "S_param = 1/2 Jaccard of required keys + 1/2 type agreement on the shared keys.",
                "chain pair: a tool whose result can feed a required id-like parameter of another, shown by",
                "its output schema, else by its name or description and the sentence embeddings.",
            ]
        )


def _tools(count: int, one: str, many: str) -> str:
    return f"{count} tool {one}" if count == 1 else f"{count} tools {many}"


def catalog_stats(tools: list[Tool], k: int = 5, embedder: Embedder | None = None,
                  index: ToolIndex | None = None) -> CatalogStats:
    """Computes everything on the k retrieved neighbours of each tool, never on all pairs."""
    index = index or ToolIndex(tools, embedder or Embedder())
    cos, _ids, scores = index.neighbour_similarities(k)
    near = np.nanmax(np.where(np.isnan(scores), -1, scores), axis=1) >= NEAR_DUPLICATE_THRESHOLD
    n = len(tools)
    chains = plan_chains(tools, embed=index.embedder.encode)
    return CatalogStats(
        tools=n,
        lines_of_business=dict(Counter(t.line_of_business or "unspecified" for t in tools)),
        parameter_count_distribution=dict(sorted(Counter(len(t.properties) for t in tools).items())),
        share_with_required_parameters=sum(bool(t.required) for t in tools) / n if n else 0.0,
        k=k,
        near_duplicate_threshold=NEAR_DUPLICATE_THRESHOLD,
        share_with_near_duplicate=float(near.mean()) if n else 0.0,
        mean_composite_similarity=float(np.nanmean(scores)) if n > 1 else 0.0,
        mean_cosine=float(np.nanmean(cos)) if n > 1 else 0.0,
        chain_pairs=len(chains),
        chain_pairs_by_evidence=dict(sorted(Counter(p.evidence for p in chains).items())),
        tools_starting_chain=len({p.producer for p in chains}),
        tools_ending_chain=len({p.consumer for p in chains}),
    )
