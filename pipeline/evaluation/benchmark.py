"""`utcgen eval build`: a held-out benchmark from the accepted dialogues of a generate output folder.

A benchmark must test tools the model never trained on, and (the point of DiaFORGE) tools whose
near-duplicates it never trained on either. So the split is by group, never by dialogue:
- `family` (default): near-duplicate families, the connected components of the graph whose nodes
  are every tool of the catalog the run used and whose edges join two tools with A.4 composite
  similarity >= 0.70. Holding out a family holds out every near-duplicate of its tools.
- `line_of_business`: whole lines of business (by the seed tool's catalog entry); the held-out
  tools are those lines' tools plus every tool of their near-duplicate families, so a near-duplicate
  in another line never reaches training data either.
Groups that have accepted dialogues are shuffled with `seed`, and each is held out when that brings
the number of covered dialogues closer to `holdout` × accepted (at least one group is held out, and at
least one is kept). Every accepted dialogue whose seed tool is held out becomes a `Case`;
`split.json` lists the held-out tools, which `utcgen generate --exclude-split` removes from the
catalog before retrieval.

Similarities: S(τ*, τ) of A.4 with the description cosine from the packaged sentence encoder
(cached embeddings). Every pair of the catalog is scored when it has at most `ALL_PAIRS_LIMIT`
tools; above that, each tool's `NEIGHBOURS` nearest descriptions (larger catalogs would make the
quadratic pass too slow, and a near-duplicate has a close description by construction: S >= 0.70
needs the description term).
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..records import SCENARIOS, Dialogue, Message, Tool
from ..retrieval.similarity import NEAR_DUPLICATE_THRESHOLD, composite_similarity
from .cases import Case, Split

Group = Literal["family", "line_of_business"]
ALL_PAIRS_LIMIT = 4000
NEIGHBOURS = 50
UNSET_LOB = "(unset)"


class BenchmarkSummary(BaseModel):
    """What `build_benchmark` wrote, and the paper's DiaBENCH descriptors (App. C.5) of the cases."""

    model_config = ConfigDict(extra="forbid")

    out_dir: str
    source: str
    catalog: str
    by: Group
    holdout: float
    seed: int
    accepted: int                          # accepted dialogues in the source
    cases: int
    held_out_groups: int
    held_out_tools: int
    catalog_tools: int
    families: int                          # near-duplicate families of the catalog (singletons included)
    family_size_max: int
    family_size_mean: float
    families_with_near_duplicates: int     # families of two or more tools
    share_near_duplicate: float            # cases with a distractor at A.4 >= 0.70 (DiaBENCH 29.2%)
    mean_overlap: float                    # mean over cases of the mean A.4 score τ* vs its distractors (DiaBENCH 0.47)
    share_required: float                  # cases whose τ* has required parameters (DiaBENCH 75.6%)
    mean_distractors: float                # distractors per case (DiaBENCH ~5.2)
    lines_of_business: dict[str, int]      # cases per line of business of τ*
    # cases per scenario type, and the accepted source dialogues per type (the mix the split keeps)
    scenarios: dict[str, int] = Field(default_factory=dict)
    source_scenarios: dict[str, int] = Field(default_factory=dict)

    def to_text(self) -> str:
        lob = ", ".join(f"{k} {v}" for k, v in sorted(self.lines_of_business.items(), key=lambda kv: (-kv[1], kv[0])))
        return "\n".join([
            f"benchmark {self.out_dir}: {self.cases} cases from {self.accepted} accepted dialogues of {self.source}",
            f"held out by {self.by}: {self.held_out_groups} group(s), {self.held_out_tools} of {self.catalog_tools} "
            f"catalog tools (seed {self.seed}, target share {self.holdout:.0%}, got "
            f"{self.cases / self.accepted if self.accepted else 0:.1%})",
            f"catalog {self.catalog}: {self.families} near-duplicate families, "
            f"{self.families_with_near_duplicates} with 2+ tools, largest {self.family_size_max}, "
            f"mean size {self.family_size_mean:.2f}",
            f"cases with a near-duplicate distractor (A.4 >= {NEAR_DUPLICATE_THRESHOLD:.2f}) "
            f"{self.share_near_duplicate:.1%} (DiaBENCH 29.2%)",
            f"mean retrieval-set semantic overlap {self.mean_overlap:.3f} (DiaBENCH 0.47)",
            f"cases whose gold tool has required parameters {self.share_required:.1%} (DiaBENCH 75.6%)",
            f"mean distractors per case {self.mean_distractors:.2f} (DiaBENCH ~5.2)",
            f"lines of business: {lob}",
            f"scenarios (cases / accepted): {self.scenario_mix()}",
        ])

    def scenario_mix(self) -> str:
        """`name cases/accepted` per scenario type, in SCENARIOS order."""
        names = [n for n in SCENARIOS if n in self.scenarios or n in self.source_scenarios]
        return ", ".join(f"{n} {self.scenarios.get(n, 0)}/{self.source_scenarios.get(n, 0)}" for n in names) or "none"


# ---------------------------------------------------------------------------------------- reading the source


def _source_dialogues(source: Path) -> list[Dialogue]:
    from ..export.reading import load_dialogues

    if not source.is_dir():
        raise InputError(f"{source}: no such folder (expected a `utcgen generate` output folder)")
    exported = any((source / "data" / "dialogues").glob("*.parquet"))
    if not exported and not any((source / "journal").glob("job-*.json")):
        raise InputError(f"{source}: not a `utcgen generate` output folder (no data/dialogues/*.parquet and no "
                         "journal/job-*.json)")
    dialogues, _where = load_dialogues(source)
    accepted = [d for d in dialogues if d.accepted]
    if not accepted:
        raise InputError(f"{source}: no accepted dialogues to build a benchmark from")
    return accepted


