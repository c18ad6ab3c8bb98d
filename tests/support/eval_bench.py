"""A small benchmark for the evaluation tests: 7 cases built by `utcgen eval build` from 10 accepted
offline dialogues over a 20-tool catalog (facilities and travel expense tools, near-duplicates
included). `tests/fixtures/eval/` keeps the catalog, the source dialogues and the cases, so tests
need no generation run; the CLI test rebuilds the benchmark from the dialogues as a user does."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "eval"


def benchmark(tmp: Path) -> Path:
    """A benchmark folder (cases.jsonl) in `tmp`."""
    out = tmp / "bench"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "cases.jsonl", out / "cases.jsonl")
    return out


def cases():
    from utcgen.pipeline.evaluation.cases import read_cases

    return read_cases(FIXTURES)


def source_folder(tmp: Path) -> Path:
    """A `utcgen generate`-style dataset folder holding the fixture dialogues (for `utcgen eval build`)."""
    from utcgen.pipeline.core.records import Dialogue
    from utcgen.pipeline.export.dataset import export_dataset
    from utcgen.pipeline.export.run_info import RunInfo

    dialogues = [Dialogue.model_validate_json(line) for line in
                 (FIXTURES / "dialogues.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    out = tmp / "source"
    export_dataset(dialogues, out, RunInfo(backend="offline", models={}, seed=0,
                                           catalog=str(FIXTURES / "catalog.json")))
    return out
