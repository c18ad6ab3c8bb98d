"""BFCL's own conventions import as valid JSON Schema (with a warning for each rewrite),
and raw BFCL test files load directly: repeats kept once, conflicting definitions named."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import CATALOGS
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.checks import check_parameters
from utcgen.pipeline.ingest.reader import load_catalog, read_catalog

FIXTURES = CATALOGS
CASES = FIXTURES / "bfcl_live_cases.json"


def doc(name: str = "f", **props: Any) -> dict[str, Any]:
    return {"name": name, "description": "Do f.", "parameters": {"type": "dict", "properties": props}}


def write_lines(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in items))
    return path


def test_raw_test_file_loads_each_function_once() -> None:
    catalog = read_catalog(CASES)
    assert catalog.formats == ["bfcl"]
    assert [t.name for t in catalog.tools] == ["weather.get_forecast", "restaurant.search", "calendar.add_event"]
    for tool in catalog.tools:
        assert check_parameters(tool.parameters) == [], tool.name


def test_conflicting_definitions_keep_the_first_and_name_both_cases() -> None:
    catalog = read_catalog(CASES)
    forecast = catalog.tools[0]
    assert forecast.description == "Get tomorrow's forecast for a city."
    assert forecast.properties["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert (
        f"{CASES}: tool #0 'weather.get_forecast' (line 1, entry 'live_simple_0-0-0'): "
        "entry 'live_simple_3-1-1' (line 4) defines 'weather.get_forecast' differently "
        "('description' and 'parameters.properties.unit.enum' differ); kept this definition, skipped that one"
    ) in catalog.warnings
    # Repeats with the same content (even with keys in another order) say nothing.
    assert not any("live_simple_2-1-0" in w or "live_multiple_4-2-0' (line 5) defines" in w
                   for w in catalog.warnings)


def test_boolean_with_string_enum_becomes_a_string_enum() -> None:
    catalog = read_catalog(CASES)
    tools = {t.name: t for t in catalog.tools}
    assert tools["weather.get_forecast"].properties["include_alerts"] == {
        "type": "string", "description": "Whether to add severe-weather alerts.",
        "enum": ["True", "False", "dontcare"], "default": "dontcare",
    }
    # Real booleans among the strings are spelled as BFCL spells them, default included.
    assert tools["calendar.add_event"].properties["reminder"] == {
        "type": "string", "enum": ["True", "False", "dontcare"], "default": "True",
    }
    # A boolean without an enum is left alone.
    assert tools["restaurant.search"].properties["open_now"] == {"type": "boolean", "default": False}
    assert (
        f"{CASES}: tool #1 'restaurant.search' (line 2, entry 'live_simple_1-0-1'): "
        "parameters.properties.has_parking.type: a boolean with the string enum "
        "['True', 'False', 'dontcare'] (BFCL style) is read as a string enum"
    ) in catalog.warnings


def test_enum_on_an_array_moves_to_its_items() -> None:
    catalog = read_catalog(CASES)
    tools = {t.name: t for t in catalog.tools}
    assert tools["restaurant.search"].properties["cuisines"] == {
        "type": "array", "items": {"type": "string", "enum": ["italian", "thai", "mexican", "indian"]},
        "description": "Kinds of food wanted.",
    }
    assert tools["calendar.add_event"].properties["attendees"] == {
        "type": "array", "items": {"type": "string", "enum": ["me", "partner", "team"]},
    }
    assert (
        f"{CASES}: tool #1 'restaurant.search' (line 2, entry 'live_simple_1-0-1'): "
        "parameters.properties.cuisines.enum: an enum on an array (BFCL style) is moved to items.enum"
    ) in catalog.warnings
    assert len(catalog.warnings) == 6


def test_array_enum_cases_in_plain_function_docs(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "docs.jsonl", [
        doc("a", tags={"type": "array", "enum": ["x", "y"]}),  # no items at all
        doc("b", tags={"type": "array", "items": {"type": "string", "enum": ["x"]}, "enum": ["x", "y"]}),
        doc("c", pairs={"type": "array", "enum": [["x", "y"], ["y", "x"]]}),  # already valid: untouched
    ])
    catalog = read_catalog(path)
    tools = {t.name: t for t in catalog.tools}
    assert tools["a"].properties["tags"] == {"type": "array", "items": {"enum": ["x", "y"]}}
    assert tools["b"].properties["tags"] == {"type": "array", "items": {"type": "string", "enum": ["x"]}}
    assert tools["c"].properties["pairs"] == {"type": "array", "enum": [["x", "y"], ["y", "x"]]}
    assert [w.split(": ", 2)[2] for w in catalog.warnings] == [
        "parameters.properties.tags.enum: an enum on an array (BFCL style) is moved to items.enum",
        "parameters.properties.tags.enum: an enum on an array (BFCL style) is dropped: "
        "its items have their own enum",
    ]


def test_native_catalogs_stay_strict_about_the_same_shapes(tmp_path: Path) -> None:
    """The rewrites are BFCL's conventions; in a native catalog they are still errors."""
    path = tmp_path / "native.json"
    path.write_text(json.dumps([{"name": "f", "description": "F.", "tags": [], "parameters": {
        "type": "object", "properties": {"flag": {"type": "boolean", "enum": ["True", "False"]}}}}]))
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert "parameters.properties.flag.enum: value 'True' is not of the declared type boolean" in str(info.value)


def test_two_definitions_in_plain_function_docs_remain_an_error(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "docs.jsonl", [doc("f", x={"type": "float"}), doc("f", x={"type": "str"})])
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert info.value.problems == [
        f"{path}: tool #1 'f' (line 2): name: already used by {path}: tool #0 'f' (line 1)"
    ]


def test_load_catalog_logs_every_warning_when_debugging(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="utcgen.catalog"):
        tools = load_catalog(CASES)
    assert len(tools) == 3
    records = [r for r in caplog.records if r.name == "utcgen.catalog"]
    assert [r.getMessage() for r in records] == [f"catalog warning: {w}" for w in read_catalog(CASES).warnings]
    assert all(r.levelno == logging.WARNING for r in records) and len(records) == 6


def test_load_catalog_logs_warnings_summarised_by_kind(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="utcgen.catalog"):
        load_catalog(CASES)
    lines = [r.getMessage() for r in caplog.records if r.name == "utcgen.catalog"]
    assert lines[0] == "catalog warning: 6 warnings of 3 kinds (--verbose lists each):"
    assert len(lines) == 4
    said = [line.removeprefix("catalog warning: ") for line in lines[1:]]
    counts = [int(line.split(" x ")[0]) if " x " in line else 1 for line in said]  # a kind met once is said whole
    assert all(" x " in line or line.startswith(str(CASES)) for line in said)
    assert sum(counts) == 6 and counts == sorted(counts, reverse=True)
