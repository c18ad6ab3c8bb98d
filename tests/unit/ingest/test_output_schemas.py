"""What a call returns, carried through the importers: an OpenAPI operation's success response, an MCP
tool's `outputSchema`, a native tool's `output_schema`; checked like the other fields, written back only
when present. The documents are small fragments shaped like a music API's and a code host's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import CATALOGS
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.importers.openapi_schema import OUTPUT_CHARACTERS, OUTPUT_PROPERTIES
from utcgen.pipeline.ingest.reader import read_catalog
from utcgen.pipeline.ingest.writer import native_text, write_native

ALBUM = {"type": "object", "properties": {
    "id": {"type": "string", "description": "The album's id. More text that is cut."},
    "name": {"type": "string"},
    "artists": {"type": "array", "items": {"$ref": "#/components/schemas/Artist"}},
}}
ARTIST = {"type": "object", "properties": {
    "id": {"type": "string"}, "name": {"type": "string"},
    "label": {"type": "object", "properties": {"owner": {"type": "object", "properties": {"id": {"type": "string"}}}}},
    "related": {"$ref": "#/components/schemas/Artist"},
}}


def music_api(responses: dict[str, Any], **schemas: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.3", "info": {"title": "music", "version": "1"},
        "paths": {"/albums/{id}": {"get": {
            "operationId": "get-album", "summary": "Fetch one album.",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": responses,
        }}},
        "components": {"schemas": {"Album": ALBUM, "Artist": ARTIST, **schemas},
                       "responses": {"OneAlbum": {"description": "an album", "content": {
                           "application/json": {"schema": {"$ref": "#/components/schemas/Album"}}}}}},
    }


def read(tmp_path: Path, doc: Any, name: str = "doc.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return read_catalog(path)


def test_lowest_json_success_response_is_the_output_schema(tmp_path: Path) -> None:
    doc = music_api({
        "204": {"description": "nothing"},
        "201": {"description": "plain", "content": {"text/plain": {"schema": {"type": "string"}}}},
        "200": {"$ref": "#/components/responses/OneAlbum"},
        "404": {"description": "missing", "content": {"application/json": {"schema": {"type": "object"}}}},
    })
    tool = read(tmp_path, doc).tools[0]
    out = tool.output_schema
    assert out is not None and out["title"] == "Album"  # named by the component it was inlined from
    assert list(out["properties"]) == ["id", "name", "artists"]
    assert out["properties"]["id"]["description"] == "The album's id."  # first sentence only
    artist = out["properties"]["artists"]["items"]
    assert artist["title"] == "Artist" and artist["properties"]["id"] == {"type": "string"}
    # the recursive `related` is cut at the repeat; levels below the third keep type and title only
    assert artist["properties"]["related"] == {"type": "object"}
    assert artist["properties"]["label"]["properties"] == {"owner": {"type": "object"}}
    assert "output_schema" not in tool.shown().model_dump(exclude_none=True)


def test_a_2xx_range_and_star_media_and_swagger_style_schema(tmp_path: Path) -> None:
    ranged = music_api({"2XX": {"description": "ok", "content": {"*/*": {"schema": {"type": "array",
                                                                                    "items": {"type": "string"}}}}}})
    assert read(tmp_path, ranged).tools[0].output_schema == {"type": "array", "items": {"type": "string"}}
    bare = music_api({"200": {"description": "ok", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}})
    assert read(tmp_path, bare).tools[0].output_schema["properties"] == {"n": {"type": "integer"}}


def test_no_success_schema_means_none_and_a_broken_response_only_warns(tmp_path: Path) -> None:
    assert read(tmp_path, music_api({"204": {"description": "done"}})).tools[0].output_schema is None
    broken = read(tmp_path, music_api({"200": {"$ref": "#/components/responses/Nowhere"}}))
    assert broken.tools[0].output_schema is None  # the tool still imports
    assert len(broken.warnings) == 1 and "responses.200" in broken.warnings[0]
    assert "output schema is left out" in broken.warnings[0]


def test_wide_and_large_responses_are_cut(tmp_path: Path) -> None:
    wide = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(OUTPUT_PROPERTIES + 10)}}
    tool = read(tmp_path, music_api({"200": {"description": "ok", "content": {
        "application/json": {"schema": wide}}}})).tools[0]
    assert list(tool.output_schema["properties"]) == [f"f{i}" for i in range(OUTPUT_PROPERTIES)]
    text = "word " * 20 + "."
    big = {"type": "object", "properties": {f"g{i}": {"type": "object", "properties": {
        f"h{j}": {"type": "object", "description": text, "properties": {"x": {"type": "string", "description": text}}}
        for j in range(30)}} for i in range(20)}}
    cut = read(tmp_path, music_api({"200": {"description": "ok", "content": {
        "application/json": {"schema": big}}}})).tools[0].output_schema
    assert len(json.dumps(cut)) <= OUTPUT_CHARACTERS
    assert list(cut["properties"]) == [f"g{i}" for i in range(20)]  # shallower, never narrower


def test_a_one_of_becomes_any_of_since_cut_alternatives_may_overlap(tmp_path: Path) -> None:
    """Spotify's queue holds tracks or episodes: cut to bare objects, both fit any object, which `oneOf` refuses."""
    import jsonschema

    deep = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object",
            "properties": {"c": {"type": "string"}}}}}}}
    queue = {"type": "object", "properties": {"playing": {"type": "object", "properties": {"item": {"oneOf": [
        {"title": "Track", **deep}, {"title": "Episode", **deep}]}}}}}
    schema = read(tmp_path, music_api({"200": {"description": "ok", "content": {
        "application/json": {"schema": queue}}}})).tools[0].output_schema
    item = schema["properties"]["playing"]["properties"]["item"]
    assert "oneOf" not in item and [s["title"] for s in item["anyOf"]] == ["Track", "Episode"]
    jsonschema.validate({"playing": {"item": {}}}, schema)


