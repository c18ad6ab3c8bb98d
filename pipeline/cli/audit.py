"""`utcgen audit DIR`: every rule validator's pass rate on a dataset folder, each run on every dialogue.

Reads the dialogues of DIR in our record shape, from wherever they are: the exported
parquet splits (`data/dialogues/*.parquet` and `data/rejected/*.parquet`, any tool's
output with those columns), else the run journal (`journal/*.json`, every attempt), else
JSON Lines files of `Dialogue` records. Unlike the cascade, which stops at the first
failure, the audit runs every rule on every dialogue, so each rate is over all of them.
It also reports how often the opening user turn holds a word found only in the seed
tool's name versus only in a distractor's name (equal rates: names tell nothing), the
acceptance rate and turns per dialogue.
"""

from __future__ import annotations

import argparse
import glob
import json
from collections import Counter
from pathlib import Path
from typing import Any

from utcgen.pipeline import shortcuts
from utcgen.pipeline.errors import InputError
from utcgen.pipeline.records import Dialogue, GenerationInfo, Message, Persona, Tool, ToolCall, Verdict
from utcgen.validators.cascade import RULES


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _tool(spec: Any) -> Tool:
    spec = _json(spec)
    fn = spec.get("function", spec) if isinstance(spec, dict) else {}
    return Tool(name=fn["name"], description=fn.get("description") or "",
                parameters=fn.get("parameters") or {"type": "object", "properties": {}})


def dialogue_from_row(row: dict[str, Any], accepted: bool) -> Dialogue:
    """A `Dialogue` back from a `dialogues`/`rejected` parquet row."""
    seed = _tool(row["seed_tool_spec"])
    candidates = [_tool(s) for s in row.get("candidate_tool_specs") or []]
    by_name = {t.name: t for t in [seed, *candidates]}
    persona = dict(row.get("user_persona") or {})
    persona["attributes"] = {str(k): str(v) for k, v in (_json(persona.get("attributes")) or {}).items()}
    messages = [
        Message(role=m["role"], content=m.get("content") or "", thought=m.get("thought"), phase=m.get("phase"),
                tool_calls=[ToolCall(name=c["name"], arguments=_json(c.get("arguments")) or {})
                            for c in m.get("tool_calls") or []])
        for m in row.get("messages") or []
    ]
    g = row.get("generation") or {}
    return Dialogue(
        id=str(row["id"]), seed_tool=seed, user_persona=Persona.model_validate(persona), goal=row.get("goal") or "",
        gold_arguments=_json(row.get("gold_arguments")) or {},
        distractor_tools=[by_name.get(n) or Tool(name=n, description="") for n in row.get("distractor_tools") or []],
        candidate_tools=candidates, messages=messages,
        validation=[Verdict(validator=v["validator"], passed=v["passed"], reason=v.get("reason") or "",
                            details=_json(v.get("details")) or {}) for v in row.get("validation") or []],
        accepted=accepted, rejection_reason=row.get("rejection_reason"),
        generation=GenerationInfo(utcgen_version=str(g.get("utcgen_version", "")), backend=str(g.get("backend", "")),
                                  models={}, prompt_versions={}, seed=int(g.get("seed") or 0),
                                  attempt=int(g.get("attempt") or 1), created_at=str(g.get("created_at", ""))),
    )


def load_dialogues(folder: Path) -> tuple[list[Dialogue], str]:
    """The dialogues of `folder` and where they were read from."""
    parquet = {split: sorted(glob.glob(str(folder / "data" / split / "*.parquet"))) for split in ("dialogues", "rejected")}
    if any(parquet.values()):
        import pyarrow.parquet as pq

        out = [dialogue_from_row(row, split == "dialogues")
               for split, files in parquet.items() for f in files for row in pq.read_table(f).to_pylist()]
        return out, "parquet splits data/dialogues, data/rejected"
    journal = sorted((folder / "journal").glob("job-*.json"))
    if journal:
        out = [Dialogue.model_validate(d) for f in journal for d in json.loads(f.read_text()).get("dialogues") or []]
        return out, "run journal (every attempt)"
    lines = sorted(folder.glob("*.jsonl")) if folder.is_dir() else [folder]
    out = [Dialogue.model_validate_json(line) for f in lines for line in f.read_text().splitlines() if line.strip()]
    if not out:
        raise InputError(f"{folder}: no dialogues found (data/*/*.parquet, journal/*.json or *.jsonl)")
    return out, "JSON Lines dialogue records"


