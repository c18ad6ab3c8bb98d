"""Validator cascade: each rule validator on crafted good and bad dialogues (every rule code
reached), value normalisation and exact matching, grounding of gold values, the LLM judges
through a real Gateway on the offline backend (against a scripted server: tests/integration/test_judges_http.py),
the offline judges' heuristics, and the cascade's order, short-circuit and concurrency."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.support.factories import make_dialogue, make_distractors, make_tool
from tests.support.paths import REPO
from utcgen.pipeline.core.records import Dialogue, Message, ToolCall, Usage, Verdict
from utcgen.pipeline.dialogue import arguments as values
from utcgen.pipeline.dialogue.mentions import mentioned
from utcgen.pipeline.llm.gateway import Gateway, LLMError, LLMReply
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.llm.requests import CriticRequest, RelevancyRequest, parse_request
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.simulator import judges
from utcgen.validators import cascade
from utcgen.validators import format as format_mod
from utcgen.validators import toolargs as toolargs_mod
from utcgen.validators import toolcall as toolcall_mod
from utcgen.validators.cascade import STAGES, accepted, first_failure, run_cascade
from utcgen.validators.critique import check_critique
from utcgen.validators.critique import render as render_critique
from utcgen.validators.format import check_format
from utcgen.validators.judge import parse_reply
from utcgen.validators.relevancy import check_relevancy
from utcgen.validators.relevancy import render as render_relevancy
from utcgen.validators.toolargs import check_toolargs
from utcgen.validators.toolcall import check_toolcall

# ---------------------------------------------------------------------------------------- helpers


def rule_codes(module: Any) -> set[str]:
    """The rule codes a validator module documents ("Rule codes...: a, b, c.")."""
    doc = " ".join((module.__doc__ or "").split())
    match = re.search(r"Rule codes[^:]*:\s*([a-z_, ]+)\.", doc)
    assert match, f"{module.__name__} documents no rule codes"
    return {c.strip() for c in match.group(1).split(",")}


def with_messages(d: Dialogue, messages: list[Message]) -> Dialogue:
    return d.model_copy(update={"messages": messages})


def edit(d: Dialogue, index: int, **fields: Any) -> Dialogue:
    """`d` with message `index` changed (model_copy: no validation, so broken values stay broken)."""
    msgs = list(d.messages)
    msgs[index] = msgs[index].model_copy(update=fields)
    return with_messages(d, msgs)


def final_args(d: Dialogue, arguments: Any) -> Dialogue:
    call = d.messages[-1].tool_calls[-1].model_copy(update={"arguments": arguments})
    return edit(d, -1, tool_calls=[call])


def say(d: Dialogue, index: int, text: str) -> Dialogue:
    return edit(d, index, content=text)


GOOD = make_dialogue()  # U A U A U A: two tool-selection questions, one argument-filling call
SEED = GOOD.seed_tool.name
DISTRACTOR = GOOD.distractor_tools[0].name


def ask(phase: str, text: str = "Which one do you mean?") -> Message:
    return Message(role="assistant", content=text, thought="Need to ask.", phase=phase)


# ------------------------------------------------------------------------------------------ format


def test_format_accepts_factory_dialogues() -> None:
    for d in (GOOD, make_dialogue(argument_filling_turns=3), make_dialogue(tool_selection_turns=1)):
        v = check_format(d)
        assert v.passed, v.reason
        assert v.validator == "format"
        assert v.details["checked_turns"] == len(d.assistant_turns)


FORMAT_CASES = [
    ("empty", lambda d: with_messages(d, []), "dialogue has no messages"),
    ("first_not_user", lambda d: with_messages(d, d.messages[1:]), "first message is from assistant, expected user"),
    ("alternation", lambda d: with_messages(d, d.messages[:2] + [Message(role="user", content="hello?")] + d.messages[2:]),
     "message 4 is from user, expected assistant"),
    ("alternation", lambda d: with_messages(d, d.messages[:2] + [Message(role="system", content="x")] + d.messages[3:]),
     "message 3 is from system, expected user"),
    ("last_not_assistant", lambda d: with_messages(d, d.messages + [Message(role="user", content="thanks")]),
     "last message is from user, expected assistant"),
    ("user_empty", lambda d: say(d, 2, "   "), "user turn 2 (message 3) is empty"),
    ("user_tool_calls", lambda d: edit(d, 0, tool_calls=[ToolCall(name=SEED)]), "user turn 1 (message 1) carries tool calls"),
    ("parse_error", lambda d: edit(d, 3, parse_error="Expecting value: line 1 column 1"),
     "assistant turn 2 (message 4) could not be parsed: Expecting value"),
    ("no_thought", lambda d: edit(d, 3, thought=None), "assistant turn 2 (message 4) has no thought"),
    ("no_thought", lambda d: edit(d, 1, thought="  \n"), "assistant turn 1 (message 2) has no thought"),
    ("no_reply", lambda d: edit(d, 1, content=""), "assistant turn 1 (message 2) has neither content nor a tool call"),
    ("no_phase", lambda d: edit(d, 5, phase=None), "assistant turn 3 (message 6) has no phase"),
    ("phase_order", lambda d: edit(make_dialogue(argument_filling_turns=2), 7, phase="tool_selection"),
     "assistant turn 4 (message 8) is in tool_selection after argument_filling began at assistant turn 3"),
    ("call_name", lambda d: edit(d, 5, tool_calls=[ToolCall(name=" ", arguments={})]), "calls a tool with an empty name"),
    ("call_arguments", lambda d: edit(d, 5, tool_calls=[ToolCall.model_construct(name=SEED, arguments=["DE01"])]),
     f"assistant turn 3 (message 6) calls '{SEED}' with list arguments, expected an object"),
    ("multiple_calls", lambda d: edit(d, 5, tool_calls=d.messages[5].tool_calls * 2),
     "assistant turn 3 (message 6) makes 2 tool calls; at most one is allowed"),
]


@pytest.mark.parametrize("rule,mutate,reason", FORMAT_CASES, ids=[c[0] for c in FORMAT_CASES])
def test_format_rejects(rule: str, mutate: Any, reason: str) -> None:
    v = check_format(mutate(GOOD))
    assert not v.passed
    assert v.details["rule"] == rule
    assert reason in v.reason
    assert v.details["problems"][0] == {"rule": rule, "message": v.reason}


def test_format_cases_reach_every_documented_rule() -> None:
    assert {c[0] for c in FORMAT_CASES} == rule_codes(format_mod)


def test_format_lists_every_problem_not_only_the_first() -> None:
    d = edit(edit(GOOD, 1, thought=None), 3, phase=None)
    rules = [p["rule"] for p in check_format(d).details["problems"]]
    assert rules == ["no_thought", "no_phase"]


def test_format_allows_empty_content_on_a_calling_turn() -> None:
    assert check_format(edit(GOOD, 5, content="")).passed


# ---------------------------------------------------------------------------------------- toolcall


def test_toolcall_accepts_factory_dialogue_and_earlier_seed_calls() -> None:
    assert check_toolcall(GOOD).passed
    premature = edit(make_dialogue(argument_filling_turns=2), 5,
                     tool_calls=[ToolCall(name=SEED, arguments={"material_id": "MAT-10442"})])
    v = check_toolcall(premature)
    assert v.passed, v.reason
    assert v.details["final_call"] == SEED


TOOLCALL_CASES = [
    ("no_final_call", lambda d: edit(d, 5, tool_calls=[]), "the dialogue does not end with a tool call"),
    ("wrong_tool", lambda d: edit(d, 5, tool_calls=[ToolCall(name=DISTRACTOR, arguments={"document_id": "PR-1"})]),
     f"final call is to distractor '{DISTRACTOR}', expected seed tool '{SEED}'"),
    ("wrong_tool", lambda d: edit(d, 5, tool_calls=[ToolCall(name="send_email", arguments={})]),
     f"final call is to tool 'send_email', expected seed tool '{SEED}'"),
    ("not_candidate", lambda d: d.model_copy(update={"candidate_tools": d.distractor_tools}),
     f"seed tool '{SEED}' is not among the candidate tools"),
    ("earlier_distractor", lambda d: edit(d, 1, tool_calls=[ToolCall(name=DISTRACTOR, arguments={})]),
     f"assistant turn 1 called distractor '{DISTRACTOR}'"),
    ("earlier_unknown", lambda d: edit(d, 3, tool_calls=[ToolCall(name="lookup_vendor", arguments={})]),
     "assistant turn 2 called unknown tool 'lookup_vendor'"),
]


@pytest.mark.parametrize("rule,mutate,reason", TOOLCALL_CASES, ids=[c[0] for c in TOOLCALL_CASES])
def test_toolcall_rejects(rule: str, mutate: Any, reason: str) -> None:
    v = check_toolcall(mutate(GOOD))
    assert not v.passed
    assert v.details["rule"] == rule
    assert v.reason == reason


def test_toolcall_cases_reach_every_documented_rule() -> None:
    assert {c[0] for c in TOOLCALL_CASES} == rule_codes(toolcall_mod)


def test_toolcall_distractor_called_then_corrected_still_fails() -> None:
    d = edit(GOOD, 3, tool_calls=[ToolCall(name=DISTRACTOR, arguments={})])
    v = check_toolcall(d)
    assert not v.passed and DISTRACTOR in v.reason and v.details["final_call"] == SEED


# ---------------------------------------------------------------------------------------- toolargs


DATE_TOOL = make_tool(
    name="book_meeting_room",
    description="Book a meeting room for a date.",
    properties={
        "room_id": {"type": "string", "pattern": "^RM-[0-9]{3}$"},
        "date": {"type": "string", "format": "date"},
        "attendees": {"type": "integer", "minimum": 1},
        "catering": {"type": "boolean"},
        "layout": {"type": "string", "enum": ["boardroom", "u_shape", "theatre"]},
        "organiser_email": {"type": "string", "format": "email"},
    },
)
DATE_GOLD = {"room_id": "RM-204", "date": "2026-03-04", "attendees": 12, "catering": True,
             "layout": "u_shape", "organiser_email": "ana.silva@example.com"}


def date_dialogue(**overrides: Any) -> Dialogue:
    d = make_dialogue(seed_tool=DATE_TOOL, gold_arguments=DATE_GOLD, argument_filling_turns=2)
    return d.model_copy(update=overrides)


def test_toolargs_accepts_exact_grounded_arguments() -> None:
    v = check_toolargs(GOOD)
    assert v.passed, v.reason
    assert v.details["mentions"] == {"material_id": "found", "quantity": "found", "plant_code": "found"}


def test_toolargs_reports_unverifiable_values_without_failing() -> None:
    d = date_dialogue()
    # The factory says "catering is True" and "layout is u_shape"; make the user speak naturally.
    user_idx = [i for i, m in enumerate(d.messages) if m.role == "user"]
    text = ("The room id is RM-204, the date is 4 March 2026, we are twelve people, "
            "and yes we want food. Seats in a U layout please, organiser ana.silva@example.com.")
    d = say(d, user_idx[-1], text)
    d = say(d, user_idx[-2], "Just the room, please.")
    v = check_toolargs(d)
    assert v.passed, v.reason
    assert v.details["unverified"] == ["catering", "layout"]
    assert v.details["mentions"]["date"] == "found"
    assert v.details["mentions"]["attendees"] == "found"


def test_toolargs_gold_typed_loosely_still_matches_a_typed_call() -> None:
    d = make_dialogue(gold_arguments={"material_id": "MAT-10442", "quantity": "250", "plant_code": "DE01"})
    d = final_args(d, {"material_id": "MAT-10442", "quantity": 250, "plant_code": " DE01"})
    v = check_toolargs(d)
    assert v.passed, v.reason


TOOLARGS_CASES = [
    ("no_call", lambda d: edit(d, 5, tool_calls=[]), "no final tool call with an argument object to check"),
    ("missing_key", lambda d: final_args(d, {"material_id": "MAT-10442", "quantity": 250}), "missing argument 'plant_code'"),
    ("missing_key", lambda d: final_args(d.model_copy(update={"gold_arguments": {"material_id": "MAT-10442", "quantity": 250}}),
                                         {"material_id": "MAT-10442", "quantity": 250}), "missing argument 'plant_code'"),
    ("extra_key", lambda d: final_args(d, {**d.gold_arguments, "priority": "high"}), "unexpected argument 'priority'"),
    ("value_mismatch", lambda d: final_args(d, {**d.gold_arguments, "quantity": 25}), "argument 'quantity' is 25, expected 250"),
    ("value_mismatch", lambda d: final_args(d, {**d.gold_arguments, "plant_code": "de01"}), "argument 'plant_code' is 'de01'"),
    ("schema", lambda d: final_args(d, {**d.gold_arguments, "quantity": "250"}),
     "arguments fail the tool schema: quantity: '250' is not of type 'integer'"),
    ("hallucinated", lambda d: say(d, 4, "The material id is MAT-10442, quantity is 250."), "hallucinated value for 'plant_code'"),
]


@pytest.mark.parametrize("rule,mutate,reason", TOOLARGS_CASES, ids=[c[0] for c in TOOLARGS_CASES])
def test_toolargs_rejects(rule: str, mutate: Any, reason: str) -> None:
    v = check_toolargs(mutate(GOOD))
    assert not v.passed
    assert v.details["rule"] == rule
    assert reason in v.reason


def test_toolargs_cases_reach_every_documented_rule() -> None:
    assert {c[0] for c in TOOLARGS_CASES} == rule_codes(toolargs_mod)


@pytest.mark.parametrize(
    "field,bad,error",
    [
        ("date", "2026-02-30", "is not a 'date'"),
        ("organiser_email", "ana.silva.example.com", "is not a 'email'"),
        ("room_id", "RM-2040", "does not match"),
        ("attendees", 0, "less than the minimum"),
        ("layout", "circle", "is not one of"),
    ],
)
def test_toolargs_schema_checks_formats_patterns_and_bounds(field: str, bad: Any, error: str) -> None:
    d = date_dialogue(gold_arguments={**DATE_GOLD, field: bad})
    d = final_args(d, {**DATE_GOLD, field: bad})
    v = check_toolargs(d)
    assert not v.passed
    assert any(error in e and e.startswith(field) for e in v.details["schema_errors"]), v.details["schema_errors"]


# ------------------------------------------------------------------------------- values: normalise


NORMALISE_CASES: list[tuple[Any, dict, Any]] = [
    ("42", {"type": "integer"}, 42),
    (" 42 ", {"type": "integer"}, 42),
    (42.0, {"type": "integer"}, 42),
    ("42.0", {"type": "integer"}, 42),
    (4.5, {"type": "integer"}, 4.5),
    (True, {"type": "integer"}, True),
    (1, {"type": "number"}, 1.0),
    ("1.50", {"type": "number"}, 1.5),
    ("true", {"type": "boolean"}, True),
    (" FALSE ", {"type": "boolean"}, False),
    ("yes", {"type": "boolean"}, "yes"),
    (" MAT-1 ", {"type": "string"}, "MAT-1"),
    (437292, {"type": "string"}, "437292"),
    ("2026-03-04", {"type": "string", "format": "date"}, "2026-03-04"),
    ("20260304", {"type": "string", "format": "date"}, "2026-03-04"),
    (dt.date(2026, 3, 4), {"type": "string", "format": "date"}, "2026-03-04"),
    ("04/03/2026", {"type": "string", "format": "date"}, "04/03/2026"),
    ("2026-03-04T10:00:00+02:00", {"type": "string", "format": "date-time"}, "2026-03-04T08:00:00+00:00"),
    ("2026-03-04T08:00:00Z", {"type": "string", "format": "date-time"}, "2026-03-04T08:00:00+00:00"),
    ("Ana@Example.COM", {"type": "string", "format": "email"}, "Ana@example.com"),
    # an enum member is read in the enum's own spelling when case-folding keeps members apart
    (" team", {"type": "string", "enum": ["team", "department"]}, "team"),
    ("eur", {"type": "string", "enum": ["EUR", "USD"]}, "EUR"),
    ("TEAM", {"type": "string", "enum": ["team", "Team"]}, "TEAM"),
    ("GBP", {"type": "string", "enum": ["EUR", "USD"]}, "GBP"),
    ("2", {"type": "integer", "enum": [1, 2]}, 2),
    (2.0, {"enum": [1, 2]}, 2),
    (["1", 2.0], {"type": "array", "items": {"type": "integer"}}, [1, 2]),
    ({"qty": "3"}, {"type": "object", "properties": {"qty": {"type": "integer"}}}, {"qty": 3}),
    ("42", {"type": ["string", "integer"]}, "42"),
    (" x ", None, "x"),
]


@pytest.mark.parametrize("value,schema,expected", NORMALISE_CASES)
def test_normalise(value: Any, schema: dict | None, expected: Any) -> None:
    got = values.normalise(value, schema)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    "a,b,schema,same",
    [
        ("5", 5, {"type": "integer"}, True),
        (1.0, 1, {"type": "number"}, True),
        ("true", True, {"type": "boolean"}, True),
        (True, 1, {"type": "integer"}, False),
        (True, 1, None, False),
        ("abc", "ABC", {"type": "string"}, False),
        ("abc ", "abc", {"type": "string"}, True),
        ("Team", "team", {"type": "string", "enum": ["team", "Team"]}, False),
        ("EUR", "eur", {"type": "string", "enum": ["EUR", "USD"]}, True),
        ("EUR", "usd", {"type": "string", "enum": ["EUR", "USD"]}, False),
        ("5", "5.0", {"type": "string"}, False),  # text stays text: "1.10" is not version "1.1"
        ("5", 5.0, {"type": "string"}, True),  # a JSON number for a string is its text
        ("5", "5.0", {"type": "number"}, True),
        ("2026-03-04", "20260304", {"type": "string", "format": "date"}, True),
        ("2026-03-04", "2026-03-05", {"type": "string", "format": "date"}, False),
        ("2026-03-04", "2026-3-4", {"type": "string", "format": "date"}, False),
        (["a", "b"], ["b", "a"], {"type": "array", "items": {"type": "string"}}, False),
        (["1", "2"], [1, 2], {"type": "array", "items": {"type": "integer"}}, True),
        ("42", 42, {"type": ["string", "integer"]}, False),
        (None, None, {"type": ["string", "null"]}, True),
    ],
)
def test_equal(a: Any, b: Any, schema: dict | None, same: bool) -> None:
    assert values.equal(a, b, schema) is same
    assert values.equal(b, a, schema) is same


TOOL = make_tool()
GOLD = {"material_id": "MAT-10442", "quantity": 5, "plant_code": "DE01"}


@pytest.mark.parametrize(
    "call,gold,tool,match",
    [
        (dict(GOLD), GOLD, TOOL, True),
        ({"material_id": "MAT-10442", "quantity": 5}, GOLD, TOOL, False),  # missing key
        ({**GOLD, "note": "asap"}, GOLD, TOOL, False),  # extra key
        ({**GOLD, "note": None}, GOLD, TOOL, False),  # an extra key is extra even when null
        ({**GOLD, "quantity": "5"}, GOLD, TOOL, True),  # "5" vs 5 for an integer
        ({**GOLD, "quantity": 5.0}, GOLD, TOOL, True),
        ({**GOLD, "quantity": "5 units"}, GOLD, TOOL, False),
        ({**GOLD, "quantity": True}, {**GOLD, "quantity": 1}, TOOL, False),
        ({**GOLD, "plant_code": "DE02"}, GOLD, TOOL, False),
        ({"d": "2026-03-05"}, {"d": "2026-03-04"}, make_tool(properties={"d": {"type": "string", "format": "date"}}), False),
        ({"d": "2026-03-04"}, {"d": "2026-03-04"}, make_tool(properties={"d": {"type": "string", "format": "date"}}), True),
        ({}, {}, make_tool(name="list_my_requisitions", properties={}), True),  # zero-parameter tool
        ({"material_id": "MAT-10442", "quantity": 5}, {"material_id": "MAT-10442", "quantity": 5}, TOOL, False),
    ],
)
def test_diff_arguments_is_empty_only_for_the_exact_gold_map(call: dict, gold: dict, tool: Any, match: bool) -> None:
    assert values.diff_arguments(call, gold, tool).empty is match


def test_diff_arguments_requires_required_keys_even_if_gold_lacks_them() -> None:
    diff = values.diff_arguments({"material_id": "MAT-10442", "quantity": 5}, {"material_id": "MAT-10442", "quantity": 5}, TOOL)
    assert diff.missing == ["plant_code"] and not diff.extra and not diff.mismatched


def test_schema_errors_on_valid_invalid_and_broken_schemas() -> None:
    assert values.schema_errors(GOLD, TOOL) == []
    assert sorted(values.schema_errors({"material_id": "MAT-1"}, TOOL)) == [
        "'plant_code' is a required property",
        "'quantity' is a required property",
    ]
    dt_tool = make_tool(properties={"at": {"type": "string", "format": "date-time"}})
    assert values.schema_errors({"at": "2026-03-04T08:00:00Z"}, dt_tool) == []
    assert values.schema_errors({"at": "2026-03-04 8am"}, dt_tool)
    broken = make_tool(properties={"x": {"type": "strnig"}})
    assert values.schema_errors({"x": "a"}, broken)[0].startswith("the tool's parameter schema is invalid")


# ------------------------------------------------------------------------------- values: mentioned


STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
DATE = {"type": "string", "format": "date"}
DATETIME = {"type": "string", "format": "date-time"}
ENUM = {"type": "string", "enum": ["single_user", "team", "enterprise"]}


@pytest.mark.parametrize(
    "value,schema,text,expected",
    [
        ("MAT-10442", STR, "the material is mat-10442", "found"),
        ("MAT-10442", STR, "material MAT 10442 please", "found"),
        ("MAT-10442", STR, "material MAT-10443", "absent"),
        ("DE01", STR, "the plant is in Germany", "absent"),
        ("Laptop does not boot after the update", STR, "my laptop won't boot since the last update", "unverifiable"),
        ("Quarterly planning offsite", STR, "it's for a team dinner", "absent"),
        (250, INT, "we need 250 units", "found"),
        (250, INT, "we need 2500 units", "absent"),
        (1, INT, "plant DE01, material MAT-10442", "absent"),  # digits inside identifiers do not count
        ("250", INT, "send 250", "found"),
        (1250.5, NUM, "about €1,250.50 in total", "found"),
        (12.5, NUM, "12,5 kg", "found"),
        (12, INT, "a dozen boxes", "found"),
        (-36932, INT, "the quantity delta is -36932.", "found"),
        (-40, INT, "reduce the stock by 40", "unverifiable"),
        (-10442, INT, "material MAT-10442", "unverifiable"),  # the hyphen of an identifier is no sign
        (40, INT, "it went down by -40", "absent"),
        (3, INT, "three boxes", "found"),
        ("2026-03-04", DATE, "on 2026-03-04", "found"),
        ("2026-03-04", DATE, "on 4 March 2026", "found"),
        ("2026-03-04", DATE, "on March 4th, 2026", "found"),
        ("2026-03-04", DATE, "on 04/03/2026", "found"),
        ("2026-03-04", DATE, "on 2026-03-05", "absent"),
        ("2026-03-04", DATE, "next Wednesday works", "unverifiable"),
        ("2026-03-04T09:45:00Z", DATETIME, "start is 2026-03-04T09:45:00Z", "found"),
        ("2026-03-04T09:45:00Z", DATETIME, "4 March 2026 at quarter to ten", "found"),
        ("2026-03-04T09:45:00Z", DATETIME, "at 09:45 on 2026-04-04", "absent"),
        (True, {"type": "boolean"}, "yes please", "unverifiable"),
        ("single_user", ENUM, "just a single user is affected", "found"),
        ("enterprise", ENUM, "everyone in the company", "unverifiable"),
        (["CI00000001", "CI00000002"], {"type": "array", "items": STR}, "CI00000001 and CI00000002", "found"),
        (["CI00000001", "CI00000009"], {"type": "array", "items": STR}, "CI00000001 and CI00000002", "absent"),
        (None, STR, "", "unverifiable"),
    ],
)
def test_mentioned(value: Any, schema: dict, text: str, expected: str) -> None:
    assert mentioned(value, schema, text) == expected


# --------------------------------------------------------------------------- judge reply parsing


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"relevant": true, "reason": "ok"}', True),
        ('```json\n{"relevant": false, "reason": "off topic"}\n```', False),
        ('Here is my verdict:\n{"relevant": true, "reason": "fits {the} tool"}\nHope that helps.', True),
        ('{"note": {"x": 1}, "relevant": "false"}', False),
        ('{"other": 1} then {"relevant": true}', True),
        ("not json", None),
        ('{"relevant": "maybe"}', None),
        ('{"reason": "forgot the verdict"}', None),
        ('{"relevant": true', None),
        ("", None),
    ],
)
def test_parse_reply(text: str, expected: bool | None) -> None:
    parsed = parse_reply(text, "relevant")
    assert (parsed["relevant"] if parsed else None) is expected


# ----------------------------------------------------------------------- LLM validators, offline


@pytest.fixture()
def gateway() -> Gateway:
    cfg = RunConfig()
    cfg.llm.cache = False
    gw = Gateway(ModelRegistry.from_config(cfg))
    yield gw
    gw.close()


def offtopic_dialogue() -> Dialogue:
    """Values collected for the seed tool, but the user's need was a team lunch booking."""
    d = GOOD
    d = say(d, 0, "Hi, can you sort out the canteen table for our team lunch on Friday?")
    d = say(d, 1, "Sure, is it a lunch or a dinner? How many guests?")
    d = say(d, 2, "Lunch, and vegetarian options for the guests matter most.")
    return d


