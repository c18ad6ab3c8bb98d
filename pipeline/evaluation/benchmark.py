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
from .cases import CASES_FILE, SPLIT_FILE, Case, Split

Group = Literal["family", "line_of_business"]
ALL_PAIRS_LIMIT = 4000
NEIGHBOURS = 50
CASES_CONFIG = "cases"  # the parquet view: data/cases/train-00000-of-00001.parquet
CARD_FILE = "README.md"
SUMMARY_FILE = "benchmark.json"
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
    write_benchmark(out, cases, split, summary, overlaps=[o for _, o in pairs])
    return summary


# ---------------------------------------------------------------------------------------- writing


def _rows(cases: list[Case], overlaps: list[float]) -> list[dict[str, Any]]:
    return [{
        "id": c.id, "gold_tool": c.gold_tool.name, "gold_tool_spec": c.gold_tool.spec_json(),
        "gold_arguments": json.dumps(c.gold_arguments, ensure_ascii=False, default=str),
        "candidate_tools": [t.name for t in c.candidates], "candidate_tool_specs": [t.spec_json() for t in c.candidates],
        "persona": c.persona.model_dump_json(), "goal": c.goal,
        "reference": json.dumps([m.model_dump(exclude_none=True) for m in c.reference], ensure_ascii=False,
                                default=str),
        "line_of_business": c.line_of_business, "family": c.family, "near_duplicate": c.near_duplicate,
        "max_similarity": c.max_similarity, "mean_similarity": round(o, 6), "required_parameters": c.n_required,
        "distractors": len(c.distractors), "scenario": c.scenario,
        "scenario_info": c.scenario_info.model_dump_json(exclude_none=True), "q_star": c.q_star,
    } for c, o in zip(cases, overlaps)]


def _parquet_schema():
    import pyarrow as pa

    text, names = pa.string(), pa.list_(pa.string())
    return pa.schema([("id", text), ("gold_tool", text), ("gold_tool_spec", text), ("gold_arguments", text),
                      ("candidate_tools", names), ("candidate_tool_specs", names), ("persona", text),
                      ("goal", text), ("reference", text), ("line_of_business", text), ("family", text),
                      ("near_duplicate", pa.bool_()), ("max_similarity", pa.float64()),
                      ("mean_similarity", pa.float64()), ("required_parameters", pa.int64()),
                      ("distractors", pa.int64()), ("scenario", text), ("scenario_info", text),
                      ("q_star", pa.int64())])


COLUMNS = {
    "id": "Case id (the source dialogue's id).",
    "gold_tool": "Name of τ*, the tool the user needs.",
    "gold_tool_spec": "τ*'s OpenAI function spec (JSON).",
    "gold_arguments": "V*: the required argument map the call must carry (JSON).",
    "candidate_tools": "τ* and its distractors, in the order the assistant sees them.",
    "candidate_tool_specs": "Function specs of `candidate_tools`, same order (JSON each).",
    "persona": "The enterprise user (JSON).",
    "goal": "The user's goal, for the dynamic user proxy.",
    "reference": "The accepted reference dialogue: user and assistant turns (JSON list of messages).",
    "line_of_business": "τ*'s line of business.",
    "family": "τ*'s near-duplicate family (held out as a whole).",
    "near_duplicate": "Some distractor scores A.4 >= 0.70 against τ*.",
    "max_similarity": "Highest A.4 score between τ* and a distractor.",
    "mean_similarity": "Mean A.4 score between τ* and its distractors (retrieval-set semantic overlap).",
    "required_parameters": "Number of required parameters of τ*.",
    "distractors": "Number of distractors.",
    "scenario": "Scenario type: disambiguation, explicit, underspecified, unavailable_tool, infeasible_arguments or "
                "input_fault (docs/scenarios.md).",
    "scenario_info": "What the scenario changed: masked_arg, infeasible {arg, value, why}, fault {kind, ...} (JSON).",
    "q_star": "Q*: the fewest questions the case needs by the EVPI plan (null if not computed).",
}