def _opening_balance(dialogues: list[Dialogue]) -> tuple[float, float, int]:
    seed_hits = distractor_hits = n = 0
    for d in dialogues:
        first = next((m.content for m in d.messages if m.role == "user"), None)
        if first is None:
            continue
        n += 1
        names = [t.name for t in d.distractor_tools if t.name != d.seed_tool.name]
        said = {shortcuts.stem(w) for w in shortcuts.split_words(first)}
        seed_only = shortcuts.distinctive_name_tokens(d.seed_tool.name, names)
        others_only = set().union(*(shortcuts.name_tokens(x) for x in names)) - shortcuts.name_tokens(d.seed_tool.name) if names else set()
        seed_hits += bool(said & seed_only)
        distractor_hits += bool(said & others_only)
    return (seed_hits / n if n else 0.0), (distractor_hits / n if n else 0.0), n


def audit(dialogues: list[Dialogue]) -> dict[str, Any]:
    """Per rule: dialogues checked, passed, pass rate and the commonest failure codes."""
    stages: dict[str, dict[str, Any]] = {}
    for name, rule in RULES:
        passed, codes, unchecked = 0, Counter(), 0
        for d in dialogues:
            try:
                v = rule(d)
            except Exception as exc:  # a malformed record fails the rule, it does not stop the audit
                v = Verdict(validator=name, passed=False, reason=str(exc), details={"rule": "error"})
            passed += v.passed
            unchecked += v.details.get("checked") is False
            if not v.passed:
                codes[str(v.details.get("rule", "failed"))] += 1
        stages[name] = {"checked": len(dialogues), "passed": passed,
                        "pass_rate": passed / len(dialogues) if dialogues else None, "failures": dict(codes.most_common()),
                        **({"unchecked": unchecked} if unchecked else {})}
    seed_share, distractor_share, openings = _opening_balance(dialogues)
    turns = [len(d.assistant_turns) for d in dialogues if d.accepted]
    selection = Counter(d.turns_in_phase("tool_selection") for d in dialogues if d.accepted)
    return {
        "dialogues": len(dialogues),
        "accepted": sum(d.accepted for d in dialogues),
        "acceptance_rate": sum(d.accepted for d in dialogues) / len(dialogues) if dialogues else None,
        "mean_turns_accepted": sum(turns) / len(turns) if turns else None,
        "selection_turns_accepted": dict(sorted(selection.items())),
        "wrong_selection": sum(any(v.validator == "selection" and not v.passed for v in d.validation) for d in dialogues),
        "openings": openings,
        "openings_with_seed_only_name_token": seed_share,
        "openings_with_distractor_only_name_token": distractor_share,
        "validators": stages,
    }


def to_text(report: dict[str, Any], source: str) -> str:
    lines = [f"source: {source}",
             f"dialogues {report['dialogues']}, accepted {report['accepted']} "
             f"({(report['acceptance_rate'] or 0):.1%}), wrong tool selected {report['wrong_selection']}",
             f"accepted dialogues: mean assistant turns {report['mean_turns_accepted'] or 0:.2f}, "
             f"tool-selection turns {report['selection_turns_accepted']}",
             f"openings naming a seed-only name token {report['openings_with_seed_only_name_token']:.1%}, "
             f"a distractor-only name token {report['openings_with_distractor_only_name_token']:.1%} "
             f"(of {report['openings']})",
             "",
             f"{'validator':<14} {'passed':>8} {'checked':>8} {'rate':>7}  failures"]
    for name, s in report["validators"].items():
        fails = ", ".join(f"{k} {v}" for k, v in s["failures"].items())
        fails += f" (not checked: {s['unchecked']}, no score recorded)" if s.get("unchecked") else ""
        rate = "-" if s["pass_rate"] is None else f"{s['pass_rate']:.1%}"
        lines.append(f"{name:<14} {s['passed']:>8} {s['checked']:>8} {rate:>7}  {fails}")
    lines.append("every rule runs on every dialogue (no early stop), so rates are over all dialogues read")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.exists():
        raise InputError(f"{folder}: no such folder")
    dialogues, source = load_dialogues(folder)
    report = audit(dialogues)
    print(json.dumps(report, indent=2) if args.json else to_text(report, source))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="pass rate of every rule validator on a dataset folder",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="an output folder (data/dialogues, data/rejected parquet; or journal/)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
