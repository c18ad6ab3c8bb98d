"""Writing a catalog as a native file: any supported format written as a native file reads back as the same
tools; `utcgen catalog stats` keeps importer warnings on stderr. The console script's convert and validate
are in tests/e2e/test_catalog_convert_cli.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.paths import REPO
from utcgen.pipeline.cli import main
from utcgen.pipeline.ingest.reader import read_catalog
from utcgen.pipeline.ingest.writer import native_text, write_native

FIXTURES = REPO / "tests" / "fixtures" / "catalogs"
SOURCES = {
    "openai": "openai_tools.json",
    "mcp": "mcp_tools_list.json",
    "openapi": "petclinic_openapi.yaml",
    "openapi-forms": "store_openapi.yaml",
    "bfcl": "bfcl_functions.jsonl",
    "bfcl-entries": "bfcl_entries.json",
    "bfcl-live": "bfcl_live_cases.json",
    "native+openai-dir": "mixed_dir",
}


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".yml"])
@pytest.mark.parametrize("source", list(SOURCES), ids=list(SOURCES))
def test_round_trip_gives_identical_tools(tmp_path: Path, source: str, suffix: str) -> None:
    original = read_catalog(FIXTURES / SOURCES[source])
    out = write_native(original.tools, tmp_path / f"tools{suffix}")
    again = read_catalog(out)
    assert again.tools == original.tools
    assert [t.model_dump() for t in again.tools] == [t.model_dump() for t in original.tools]
    assert again.formats == ["native"] and again.warnings == []


def test_native_layouts_follow_the_suffix() -> None:
    tools = read_catalog(FIXTURES / "openai_tools.json").tools
    as_json = json.loads(native_text(tools, ".json"))
    assert [t["name"] for t in as_json] == [t.name for t in tools]
    # Every field is written, so the file is unmistakably native and complete.
    assert list(as_json[0]) == ["name", "description", "parameters", "line_of_business", "tags"]
    lines = native_text(tools, ".jsonl").splitlines()
    assert [json.loads(line) for line in lines] == as_json
    assert native_text(tools, ".yaml").startswith(f"- name: {tools[0].name}\n")


def test_yaml_keeps_strings_that_look_like_other_types(tmp_path: Path) -> None:
    """Dates, numbers, booleans and nulls spelled as strings stay strings."""
    path = tmp_path / "src.json"
    path.write_text(json.dumps([{"name": "f", "description": "yes", "tags": ["2020-05-01", "1_000", "null", "on"],
                                 "parameters": {"type": "object", "properties": {
                                     "d": {"type": "string", "examples": ["2020-05-01", "0x1F", "1e3", "~"]}}}}]))
    tools = read_catalog(path).tools
    assert read_catalog(write_native(tools, tmp_path / "out.yaml")).tools == tools


def test_stats_prints_warnings_on_stderr_and_keeps_stdout_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import utcgen.pipeline.cli.catalog as catalog_command  # the command holds catalog_stats by name

    seen: list[tuple[int, str]] = []

    def fake_stats(tools, embedder):  # the real one embeds every description; only the wiring is tested here
        seen.append((len(tools), embedder.backend))
        return SimpleNamespace(model_dump_json=lambda indent: json.dumps({"tools": len(tools)}))

    monkeypatch.setattr(catalog_command, "catalog_stats", fake_stats)
    src = str(FIXTURES / "store_openapi.yaml")
    assert main(["catalog", "stats", src, "--json", "--verbose"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"tools": 10} and seen == [(10, "torch")]
    assert captured.err.splitlines() == [f"warning: {w}" for w in read_catalog(src).warnings]
