"""Read the dialogues of a folder back in our record shape, whatever wrote them.

A dataset folder keeps dialogues as parquet rows (`data/dialogues`, `data/rejected`), a run
folder as its journal (`journal/job-*.json`, every attempt), and other tools may hand over
JSON Lines of `Dialogue` records. `utcgen audit` and the benchmark builder (`utcgen eval
build`) both need `Dialogue` records from any of these, so the reading lives here, once.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..core.errors import InputError
from ..core.records import DEFAULT_SCENARIO, Dialogue, GenerationInfo, Message, Persona, ScenarioInfo, Tool, ToolCall, Verdict


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def tool_from_spec(spec: Any) -> Tool:
    """A `Tool` from a function spec (an OpenAI spec object or its JSON text, or a bare `{name, ...}`)."""
    spec = _json(spec)
    fn = spec.get("function", spec) if isinstance(spec, dict) else {}
    return Tool(name=fn["name"], description=fn.get("description") or "",
                parameters=fn.get("parameters") or {"type": "object", "properties": {}})


def dialogue_from_row(row: dict[str, Any], accepted: bool) -> Dialogue:
    """A `Dialogue` back from a `dialogues`/`rejected` parquet row."""
    seed = tool_from_spec(row["seed_tool_spec"])
    candidates = [tool_from_spec(s) for s in row.get("candidate_tool_specs") or []]
    by_name = {t.name: t for t in [seed, *candidates]}
    persona = dict(row.get("user_persona") or {})
    persona["attributes"] = {str(k): str(v) for k, v in (_json(persona.get("attributes")) or {}).items()}
    messages = [
        Message(role=m["role"], content=m.get("content") or "", thought=m.get("thought"), phase=m.get("phase"),
                tool_calls=[ToolCall(name=c["name"], arguments=_json(c.get("arguments")) or {})
                            for c in m.get("tool_calls") or []],
                action=m.get("action"), act=m.get("act"), act_candidates=list(m.get("act_candidates") or []),
                tool_call_id=m.get("tool_call_id"))
        for m in row.get("messages") or []
    ]
    g = row.get("generation") or {}
    return Dialogue(
        id=str(row["id"]), seed_tool=seed, user_persona=Persona.model_validate(persona), goal=row.get("goal") or "",
        gold_arguments=_json(row.get("gold_arguments")) or {},
        distractor_tools=[by_name.get(n) or Tool(name=n, description="") for n in row.get("distractor_tools") or []],
        candidate_tools=candidates, messages=messages,
        # rows written before scenarios existed have none of these: a disambiguation dialogue
        scenario=row.get("scenario") or DEFAULT_SCENARIO,
        scenario_info=ScenarioInfo.model_validate(_json(row.get("scenario_info")) or {}), q_star=row.get("q_star"),
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