def write_benchmark(out: Path, cases: list[Case], split: Split, summary: BenchmarkSummary,
                    overlaps: list[float]) -> None:
    """cases.jsonl, split.json, the parquet view, benchmark.json and the card, by the one dataset-folder writer."""
    from ..export.folder import DatasetFolder

    folder = DatasetFolder(out)
    folder.write_text(CASES_FILE, "".join(c.model_dump_json() + "\n" for c in cases))
    folder.write_text(SPLIT_FILE, split.model_dump_json(indent=2) + "\n")
    folder.write_config(CASES_CONFIG, _rows(cases, overlaps), _parquet_schema())
    folder.write_text(SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    folder.write_text(CARD_FILE, render_card(cases, split, summary, overlaps))


def _pct(x: float) -> str:
    return f"{x:.1%}"


def render_card(cases: list[Case], split: Split, s: BenchmarkSummary, overlaps: list[float]) -> str:
    """README.md: YAML front matter that `datasets` reads (one `test` split), then what the benchmark is."""
    import yaml

    front = {
        "pretty_name": "utcgen held-out tool-calling benchmark",
        "license": "apache-2.0",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["tool-calling", "function-calling", "benchmark", "disambiguation", "synthetic", "diaforge"],
        "configs": [{"config_name": "default", "default": True,
                     "data_files": [{"split": "test", "path": "data/cases/*.parquet"}]}],
    }
    by_lob: dict[str, list[tuple[Case, float]]] = defaultdict(list)
    for c, o in zip(cases, overlaps):
        by_lob[c.line_of_business or UNSET_LOB].append((c, o))
    lob_rows = []
    for lob, items in sorted(by_lob.items()):
        k = len(items)
        lob_rows.append(f"| {lob} | {k} | {_pct(sum(c.near_duplicate for c, _ in items) / k)} | "
                        f"{sum(o for _, o in items) / k:.3f} | {_pct(sum(bool(c.n_required) for c, _ in items) / k)} |")
    nd_rows = []
    for label, flag in (("near-duplicate distractor", True), ("no near-duplicate", False)):
        items = [(c, o) for c, o in zip(cases, overlaps) if c.near_duplicate is flag]
        if items:
            nd_rows.append(f"| {label} | {len(items)} | {sum(c.max_similarity for c, _ in items) / len(items):.3f} | "
                           f"{sum(o for _, o in items) / len(items):.3f} |")
    required = Counter(c.n_required for c in cases)
    rule = ("whole near-duplicate families (connected components of the A.4 >= 0.70 graph over every catalog "
            "tool)" if s.by == "family" else
            "whole lines of business (with every tool of their near-duplicate families, whatever their line)")
    scen_rows = [f"| {n} | {s.scenarios.get(n, 0)} | {s.source_scenarios.get(n, 0)} |" for n in SCENARIOS
                 if n in s.scenarios or n in s.source_scenarios]
    columns = "\n".join(f"| `{k}` | {v} |" for k, v in COLUMNS.items())
    groups = ", ".join(f"`{g}`" for g in split.held_out_groups)
    return f"""---
{yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip()}
---

# utcgen held-out tool-calling benchmark

A DiaBENCH-style benchmark (DiaFORGE §3.3, App. C): each case is an accepted synthetic dialogue whose gold tool
τ* is held out of training, shown to the assistant among retrieved distractors. A model passes a case when its
first tool call is τ* with exactly the required arguments V*, after asking for whatever the user left out.

- Source: `{s.source}` ({s.accepted} accepted dialogues); catalog `{s.catalog}` ({s.catalog_tools} tools).
- **{s.cases} cases**, {s.held_out_groups} held-out group(s), {s.held_out_tools} held-out tools.

## How it compares with DiaBENCH

| | this benchmark | DiaBENCH |
|---|---|---|
| cases with a near-duplicate distractor (A.4 >= 0.70) | {_pct(s.share_near_duplicate)} | 29.2% |
| mean retrieval-set semantic overlap (mean A.4, τ* vs distractors) | {s.mean_overlap:.3f} | 0.47 |
| cases whose τ* has required parameters | {_pct(s.share_required)} | 75.6% |
| distractors per case | {s.mean_distractors:.2f} | ~5.2 |

## Per line of business

| line of business | cases | near-duplicate | mean overlap | with required parameters |
|---|---|---|---|---|
{chr(10).join(lob_rows) if lob_rows else "| (none) | 0 | | | |"}

## Near-duplicate distractors

| cases | count | mean max A.4 | mean overlap |
|---|---|---|---|
{chr(10).join(nd_rows) if nd_rows else "| (none) | 0 | | |"}

## Scenario types

| scenario | cases | accepted in the source |
|---|---|---|
{chr(10).join(scen_rows) if scen_rows else "| (none) | 0 | 0 |"}

An `unavailable_tool` case shows the assistant only look-alikes (τ* is not among the candidates): no call is
right, and the case is scored by awareness, not by the C.1 call metrics.

Required parameters of τ*: {", ".join(f"{k}: {v}" for k, v in sorted(required.items())) or "none"}.

## The split

Held out by `{s.by}` (seed {s.seed}, target {s.holdout:.0%} of the accepted dialogues, got
{_pct(s.cases / s.accepted if s.accepted else 0)}): {rule}. Groups are shuffled with the seed and each is held out
when that brings the number of covered dialogues closer to the target. The catalog has {s.families} near-duplicate
families ({s.families_with_near_duplicates} with two or more tools, largest {s.family_size_max}, mean size
{s.family_size_mean:.2f}). Held-out groups: {groups}.

`split.json` lists every held-out tool. Generate training data without them (neither as seed tools nor as
distractors):

```bash
utcgen generate --exclude-split {Path(s.out_dir) / SPLIT_FILE} --out train-data
```

## Running a model on it

```bash
utcgen eval run --benchmark {s.out_dir} --model reference/oracle --mode static --out runs/oracle
utcgen eval run --benchmark {s.out_dir} --model openai/gpt-4o-mini --mode dynamic --out runs/gpt-4o-mini
utcgen eval compare runs/oracle runs/gpt-4o-mini
```

Static evaluation replays the reference user turns; dynamic evaluation puts the model in the loop with a user
proxy. Each run folder gets `metrics.json` (Acc, FTR, TAR, TCP, TCR, PKP, PKR, ConvRel, TTR, NGD with 95%
intervals), `dialogues.parquet` and `report.md`.

## Files

- `cases.jsonl`: one case per line, the source of truth the runners read;
- `data/cases/train-00000-of-00001.parquet`: the same cases as a dataset (`datasets.load_dataset(folder)`,
  split `test`);
- `split.json`: the held-out groups and tools; `benchmark.json`: the figures above.

| column | meaning |
|---|---|
{columns}
"""
