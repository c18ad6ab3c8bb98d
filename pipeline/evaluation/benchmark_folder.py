"""The files of a benchmark folder (`utcgen eval build`), written by the one dataset-folder writer.

`cases.jsonl` (what the runners read), `split.json`, the parquet view `data/cases/` (so that
`datasets.load_dataset(folder)` gives a `test` split), `benchmark.json` and the card `README.md`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from jinja2 import FunctionLoader

from ..export.folder import DatasetFolder
from ..scenarios import names as scenario_names
from ..settings.templates import jinja_environment
from .cases import CASES_FILE, SPLIT_FILE, Case, Split
from .holdout import UNSET_LOB
from .summary import BenchmarkSummary

CASES_CONFIG = "cases"  # the parquet view: data/cases/train-00000-of-00001.parquet
CARD_FILE = "README.md"
CARD_TEMPLATE = "benchmark_card.md.j2"
# the card's template (package data beside this module), in the Jinja set-up prompts use too
_TEMPLATES = jinja_environment(
    FunctionLoader(lambda name: files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")))
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
    folder.write_text(CARD_FILE, render_benchmark_card(cases, split, summary, overlaps))


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


def render_benchmark_card(cases: list[Case], split: Split, s: BenchmarkSummary, overlaps: list[float]) -> str:
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
    return _TEMPLATES.get_template(CARD_TEMPLATE).render(
        front_matter=yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(),
        source=s.source, accepted=s.accepted, catalog=s.catalog, catalog_tools=s.catalog_tools, cases=s.cases,
        held_out_groups=s.held_out_groups, held_out_tools=s.held_out_tools,
        share_near_duplicate=_pct(s.share_near_duplicate), mean_overlap=f"{s.mean_overlap:.3f}",
        share_required=_pct(s.share_required), mean_distractors=f"{s.mean_distractors:.2f}",
        lob_rows="\n".join(lob_rows) if lob_rows else "| (none) | 0 | | | |",
        nd_rows="\n".join(nd_rows) if nd_rows else "| (none) | 0 | | |",
        scenario_rows="\n".join(scen_rows) if scen_rows else "| (none) | 0 | 0 |",
        required=", ".join(f"{k}: {v}" for k, v in sorted(required.items())) or "none",
        by=s.by, seed=s.seed, holdout=f"{s.holdout:.0%}", got=_pct(s.cases / s.accepted if s.accepted else 0), rule=rule,
        families=s.families, families_with_near_duplicates=s.families_with_near_duplicates,
        family_size_max=s.family_size_max, family_size_mean=f"{s.family_size_mean:.2f}", groups=groups,
        split_file=Path(s.out_dir) / SPLIT_FILE, out_dir=s.out_dir, columns=columns)
