"""Structured output: one reply model per role, its schema sent as response_format, and `auto`
finding the form a server accepts (against a scripted server that refuses OpenAI's json_schema
form as llama-cpp-python's does)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import jsonschema
import pytest

from tests.support.openai_server import (
    LLAMA_CPP_REFUSAL,
    FaultPlan,
    Reply,
    ScriptedOpenAIServer,
    llama_cpp_refuses,
    needs_json,
)
from tests.support.simulator import role_of, simulator_config, simulator_responder
from utcgen.pipeline.core.records import Message, Persona, Tool
from utcgen.pipeline.llm import replies, structured
from utcgen.pipeline.llm.gateway import Gateway
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.synthesis.roles import ReplyError, Roles, parse_assistant

TOOL = Tool(name="list_open_tickets", description="Lists open service tickets for a queue.",
            parameters={"type": "object", "properties": {"queue": {"type": "string", "enum": ["hr", "it"]}},
                        "required": ["queue"]})
PERSONA = Persona(id="p1", text="A service desk lead.", role="a service desk lead")


def gateway(srv: ScriptedOpenAIServer, tmp_path: Path, *, model: str = "openai/sim", **llm: Any) -> Gateway:
    settings = {"timeout": 60, "backoff_base": 0.01, "backoff_max": 0.05, "max_retries": 2, "cache": False,
                "cache_dir": str(tmp_path / "cache"), **llm}
    raw = simulator_config(srv.base_url, llm=settings)
    raw["models"] = {role: model for role in raw["models"]}
    return Gateway(ModelRegistry.from_config(RunConfig.model_validate(raw)))


def goal(gw: Gateway, seed: int = 1) -> str:
    return asyncio.run(Roles(gw).goal(TOOL, PERSONA, seed))


def forms(srv: ScriptedOpenAIServer) -> list[str]:
    """Per request: the response_format form it carried (`off` for none)."""
    out = []
    for r in srv.requests:
        fmt = r.response_format
        out.append("off" if fmt is None else fmt["type"] + ("+schema" if "schema" in fmt else ""))
    return out


# --------------------------------------------------------------------------- reply models


@pytest.mark.parametrize("text", [
    '{"thought": "t", "content": "Which queue?", "tool_calls": []}',
    '```json\n{"thought": "t", "content": "Which queue?", "tool_calls": []}\n```',
    'Sure! {"thought": "t", "content": "Which queue?", "tool_calls": null} Hope that helps.',
])
def test_assistant_replies_are_read_through_fences_and_prose(text: str) -> None:
    m = parse_assistant(text, "tool_selection")
    assert (m.thought, m.content, m.tool_calls, m.phase) == ("t", "Which queue?", [], "tool_selection")


def test_tool_calls_in_openai_form_and_string_arguments_are_accepted() -> None:
    text = json.dumps({"thought": "t", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "list_open_tickets", "arguments": '{"queue": "it"}'}}]})
    [call] = parse_assistant(text, "argument_filling").tool_calls
    assert (call.name, call.arguments) == ("list_open_tickets", {"queue": "it"})


@pytest.mark.parametrize("data,problem", [
    ({"thought": "t", "content": 5, "tool_calls": []}, "content"),
    ({"thought": "t", "content": "", "tool_calls": [{"arguments": {}}]}, "tool_calls.0.name"),
    ({"content": "", "tool_calls": []}, "empty reply"),
    ({"thought": "t", "tool_calls": [{"name": "x", "arguments": "{oops"}]}, "not JSON"),
])
def test_assistant_replies_that_do_not_validate_say_why(data: dict, problem: str) -> None:
    with pytest.raises(ReplyError, match=problem):
        parse_assistant(json.dumps(data), "tool_selection")


def test_every_role_has_a_model_and_a_schema_its_own_example_satisfies() -> None:
    import jsonschema

    examples = {
        "goal": {"goal": "Close the quarter's open tickets."},
        "slots": {"arguments": '{"queue": "it"}'},  # unnarrowed, the arguments are a JSON-encoded object
        "user": {"message": "Hi, I need help with tickets."},
        "assistant": {"thought": "t", "content": "Which queue?", "tool_calls": []},
        "relevancy": {"relevant": True, "reason": "on topic"},
        "critic": {"passed": False, "issues": ["opening names the tool"], "reason": "one violation"},
    }
    assert set(examples) == set(replies.REPLIES) == {"goal", "slots", "user", "assistant", "relevancy", "critic"}
    for role, example in examples.items():
        jsonschema.validate(example, replies.schema_of(role))
        replies.validate(role, example)
    assert replies.validate("slots", examples["slots"]).arguments == {"queue": "it"}
    narrowed = replies.schema_of("slots", arguments={**TOOL.parameters, "additionalProperties": False})
    assert narrowed["properties"]["arguments"]["properties"]["queue"]["enum"] == ["hr", "it"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"arguments": {"queue": "finance"}}, narrowed)
    named = replies.schema_of("assistant", tool_names=["a", "b"])
    assert named["properties"]["tool_calls"]["items"]["properties"]["name"]["enum"] == ["a", "b"]


def test_response_format_forms() -> None:
    shape = structured.Shape(schema={"type": "object"}, name="goal_reply")
    assert structured.response_format("json_schema", shape) == {
        "type": "json_schema", "json_schema": {"name": "goal_reply", "strict": True, "schema": {"type": "object"}}}
    assert structured.response_format("json_object", shape) == {"type": "json_object", "schema": {"type": "object"}}
    assert structured.response_format("json_object_bare", shape) == {"type": "json_object"}
    assert structured.response_format("off", shape) is None
    assert structured.response_format("json_schema", structured.Shape()) is None  # free text: nothing


def test_config_shape_and_defaults() -> None:
    cfg = RunConfig()
    assert (cfg.llm.structured_output, cfg.llm.structured_output_roles, cfg.llm.tool_format) == ("auto", {}, "json")
    cfg = RunConfig.model_validate({"llm": {"structured_output": "off", "structured_output_roles": {"user": "json_object"},
                                            "tool_format": "native"}})
    formats = structured.Formats(cfg.llm.structured_output, cfg.llm.structured_output_roles)
    assert formats.mode("user", "openai/x", None) == "json_object" and formats.mode("goal", "openai/x", None) == "off"
    import yaml

    bare = RunConfig.model_validate(yaml.safe_load("llm: {structured_output: off, structured_output_roles: {user: off}}"))
    assert (bare.llm.structured_output, bare.llm.structured_output_roles) == ("off", {"user": "off"})  # YAML's false
    with pytest.raises(ValueError):
        RunConfig.model_validate({"llm": {"structured_output": "grammar"}})
    with pytest.raises(ValueError):
        RunConfig.model_validate({"llm": {"structured_output_roles": {"narrator": "off"}}})


# --------------------------------------------------------------------------- over HTTP


def test_auto_steps_down_once_with_one_warning_then_uses_the_working_form(simulated_gateway: None,
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    plan = FaultPlan.matching(llama_cpp_refuses, LLAMA_CPP_REFUSAL, times=None)
    with ScriptedOpenAIServer(simulator_responder, faults=plan) as srv:
        # litellm knows gpt-4o-mini supports response schemas, so `auto` starts with json_schema
        gw = gateway(srv, tmp_path, model="openai/gpt-4o-mini")
        with caplog.at_level(logging.WARNING, logger="utcgen.llm"):
            goals = [goal(gw, seed) for seed in range(4)]
            user = asyncio.run(Roles(gw).user("tool_selection", TOOL, PERSONA, goals[0], [], {"queue": "it"}, [], 1))
        gw.close()
    assert all(goals) and user
    assert forms(srv) == ["json_schema", "json_object+schema"] + ["json_object+schema"] * 4
    assert srv.status_counts[500] == 1  # the refusal is not retried as a 5xx: the next form goes at once
    warnings = [r.getMessage() for r in caplog.records if "structured output" in r.getMessage()]
    assert len(warnings) == 1 and "refused response_format json_schema" in warnings[0]
    assert "using json_object" in warnings[0] and srv.base_url in warnings[0]
    goal_request = srv.requests[1]
    assert goal_request.response_format["schema"] == replies.schema_of("goal")


def test_auto_without_schema_support_starts_with_json_object(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path)  # openai/sim: unknown to litellm's model map
        goal(gw)
        gw.close()
    assert forms(srv) == ["json_object+schema"]


def test_auto_walks_the_whole_ladder_down_to_off(simulated_gateway: None, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    refuse = ServerRefusingJson()
    with ScriptedOpenAIServer(simulator_responder, faults=refuse) as srv:
        gw = gateway(srv, tmp_path, model="openai/gpt-4o-mini")
        with caplog.at_level(logging.WARNING, logger="utcgen.llm"):
            goal(gw, 1)
            goal(gw, 2)
        gw.close()
    assert forms(srv) == ["json_schema", "json_object+schema", "json_object", "off", "off"]
    assert len([r for r in caplog.records if "structured output" in r.getMessage()]) == 3  # one per step


class ServerRefusingJson:
    """A server with no JSON mode at all: 400 naming response_format for any JSON form."""

    def __call__(self, request):
        from tests.support.openai_server import ServerError

        if request.response_format is not None:
            return ServerError(400, f"response_format type {request.response_format['type']} is not supported")
        return None


@pytest.mark.parametrize("mode,expected", [("off", "off"), ("json_object", "json_object+schema"),
                                           ("json_schema", "json_schema")])
def test_configured_modes_send_exactly_their_form(simulated_gateway: None, tmp_path: Path, mode: str, expected: str) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path, structured_output=mode)
        goal(gw)
        gw.close()
    assert forms(srv) == [expected]
    assert "tools" not in srv.requests[0].body


def test_a_configured_mode_is_not_changed_behind_the_users_back(simulated_gateway: None, tmp_path: Path) -> None:
    from utcgen.pipeline.llm.gateway import LLMError

    plan = FaultPlan.matching(llama_cpp_refuses, LLAMA_CPP_REFUSAL, times=None)
    with ScriptedOpenAIServer(simulator_responder, faults=plan) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_schema", max_retries=0)
        with pytest.raises(LLMError):
            goal(gw)
        gw.close()
    assert forms(srv) == ["json_schema"]


def test_per_role_override(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_object", structured_output_roles={"user": "off"})
        roles = Roles(gw)
        text = goal(gw)
        asyncio.run(roles.user("tool_selection", TOOL, PERSONA, text, [], {"queue": "it"}, [], 1))
        gw.close()
    assert [(role_of(r), f) for r, f in zip(srv.requests, forms(srv))] == [
        ("goal", "json_object+schema"), ("user", "off")]
    assert roles.formats == {"user.structured_output": "off"}


def test_a_reply_that_does_not_validate_is_asked_again(simulated_gateway: None, tmp_path: Path) -> None:
    bad = Reply(json.dumps({"goal": "   "}))  # JSON, but not a GoalReply
    plan = FaultPlan({0: bad, 1: Reply('{"goal": 42}')})
    with ScriptedOpenAIServer(simulator_responder, faults=plan) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_object")
        text = goal(gw)
        gw.close()
    assert "a service desk lead" in text and "an a " not in text and len(srv.requests) == 3
    # each re-ask: the original prompt, the reply that failed, and what was wrong with it
    first = srv.requests[0].body["messages"]
    for retry, (failed, why) in zip(srv.requests[1:], [(bad.content, "must not be blank"),
                                                       ('{"goal": 42}', "goal: Input should be a valid string")]):
        sent = retry.body["messages"]
        assert sent[:len(first)] == first and len(sent) == len(first) + 2
        assert sent[-2] == {"role": "assistant", "content": failed}
        assert sent[-1]["role"] == "user" and why in sent[-1]["content"] and "corrected JSON" in sent[-1]["content"]


def test_slot_schema_reaches_the_server_narrowed_to_the_tool(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_object")
        args = asyncio.run(Roles(gw).slots(TOOL, PERSONA, 1, retries=1))
        gw.close()
    assert set(args) == {"queue"}
    sent = srv.requests[0].response_format["schema"]["properties"]["arguments"]
    assert sent["properties"]["queue"]["enum"] == ["hr", "it"] and sent["required"] == ["queue"]


def test_unconstrained_replies_are_rejected_constrained_ones_parse(simulated_gateway: None, tmp_path: Path) -> None:
    """A server that writes prose unless asked for JSON (as SmolLM2 does): `off` loses the dialogue's
    goal after every re-ask, json_object gets it at once."""
    chatty = needs_json(simulator_responder, lambda request, reply: "Sure! Here is a goal: {" + reply[:20])
    for mode, expected in (("off", None), ("json_object", "a service desk lead")):
        with ScriptedOpenAIServer(chatty) as srv:
            gw = gateway(srv, tmp_path, structured_output=mode)
            try:
                result = goal(gw)
            except ReplyError:
                result = None
            gw.close()
        assert (result is None) if expected is None else expected in result, mode


def test_slot_schemas_keep_anchored_patterns_and_drop_keywords_decoders_may_refuse() -> None:
    from utcgen.pipeline.llm import replies

    arguments = {"type": "object", "required": ["building_id", "note"], "properties": {
        "building_id": {"type": "string", "pattern": "^BLD-[A-Z]{3}[0-9]{2}$"},
        "note": {"type": "string", "pattern": "[a-z]+", "format": "email", "minLength": 3},
    }}
    sent = replies.schema_of("slots", arguments=arguments)["properties"]["arguments"]["properties"]
    assert sent["building_id"] == {"type": "string", "pattern": "^BLD-[A-Z]{3}[0-9]{2}$"}
    assert sent["note"] == {"type": "string"}  # unanchored pattern, format and minLength are left out
    dated = replies.schema_of("slots", arguments={"type": "object", "required": ["day"], "properties": {
        "day": {"type": "string", "format": "date"}}})["properties"]["arguments"]["properties"]["day"]
    assert dated == {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}  # a format as a pattern
    import re
    assert re.match(dated["pattern"], "2026-05-19") and not re.match(dated["pattern"], "2023-05-19T14:18:17.6Z")


def test_the_generation_assistant_schema_allows_one_call_and_names_only_offered_tools(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_object")
        asyncio.run(Roles(gw).assistant("argument_filling", [TOOL], TOOL, [Message(role="user", content="hi")], 1))
        gw.close()
    calls = srv.requests[0].response_format["schema"]["properties"]["tool_calls"]
    assert calls["maxItems"] == 1 and calls["items"]["properties"]["name"]["enum"] == [TOOL.name]
    # once the tool is settled its calls may use only its parameter names; strict: every one listed,
    # a parameter the tool does not require nullable
    arguments = calls["items"]["properties"]["arguments"]
    assert set(arguments["properties"]) == set(TOOL.properties) and arguments["additionalProperties"] is False
    assert arguments["required"] == list(TOOL.properties)
    assert all(("null" in str(arguments["properties"][k])) == (k not in TOOL.required) for k in TOOL.properties)
    two = {"thought": "t", "content": "", "tool_calls": [{"name": TOOL.name, "arguments": {}}] * 2}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(two, srv.requests[0].response_format["schema"])
    # evaluation leaves the number open: extra calls are what FTR counts
    assert "maxItems" not in replies.schema_of("assistant", tool_names=[TOOL.name])["properties"]["tool_calls"]
