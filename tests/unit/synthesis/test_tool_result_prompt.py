"""The tool-result prompt, rendered from its request: every fact the offline backend reads is written in
it, and it asks for the result object, or for the error object of the kind the pipeline decided."""

from __future__ import annotations

import json
from typing import Any

import pytest

from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue.outcomes import ERROR_KINDS
from utcgen.pipeline.llm.requests import ToolResultRequest
from utcgen.pipeline.settings.templates import load_prompt
from utcgen.pipeline.synthesis.results import render_tool_result, result_request

TOOL = Tool(name="book_room", description="Books a meeting room in an office for a time slot.",
            parameters={"type": "object", "required": ["room_id", "start"], "properties": {
                "room_id": {"type": "string"}, "start": {"type": "string", "format": "date-time"},
                "attendees": {"type": "integer", "minimum": 1}}},
            output_schema={"type": "object", "required": ["booking_id"], "properties": {
                "booking_id": {"type": "string"}, "room_id": {"type": "string"},
                "state": {"type": "string", "enum": ["confirmed", "waitlisted"]}}})
PERSONA = Persona(id="p3", text="An office manager in Porto.", role="office manager", seniority="senior",
                  line_of_business="facilities_management", style="brisk",
                  attributes={"city": "Porto", "company": "Navalis"})


def request(**fields: Any) -> ToolResultRequest:
    return ToolResultRequest(**{"tool": TOOL, "persona": PERSONA, "goal": "I want room R-12 for Friday's review.",
                                "arguments": {"room_id": "R-12", "start": "2026-06-05T09:00:00Z", "attendees": 6},
                                "seed": 2, **fields})


def leaves(value: Any) -> list[Any]:
    """Every string and number of a request's facts (its role and sampling seed carry none)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() if k not in ("role", "seed") for leaf in leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in leaves(v)]
    return [] if isinstance(value, bool) or value in (None, "") else [value]


def text(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages)


@pytest.mark.parametrize("fields", [{}, {"output_schema": None}, *({"error": kind} for kind in ERROR_KINDS)],
                         ids=["schema", "no-schema", *ERROR_KINDS])
def test_every_fact_of_the_request_is_written_in_the_prompt(fields: dict[str, Any]) -> None:
    req = request(**fields)
    shown = text(render_tool_result(req))
    missing = [v for v in leaves(req.model_dump(mode="json"))
               if str(v) not in shown and str(v).replace("_", " ") not in shown
               and json.dumps(v, ensure_ascii=False)[1:-1] not in shown]
    assert not missing


def test_a_success_prompt_asks_for_the_result_object_that_follows_the_schema() -> None:
    system, user = render_tool_result(request())
    assert system["role"] == "system" and user["role"] == "user"
    assert "follows the result schema" in system["content"] and "exactly as given" in system["content"]
    assert json.dumps(TOOL.output_schema) in user["content"] and "error" not in system["content"]
    assert user["content"].rstrip().endswith("Reply with the result object.")
    bare = text(render_tool_result(request(output_schema=None)))
    assert "documents no result schema" in bare and "(none documented)" in bare


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_an_error_prompt_asks_for_that_kinds_error_object(kind: str) -> None:
    system, user = render_tool_result(request(error=kind))
    assert f'{{"error": {{"type": "{kind}", "message":' in system["content"]
    assert "follows the result schema" not in system["content"]
    assert user["content"].rstrip().endswith(f"Reply with the {kind} error object.")
    others = [render_tool_result(request(error=k))[0]["content"] for k in ERROR_KINDS if k != kind]
    assert all(other != system["content"] for other in others)  # each kind says what its message holds


def test_the_pipeline_decides_the_error_before_the_role_is_asked() -> None:
    kinds = {result_request(TOOL, {}, PERSONA, "g", run_seed=1, job=j, call=0, error_share=0.5).error
             for j in range(60)}
    assert None in kinds and len(kinds) > 2
    assert result_request(TOOL, {}, PERSONA, "g", run_seed=1, job=0, call=0, error_share=0.0).error is None


def test_the_prompt_is_versioned() -> None:
    assert dict(load_prompt("tool_result").versions) == {"tool_result": "tool_result/2"}