def broken_structure_dialogue() -> Dialogue:
    """Rule-valid but the user opens by naming the tool, writes JSON, and the assistant never asks."""
    d = GOOD
    d = say(d, 0, f"Run {SEED} for me.")
    d = say(d, 1, "Okay.")
    d = say(d, 2, '{"tool": "create_purchase_requisition", "mode": "new"}')
    return d


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_llm_validators_pass_a_good_dialogue(gateway: Gateway) -> None:
    rel, crit = run(check_relevancy(GOOD, gateway)), run(check_critique(GOOD, gateway))
    assert (rel.validator, rel.passed) == ("relevancy", True), rel.reason
    assert (crit.validator, crit.passed) == ("critique", True), crit.reason
    assert crit.details["issues"] == [] and rel.details["attempts"] == 1
    assert gateway.usage.calls == 2


def test_relevancy_rejects_an_offtopic_dialogue(gateway: Gateway) -> None:
    d = offtopic_dialogue()
    for check in (check_format, check_toolcall, check_toolargs):
        assert check(d).passed  # the rules cannot see it ...
    v = run(check_relevancy(d, gateway))
    assert not v.passed  # ... the judge can
    assert "barely touches" in v.reason and v.details["relevant"] is False


def test_critique_rejects_a_broken_structure(gateway: Gateway) -> None:
    d = broken_structure_dialogue()
    assert check_format(d).passed and check_toolcall(d).passed
    v = run(check_critique(d, gateway))
    assert not v.passed
    issues = " | ".join(v.details["issues"])
    assert "names internal tool 'create_purchase_requisition'" in issues
    assert "the user writes JSON" in issues
    assert "neither asks a question nor requests information" in issues


