"""Every catalog problem is reported with its file, tool and field, and all of them at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import CATALOGS
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.reader import load_catalog

FIXTURES = CATALOGS
OK_PARAMS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def tool(name: str = "search_orders", **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": "Search sales orders.", "parameters": OK_PARAMS, **fields}


def problems_of(path: Path, format: str | None = None) -> list[str]:
    with pytest.raises(InputError) as info:
        load_catalog(path, format=format)
    assert info.value.exit_code == 2
    return info.value.problems


def write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def one_problem(tmp_path: Path, *tools: Any, name: str = "x.json") -> str:
    problems = problems_of(write(tmp_path / name, list(tools)))
    assert len(problems) == 1, problems
    return problems[0]


# --------------------------------------------------------------------------- files


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert problems_of(missing) == [f"{missing}: no such file or directory"]


def test_unsupported_extension_and_empty_directory(tmp_path: Path) -> None:
    txt = write(tmp_path / "tools.txt", "[]")
    assert "unsupported file type '.txt'" in problems_of(txt)[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("nothing here")
    assert problems_of(empty) == [f"{empty}: no catalog files (.json, .jsonl, .yaml, .yml) in this directory"]


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "locked.json", [tool()])

    def denied(self: Path, *args: Any, **kwargs: Any) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", denied)
    assert problems_of(path) == [f"{path}: cannot read: Permission denied"]


def test_not_utf8_and_empty_file(tmp_path: Path) -> None:
    latin = tmp_path / "latin.json"
    latin.write_bytes('[{"name": "caf\xe9"}]'.encode("latin-1"))
    assert problems_of(latin) == [f"{latin}: not UTF-8 text (bad byte at offset 14)"]
    empty = write(tmp_path / "empty.yaml", "\n  \n")
    assert problems_of(empty) == [f"{empty}: file is empty"]


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '[\n  {"name": "a",\n   "description": "b"\n  \n')
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: invalid JSON at line 5")


def test_invalid_jsonl_names_each_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", "\n".join([
        json.dumps(tool("a")), "{'name': 'b'}", json.dumps(tool("c")), '{"name": "d",',
    ]))
    problems = problems_of(path)
    assert [p.split(",")[0] for p in problems] == [
        f"{path}: invalid JSON at line 2", f"{path}: invalid JSON at line 4",
    ]


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "- name: a\n  description: b\n  parameters:\n    type: object\n   properties: {}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: invalid YAML at line 5")


def test_unknown_format(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", {"servers": [], "info": {}})
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: format not recognised; tried:\n  openapi: no 'openapi'")
    assert problem.endswith("the top level is a mapping with keys servers, info")
    path = write(tmp_path / "swagger.yaml", "swagger: '2.0'\npaths: {}\n")
    assert "Swagger 2.0 is not supported" in problems_of(path)[0]


def test_unknown_forced_format(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", [tool()])
    assert problems_of(path, format="langchain") == [
        "unknown format 'langchain' (expected one of: native, openai, mcp, openapi, bfcl)"
    ]


def test_file_without_tools(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", {"tools": []})
    assert problems_of(path) == [f"{path}: contains no tools"]


# --------------------------------------------------------------------------- tools


def test_required_key_missing_from_properties_message_is_exact(tmp_path: Path) -> None:
    tools = [tool("a"), tool("b"), tool("c"), tool(
        "get_order",
        parameters={"type": "object", "properties": {"order_number": {"type": "string"}}, "required": ["order_id"]},
    )]
    path = write(tmp_path / "x.json", tools)
    assert problems_of(path) == [f"{path}: tool #3 'get_order': parameters.required: 'order_id' is not in properties"]


def test_non_object_items(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", [tool("a"), "search_orders", 42])
    assert problems_of(path) == [
        f"{path}: tool #1: expected a tool object, got a string",
        f"{path}: tool #2: expected a tool object, got a number",
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"name": None}, "tool #0: name: must be a string, got a null"),
        ({"name": "  "}, "tool #0: name: is empty"),
        ({"name": "order lookup/v2"}, "tool #0 'order lookup/v2': name: 'order lookup/v2' contains ' /': only letters"),
        ({"name": "x" * 65}, f"tool #0 '{'x' * 65}': name: is 65 characters long (at most 64)"),
        ({"description": ""}, "tool #0 'search_orders': description: is empty"),
        ({"description": 3}, "tool #0 'search_orders': description: must be a string, got a number"),
        ({"line_of_business": ["hr"]}, "tool #0 'search_orders': line_of_business: must be a string or null"),
        ({"tags": "orders"}, "tool #0 'search_orders': tags: must be a list of strings"),
        ({"owner": "sales"}, "tool #0 'search_orders': owner: unknown field (a tool has: name, description"),
    ],
)
def test_tool_field_problems(tmp_path: Path, fields: dict[str, Any], expected: str) -> None:
    path = tmp_path / "x.json"
    assert one_problem(tmp_path, tool(**fields)).startswith(f"{path}: {expected}")


def test_missing_name_and_description(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", [{"parameters": OK_PARAMS}])
    assert problems_of(path) == [f"{path}: tool #0: name: missing", f"{path}: tool #0: description: missing"]


def test_valid_name_characters_and_length(tmp_path: Path) -> None:
    names = ["crm.get-account_v2", "A" * 64]
    tools = load_catalog(write(tmp_path / "x.json", [tool(n) for n in names]))
    assert [t.name for t in tools] == names


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        (["q"], "parameters: must be a JSON Schema object, got a list"),
        ({"type": "array", "items": {"type": "string"}}, "parameters.type: must be 'object'"),
        ({"properties": {"q": {"type": "string"}}}, "parameters.type: must be 'object' (arguments are a JSON object); it is missing"),
        ({"type": "object", "properties": ["q"]}, "parameters.properties: must be a mapping of name to schema, got a list"),
        ({"type": "object", "properties": {"q": {"type": "string"}}, "required": "q"},
         "parameters.required: must be a list of property names, got a string"),
        ({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q", "q"]},
         "parameters.required: 'q' is listed twice"),
        ({"type": "object", "properties": {"q": {"type": "text"}}},
         "parameters.properties.q.type: unknown type 'text' (allowed: array, boolean, integer, null, number, object, string)"),
        ({"type": "object", "properties": {"q": {"type": ["string", "datetime"]}}},
         "parameters.properties.q.type: unknown type 'datetime'"),
        ({"type": "object", "properties": {"lines": {"type": "array", "items": {
            "type": "object", "properties": {"sku": {"type": "string"}}, "required": ["qty"]}}}},
         "parameters.properties.lines.items.required: 'qty' is not in properties"),
        ({"type": "object", "properties": {"n": {"type": "integer", "enum": [1, "2"]}}},
         "parameters.properties.n.enum: value '2' is not of the declared type integer"),
        ({"type": "object", "properties": {"n": {"type": "string", "enum": []}}},
         "parameters.properties.n.enum: is empty"),
        ({"type": "object", "properties": {"c": {"type": ["string", "null"], "const": 5}}},
         "parameters.properties.c.const: value 5 is not of the declared type string or null"),
        ({"type": "object", "properties": {"sku": {"type": "string", "pattern": "^[A-Z"}}},
         "parameters.properties.sku.pattern: '^[A-Z' does not compile: unterminated character set"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Address"}}},
         "parameters.properties.a.$ref: '#/$defs/Address' does not resolve within parameters"),
        ({"type": "object", "properties": {"a": {"$ref": "common.json#/Address"}}},
         "parameters.properties.a.$ref: 'common.json#/Address': only local references"),
        ({"type": "object", "properties": {"q": {"type": "string", "minLength": -1}}},
         "parameters.properties.q.minLength: invalid JSON Schema: -1 is less than the minimum of 0"),
        ({"type": "object", "properties": {"q": {"type": "array", "uniqueItems": "yes"}}},
         "parameters.properties.q.uniqueItems: invalid JSON Schema: 'yes' is not of type 'boolean'"),
    ],
)
def test_parameter_schema_problems(tmp_path: Path, parameters: Any, expected: str) -> None:
    path = tmp_path / "x.json"
    assert one_problem(tmp_path, tool(parameters=parameters)).startswith(
        f"{path}: tool #0 'search_orders': {expected}"
    )


def test_integer_enum_flags_each_wrong_value_but_accepts_whole_floats(tmp_path: Path) -> None:
    params = {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, "2", True, 3.0]}}}
    problems = problems_of(write(tmp_path / "x.json", [tool(parameters=params)]))
    assert [p.split(": value ")[1] for p in problems] == [
        "'2' is not of the declared type integer", "True is not of the declared type integer",
    ]


def test_valid_local_ref_and_nested_combinators_pass(tmp_path: Path) -> None:
    params = {
        "type": "object",
        "$defs": {"Money": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}},
        "properties": {
            "limit": {"$ref": "#/$defs/Money"},
            "contact": {"anyOf": [{"required": ["email"]}, {"required": ["phone"]}],
                        "properties": {"email": {"type": "string"}, "phone": {"type": "string"}}},
        },
        "required": ["limit"],
    }
    (loaded,) = load_catalog(write(tmp_path / "x.json", [tool(parameters=params)]))
    assert loaded.parameters == params


def test_yaml_property_names_must_be_strings(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", (
        "- name: toggle_alerts\n  description: Turn alerts on or off.\n  parameters:\n"
        "    type: object\n    properties:\n      on: {type: boolean}\n"
    ))
    (problem,) = problems_of(path)
    assert problem == (
        f"{path}: tool #0 'toggle_alerts': parameters.properties: property name True is not a string (quote it in YAML)"
    )


# --------------------------------------------------------------------------- formats name their own fields


def test_mcp_problems_name_input_schema(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", {"tools": [
        {"name": "lookup", "description": "Look up.", "inputSchema": {"type": "object", "required": ["id"]}},
        {"name": "no_schema", "description": "Nothing."},
    ]})
    assert problems_of(path) == [
        f"{path}: tool #0 'lookup': inputSchema.required: 'id' is not in properties",
        f"{path}: tool #1 'no_schema': inputSchema: missing",
    ]


def test_openai_problems_name_function_fields_and_jsonl_lines(tmp_path: Path) -> None:
    good = {"type": "function", "function": {"name": "ok", "description": "Fine."}}
    bad = {"type": "function", "function": {"name": "bad", "description": "",
                                            "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}}}
    web = {"type": "web_search"}
    path = write(tmp_path / "tools.jsonl", "\n".join(json.dumps(x) for x in (good, bad, web)) + "\n")
    assert problems_of(path) == [
        f"{path}: tool #1 'bad' (line 2): function.description: is empty",
        f"{path}: tool #1 'bad' (line 2): function.parameters.properties.x.type: unknown type 'float' "
        "(allowed: array, boolean, integer, null, number, object, string)",
        f"{path}: tool #2 (line 3): type: only 'function' tools can be imported, got 'web_search'",
        f"{path}: tool #2 (line 3): name: missing",
        f"{path}: tool #2 (line 3): description: missing",
    ]


def test_openapi_problems_name_the_operation(tmp_path: Path) -> None:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders": {
                "get": {"operationId": "listOrders", "summary": "List orders", "parameters": [
                    {"$ref": "#/components/parameters/Missing"}]},
                "post": {"operationId": "create order", "summary": "Create an order", "requestBody": {
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}},
            },
            "/orders/{id}": {"delete": {"operationId": "deleteOrder", "parameters": [
                {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        },
        "components": {"schemas": {"Order": {"type": "object", "properties": {
            "sku": {"type": "string", "pattern": "(unclosed"}}, "required": ["sku", "qty"]}}},
    }
    path = write(tmp_path / "orders.json", doc)
    problems = problems_of(path)
    assert problems[0] == (
        f"{path}: tool #0 'listOrders' (GET /orders): paths./orders.get.parameters[0]: "
        "$ref '#/components/parameters/Missing' does not resolve"
    )
    assert f"{path}: tool #1 'create order' (POST /orders): name: 'create order' contains ' '" in problems[1]
    # The body schema requires a field it never defines: kept, so it is reported.
    assert problems[2] == f"{path}: tool #1 'create order' (POST /orders): parameters.required: 'qty' is not in properties"
    assert problems[3].startswith(
        f"{path}: tool #1 'create order' (POST /orders): parameters.properties.sku.pattern: '(unclosed' does not compile"
    )
    assert problems[4] == f"{path}: tool #2 'deleteOrder' (DELETE /orders/{{id}}): description: is empty"
    assert len(problems) == 5


def test_openapi_type_clash_that_cannot_be_renamed(tmp_path: Path) -> None:
    """A path parameter and a body field disagreeing on type are kept as path_id and body_id,
    unless the body already has a field of that name: then nothing sensible is left."""
    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/items/{id}": {"put": {
        "operationId": "replaceItem", "summary": "Replace an item",
        "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"id": {"type": "integer"}, "body_id": {"type": "string"}}}}}},
    }}}}
    path = write(tmp_path / "items.json", doc)
    assert problems_of(path) == [
        f"{path}: tool #0 'replaceItem' (PUT /items/{{id}}): paths./items/{{id}}.put.requestBody.content."
        "application/json.schema.properties.id: the request body field 'id' disagrees on type with another "
        "argument of that name and cannot be renamed to 'body_id': that name is taken"
    ]


def test_openapi_unsupported_version(tmp_path: Path) -> None:
    path = write(tmp_path / "old.yaml", "openapi: 2.0\npaths: {}\n")
    assert problems_of(path) == [f"{path}: openapi: unsupported version 2.0 (expected 3.x)"]


# --------------------------------------------------------------------------- duplicates, all at once


def test_duplicate_names_within_and_across_files(tmp_path: Path) -> None:
    write(tmp_path / "a_finance.json", [tool("approve_invoice"), tool("get_balance")])
    write(tmp_path / "b_procurement.jsonl", "\n".join(json.dumps(t) for t in (tool("create_po"), tool("approve_invoice"))))
    write(tmp_path / "c_misc.yaml", "- name: create_po\n  description: Again.\n")
    a, b, c = (f"{tmp_path}/{n}" for n in ("a_finance.json", "b_procurement.jsonl", "c_misc.yaml"))
    assert problems_of(tmp_path) == [
        f"{b}: tool #1 'approve_invoice' (line 2): name: already used by {a}: tool #0 'approve_invoice'",
        f"{c}: tool #0 'create_po': name: already used by {b}: tool #0 'create_po' (line 1)",
    ]


def test_all_problems_across_files_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path / "01_bad_json.json", '[{"name": "x",}]')
    write(tmp_path / "02_tools.json", [
        tool("good_one"),
        {"name": "no desc", "parameters": {"type": "object", "properties": {"n": {"type": "text"}}, "required": ["m"]}},
        tool("good_two", parameters={"type": "object", "properties": {"d": {"type": "string", "pattern": "[", "enum": [1]}}}),
    ])
    write(tmp_path / "03_dup.yaml", "tools:\n  - name: good_one\n    description: Same name.\n    tags: [x]\n")
    problems = problems_of(tmp_path)
    bad_json, tools_file, dup = (f"{tmp_path}/{n}" for n in ("01_bad_json.json", "02_tools.json", "03_dup.yaml"))
    expected_starts = [
        f"{bad_json}: invalid JSON at line 1",
        f"{tools_file}: tool #1 'no desc': name: 'no desc' contains ' '",
        f"{tools_file}: tool #1 'no desc': description: missing",
        f"{tools_file}: tool #1 'no desc': parameters.required: 'm' is not in properties",
        f"{tools_file}: tool #1 'no desc': parameters.properties.n.type: unknown type 'text'",
        f"{tools_file}: tool #2 'good_two': parameters.properties.d.enum: value 1 is not of the declared type string",
        f"{tools_file}: tool #2 'good_two': parameters.properties.d.pattern: '[' does not compile",
        f"{dup}: tool #0 'good_one': name: already used by {tools_file}: tool #0 'good_one'",
    ]
    assert len(problems) == len(expected_starts), problems
    for problem, start in zip(problems, expected_starts):
        assert problem.startswith(start), (problem, start)


def test_broken_fixture_never_returns_a_partial_catalog() -> None:
    path = FIXTURES / "broken_catalog.json"
    problems = problems_of(path)
    assert len(problems) == 8
    assert problems[0] == f"{path}: tool #0 'get_order': parameters.required: 'order_id' is not in properties"
    assert problems[-1] == f"{path}: tool #3 'get_order': name: already used by {path}: tool #0 'get_order'"


def test_openai_unknown_keys_are_not_dropped_silently(tmp_path: Path) -> None:
    mcp_style = {"name": "lookup", "description": "Look up.", "inputSchema": OK_PARAMS}
    wrapped = {"type": "function", "function": {"name": "find", "description": "Find.", "args": OK_PARAMS}}
    path = write(tmp_path / "x.json", [mcp_style, wrapped])
    assert problems_of(path, format="openai") == [
        f"{path}: tool #0 'lookup': inputSchema: unknown field in an OpenAI function",
        f"{path}: tool #1 'find': function.args: unknown field in an OpenAI function",
    ]


SCHEMAS = [  # (parameters, passes the 2020-12 metaschema)
    ({"type": "object", "properties": {"a": {"type": "string", "description": "An id."}}, "required": ["a"]}, True),
    ({"type": "object", "properties": {"b": {"type": "string", "description": "Other."}}, "required": ["b"]}, True),
    ({"type": "object", "properties": {"a": {"type": "strin", "description": "An id."}}, "required": ["a"]}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]}, True),
    ({"type": "object", "properties": {"a": {"type": "string", "description": 3}}}, False),
    ({"type": "object", "description": ["not", "text"], "properties": {}}, False),
    ({"type": "object", "properties": {"description": {"type": "nope"}}}, False),
    ({"type": "object", "properties": {"properties": {"type": "object", "properties": {"x": {"minimum": "0"}}}}}, False),
    ({"type": "object", "properties": {"properties": {"type": "object", "properties": {"x": {"minimum": 0}}}}}, True),
    ({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "bad"}}}}, False),
    ({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}, True),
    ({"type": "object", "properties": {"code": {"type": "string", "pattern": "[unclosed"}}}, False),
    ({"type": "object", "properties": {"n": {"type": "number", "default": float("nan")}}}, True),
]


@pytest.mark.parametrize("order", ["as listed", "reversed"])
def test_the_metaschema_check_by_shape_agrees_with_the_full_check(order: str) -> None:
    """Catalog loading looks the metaschema's verdict up by the schema's shape (text blanked, names
    numbered); each schema, in either order and seen twice, gets the full check's verdict and messages."""
    from jsonschema import Draft202012Validator

    from utcgen.pipeline.ingest import checks

    full = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    checks._shape_check.cache_clear()
    cases = SCHEMAS if order == "as listed" else SCHEMAS[::-1]
    for _ in range(2):
        for params, valid in cases:
            assert full.is_valid(params) is valid, params
            errors = checks._metaschema_errors(params)
            assert (errors == []) is valid, params
            assert len(errors) == len(list(full.iter_errors(params))), params
    assert checks._shape_check.cache_info().hits > 0
