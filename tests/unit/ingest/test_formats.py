"""Each importer on a realistic file in its real format, detection, and directory loading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import CATALOGS
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.ingest.common import walk_schema
from utcgen.pipeline.ingest.formats import FormatError, detect_format
from utcgen.pipeline.ingest.reader import load_catalog, read_catalog

FIXTURES = CATALOGS
BFCL_ONLY_TYPES = {"dict", "float", "tuple", "any"}


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


def all_types(schema: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for _, node in walk_schema(schema):
        if isinstance(node, dict) and "type" in node:
            t = node["type"]
            found.update([t] if isinstance(t, str) else t)
    return found


def assert_no_refs(tool: Tool) -> None:
    assert "$ref" not in json.dumps(tool.parameters), tool.name


# --------------------------------------------------------------------------- OpenAI


def test_openai_tools_keep_name_description_and_schema_verbatim() -> None:
    path = FIXTURES / "openai_tools.json"
    raw = json.loads(path.read_text())
    catalog = read_catalog(path)
    assert catalog.formats == ["openai"]
    assert [t.name for t in catalog.tools] == [item["function"]["name"] for item in raw]
    for tool, item in zip(catalog.tools, raw):
        assert tool.description == item["function"]["description"]
        if "parameters" in item["function"]:
            assert tool.parameters == item["function"]["parameters"]
        assert tool.line_of_business is None and tool.tags == []
    # A function without parameters gets the empty object schema, and round-trips.
    assert by_name(catalog.tools)["list_open_approvals"].parameters["properties"] == {}
    assert catalog.tools[0].openai_spec()["function"]["parameters"] == raw[0]["function"]["parameters"]


def test_openai_flat_responses_style_and_strict_bare_items(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([
        {"type": "function", "name": "ping_host", "description": "Ping a host.",
         "parameters": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}},
        {"name": "whoami", "description": "Current user.", "strict": True,
         "parameters": {"type": "object", "properties": {}, "additionalProperties": False}},
    ]))
    tools = read_catalog(path)
    assert tools.formats == ["openai"]
    assert [t.name for t in tools.tools] == ["ping_host", "whoami"]
    assert tools.tools[0].required == ["host"]


# --------------------------------------------------------------------------- MCP


def test_mcp_tools_list_result_maps_input_schema_and_drops_mcp_only_fields() -> None:
    path = FIXTURES / "mcp_tools_list.json"
    raw = json.loads(path.read_text())["tools"]
    catalog = read_catalog(path)
    assert catalog.formats == ["mcp"]
    assert [t.name for t in catalog.tools] == ["search_knowledge_base", "open_ticket"]
    for tool, item in zip(catalog.tools, raw):
        assert tool.parameters == item["inputSchema"]
        assert tool.description == item["description"]
    ticket = by_name(catalog.tools)["open_ticket"]
    assert ticket.required == ["employee_id", "summary", "priority"]
    assert ticket.properties["device"]["required"] == ["asset_tag"]
    # outputSchema's fields must not leak into the arguments.
    assert "ticket_id" not in ticket.properties


def test_mcp_jsonrpc_envelope_and_bare_list(tmp_path: Path) -> None:
    tools = json.loads((FIXTURES / "mcp_tools_list.json").read_text())["tools"]
    envelope = tmp_path / "response.json"
    envelope.write_text(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools}}))
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(tools))
    expected = load_catalog(FIXTURES / "mcp_tools_list.json")
    assert load_catalog(envelope) == expected
    assert read_catalog(bare).formats == ["mcp"]
    assert load_catalog(bare) == expected


# --------------------------------------------------------------------------- OpenAPI


@pytest.fixture(scope="module")
def petclinic() -> dict[str, Tool]:
    catalog = read_catalog(FIXTURES / "petclinic_openapi.yaml")
    assert catalog.formats == ["openapi"]
    return by_name(catalog.tools)


def test_openapi_one_tool_per_operation_in_document_order() -> None:
    names = [t.name for t in load_catalog(FIXTURES / "petclinic_openapi.yaml")]
    # GET /pets/{petId} has no operationId: its name is a slug of method and path.
    assert names == ["listPets", "registerPet", "get_pets_petId", "updatePet", "uploadPetPhoto", "bookVisit"]


def test_openapi_query_params_without_headers_or_cookies(petclinic: dict[str, Tool]) -> None:
    tool = petclinic["listPets"]
    assert set(tool.properties) == {"limit", "species"}
    assert tool.required == ["species"]
    assert tool.properties["limit"] == {
        "type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "Page size.",
    }
    # $ref to a component schema is inlined.
    assert tool.properties["species"] == {"type": "string", "enum": ["dog", "cat", "rabbit", "bird"]}
    assert tool.description == "List registered pets. Pets are returned newest first, at most `limit` per page."
    assert tool.line_of_business == "pets" and tool.tags == ["pets"]


def test_openapi_body_from_request_body_ref_with_allof_and_nested_refs(petclinic: dict[str, Tool]) -> None:
    tool = petclinic["registerPet"]
    assert_no_refs(tool)
    # readOnly `id` is never sent in a request, so it is neither a property nor required.
    assert set(tool.properties) == {"name", "species", "birth_date", "owner", "category"}
    assert tool.required == ["name", "species", "owner"]
    owner = tool.properties["owner"]
    assert owner["required"] == ["full_name", "phone"]
    assert owner["properties"]["address"]["properties"]["city"] == {"type": "string"}
    assert owner["properties"]["address"]["required"] == ["street", "city"]
    # OpenAPI 3.0 `example` becomes JSON Schema `examples`; YAML dates stay strings.
    assert tool.properties["birth_date"]["examples"] == ["2020-05-01"]
    assert tool.properties["name"]["examples"] == ["Biscuit"]
    # A recursive schema is cut at the repeat instead of looping forever.
    parent = tool.properties["category"]["properties"]["parent"]
    assert parent["type"] == "object" and "properties" not in parent
    assert tool.line_of_business == "pets" and tool.tags == ["pets", "owners"]


def test_openapi_path_level_params_and_openapi30_schema_dialect(petclinic: dict[str, Tool]) -> None:
    show = petclinic["get_pets_petId"]
    assert show.required == ["petId"]
    assert show.properties["petId"]["description"] == "The pet's clinic number."
    assert show.properties["petId"]["pattern"] == "^P[0-9]{6}$"

    update = petclinic["updatePet"]
    assert list(update.properties) == ["petId", "notify_owner", "name", "weight_kg", "nickname"]
    assert update.required == ["petId"]  # a path parameter is always required
    assert update.properties["nickname"]["type"] == ["string", "null"]  # nullable: true
    assert update.properties["weight_kg"] == {"type": "number", "exclusiveMinimum": 0}


def test_openapi_multipart_body_fields_and_required_body_fields(petclinic: dict[str, Tool]) -> None:
    upload = petclinic["uploadPetPhoto"]
    assert list(upload.properties) == ["petId", "caption", "file"]
    assert upload.properties["file"] == {"type": "string", "format": "binary"}
    assert upload.required == ["petId"]
    visit = petclinic["bookVisit"]
    assert visit.required == ["pet_id", "reason"]
    assert visit.properties["preferred_slots"]["items"] == {"type": "string", "format": "date-time"}
    assert visit.line_of_business == "visits"


def openapi_doc(**operation: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/orders/{order_id}": {
                "parameters": [
                    {"name": "order_id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                ],
                "post": {"operationId": "annotateOrder", "summary": "Annotate an order", **operation},
            }
        },
        "components": {"schemas": {"Note": {"type": "string", "maxLength": 200}}},
    }


def test_openapi_json_31_operation_params_override_path_params_and_array_body(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(openapi_doc(
        parameters=[{"name": "verbose", "in": "query", "required": True, "schema": {"type": "integer"}}],
        requestBody={"required": True, "content": {"application/json": {
            "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Note"}}}}},
    )))
    (tool,) = load_catalog(path)
    assert tool.properties["verbose"] == {"type": "integer"}
    assert tool.properties["body"] == {"type": "array", "items": {"type": "string", "maxLength": 200}}
    assert tool.required == ["order_id", "verbose", "body"]
    assert tool.line_of_business is None and tool.tags == []


def test_openapi_broken_ref_in_unused_responses_does_not_block_import(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(openapi_doc(
        responses={"200": {"$ref": "#/components/responses/Missing"}}
    )))
    (tool,) = load_catalog(path)
    assert tool.name == "annotateOrder"


# --------------------------------------------------------------------------- BFCL


def test_bfcl_jsonl_types_normalised_recursively() -> None:
    catalog = read_catalog(FIXTURES / "bfcl_functions.jsonl")
    assert catalog.formats == ["bfcl"]
    tools = by_name(catalog.tools)
    assert list(tools) == ["finance.calculate_loan_payment", "travel.book_flight", "hr.get_leave_balance"]
    for tool in tools.values():
        assert tool.parameters["type"] == "object"
        assert not all_types(tool.parameters) & BFCL_ONLY_TYPES, tool.name
    loan = tools["finance.calculate_loan_payment"]
    assert loan.properties["principal"] == {"type": "number", "description": "Amount borrowed."}
    flight = tools["travel.book_flight"]
    assert flight.properties["route"]["type"] == "array"
    traveller = flight.properties["traveller"]
    assert traveller["type"] == "object" and traveller["required"] == ["name"]
    loyalty = traveller["properties"]["loyalty"]
    assert loyalty["type"] == "object"
    assert loyalty["properties"]["miles"] == {"type": "number"}
    assert loyalty["properties"]["programme"]["enum"] == ["gold", "silver"]
    assert flight.properties["extras"]["items"] == {}  # "any": no constraint
    assert tools["hr.get_leave_balance"].properties["metadata"] == {
        "description": "Anything the caller wants echoed back."
    }


def test_bfcl_test_entries_in_a_json_lines_file_named_json() -> None:
    """BFCL ships its data as one JSON object per line in .json files; repeats are kept once."""
    tools = by_name(load_catalog(FIXTURES / "bfcl_entries.json"))
    assert list(tools) == ["math.factorial", "math.hypot"]
    assert tools["math.hypot"].properties["point"] == {
        "type": "array", "items": {"type": "number"}, "description": "Coordinates.",
    }


# --------------------------------------------------------------------------- native, directory


def test_directory_loads_supported_files_sorted_by_name() -> None:
    catalog = read_catalog(FIXTURES / "mixed_dir")
    assert [t.name for t in catalog.tools] == [
        "approve_expense", "request_leave", "get_payslip", "reset_password", "unlock_account",
    ]
    assert [(Path(f.path).name, f.format, f.tools) for f in catalog.files] == [
        ("00_finance.json", "native", 1), ("10_hr.yaml", "native", 2), ("20_it.jsonl", "openai", 2),
    ]
    assert catalog.formats == ["native", "openai"]
    leave = by_name(catalog.tools)["request_leave"]
    assert leave.line_of_business == "hr" and leave.tags == ["leave", "self-service"]
    assert leave.required == ["start_date", "end_date", "kind"]


def test_native_single_tool_object_and_tools_wrapper(tmp_path: Path) -> None:
    tool = {"name": "a", "description": "A.", "tags": ["x"]}
    (tmp_path / "one.json").write_text(json.dumps(tool))
    (tmp_path / "wrapped.yaml").write_text("tools:\n  - name: b\n    description: B.\n")
    assert [t.name for t in load_catalog(tmp_path)] == ["a", "b"]
    assert load_catalog(tmp_path / "one.json")[0] == Tool(**tool)


# --------------------------------------------------------------------------- detection


PARAMS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([{"name": "a", "description": "d", "parameters": PARAMS}], "native"),
        ({"tools": [{"name": "a", "description": "d", "line_of_business": "hr"}]}, "native"),
        ([{"type": "function", "function": {"name": "a", "description": "d"}}], "openai"),
        ({"tools": [{"type": "function", "function": {"name": "a"}}]}, "openai"),
        ([{"name": "a", "description": "d", "parameters": PARAMS, "strict": True}], "openai"),
        ({"tools": [{"name": "a", "inputSchema": PARAMS}]}, "mcp"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a", "inputSchema": PARAMS}]}}, "mcp"),
        ({"openapi": "3.0.3", "info": {}, "paths": {}}, "openapi"),
        ([{"name": "a", "description": "d", "parameters": {"type": "dict", "properties": {}}}], "bfcl"),
        ([{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}}], "bfcl"),
        ([{"id": "simple_1", "question": [], "function": [{"name": "a"}]}], "bfcl"),
        # A plain item takes its neighbours' format.
        ([{"name": "a", "description": "d"}, {"name": "b", "inputSchema": PARAMS}], "mcp"),
        # Markers beat BFCL type names: the stray "dict" will be reported as an unknown type.
        ([{"name": "a", "tags": ["t"]}, {"name": "b", "parameters": {"type": "dict"}}], "native"),
    ],
)
def test_detect_format(data: Any, expected: str) -> None:
    assert detect_format(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"type": "function", "function": {}}, {"name": "b", "inputSchema": {}}],
         "tool #0 looks openai, tool #1 looks mcp"),
        ({"swagger": "2.0", "paths": {}}, "Swagger 2.0 is not supported"),
        ({"tools": {"a": 1}}, "'tools' is a mapping, not a list"),
    ],
)
def test_detect_format_refuses_what_it_cannot_tell(data: Any, message: str) -> None:
    with pytest.raises(FormatError, match="unknown format") as info:
        detect_format(data)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        ({"servers": []}, "the top level is a mapping with keys servers"),
        ("just a string", "the top level is a string"),
        ([{"id": f"simple_{i}", "ground_truth": [{"f": {}}]} for i in range(50)],
         "none of its 50 items has a 'name' or 'description'; their keys include id, ground_truth"),
        (["a", "b", {"id": "x"}], "its 3 items are mostly strings, not tool objects"),
    ],
)
def test_a_file_in_no_known_format_gets_one_report_naming_each_format_tried(data: Any, shape: str) -> None:
    with pytest.raises(FormatError) as info:
        detect_format(data)
    lines = str(info.value).splitlines()
    assert lines[0] == "format not recognised; tried:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["openapi", "mcp", "openai", "bfcl", "native"]
    assert lines[-1].endswith(shape)


def test_a_list_with_a_few_tool_like_items_is_still_a_catalog_to_check() -> None:
    items = [{"id": i} for i in range(30)] + [{"description": "d"}]
    assert detect_format(items) == "native"


def test_forced_format_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps([{"name": "a", "description": "d", "parameters": PARAMS}]))
    assert read_catalog(path, format="bfcl").formats == ["bfcl"]
    assert read_catalog(path, format="openai").formats == ["openai"]
    with pytest.raises(InputError) as info:
        read_catalog(FIXTURES / "openai_tools.json", format="native")
    problems = "\n".join(info.value.problems)
    assert "tool #0: type: unknown field" in problems
    assert "tool #0: function: unknown field" in problems
    assert "tool #0: name: missing" in problems