def test_judge_prompts_carry_tool_and_transcript() -> None:
    rel = render_relevancy(GOOD)
    crit = render_critique(GOOD)
    assert [m["role"] for m in rel] == ["system", "user"] == [m["role"] for m in crit]
    assert SEED in rel[1]["content"] and GOOD.messages[0].content in rel[1]["content"]
    assert GOOD.messages[1].thought not in rel[1]["content"]  # relevancy sees no private thoughts
    assert GOOD.messages[1].thought in crit[1]["content"]  # the critic does
    assert GOOD.user_persona.text in crit[1]["content"] and GOOD.goal in crit[1]["content"]
    assert DISTRACTOR in crit[1]["content"]
    assert '"relevant"' in rel[0]["content"] and '"passed"' in crit[0]["content"]
    # Judges see the seed tool exactly as the generation roles and the dataset rows show it.
    assert GOOD.seed_tool.spec_json() in rel[1]["content"]
    assert GOOD.seed_tool.spec_json() in crit[1]["content"]


# -------------------------------------------------------------------------------- offline judges


def judge_relevancy(d: Dialogue) -> dict:
    return json.loads(judges.relevancy(RelevancyRequest(dialogue=d), []))


def judge_critic(d: Dialogue) -> dict:
    return json.loads(judges.critic(CriticRequest(dialogue=d), []))


