"""Each scenario type's rules (its `problems`) on hand-built dialogues, through the scenario
validator, and the offline critic rejecting what the validator rejects."""

from __future__ import annotations

import json

from tests.support.factories import assistant_turn, make_dialogue, make_tool
from utcgen.pipeline.core.records import Dialogue, InfeasibleValue, InputFault, Message, ScenarioInfo, ToolCall


def _verdict(d: Dialogue):
    from utcgen.validators.scenario import check_scenario

    return check_scenario(d)


def test_disambiguation_dialogues_pass_the_scenario_stage():
    assert _verdict(make_dialogue()).passed


def test_explicit_dialogue_that_asks_is_rejected():
    d = make_dialogue(tool_selection_turns=1, argument_filling_turns=1)
    d.scenario = "explicit"
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "explicit_asked"


def test_unavailable_dialogue_that_calls_a_lookalike_is_rejected():
    d = make_dialogue()
    d.scenario, d.candidate_tools = "unavailable_tool", list(d.distractor_tools)
    look_alike = d.distractor_tools[0].name
    d.messages = [Message(role="user", content="I need a new requisition raised."),
                  assistant_turn(calls=[ToolCall(name=look_alike, arguments={})], phase="tool_selection")]
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "lookalike_called" and look_alike in v.reason


def test_unavailable_dialogue_without_refusal_or_offer_is_rejected():
    d = make_dialogue()
    d.scenario, d.candidate_tools = "unavailable_tool", list(d.distractor_tools)
    d.messages = [Message(role="user", content="I need a new requisition raised."),
                  assistant_turn("Which plant is it for?", phase="tool_selection")]
    assert _verdict(d).details["rule"] == "no_refusal"
    d.messages[-1] = assistant_turn("Sorry, none of the tools I can use does that.", phase="tool_selection")
    assert _verdict(d).details["rule"] == "no_offer"
    d.messages[-1] = assistant_turn("Sorry, none of the tools I can use does that. What I can do instead: list them.",
                                phase="tool_selection")
    assert _verdict(d).passed


def test_infeasible_dialogue_called_with_the_bad_value_is_rejected():
    tool = make_tool(properties={"quantity": {"type": "integer", "minimum": 1, "maximum": 100}})
    d = make_dialogue(seed_tool=tool, gold_arguments={"quantity": 20})
    d.scenario = "infeasible_arguments"
    d.scenario_info = ScenarioInfo(infeasible=InfeasibleValue(arg="quantity", value=500, why="above 100"))
    d.messages = [Message(role="user", content="Order it; the quantity is 500."),
                  assistant_turn(calls=[ToolCall(name=tool.name, arguments={"quantity": 500})])]
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "bad_value_called"
    rules = {p["rule"] for p in v.details["problems"]}
    assert "bad_value_not_raised" in rules


def test_underspecified_dialogue_whose_user_volunteers_the_masked_value_is_rejected():
    d = make_dialogue()
    d.scenario, d.scenario_info = "underspecified", ScenarioInfo(masked_arg="material_id")
    d.messages[0] = Message(role="user", content=f"I need a requisition for {d.gold_arguments['material_id']}.")
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "masked_volunteered"


def test_input_fault_that_is_not_in_the_opening_is_rejected():
    d = make_dialogue()
    d.scenario = "input_fault"
    d.scenario_info = ScenarioInfo(fault=InputFault(kind="premise", original="a", faulted="same as last time"))
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "fault_missing"


def test_user_stating_a_value_it_was_never_given_is_rejected():
    d = make_dialogue(tool_selection_turns=1, argument_filling_turns=0)
    d.scenario = "explicit"
    d.messages[0] = Message(role="user", content=d.messages[0].content + " Charge it to cost center CC-99871.")
    v = _verdict(d)
    assert not v.passed and v.details["rule"] == "user_invented" and "CC-99871" in v.reason


def test_user_saying_a_given_value_in_other_words_invents_nothing():
    """A time of day, a given number with separators, a given date in another order: nothing invented."""
    d = make_dialogue(tool_selection_turns=1, argument_filling_turns=0)
    d.scenario = "explicit"
    d.gold_arguments = {**d.gold_arguments, "amount": 1250.5, "due": "2026-03-04"}
    d.messages[0] = Message(role="user", content=d.messages[0].content
                            + " Around 10:30 if possible; it is 1,250.50 due 04/03/2026.")
    assert "user_invented" not in {p["rule"] for p in _verdict(d).details.get("problems", [])}


def test_offline_critic_rejects_what_the_scenario_validator_rejects():
    from utcgen.pipeline.llm.requests import CriticRequest
    from utcgen.pipeline.simulator.judges import critic

    d = make_dialogue(tool_selection_turns=1, argument_filling_turns=1)
    d.scenario = "explicit"
    reply = json.loads(critic(CriticRequest(dialogue=d), []))
    assert not reply["passed"] and any("asked before calling" in i for i in reply["issues"])
