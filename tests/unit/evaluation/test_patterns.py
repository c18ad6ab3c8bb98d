"""ToolScan-style error patterns counted over every model call of a dialogue."""

from __future__ import annotations

import pytest

from tests.support.evalcases import GOLD, case, result
from utcgen.pipeline.core.records import Message, ToolCall
from utcgen.pipeline.evaluation.cases import CaseResult
from utcgen.pipeline.evaluation.patterns import PATTERNS, count_patterns, type_ok
from utcgen.pipeline.evaluation.policies import POLICIES


def turns(*assistant: Message) -> CaseResult:
    messages: list[Message] = []
    for m in assistant:
        messages += [Message(role="user", content="Printer jam, high priority."), m]
    return CaseResult(case_id="c1", model="m", mode="dynamic", messages=messages)


def call(name: str, arguments: dict) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(name=name, arguments=arguments)])


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def test_oracle_has_no_pattern():
    c = case()
    counts = count_patterns(c, turns(POLICIES["reference/oracle"](c, [])))
    assert set(counts) == set(PATTERNS) and nonzero(counts) == {}


def test_each_pattern_once():
    c = case()
    r = turns(
        Message(role="assistant", content="{not json", parse_error="unterminated object"),
        call("create_tickets", {"title": "x"}),                                          # hallucinated function
        call("create_incident", {"title": "Printer jam", "severity": 2}),                # distractor instead of τ*
        call("create_ticket", {"title": "Printer jam", "priority": 3, "urgency": "x"}),  # wrong type + made-up key
        call("create_ticket", {"title": "Printer jam", "priority": 3, "urgency": "x"}),  # the same call again
        call("create_ticket", {"title": "Scanner jam"}),                                 # wrong value, missing key
    )
    assert nonzero(count_patterns(c, r)) == {
        "invalid_format": 1, "hallucinated_function": 1, "insufficient_calls": 1, "wrong_argument_type": 1,
        "hallucinated_argument": 1, "repeated_call": 1, "wrong_argument_value": 1, "missing_argument": 1,
    }


def test_missing_required_can_count_as_wrong_value():
    c = case()
    r = turns(call("create_ticket", {}))
    assert nonzero(count_patterns(c, r)) == {"missing_argument": 2}
    assert nonzero(count_patterns(c, r, missing_required_as="wrong_argument_value")) == {"wrong_argument_value": 2}
    with pytest.raises(ValueError):
        count_patterns(c, r, missing_required_as="nothing")  # type: ignore[arg-type]


def test_repeat_is_by_normalised_arguments_and_every_call_of_a_turn_counts():
    c = case()
    both = Message(role="assistant", tool_calls=[ToolCall(name="create_ticket", arguments=GOLD),
                                                 ToolCall(name="create_ticket", arguments={"title": " Printer jam ",
                                                                                           "priority": "high"})])
    assert nonzero(count_patterns(c, turns(both))) == {"repeated_call": 1}
    # plain strings keep their case (the comparison Acc and the validators use): not a repeat
    other = Message(role="assistant", tool_calls=[ToolCall(name="create_ticket", arguments=GOLD),
                                                  ToolCall(name="create_ticket", arguments={"title": "printer JAM",
                                                                                            "priority": "high"})])
    assert nonzero(count_patterns(c, turns(other))) == {"wrong_argument_value": 1}


def test_distractor_arguments_are_checked_against_the_distractor():
    c = case()
    r = turns(call("create_incident", {"title": "Printer jam", "severity": "high", "priority": "high"}))
    assert nonzero(count_patterns(c, r)) == {"insufficient_calls": 1, "wrong_argument_type": 1,
                                             "hallucinated_argument": 1}


def test_result_helper_and_never_call():
    c = case()
    assert nonzero(count_patterns(c, result("c1", None, text=["What do you need?"]))) == {}


def test_json_schema_types():
    assert type_ok(3, {"type": "integer"}) and type_ok(3.0, {"type": "integer"}) and not type_ok(3.5, {"type": "integer"})
    assert not type_ok(True, {"type": "number"}) and type_ok(True, {"type": "boolean"})
    assert type_ok(None, {"type": ["string", "null"]}) and not type_ok(1, {"type": ["string", "null"]})
    assert type_ok({"a": 1}, {}) and type_ok([1], {"type": "array"}) and not type_ok("1", {"type": "array"})