def test_parameters_are_the_same_as_before(tmp_path: Path) -> None:
    """Reading responses changes nothing of the arguments: no titles from $ref names there."""
    doc = music_api({"200": {"$ref": "#/components/responses/OneAlbum"}})
    doc["paths"]["/albums/{id}"]["get"]["parameters"][0]["schema"] = {"$ref": "#/components/schemas/Album"}
    tool = read(tmp_path, doc).tools[0]
    assert "title" not in tool.properties["id"] and tool.output_schema["title"] == "Album"


MCP_TOOL = {"name": "open_issue", "description": "Open an issue in a repository.",
            "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]},
            "outputSchema": {"type": "object", "properties": {"number": {"type": "integer"}, "url": {"type": "string"}}}}


def test_mcp_output_schema_is_kept(tmp_path: Path) -> None:
    other = {**MCP_TOOL, "name": "close_issue"}
    del other["outputSchema"]
    tools = read(tmp_path, {"tools": [MCP_TOOL, other]}).tools
    assert tools[0].output_schema == MCP_TOOL["outputSchema"] and tools[1].output_schema is None


def test_a_malformed_mcp_output_schema_is_named_as_the_source_names_it(tmp_path: Path) -> None:
    bad = {**MCP_TOOL, "outputSchema": {"type": "object", "properties": {"number": {"type": "int"}}}}
    with pytest.raises(InputError) as err:
        read(tmp_path, {"tools": [bad, {**MCP_TOOL, "name": "b"}]}, "mcp.json")
    assert "mcp.json: tool #0 'open_issue': outputSchema.properties.number" in str(err.value)


NATIVE = [{"name": "list_orders", "description": "List orders.", "tags": [],
           "output_schema": {"type": "object", "properties": {"orders": {"type": "array"}}}},
          {"name": "cancel_order", "description": "Cancel an order.", "tags": []}]


def test_native_output_schema_reads_and_round_trips(tmp_path: Path) -> None:
    tools = read(tmp_path, NATIVE).tools
    assert tools[0].output_schema == NATIVE[0]["output_schema"] and tools[1].output_schema is None
    written = json.loads(native_text(tools, ".json"))
    assert "output_schema" in written[0] and "output_schema" not in written[1]
    for suffix in (".json", ".jsonl", ".yaml"):
        assert read_catalog(write_native(tools, tmp_path / f"again{suffix}")).tools == tools


@pytest.mark.parametrize(("value", "field", "says"), [
    ("a string", "output_schema", "must be a JSON Schema object or null, got a string"),
    ([], "output_schema", "must be a JSON Schema object or null, got a list"),
    ({"type": "object", "properties": {"n": 3}}, "output_schema.properties.n", "must be a schema object"),
    ({"type": "thing"}, "output_schema.type", "invalid JSON Schema"),
])
def test_a_malformed_native_output_schema_names_file_item_and_field(
    tmp_path: Path, value: Any, field: str, says: str
) -> None:
    with pytest.raises(InputError) as err:
        read(tmp_path, [{**NATIVE[0], "output_schema": value}, NATIVE[1]], "tools.json")
    assert f"tools.json: tool #0 'list_orders': {field}: {says}" in str(err.value)


def test_converting_a_catalog_without_output_schemas_writes_what_it_always_did() -> None:
    tools = read_catalog(CATALOGS / "openai_tools.json").tools
    assert all(list(item) == ["name", "description", "parameters", "line_of_business", "tags"]
               for item in json.loads(native_text(tools, ".json")))


def test_an_mcp_output_schema_has_its_defs_inlined_and_titled(tmp_path: Path) -> None:
    """A server's schema keeps shared parts in `$defs` (a recursive one among them); the record inlines them."""
    listing = {**MCP_TOOL, "name": "find_repos", "outputSchema": {
        "$defs": {"repo": {"type": ["object", "null"], "properties": {
            "name": {"type": "string"}, "fork_of": {"$ref": "#/$defs/repo"}}}},
        "type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/repo"}}}}}
    out = read(tmp_path, {"tools": [listing, MCP_TOOL]}).tools[0].output_schema
    assert "$defs" not in out
    item = out["properties"]["items"]["items"]
    assert item["title"] == "repo" and item["properties"]["name"] == {"type": "string"}
    assert item["properties"]["fork_of"] == {"type": ["object", "null"]}  # cut at the repeat


def test_a_dangling_mcp_ref_leaves_the_output_schema_out_with_a_warning(tmp_path: Path) -> None:
    broken = {**MCP_TOOL, "outputSchema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/gone"}}}}
    catalog = read(tmp_path, {"tools": [broken, {**MCP_TOOL, "name": "b"}]})
    assert catalog.tools[0].output_schema is None
    assert any("outputSchema" in w and "left out" in w for w in catalog.warnings)


def test_a_response_schema_the_checks_refuse_is_left_out_not_the_tool(tmp_path: Path) -> None:
    odd = music_api({"200": {"description": "ok", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}}}}})
    catalog = read(tmp_path, odd)
    assert catalog.tools[0].name == "get-album" and catalog.tools[0].output_schema is None
    assert len(catalog.warnings) == 1 and "output_schema.properties.n.minimum" in catalog.warnings[0]
    assert catalog.warnings[0].endswith("; the tool is imported without it")