def test_offline_relevancy_branches() -> None:
    assert judge_relevancy(GOOD)["relevant"] is True
    wrong = edit(GOOD, 5, tool_calls=[ToolCall(name=DISTRACTOR, arguments={})])
    assert "does not end by calling" in judge_relevancy(wrong)["reason"]
    assert "barely touches" in judge_relevancy(offtopic_dialogue())["reason"]
    # The user's need is squarely a distractor's (cancelling an existing requisition).
    rival = say(say(GOOD, 0, "I need to cancel an existing purchase requisition."), 2, "Cancel it, the existing one.")
    verdict = judge_relevancy(rival)
    assert verdict["relevant"] is False and "more about cancel_purchase_requisition" in verdict["reason"]
    with pytest.raises(ValueError, match="dialogue"):  # a judge's request without its dialogue is refused on arrival
        parse_request({"role": "relevancy"})


def test_offline_relevancy_counts_parameter_words_only_beside_functional_ones() -> None:
    """A need phrased with parameter words ("employees", "manager") is still on-topic ..."""
    tool = make_tool(
        name="list_direct_reports",
        description="List the employees reporting to a given manager. Use for org-chart questions about a manager's team.",
        properties={"manager_employee_id": {"type": "string", "pattern": "^EMP[0-9]{6}$"}},
        line_of_business="human_resources",
    )
    d = make_dialogue(seed_tool=tool, gold_arguments={"manager_employee_id": "EMP600699"})
    d = say(say(d, 0, "Morning. I have something to sort out around reports."), 2,
            "I want to list the employees reporting to a given manager.")
    assert judge_relevancy(d)["relevant"] is True
    # ... but parameter words alone (values stated for an unrelated need) are not.
    off = say(say(d, 0, "Can you book the canteen for Friday?"), 2, "For the manager and employee lunch.")
    assert "barely touches" in judge_relevancy(off)["reason"]


