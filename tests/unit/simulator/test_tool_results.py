"""The offline tool backend: a result that follows the output schema and echoes the call's arguments, a
small plausible object without a schema, an API's error object on request, the same reply for the same request."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from utcgen.pipeline import simulator as offline
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue.outcomes import ERROR_KINDS
from utcgen.pipeline.llm.requests import ToolResultRequest

PERSONA = Persona(id="p1", text="A support lead at a logistics firm in Lyon.", role="support lead",
                  attributes={"city": "Lyon", "country": "FR", "company": "Transalp"})
COMMENT = {"type": "object", "required": ["id", "author"], "properties": {
    "id": {"type": "integer", "minimum": 1}, "author": {"type": "string"}, "body": {"type": "string"},
    "posted": {"type": "string", "format": "date-time"}}}
TICKET_OUT = {
    "type": "object", "required": ["ticket_id", "status", "comments"],
    "properties": {
        "ticket_id": {"type": "string"}, "status": {"type": "string", "enum": ["open", "pending", "closed"]},
        "priority": {"type": "integer", "minimum": 1, "maximum": 4}, "due": {"type": "string", "format": "date"},
        "created_at": {"type": "string", "format": "date-time"}, "url": {"type": "string", "format": "uri"},
        "assignee_email": {"type": "string", "format": "email"}, "escalated": {"type": "boolean"},
        "comments": {"type": "array", "minItems": 1, "maxItems": 3, "items": COMMENT},
        "customer": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "city": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}},
        "score": {"type": ["number", "null"]},
    },
    "additionalProperties": False,
}
TICKET = Tool(name="get_ticket", description="Fetches a support ticket by its id, with its status, assignee and "
              "the customer's shipping address.",
              parameters={"type": "object", "required": ["ticket_id"], "properties": {
                  "ticket_id": {"type": "string"}, "priority": {"type": "integer", "minimum": 1, "maximum": 4},
                  "channel": {"type": "string", "enum": ["email", "phone"]}}},
              output_schema=TICKET_OUT)
ARGS = {"ticket_id": "TCK-48213", "priority": 2, "channel": "email"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "ticket": TICKET_OUT,
    "list": {"type": "array", "items": {"type": "object", "properties": {"ticket_id": {"type": "string"},
                                                                          "title": {"type": "string"}}}},
    "all_of": {"allOf": [{"type": "object", "properties": {"ticket_id": {"type": "string"}}, "required": ["ticket_id"]},
                         {"type": "object", "properties": {"state": {"oneOf": [{"type": "null"},
                                                                              {"type": "string", "enum": ["a", "b"]}]}}}]},
    "map": {"type": "object", "additionalProperties": {"type": "integer"}},
    "count": {"type": "integer", "minimum": 0},
}


def request(tool: Tool = TICKET, arguments: dict[str, Any] | None = None, **fields: Any) -> ToolResultRequest:
    return ToolResultRequest(tool=tool, arguments=ARGS if arguments is None else arguments, persona=PERSONA,
                             goal="I need to see where ticket TCK-48213 stands before my call.", **fields)


def result(req: ToolResultRequest) -> dict[str, Any]:
    out = json.loads(offline.respond(req, []))
    assert isinstance(out, dict)
    return out


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.mark.parametrize("name", list(SCHEMAS))
@pytest.mark.parametrize("seed", range(12))
def test_a_result_follows_its_output_schema(name: str, seed: int) -> None:
    req = request(TICKET.model_copy(update={"output_schema": SCHEMAS[name]}), seed=seed)
    schema = req.result_schema()
    assert schema is not None
    out = result(req)
    problems = [f"{list(e.path)}: {e.message}" for e in validator(schema).iter_errors(out)]
    assert not problems, (out, problems)
    if name in ("list", "count"):  # a value that is not an object is the result object's `result`
        assert set(out) == {"result"} and validator(SCHEMAS[name]).is_valid(out["result"])


def test_every_property_is_filled_lists_hold_one_to_three_and_formats_are_real() -> None:
    lengths = set()
    for seed in range(30):
        out = result(request(seed=seed))
        assert set(out) == set(TICKET_OUT["properties"])  # optional fields too, as an API returns them
        lengths.add(len(out["comments"]))
        assert out["url"].startswith("https://") and "@" in out["assignee_email"]
        assert out["due"][:2] == "20" and out["created_at"].endswith("Z")
        assert all(isinstance(c["id"], int) and c["id"] >= 1 for c in out["comments"])
    assert lengths <= {1, 2, 3} and len(lengths) > 1


def test_the_arguments_come_back_in_the_fields_of_their_name() -> None:
    for seed in range(10):
        out = result(request(seed=seed))
        assert out["ticket_id"] == "TCK-48213" and out["priority"] == 2
    # camelCase and snake_case name the same field; a value the field does not allow is not forced into it
    camel = TICKET.model_copy(update={"output_schema": {"type": "object", "properties": {
        "ticketId": {"type": "string"}, "priority": {"type": "string", "format": "date"}}}})
    out = result(request(camel))
    assert out["ticketId"] == "TCK-48213" and out["priority"] != 2


def test_the_same_request_gets_the_same_result_and_another_seed_another() -> None:
    assert offline.respond(request(seed=4), []) == offline.respond(request(seed=4), [{"role": "user", "content": "x"}])
    assert len({offline.respond(request(seed=s), []) for s in range(6)}) > 1


def test_without_an_output_schema_a_small_object_from_the_description_and_arguments() -> None:
    plain = TICKET.model_copy(update={"output_schema": None})
    out = result(request(plain, {"ticket_id": "TCK-1"}))
    assert out["status"] == "ok" and out["ticket_id"] == "TCK-1" and "id" not in out  # one id for one ticket
    assert "shipping_address" not in out and set(out) <= {"status", "ticket_id"}  # no field nothing describes
    shipments = TICKET.model_copy(update={"output_schema": None, "description": "Counts the open shipments and parcels."})
    counted = result(request(shipments, {"ticket_id": "TCK-1"}))
    assert {k: type(v) for k, v in counted.items() if k not in ("status", "ticket_id")} == {"open_shipments": int, "parcels": int}
    create = Tool(name="create_invoice", description="Creates an invoice for a customer account with a due date.",
                  parameters={"type": "object", "properties": {"account": {"type": "string"}}})
    made = result(request(create, {"account": "ACME"}))
    assert made["status"] == "created" and made["account"] == "ACME" and made["id"].startswith("INV-")


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_an_error_request_gets_that_kinds_error_object(kind: str) -> None:
    out = result(request(error=kind))
    assert set(out) == {"error"} and out["error"]["type"] == kind
    message = out["error"]["message"]
    assert message.strip() and message[-1] in ".!"
    if kind == "not_found":
        assert "ticket_id" in message and "TCK-48213" in message
    if kind == "invalid_value":  # every argument keeps its schema's rules: no rule is said broken
        assert "ticket_id" in message and not re.search(r"range|one of|format", message)
    if kind == "rate_limited":
        assert "seconds" in message


def test_an_invalid_value_names_an_enum_and_an_unconstrained_argument_by_its_words() -> None:
    only_channel = result(request(arguments={"channel": "fax"}, error="invalid_value"))["error"]["message"]
    assert "channel" in only_channel and "email, phone" in only_channel
    free = result(request(arguments={"ticket_id": "X"}, error="invalid_value"))["error"]["message"]
    assert "ticket_id" in free and "'X'" in free and "valid ticket" not in free  # well formed: refused for another reason
    out_of_range = result(request(arguments={"priority": 9}, error="invalid_value"))["error"]["message"]
    assert "priority" in out_of_range and "range" in out_of_range
    assert result(request(arguments={}, error="not_found"))["error"]["message"] == "The requested ticket was not found."


def test_a_bare_id_is_read_as_the_id_of_what_the_tool_works_on() -> None:
    pets = Tool(name="listPets", description="Lists the pets of the clinic.", output_schema={
        "type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}})
    for seed in range(5):
        out = result(request(pets, {}, seed=seed))
        assert out["result"] and all(item["id"].startswith("PET-") for item in out["result"])
