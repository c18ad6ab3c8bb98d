"""`utcgen eval build`: a held-out benchmark from the accepted dialogues of a generate output folder.

Which tools are held out and how a dialogue becomes a case is utcgen.pipeline.evaluation.holdout (on
the near-duplicate families of utcgen.pipeline.evaluation.families); this module puts them together
and sums up the benchmark; `benchmark_folder` writes its folder. `split.json` lists the held-out tools, which
`utcgen generate --exclude-split` removes from the catalog before retrieval.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..ingest.reader import load_catalog
from ..retrieval.embeddings import Embedder
from .benchmark_folder import write_benchmark
from .cases import Group, Split
from .families import Similarity, near_duplicate_families
from .holdout import UNSET_LOB, accepted_dialogues, build_case, hold_out, resolve_catalog
from .summary import BenchmarkSummary


def build_benchmark(source: Path, out: Path, *, by: Group = "family", holdout: float = 0.2, seed: int = 0,
                    catalog: Path | None = None, embedder: Any = None) -> BenchmarkSummary:
    """Write the benchmark folder `out` from the accepted dialogues of `source` (see the module docstring)."""
    source, out = Path(source), Path(out)
    if not 0 < holdout < 1:
        raise InputError(f"--holdout {holdout}: must be between 0 and 1 (exclusive)")
    if by not in ("family", "line_of_business"):
        raise InputError(f"--by {by}: must be family or line_of_business")
    accepted = accepted_dialogues(source)
    catalog_path = resolve_catalog(source, catalog)
    tools = list(load_catalog(str(catalog_path)))
    by_name = {t.name: t for t in tools}
    for d in accepted:  # a tool the catalog no longer has still needs a family
        for t in [d.seed_tool, *d.candidate_tools, *d.distractor_tools]:
            if t.name not in by_name:
                by_name[t.name] = t
                tools.append(t)
    similarity = Similarity(tools, embedder or Embedder())
    family = near_duplicate_families(similarity)
    groups, held = hold_out(source, accepted, tools, family, by=by, holdout=holdout, seed=seed)
    pairs = [build_case(d, by_name, family, similarity) for d in accepted if d.seed_tool.name in held]
    cases = [c for c, _ in pairs]
    split = Split(by=by, held_out_tools=sorted(held), held_out_groups=groups, source=str(source), seed=seed)

    sizes_all = Counter(family.values()).values()
    n = len(cases)
    summary = BenchmarkSummary(
        out_dir=str(out), source=str(source), catalog=str(catalog_path), by=by, holdout=holdout, seed=seed,
        accepted=len(accepted), cases=n, held_out_groups=len(groups), held_out_tools=len(held),
        catalog_tools=len(tools), families=len(sizes_all), family_size_max=max(sizes_all),
        family_size_mean=round(sum(sizes_all) / len(sizes_all), 4),
        families_with_near_duplicates=sum(s > 1 for s in sizes_all),
        share_near_duplicate=round(sum(c.near_duplicate for c in cases) / n, 4) if n else 0.0,
        mean_overlap=round(sum(o for _, o in pairs) / n, 4) if n else 0.0,
        share_required=round(sum(bool(c.gold_tool.required) for c in cases) / n, 4) if n else 0.0,
        mean_distractors=round(sum(len(c.distractors) for c in cases) / n, 4) if n else 0.0,
        lines_of_business=dict(Counter(c.line_of_business or UNSET_LOB for c in cases)),
        scenarios=dict(Counter(c.scenario for c in cases)), source_scenarios=dict(Counter(d.scenario for d in accepted)),
    )
    write_benchmark(out, cases, split, summary, overlaps=[o for _, o in pairs])
    return summary