def test_offline_relevancy_measures_a_description_that_restates_the_name_on_its_own_words() -> None:
    """'Delete a pending pull request review.' has no word its name lacks: the need is measured on the
    description's words, so a user who says what the tool does is on topic and one who talks of
    something else is not."""
    tool = make_tool(name="delete_pending_pull_request_review", description="Delete a pending pull request review.",
                     properties={"pullNumber": {"type": "number", "description": "Pull request number"}})
    d = make_dialogue(seed_tool=tool, gold_arguments={"pullNumber": 12})
    d = say(say(d, 0, "Hi, can you help me with something in our repository?"), 2,
            "I want to delete the review I started on a pull request, it is still pending.")
    assert judge_relevancy(d)["relevant"] is True, judge_relevancy(d)["reason"]
    off = say(d, 2, "I want to rename the branch the pull request comes from.")
    assert "barely touches" in judge_relevancy(off)["reason"]
    # 'request' is its one word no parameter names ('pullNumber', 'reviewers'): one function word is all it can take
    tool = make_tool(name="request_pull_request_reviewers", description="Request reviewers for a pull request.",
                     properties={"pullNumber": {"type": "number"}, "reviewers": {"type": "array", "items": {"type": "string"}}})
    d = make_dialogue(seed_tool=tool, gold_arguments={"pullNumber": 12, "reviewers": ["ana"]})
    d = say(say(d, 0, "Hi, can you help me with something in our repository?"), 2,
            "I'd like to request a couple of reviewers on my pull request.")
    assert judge_relevancy(d)["relevant"] is True, judge_relevancy(d)["reason"]


