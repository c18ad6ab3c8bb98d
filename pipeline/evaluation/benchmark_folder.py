"""The files of a benchmark folder (`utcgen eval build`), written by the one dataset-folder writer.

`cases.jsonl` (what the runners read), `split.json`, the parquet view `data/cases/` (so that
`datasets.load_dataset(folder)` gives a `test` split), `benchmark.json` and the card `README.md`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from ..export.folder import DatasetFolder
from ..scenarios import names as scenario_names
from .cases import CASES_FILE, SPLIT_FILE, Case, Split
from .holdout import UNSET_LOB
from .summary import BenchmarkSummary

CASES_CONFIG = "cases"  # the parquet view: data/cases/train-00000-of-00001.parquet
CARD_FILE = "README.md"
SUMMARY_FILE = "benchmark.json"


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
        "source_id": c.source_id, "answer": c.answer.model_dump_json() if c.answer else None,
    } for c, o in zip(cases, overlaps)]


def _parquet_schema():
    text, names = pa.string(), pa.list_(pa.string())
    return pa.schema([("id", text), ("gold_tool", text), ("gold_tool_spec", text), ("gold_arguments", text),
                      ("candidate_tools", names), ("candidate_tool_specs", names), ("persona", text),
                      ("goal", text), ("reference", text), ("line_of_business", text), ("family", text),
                      ("near_duplicate", pa.bool_()), ("max_similarity", pa.float64()),
                      ("mean_similarity", pa.float64()), ("required_parameters", pa.int64()),
                      ("distractors", pa.int64()), ("scenario", text), ("scenario_info", text),
                      ("q_star", pa.int64()), ("source_id", text), ("answer", text)])


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
    "source_id": "An imported case's id in its own benchmark (BFCL), else null.",
    "answer": "An imported case's answer under its own benchmark's rules (JSON), else null.",
}


def write_benchmark(out: Path, cases: list[Case], split: Split, summary: BenchmarkSummary,
                    overlaps: list[float]) -> None:
    """cases.jsonl, split.json, the parquet view, benchmark.json and the card, by the one dataset-folder writer."""
    folder = DatasetFolder(out)
    folder.write_text(CASES_FILE, "".join(c.model_dump_json() + "\n" for c in cases))
    folder.write_text(SPLIT_FILE, split.model_dump_json(indent=2) + "\n")
    folder.write_config(CASES_CONFIG, _rows(cases, overlaps), _parquet_schema())
    folder.write_text(SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    folder.write_text(CARD_FILE, render_card(cases, split, summary, overlaps))


def write_imported(out: Path, cases: list[Case], summary_json: str, card: str) -> None:
    """An imported benchmark (`eval import`): cases.jsonl, the parquet view, benchmark.json and its card; no
    split.json, since no tool of ours is held out."""
    folder = DatasetFolder(out)
    folder.write_text(CASES_FILE, "".join(c.model_dump_json() + "\n" for c in cases))
    folder.write_config(CASES_CONFIG, _rows(cases, [0.0] * len(cases)), _parquet_schema())
    folder.write_text(SUMMARY_FILE, summary_json)
    folder.write_text(CARD_FILE, card)


def _pct(x: float) -> str:
    return f"{x:.1%}"


def render_card(cases: list[Case], split: Split, s: BenchmarkSummary, overlaps: list[float]) -> str:
    """README.md: YAML front matter that `datasets` reads (one `test` split), then what the benchmark is."""
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
    scen_rows = [f"| {n} | {s.scenarios.get(n, 0)} | {s.source_scenarios.get(n, 0)} |" for n in scenario_names()
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
utcgen eval run --benchmark {s.out_dir} --model reference/oracle --mode static --out eval-out/runs/oracle
utcgen eval run --benchmark {s.out_dir} --model openai/gpt-4o-mini --mode dynamic --out eval-out/runs/gpt-4o-mini
utcgen eval compare eval-out/runs/oracle eval-out/runs/gpt-4o-mini
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
