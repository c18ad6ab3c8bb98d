"""`utcgen catalog convert`, and importer warnings on the command line: any supported format
written as a native file that reads back as the same tools; warnings on stderr, one line each."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO
from utcgen.pipeline.cli import main
from utcgen.pipeline.core.errors import InputError
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


def utcgen(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [UTCGEN, *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


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


def test_convert_command_writes_native_and_reports_warnings(tmp_path: Path) -> None:
    out = tmp_path / "edit" / "store.yaml"
    src = "tests/fixtures/catalogs/store_openapi.yaml"
    run = utcgen("catalog", "convert", src, "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"wrote 10 tools from {src} (openapi) to {out} (native); 3 warnings\n"
    warnings = run.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith(f"warning: {src}: tool #") for w in warnings)
    assert "'uploadFile' (POST /pet/{petId}/uploadImage)" in warnings[0]
    assert "'application/octet-stream' cannot be passed as tool arguments" in warnings[0]
    assert read_catalog(out).tools == read_catalog(REPO / src).tools
    assert [p.name for p in out.parent.iterdir()] == ["store.yaml"]  # no temporary left behind


def test_convert_refuses_an_output_it_cannot_write(tmp_path: Path) -> None:
    run = utcgen("catalog", "convert", "tests/fixtures/catalogs/openai_tools.json", "--out", str(tmp_path / "t.txt"))
    assert run.returncode == 2
    assert run.stderr == (
        f"error: {tmp_path / 't.txt'}: cannot tell how to write '.txt': "
        "name it .json (a list), .jsonl (one tool per line) or .yaml/.yml\n"
    )
    assert not (tmp_path / "t.txt").exists()
    with pytest.raises(InputError, match="cannot tell how to write"):
        write_native([], tmp_path / "tools")


def test_convert_of_a_broken_catalog_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("[]")
    run = utcgen("catalog", "convert", "tests/fixtures/catalogs/broken_catalog.json", "--out", str(out))
    assert run.returncode == 2
    assert run.stderr.startswith("error: 8 problems in catalog tests/fixtures/catalogs/broken_catalog.json:")
    assert out.read_text() == "[]"


def test_validate_summarises_warnings_by_kind() -> None:
    src = "tests/fixtures/catalogs/bfcl_live_cases.json"
    run = utcgen("catalog", "validate", src)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 3 tools from {src} (bfcl); 6 warnings\n"
    lines = run.stderr.splitlines()
    assert lines[0] == "warning: 6 warnings of 3 kinds (--verbose lists each):"
    assert lines[1] == (
        "warning: 3 x a boolean with the string enum ... (BFCL style) is read as a string enum (e.g. "
        "tool #0 'weather.get_forecast' parameters.properties.include_alerts.type; "
        "tool #1 'restaurant.search' parameters.properties.has_parking.type; "
        "tool #2 'calendar.add_event' parameters.properties.reminder.type)"
    )
    assert len(lines) == 4


def test_validate_verbose_prints_each_warning_on_stderr_then_ok() -> None:
    src = "tests/fixtures/catalogs/bfcl_live_cases.json"
    run = utcgen("catalog", "validate", src, "--verbose")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 3 tools from {src} (bfcl); 6 warnings\n"
    lines = run.stderr.splitlines()
    expected = [f"warning: {w}".replace(str(REPO / src), src) for w in read_catalog(REPO / src).warnings]
    assert lines == expected
    assert lines[1] == (
        f"warning: {src}: tool #0 'weather.get_forecast' (line 1, entry 'live_simple_0-0-0'): "
        "entry 'live_simple_3-1-1' (line 4) defines 'weather.get_forecast' differently "
        "('description' and 'parameters.properties.unit.enum' differ); kept this definition, skipped that one"
    )


def test_stats_prints_warnings_on_stderr_and_keeps_stdout_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import utcgen.pipeline.retrieval.stats as stats

    seen: list[tuple[int, str]] = []

    def fake_stats(tools, embedder):  # the real one embeds every description; only the wiring is tested here
        seen.append((len(tools), embedder.backend))
        return SimpleNamespace(model_dump_json=lambda indent: json.dumps({"tools": len(tools)}))

    monkeypatch.setattr(stats, "catalog_stats", fake_stats)
    src = str(FIXTURES / "store_openapi.yaml")
    assert main(["catalog", "stats", src, "--json", "--verbose"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"tools": 10} and seen == [(10, "torch")]
    assert captured.err.splitlines() == [f"warning: {w}" for w in read_catalog(src).warnings]
