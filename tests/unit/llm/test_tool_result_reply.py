"""The tool-result role's request and reply: the output schema carried beside the shown tool, the result
schema, the strict reply schema, and the reply read at the boundary with errors naming the role and field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.llm import replies, structured
from utcgen.pipeline.llm.replies import ReplyError, parse_result, result_reply_schema
from utcgen.pipeline.llm.requests import ROLES, ToolResultRequest, parse_request

OUT = {"type": "object", "required": ["id", "lines"], "properties": {
    "id": {"type": "string"}, "total": {"type": "number"},
    "lines": {"type": "array", "items": {"type": "object", "required": ["sku"], "properties": {
        "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}}},
    "meta": {"type": "object"}}}
TOOL = Tool(name="get_order", description="Gets an order.", line_of_business="procurement", tags=["orders"],
            parameters={"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            output_schema=OUT)
PERSONA = Persona(id="p9", text="A buyer.", role="buyer", attributes={"tool_fit": "0.8", "city": "Oslo"})


def request(**fields: Any) -> ToolResultRequest:
    return ToolResultRequest(**{"tool": TOOL, "arguments": {"id": "ORD-1"}, "persona": PERSONA,
                                "goal": "Check order ORD-1.", **fields})


def test_the_request_carries_the_output_schema_beside_the_tool_as_prompts_show_it() -> None:
    req = request(seed=5)
    assert req.output_schema == OUT
    assert req.tool.output_schema is None and req.tool.tags == [] and req.tool.line_of_business is None
    assert req.persona.id == "" and "tool_fit" not in req.persona.attributes
    assert "tool_result" in ROLES
    again = parse_request(json.loads(req.model_dump_json()))
    assert again == req and isinstance(again, ToolResultRequest)
    assert request(output_schema={"type": "object"}).output_schema == {"type": "object"}  # given: kept


def test_a_request_with_an_unknown_error_kind_is_refused_naming_the_field() -> None:
    data = request().model_dump(mode="json") | {"error": "teapot"}
    with pytest.raises(ValueError, match=r"tool_result\.error: Input should be 'not_found'"):
        parse_request(data)


def test_the_result_schema_is_an_object_schema_or_wraps_a_value_of_another_kind() -> None:
    assert request().result_schema() == OUT
    assert request(output_schema=None).result_schema() is None
    listed = {"type": "array", "items": {"type": "string"}}
    assert request(output_schema=listed).result_schema() == {
        "type": "object", "properties": {"result": listed}, "required": ["result"]}
    assert request(output_schema={"properties": {"a": {}}}).result_schema() == {"properties": {"a": {}}}


def test_the_reply_schema_is_strict_where_strict_mode_can_hold_it() -> None:
    schema = result_reply_schema(OUT)
    assert schema is not None and structured.strict_problems(schema) == []
    assert schema["properties"]["meta"]["type"] == ["string", "null"]  # free-form and optional: JSON-encoded or null
    failed = result_reply_schema(OUT, "not_found")
    assert failed is not None and structured.strict_problems(failed) == []
    assert failed["properties"]["error"]["properties"]["type"]["enum"] == ["not_found"]
    assert result_reply_schema(None) is None
    assert result_reply_schema({"type": "object", "additionalProperties": {"type": "string"}}) is None


def test_a_result_is_read_back_as_its_schema_means_it() -> None:
    reply = json.dumps({"id": "ORD-1", "total": None, "lines": [{"sku": "A-1", "qty": None}], "meta": '{"src": "erp"}'})
    assert parse_result(f"```json\n{reply}\n```", schema=OUT) == {
        "id": "ORD-1", "lines": [{"sku": "A-1"}], "meta": {"src": "erp"}}  # absent as null left out, JSON decoded
    assert parse_result('{"anything": 1}') == {"anything": 1}  # no schema: any object


@pytest.mark.parametrize("text,error,problem", [
    ("I could not find it", None, "tool_result reply: no JSON object in the reply"),
    ('["ORD-1"]', None, "tool_result reply: expected a JSON object, got list"),
    ('{"lines": []}', None, "tool_result reply: result: 'id' is a required property"),
    ('{"id": "ORD-1", "lines": [{"sku": "A", "qty": 0}]}', None, "tool_result reply: lines.0.qty: 0 is less than"),
    ('{"error": {"type": "not_found", "message": "No order."}}', None, "tool_result reply: error: the call succeeds"),
    ('{"id": "ORD-1", "lines": []}', "not_found", "tool_result reply: error: Field required"),
    ('{"error": {"type": "rate_limited", "message": "Slow down."}}', "not_found",
     "tool_result reply: error.type: expected 'not_found', got 'rate_limited'"),
    ('{"error": {"type": "not_found", "message": "  "}}', "not_found", "tool_result reply: error.message: Value error"),
])
def test_an_unusable_reply_names_the_role_and_the_field(text: str, error: str | None, problem: str) -> None:
    with pytest.raises(ReplyError) as caught:
        parse_result(text, error, OUT)
    assert str(caught.value).startswith(problem), str(caught.value)


def test_an_error_reply_is_the_error_object() -> None:
    text = '{"error": {"type": "not_found", "message": "No order ORD-1.", "code": 404}}'
    assert parse_result(text, "not_found", OUT) == {"error": {"type": "not_found", "message": "No order ORD-1."}}
    assert "tool_result" not in replies.REPLIES  # the reply is the tool's own object: no fixed model
