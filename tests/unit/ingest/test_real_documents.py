"""Real documents import gracefully: broken tools skipped on request (and only then), warnings
summarised by kind, a file in no known format reported once, importer renames labelled and
OpenAPI vendor keys dropped. Every fixture here is written for the test, small and made up."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from utcgen.pipeline.cli import main
from utcgen.pipeline.core import text
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.importers import openapi_args
from utcgen.pipeline.ingest.reader import CatalogError, load_catalog, read_catalog
from utcgen.pipeline.ingest.report import Notice, kind, warning_lines


def _fn(name: str, unit_enum: list[Any] | None = None) -> dict[str, Any]:
    unit: dict[str, Any] = {"type": "string", "description": "Unit of the reading."}
    if unit_enum is not None:
        unit = {"type": "integer", "enum": unit_enum, "description": "Unit code."}
    return {"name": name, "description": f"Reads the {name.split('.')[-1]} gauge of a greenhouse.",
            "parameters": {"type": "dict", "properties": {
                "house": {"type": "string", "description": "Greenhouse label."}, "unit": unit,
            }, "required": ["house"]}}


def _bfcl(tmp_path: Path, count: int, bad: set[int]) -> Path:
    """BFCL test entries, one function each; the functions numbered in `bad` have an enum whose
    values are not of the declared type."""
    lines = [json.dumps({"id": f"simple_{i}", "question": [[{"role": "user", "content": "?"}]],
                         "function": [_fn(f"gauge.read_{i}", ["celsius", 2] if i in bad else None)]})
             for i in range(count)]
    path = tmp_path / "cases.json"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_one_bad_enum_blocks_the_file_and_the_error_suggests_skip_invalid(tmp_path: Path) -> None:
    path = _bfcl(tmp_path, 6, bad={3})
    with pytest.raises(CatalogError) as info:
        read_catalog(path)
    assert info.value.problems == [
        f"{path}: tool #3 'gauge.read_3' (line 4, entry 'simple_3'): parameters.properties.unit.enum: "
        "value 'celsius' is not of the declared type integer"
    ]
    assert info.value.hint is not None and "--skip-invalid" in info.value.hint
    assert "keeps the other 5" in info.value.hint
    assert str(info.value).splitlines()[-1] == info.value.hint


def test_skip_invalid_leaves_the_broken_tool_out_and_lists_it(tmp_path: Path) -> None:
    path = _bfcl(tmp_path, 6, bad={1, 3})
    catalog = read_catalog(path, skip_invalid=True)
    assert [t.name for t in catalog.tools] == ["gauge.read_0", "gauge.read_2", "gauge.read_4", "gauge.read_5"]
    assert [(s.file, s.where) for s in catalog.skipped] == [
        (str(path), "tool #1 'gauge.read_1' (line 2, entry 'simple_1')"),
        (str(path), "tool #3 'gauge.read_3' (line 4, entry 'simple_3')"),
    ]
    (problem,) = catalog.skipped[0].problems
    assert (problem.field, problem.message) == (
        "parameters.properties.unit.enum", "value 'celsius' is not of the declared type integer")


def test_skip_invalid_still_needs_two_usable_tools(tmp_path: Path) -> None:
    path = _bfcl(tmp_path, 3, bad={0, 2})
    with pytest.raises(InputError) as info:
        read_catalog(path, skip_invalid=True)
    lines = str(info.value).splitlines()
    assert lines[0] == (f"{path}: only 1 usable tool left after skipping the broken ones; "
                        "a catalog needs at least 2")
    assert lines[1].startswith("skipped 2 broken tools; 1 usable tool kept:")
    assert len(lines) == 4  # both skipped tools named


def test_no_hint_when_skipping_would_leave_too_few_tools(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as info:
        read_catalog(_bfcl(tmp_path, 2, bad={0}))
    assert info.value.hint is None


def test_a_duplicate_name_is_skipped_and_the_first_definition_kept(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    tool = {"name": "a", "description": "Does a.", "parameters": {"type": "object", "properties": {}}}
    path.write_text(json.dumps([tool, {**tool, "description": "Does a again."}, {**tool, "name": "b"}]))
    catalog = read_catalog(path, skip_invalid=True)
    assert [t.description for t in catalog.tools] == ["Does a.", "Does a."]
    assert catalog.skipped[0].problems[0].field == "name"


def test_skip_invalid_skips_an_unrecognised_file_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "cat"
    folder.mkdir()
    _bfcl(folder, 3, bad=set())
    (folder / "answers.json").write_text(json.dumps([{"id": f"simple_{i}", "ground_truth": []} for i in range(500)]))
    with pytest.raises(CatalogError) as info:
        read_catalog(folder)
    assert len(info.value.problems) == 1  # one report, not one problem per item
    catalog = read_catalog(folder, skip_invalid=True)
    assert len(catalog.tools) == 3
    assert [s.where for s in catalog.skipped] == [None]
    assert catalog.skipped[0].problems[0].message.startswith("format not recognised; tried:")


def test_unknown_layout_is_one_report_with_each_format_tried(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "answers.json"
    path.write_text("\n".join(json.dumps({"id": f"multiple_{i}", "ground_truth": [{"f": {"x": [i]}}]})
                              for i in range(2000)))
    assert main(["catalog", "validate", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {path}: format not recognised; tried:"
    assert [line.split(":")[0].strip() for line in err[1:]] == ["openapi", "mcp", "openai", "bfcl", "native"]
    assert "none of its 2000 items has a 'name' or 'description'; their keys include id, ground_truth" in err[-1]


def _openapi(tmp_path: Path) -> Path:
    doc = {
        "openapi": "3.0.3", "info": {"title": "Seed bank", "version": "1"}, "x-tenant": "acme",
        "paths": {"/seeds/search": {"post": {
            "operationId": "searchSeeds", "summary": "Search the seed bank.", "x-rate-limit": 10,
            "parameters": [{"name": "ids", "in": "query", "x-example-note": "comma separated",
                            "schema": {"type": "string", "x-pattern-hint": "a,b",
                                       "description": "Comma-separated seed lot numbers."}}],
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Query"}}}},
        }}},
        "components": {"schemas": {"Query": {"type": "object", "x-codegen-name": "QueryBody", "properties": {
            "ids": {"type": "array", "items": {"type": "integer", "x-unit": "lot"},
                    "description": "Seed lots to include."},
            "species": {"type": "object", "x-nullable-keys": True, "properties": {
                "genus": {"type": "string", "x-order": 1}, "x-field": {"type": "string"}}},
        }}}},
    }
    path = tmp_path / "seeds.json"
    path.write_text(json.dumps(doc))
    return path


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_openapi_renames_carry_the_original_words_as_title_and_vendor_keys_are_gone(tmp_path: Path) -> None:
    catalog = read_catalog(_openapi(tmp_path))
    (tool,) = catalog.tools
    props = tool.properties
    assert set(props) == {"query_ids", "body_ids", "species"}
    assert props["query_ids"]["title"] == "IDs" and props["body_ids"]["title"] == "IDs"
    assert props["body_ids"]["items"] == {"type": "integer"}
    vendor = {k for k in _keys(tool.parameters) if k.startswith("x-")}
    assert vendor == {"x-field"}  # a property named x-field is a field, not a vendor keyword
    assert props["species"]["properties"]["genus"] == {"type": "string"}
    assert len(catalog.warnings) == 1  # the rename; dropping vendor keys warns of nothing
    # what a rename is called is known beyond the importer: its words are the original name's
    assert set(openapi_args._LABEL) == text.RENAME_PREFIXES
    assert text.key_words("query_ids", props["query_ids"]) == ["ids"] and text.key_words("query_ids") == ["query", "ids"]


def test_a_title_the_document_gives_is_kept(tmp_path: Path) -> None:
    path = _openapi(tmp_path)
    doc = json.loads(path.read_text())
    doc["paths"]["/seeds/search"]["post"]["parameters"][0]["schema"]["title"] = "Seed lot numbers"
    path.write_text(json.dumps(doc))
    (tool,) = read_catalog(path).tools
    assert tool.properties["query_ids"]["title"] == "Seed lot numbers"


def test_warning_kind_leaves_out_the_particulars() -> None:
    assert kind("a boolean with the string enum ['True', 'False'] (BFCL style) is read as a string enum") == \
        "a boolean with the string enum ... (BFCL style) is read as a string enum"
    assert kind("entry 'x_1' (line 4) defines 'f' differently ('a' and 'b.c' differ); kept") == \
        kind("entry 'x_9' (line 12) defines 'g' differently ('description' differ); kept")


def test_warnings_are_summarised_by_kind_most_frequent_first_with_examples() -> None:
    notes = [Notice("f.json", f"tool #{i} 't{i}' (line {i})", f"parameters.properties.p{i}", "has no description")
             for i in range(540)]
    notes += [Notice("f.json", f"tool #{i} 'u{i}'", "parameters.properties.c.enum",
                     f"an enum on an array (BFCL style) is moved to items.enum of {i} values") for i in range(77)]
    lines = warning_lines(notes)
    assert lines == [
        "617 warnings of 2 kinds (--verbose lists each):",
        "  540 x has no description (e.g. tool #0 't0' parameters.properties.p0; tool #1 't1' "
        "parameters.properties.p1; tool #2 't2' parameters.properties.p2, ...)",
        "  77 x an enum on an array (BFCL style) is moved to items.enum of ... values (e.g. tool #0 'u0' "
        "parameters.properties.c.enum; tool #1 'u1' parameters.properties.c.enum; tool #2 'u2' "
        "parameters.properties.c.enum, ...)",
    ]
    assert warning_lines(notes, verbose=True) == [str(n) for n in notes]
    assert warning_lines(notes[:2]) == [str(n) for n in notes[:2]]  # a few are printed as they are


def test_load_catalog_logs_skipped_tools_once_summarised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _bfcl(tmp_path, 50, bad=set(range(0, 50, 2)))
    with caplog.at_level(logging.WARNING, logger="utcgen.catalog"):
        tools = load_catalog(path, skip_invalid=True)
    assert len(tools) == 25
    lines = [r.getMessage() for r in caplog.records if r.name == "utcgen.catalog"]
    assert lines[0] == "catalog: skipped 25 broken tools; 25 usable tools kept:"
    assert lines[1].startswith(f"catalog: {path}: tool #0 'gauge.read_0' (line 1, entry 'simple_0'): ")
    assert lines[-1] == "catalog: ... and 5 more (--verbose lists each)" and len(lines) == 22


def test_a_kind_of_warning_met_once_is_said_whole() -> None:
    notes = [Notice("f.json", f"tool #{i} 't{i}'", "description", "has no description") for i in range(4)]
    notes.append(Notice("f.json", None, "", "48 operations marked deprecated not imported: a, b"))
    lines = warning_lines(notes)
    assert lines[-1] == "  f.json: 48 operations marked deprecated not imported: a, b"  # not '1 x ... operations'
    assert lines[1].startswith("  4 x has no description (e.g. ")