def test_offline_relevancy_measures_what_a_tool_does_not_its_notes_on_the_api() -> None:
    """A user who says 'pause the playback' states the need; 'Premium' and 'order of execution' are the
    API's terms of use, which nobody asking for a pause would say."""
    tool = make_tool(name="pause-a-users-playback", description="Pause Playback. Pause playback on the user's account. "
                     "This API only works for users who have Spotify Premium. The order of execution is not "
                     "guaranteed when you use this API with other Player API endpoints.", properties={})
    d = make_dialogue(seed_tool=tool, gold_arguments={})
    d = say(say(d, 0, "Hi, can you help me with something?"), 2, "I want to pause the playback on my account.")
    assert judge_relevancy(d)["relevant"] is True, judge_relevancy(d)["reason"]
    off = say(d, 2, "I want to hear the next song on my account.")
    assert "barely touches" in judge_relevancy(off)["reason"]


def test_offline_relevancy_ignores_assistant_listings_of_candidates() -> None:
    """The assistant names every candidate while clarifying; that must not make a distractor win."""
    listing = "Do you want to update, approve, cancel or list an existing purchase requisition, or create one?"
    d = say(say(GOOD, 1, listing), 3, listing)
    assert judge_relevancy(d)["relevant"] is True


CRITIC_CASES = [
    ("no clarification", lambda d: with_messages(d, [d.messages[0], d.messages[5]])),
    ("tool selection resumed", lambda d: edit(make_dialogue(argument_filling_turns=2), 7, phase="tool_selection")),
    ("called a tool while still selecting", lambda d: edit(d, 1, tool_calls=[ToolCall(name=SEED, arguments={})])),
    ("does not end with a tool call", lambda d: edit(d, 5, tool_calls=[])),
    ("not made in the argument-filling phase", lambda d: make_dialogue(argument_filling_turns=0)),
    ("neither asks a question", lambda d: say(d, 3, "Noted.")),
    ("the user writes JSON", lambda d: say(d, 2, 'Use {"mode": "new"}.')),
    ("names internal tool 'update_purchase_requisition'", lambda d: say(d, 2, "Not update_purchase_requisition, a new one.")),
    ("opening request names the tool ('create purchase requisition')", lambda d: say(d, 0, "Please create purchase requisition.")),
    ("used a value for 'plant_code' that the user never gave", lambda d: say(d, 4, "The material id is MAT-10442, quantity is 250.")),
]


@pytest.mark.parametrize("issue,mutate", CRITIC_CASES, ids=[c[0] for c in CRITIC_CASES])
def test_offline_critic_flags(issue: str, mutate: Any) -> None:
    reply = judge_critic(mutate(GOOD))
    assert reply["passed"] is False
    assert any(issue in i for i in reply["issues"]), reply["issues"]


