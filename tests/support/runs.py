"""Small offline runs built from the shipped catalog: the pieces the session's shared run and the few tests
that need a run of their own (other settings) have in common."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.synthesis.journal import in_job_order, selected
from utcgen.pipeline.synthesis.run import Engine

SCENARIO_LINES = ("finance", "procurement", "supply_chain")


def lines_subset(root: Path, lines: set[str] | tuple[str, ...], persona_share: int = 3) -> tuple[Path, Path]:
    """The shipped catalog's tools of some lines of business, and every `persona_share`-th of their personas
    (fewer texts to embed), written under root: (catalog, personas)."""
    catalog, personas = root / "tools.json", root / "personas.jsonl"
    tools = load_catalog(str(shipped("catalog", "tools")))
    catalog.write_text(json.dumps([t.model_dump() for t in tools if t.line_of_business in lines]))
    mine = [line for line in shipped("catalog", "personas.jsonl").read_text().splitlines()
            if json.loads(line).get("line_of_business") in lines]
    personas.write_text("".join(line + "\n" for line in mine[::persona_share]))
    return catalog, personas


def run_and_export(config: Any, embedder: Any) -> dict[int, Any]:
    """Run the engine on `config` to the end, export its folder, and return its job records."""
    engine = Engine(config, embedder=embedder)
    try:
        records = asyncio.run(engine.run())
        engine.export(records)
    finally:
        engine.close()
    return records


def scenario_lines_run(root: Path, embedder: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """An exported offline run on the scenario lines' tools under root, with `settings` over the defaults,
    recording what the offline provider was asked: {"out", "catalog", "every" (every attempt), "accepted",
    "records", "calls" ((typed request, messages) pairs)}."""
    from utcgen.pipeline import simulator as offline
    from utcgen.pipeline.settings.config import load_config

    catalog, personas = lines_subset(root, SCENARIO_LINES)
    config = load_config(None, {"out": str(root / "run"), "catalog": str(catalog), "personas": str(personas),
                                **settings})
    config.llm.cache_dir = str(root / "cache")
    calls: list[tuple[Any, list[dict]]] = []
    respond = offline.respond
    offline.respond = lambda request, messages: (calls.append((request, messages)), respond(request, messages))[1]
    try:
        records = run_and_export(config, embedder)
    finally:
        offline.respond = respond
    # what the export writes, in job order: every attempt until the requested number were accepted (jobs run at
    # once may finish one more accepted dialogue, which the export leaves out)
    every = list(selected(in_job_order(records), config.num_dialogues))
    return {"out": root / "run", "catalog": catalog, "every": every, "accepted": [d for d in every if d.accepted],
            "records": records, "calls": calls}


def rows(out: Path, config: str) -> list[dict[str, Any]]:
    """A config's rows of a dataset folder, without the time each dialogue was made (two runs differ there)."""
    table = pq.read_table(out / "data" / config).to_pylist()
    for row in table:
        if isinstance(row.get("generation"), dict):
            row["generation"].pop("created_at", None)
    return table
