"""`utcgen eval build`: a held-out benchmark from the accepted dialogues of a generate output folder.

Which tools are held out and how a dialogue becomes a case is utcgen.pipeline.evaluation.holdout (on
the near-duplicate families of utcgen.pipeline.evaluation.families); this module puts them together,
sums up the benchmark and writes its folder. `split.json` lists the held-out tools, which
`utcgen generate --exclude-split` removes from the catalog before retrieval.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..files import write_atomic
from ..records import SCENARIOS
from ..retrieval.similarity import NEAR_DUPLICATE_THRESHOLD
from .cases import CASES_FILE, SPLIT_FILE, Case, Group, Split
from .families import Similarity, near_duplicate_families
from .holdout import UNSET_LOB, accepted_dialogues, build_case, hold_out, resolve_catalog

CASES_PARQUET = Path("data") / "cases" / "train-00000-of-00001.parquet"
CARD_FILE = "README.md"
SUMMARY_FILE = "benchmark.json"


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


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa

    from ..export.dataset import write_table

    write_table(path, pa.Table.from_pylist(rows, schema=_parquet_schema()))


def write_benchmark(out: Path, cases: list[Case], split: Split, summary: BenchmarkSummary,
                    overlaps: list[float]) -> None:
    """cases.jsonl, split.json, the parquet view, benchmark.json and the card; each file atomically."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / CASES_FILE, "".join(c.model_dump_json() + "\n" for c in cases))
    write_atomic(out / SPLIT_FILE, split.model_dump_json(indent=2) + "\n")
    for stale in (out / CASES_PARQUET).parent.glob("*.parquet"):
        if stale.name != CASES_PARQUET.name:
            stale.unlink()
    _write_parquet(out / CASES_PARQUET, _rows(cases, overlaps))
    write_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    write_atomic(out / CARD_FILE, render_card(cases, split, summary, overlaps))


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