def _recorded_catalog(source: Path) -> str | None:
    """The catalog path the run recorded in stats.json (run.catalog, else its config's catalog)."""
    stats = source / "stats.json"
    if not stats.is_file():
        return None
    try:
        run = json.loads(stats.read_text(encoding="utf-8")).get("run") or {}
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{stats}: unreadable run statistics: {exc}") from None
    return run.get("catalog") or (run.get("config") or {}).get("catalog")


def resolve_catalog(source: Path, catalog: Path | None) -> Path:
    """The source's recorded catalog if it exists, else `catalog`, else the shipped catalog/tools."""
    from ..resources import resolve, shipped

    recorded = _recorded_catalog(source)
    if recorded and Path(resolve(recorded)).exists():  # a relative `catalog/tools` names the shipped one
        return Path(resolve(recorded))
    if catalog is not None:
        if not Path(catalog).exists():
            raise InputError(f"--catalog {catalog}: no such file or folder")
        return Path(catalog)
    if recorded:
        raise InputError(f"{source / 'stats.json'}: the run's catalog {recorded} does not exist here; "
                         "pass --catalog with the catalog the run used")
    return shipped("catalog", "tools")


# ---------------------------------------------------------------------------------------- families


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


# ---------------------------------------------------------------------------------------- the split


def _choose_groups(sizes: dict[str, int], target: float, seed: int) -> list[str]:
    """Groups in a seeded order, each taken when it brings the covered count closer to `target`."""
    order = sorted(sizes)
    random.Random(f"{seed}:holdout").shuffle(order)
    chosen: list[str] = []
    covered = 0
    for group in order:
        if len(chosen) == len(order) - 1:
            break  # keep at least one group for training
        if not chosen or abs(covered + sizes[group] - target) < abs(covered - target):
            chosen.append(group)
            covered += sizes[group]
    return sorted(chosen)


def _catalog_tool(by_name: dict[str, Tool], tool: Tool) -> Tool:
    """The catalog's entry for a tool named in a dialogue (it carries the line of business)."""
    return by_name.get(tool.name, tool)


def _case(d: Dialogue, by_name: dict[str, Tool], family: dict[str, str], similarity: Similarity) -> tuple[Case, float]:
    gold = _catalog_tool(by_name, d.seed_tool)
    candidates = [_catalog_tool(by_name, t) for t in (d.candidate_tools or [d.seed_tool, *d.distractor_tools])]
    scores = [similarity.score(gold, t) for t in candidates if t.name != gold.name]
    reference = [Message(role=m.role, content=m.content, thought=m.thought, tool_calls=m.tool_calls, phase=m.phase)
                 for m in d.messages if m.role in ("user", "assistant")]
    case = Case(
        id=d.id, gold_tool=gold, gold_arguments=dict(d.gold_arguments), candidates=candidates,
        persona=d.user_persona, goal=d.goal, reference=reference, line_of_business=gold.line_of_business,
        family=family[gold.name], near_duplicate=bool(scores) and max(scores) >= NEAR_DUPLICATE_THRESHOLD,
        max_similarity=round(max(scores), 6) if scores else 0.0,
        scenario=d.scenario, scenario_info=d.scenario_info, q_star=d.q_star,
    )
    if d.scenario == "unavailable_tool" and any(t.name == gold.name for t in candidates):
        raise InputError(f"dialogue {d.id}: an unavailable_tool dialogue lists its seed tool {gold.name} among the "
                         "candidates; the record is inconsistent")
    return case, (sum(scores) / len(scores) if scores else 0.0)


def build_benchmark(source: Path, out: Path, *, by: Group = "family", holdout: float = 0.2, seed: int = 0,
                    catalog: Path | None = None, embedder: Any = None) -> BenchmarkSummary:
    """Write the benchmark folder `out` from the accepted dialogues of `source` (see the module docstring)."""
    from ..catalog.reader import load_catalog
    from ..retrieval.embeddings import Embedder

    source, out = Path(source), Path(out)
    if not 0 < holdout < 1:
        raise InputError(f"--holdout {holdout}: must be between 0 and 1 (exclusive)")
    if by not in ("family", "line_of_business"):
        raise InputError(f"--by {by}: must be family or line_of_business")
    accepted = _source_dialogues(source)
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
    members: dict[str, list[str]] = defaultdict(list)
    for name, fam in family.items():
        members[fam].append(name)

    def group_of(tool_name: str) -> str:
        if by == "family":
            return family[tool_name]
        return by_name[tool_name].line_of_business or UNSET_LOB

    sizes = Counter(group_of(d.seed_tool.name) for d in accepted)
    if len(sizes) < 2:
        raise InputError(f"{source}: the accepted dialogues cover a single {by.replace('_', ' ')} "
                         f"({next(iter(sizes))}); a held-out split needs at least two")
    groups = _choose_groups(dict(sizes), holdout * len(accepted), seed)
    held_groups = set(groups)
    held: set[str] = set()
    for t in tools:
        if group_of(t.name) in held_groups:
            held.update(members[family[t.name]])  # by line of business: the whole family goes too
    pairs = [_case(d, by_name, family, similarity) for d in accepted if d.seed_tool.name in held]
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
    from .benchmark_folder import write_benchmark

    write_benchmark(out, cases, split, summary, overlaps=[o for _, o in pairs])
    return summary