def test_offline_critic_refuses_a_user_who_picks_the_tool_by_name() -> None:
    # Even after the assistant said the names, a user choosing by the seed's name is the
    # shortcut the name_leak rule catches: the critic does not pass it either.
    d = say(GOOD, 1, f"Should I use create_purchase_requisition or {DISTRACTOR}?")
    d = say(d, 2, "create_purchase_requisition, it's a new one.")
    reply = judge_critic(d)
    assert reply["passed"] is False
    assert any("by its name" in i for i in reply["issues"]) and not any("before the assistant did" in i for i in reply["issues"])
    # ... but a name that appeared only in the private thought does not count as said.
    hidden = edit(say(GOOD, 2, "create_purchase_requisition, it's a new one."), 1, thought="Maybe create_purchase_requisition.")
    assert judge_critic(hidden)["passed"] is False


_JUDGE_VERDICTS = """
import json, sys
from utcgen.pipeline.llm.requests import CriticRequest, RelevancyRequest
from utcgen.pipeline.simulator import judges
states = json.load(sys.stdin)
print(json.dumps([[judges.critic(CriticRequest(**s), []), judges.relevancy(RelevancyRequest(**s), [])]
                  for s in states]))  # the replies as sent
"""


@pytest.mark.slow  # a subprocess per hash seed
def test_offline_judges_give_the_same_verdicts_in_other_processes() -> None:
    """Offline runs resume across processes: the judges' verdicts must not depend on anything that
    changes between them, such as the hash seed behind set and dict-of-set iteration order."""
    dialogues = [GOOD, broken_structure_dialogue(), *(mutate(GOOD) for _, mutate in CRITIC_CASES)]
    states = json.dumps([{"dialogue": d.model_dump(mode="json")} for d in dialogues])
    outputs = []
    for seed in ("0", "1", "12345"):
        run = subprocess.run([sys.executable, "-c", _JUDGE_VERDICTS], cwd=REPO, input=states, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append(json.loads(run.stdout))
    assert outputs[0] == outputs[1] == outputs[2]
    verdicts = outputs[0]
    assert len(verdicts) == 2 + len(CRITIC_CASES)
    # and they judge: the good dialogue passes the critic, every broken one fails it
    critic = [json.loads(critic_reply)["passed"] for critic_reply, _ in verdicts]
    assert critic[0] is True and not any(critic[1:])


# ------------------------------------------------------------------------------------------ cascade


class FakeGateway:
    """Answers judge roles with fixed JSON and records calls; `barrier` proves concurrency."""

    def __init__(self, relevant: bool = True, passed: bool = True, barrier: int = 0) -> None:
        self.replies = {
            "relevancy": json.dumps({"relevant": relevant, "reason": "r"}),
            "critic": json.dumps({"passed": passed, "issues": [] if passed else ["x"], "reason": "c"}),
        }
        self.calls: list[str] = []
        self.barrier = barrier
        self._arrived = 0
        self._event: asyncio.Event | None = None

    async def chat(self, request: Any, messages: list[dict], *, nonce: str = "",
                   schema: dict | None = None) -> LLMReply:
        role = request.role
        self.calls.append(role)
        assert request.dialogue.messages and not request.dialogue.id  # the judge's view: the transcript, no bookkeeping
        if self.barrier:
            self._event = self._event or asyncio.Event()
            self._arrived += 1
            if self._arrived >= self.barrier:
                self._event.set()
            await asyncio.wait_for(self._event.wait(), timeout=2)  # times out unless both are in flight
        return LLMReply(text=self.replies[role], usage=Usage(calls=1))


class RaisingGateway:
    async def chat(self, request: Any, messages: list[dict], **kwargs: Any) -> LLMReply:
        raise LLMError(f"{request.role} call to x failed: boom")


def test_cascade_accepts_a_good_dialogue_through_the_offline_backend(gateway: Gateway) -> None:
    verdicts = run(run_cascade(GOOD, gateway))
    assert [v.validator for v in verdicts] == list(STAGES)
    assert all(v.passed for v in verdicts), [v.reason for v in verdicts if not v.passed]
    assert accepted(verdicts) and first_failure(verdicts) is None


@pytest.mark.parametrize(
    "mutate,stages",
    [
        (lambda d: edit(d, 1, thought=None), ["format"]),
        (lambda d: edit(d, 5, tool_calls=[ToolCall(name=DISTRACTOR, arguments={})]), ["format", "toolcall"]),
        (lambda d: final_args(d, {**d.gold_arguments, "quantity": 1}), ["format", "toolcall", "grounding", "toolargs"]),
    ],
)
def test_cascade_stops_at_the_first_rule_failure_without_llm_calls(mutate: Any, stages: list[str]) -> None:
    gw = FakeGateway()
    verdicts = run(run_cascade(mutate(GOOD), gw))
    assert [v.validator for v in verdicts] == stages
    assert [v.passed for v in verdicts] == [True] * (len(stages) - 1) + [False]
    assert gw.calls == []
    assert not accepted(verdicts) and first_failure(verdicts) is verdicts[-1]


def test_cascade_runs_the_llm_judges_concurrently() -> None:
    gw = FakeGateway(barrier=2)
    verdicts = run(run_cascade(GOOD, gw))  # sequential calls would time out at the barrier
    assert sorted(gw.calls) == ["critic", "relevancy"] and accepted(verdicts)


@pytest.mark.parametrize("relevant,passed,failing", [(False, True, "relevancy"), (True, False, "critique"), (False, False, "relevancy")])
def test_cascade_records_both_judges_and_the_first_failure(relevant: bool, passed: bool, failing: str) -> None:
    verdicts = run(run_cascade(GOOD, FakeGateway(relevant=relevant, passed=passed)))
    assert [v.validator for v in verdicts] == list(STAGES)
    assert not accepted(verdicts)
    assert first_failure(verdicts).validator == failing


def test_cascade_survives_gateway_errors() -> None:
    verdicts = run(run_cascade(GOOD, RaisingGateway()))
    assert [v.validator for v in verdicts] == list(STAGES)
    rules = len(cascade.RULE_STAGES)
    assert [v.passed for v in verdicts[rules:]] == [False, False]
    assert verdicts[rules].reason == "relevancy call to x failed: boom"


def test_cascade_rejects_offtopic_and_broken_dialogues_end_to_end(gateway: Gateway) -> None:
    off = run(run_cascade(offtopic_dialogue(), gateway))
    assert first_failure(off).validator == "relevancy"
    broken = run(run_cascade(broken_structure_dialogue(), gateway))
    # naming the tool is now caught by a rule (name_leak) before any judge runs; the critic alone refuses it too
    assert not accepted(broken) and first_failure(broken).validator == "name_leak"
    assert not run(check_critique(broken_structure_dialogue(), gateway)).passed


def test_accepted_needs_every_stage() -> None:
    ok = [Verdict(validator=s, passed=True) for s in STAGES]
    assert accepted(ok)
    assert not accepted([])
    assert not accepted(ok[:3])  # LLM judges never ran
    assert cascade.first_failure(ok) is None


def test_the_stage_list_is_the_order_the_cascade_runs() -> None:
    assert cascade.RULE_STAGES == ("format", "toolcall", "grounding", "toolargs", "name_leak", "recitation", "param_keys",
                                   "repetition", "plausibility", "persona_fit", "scenario", "planning")
    assert cascade.LLM_STAGES == ("relevancy", "critique")
    assert STAGES == cascade.RULE_STAGES + cascade.LLM_STAGES
    verdicts = run(run_cascade(GOOD, FakeGateway()))
    assert tuple(v.validator for v in verdicts) == STAGES


def test_every_stage_is_registered_by_name_behind_one_interface() -> None:
    from utcgen.validators.base import Judge, Rule

    for name in STAGES:
        found = cascade.stage(name)
        assert found is not None and found.name == name
        assert found.kind == ("rule" if isinstance(found, Rule) else "llm")
        assert cascade.stage_kind(name) == found.kind
    assert cascade.stage("selection") is None and cascade.stage_kind("synthesis") is None
    assert all(isinstance(cascade.stage(n), Judge) for n in cascade.LLM_STAGES)
    for rule in cascade.RULES:  # the async check is the pure rule, verdict for verdict
        assert run(rule.check(GOOD)) == rule.run(GOOD)
        assert rule.run(GOOD).validator == rule.name
    relevancy = cascade.stage("relevancy")
    assert relevancy is not None and run(relevancy.check(GOOD, FakeGateway())).validator == "relevancy"
    with pytest.raises(ValueError, match="'critique' is an LLM judge: it needs a gateway"):
        run(cascade.JUDGES[1].check(GOOD))


SELECTION = Verdict(validator="selection", passed=False, reason="wrong tool selected")


@pytest.mark.parametrize(
    "verdicts,failure,stage",
    [
        ([Verdict(validator=s, passed=True) for s in STAGES], None, None),
        ([Verdict(validator="format", passed=True), Verdict(validator="toolcall", passed=False)], 1, "toolcall"),
        ([*(Verdict(validator=s, passed=True) for s in STAGES[:3]),
          Verdict(validator="relevancy", passed=True), Verdict(validator="critique", passed=False)], 4, "critique"),
        ([*(Verdict(validator=s, passed=True) for s in STAGES[:3]),
          Verdict(validator="relevancy", passed=False), Verdict(validator="critique", passed=False)], 3, "relevancy"),
        ([SELECTION], 0, None),  # rejected before validation: a failure, but of no cascade stage
        ([], None, None),
    ],
)
def test_first_failure_and_the_stage_it_belongs_to(verdicts: list[Verdict], failure: int | None, stage: str | None) -> None:
    assert first_failure(verdicts) is (None if failure is None else verdicts[failure])
    assert cascade.failed_stage(verdicts) == stage


def test_validators_are_pure() -> None:
    before = GOOD.model_dump()
    for check in (check_format, check_toolcall, check_toolargs):
        assert check(GOOD) == check(GOOD)
    assert GOOD.model_dump() == before


def test_zero_parameter_tool_dialogue_passes_the_rules() -> None:
    tool = make_tool(name="list_my_requisitions", description="List my open purchase requisitions.", properties={})
    d = make_dialogue(seed_tool=tool, gold_arguments={}, distractors=make_distractors(tool))
    d = say(d, 4, "Go ahead.")
    for check in (check_format, check_toolcall, check_toolargs):
        v = check(d)
        assert v.passed, (v.validator, v.reason)


def test_offline_relevancy_separates_on_topic_from_swapped_needs_across_the_catalog() -> None:
    """For every bundled tool: a need stated in its own terms is relevant; another domain's need is not."""
    from utcgen.pipeline.ingest.reader import load_catalog

    tools = load_catalog(REPO / "catalog" / "tools")

    def vocab(t: Any) -> set[str]:
        return judges.topic_words(t)

    def need_of(t: Any) -> str:
        return "I want to " + re.split(r"(?<=[.!?])\s", t.description.strip(), maxsplit=1)[0].rstrip(".").lower() + "."

    on_topic = off_topic = 0
    for i, tool in enumerate(tools):
        near = sorted((t for t in tools if t.name != tool.name), key=lambda t: -len(vocab(t) & vocab(tool)))[:5]
        d = make_dialogue(seed_tool=tool, distractors=near)
        d = say(d, 0, "Hi, can you help me with something at work?")
        on_topic += judge_relevancy(say(d, 2, need_of(tool)))["relevant"]
        other = next(t for t in tools[i + 1:] + tools[:i] if t.line_of_business != tool.line_of_business)
        off_topic += judge_relevancy(say(d, 2, need_of(other)))["relevant"]
    assert on_topic >= 0.95 * len(tools), (on_topic, len(tools))
    assert off_topic <= 0.05 * len(tools), (off_topic, len(tools))
