"""Strict structured output: every reply schema meets OpenAI's strict mode, calls are constrained to the
offered tools' own names and parameters, values strict mode cannot describe come back as the tool
means them, an unusable reply is asked again with what was wrong, and a reasoning block or the
provider's reasoning becomes the thought."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import jsonschema
import pytest

from tests.support.openai_server import ChatRequest, FaultPlan, Reply, ScriptedOpenAIServer
from tests.support.paths import REPO
from tests.support.simulator import role_of, simulator_responder
from utcgen.pipeline.core.records import Message, Persona, Tool, Usage
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.llm import replies, structured
from utcgen.pipeline.llm.gateway import Gateway, LLMReply
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.llm.strict import arguments_schema, from_strict
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.synthesis.roles import Roles, parse_assistant, parse_native

CATALOGS = [REPO / "catalog" / "tools", *(REPO / "tests" / "fixtures" / "catalogs" / name for name in (
    "bfcl_entries.json", "bfcl_functions.jsonl", "bfcl_live_cases.json", "mcp_tools_list.json", "mixed_dir",
    "music_app_tools.json", "openai_tools.json", "petclinic_openapi.yaml", "store_openapi.yaml"))]


def role_schemas(tools: list[Tool]) -> list[tuple[str, dict[str, Any]]]:
    """Every schema a run sends for these tools: the fixed roles, the slot generator's per tool, the
    assistant's while selecting among them (six at a time, as a run offers) and with each settled."""
    out = [(role, replies.schema_of(role)) for role in ("goal", "slots", "user", "relevancy", "critic")]
    out.append(("assistant (evaluation)", replies.schema_of("assistant", tool_names=[t.name for t in tools])))
    for tool in tools:
        required = {"type": "object", "properties": {k: tool.properties.get(k, {}) for k in tool.required},
                    "required": tool.required, "additionalProperties": False}
        out.append((f"slots {tool.name}", replies.schema_of("slots", arguments=required)))
        out.append((f"assistant argument_filling {tool.name}",
                    replies.schema_of("assistant", tools=[tool], max_calls=1)))
    for i in range(0, len(tools), 6):
        pool = tools[i:i + 6]
        out.append((f"assistant tool_selection {[t.name for t in pool]}",
                    replies.schema_of("assistant", tools=pool, max_calls=1, selecting=True)))
    return out


def test_every_reply_schema_for_every_catalog_tool_is_strict() -> None:
    checked, problems, tools_seen = 0, [], 0
    for catalog in CATALOGS:
        tools = load_catalog(catalog)
        tools_seen += len(tools)
        for name, schema in role_schemas(tools):
            checked += 1
            problems += [f"{catalog.name}: {name}: {p}" for p in structured.strict_problems(schema)]
            jsonschema.Draft202012Validator.check_schema(schema)  # and still a valid JSON Schema
    print(f"strict check: {checked} schemas for {tools_seen} tools, {len(problems)} problems")
    assert tools_seen > 300 and checked > 700
    assert problems == []


def test_the_checker_names_each_violation_by_its_path() -> None:
    loose = {"type": "object", "properties": {
        "thought": {"type": "string"},
        "args": {"type": "object"},
        "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "tags": {"type": "array"},
        "when": {"type": "string", "format": "uri"},
        "deep": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
    }, "required": ["thought"], "additionalProperties": False}
    found = structured.strict_problems(loose)
    assert "$: properties not in required: args, pick, tags, when, deep" in found
    assert "$.properties.args: an object without properties (free-form) cannot be strict" in found
    assert "$.properties.pick: 'oneOf' is not supported in strict mode" in found
    assert "$.properties.tags: an array without items cannot be strict" in found
    assert "$.properties.when: format 'uri' is not supported in strict mode" in found
    assert "$.properties.deep: additionalProperties must be false" in found
    assert structured.strict_problems({"anyOf": [{"type": "string"}]})[0] == "$: the root must be an object schema"
    assert structured.strict_problems(replies.schema_of("assistant")) == []


# --------------------------------------------------------------------------- what a call may be

FREE = Tool(name="log_event", description="Logs an event.", parameters={
    "type": "object", "required": ["kind", "payload"], "properties": {
        "kind": {"type": "string", "enum": ["audit", "debug"]},
        "payload": {"type": "object", "description": "Anything to keep."},       # free-form: a JSON string
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},  # a map: a JSON string
        "owner": {"type": "object", "properties": {"id": {"type": "string"}, "team": {"type": "string"}},
                  "required": ["id"]},
        "note": {"type": ["string", "null"]},
        "count": {"type": "integer", "minimum": 1},
    }})
OTHER = Tool(name="close_ticket", description="Closes a ticket.", parameters={
    "type": "object", "required": ["ticket_id"], "properties": {"ticket_id": {"type": "string"}}})


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"thought": "t", "content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_constrained_call_names_an_offered_tool_and_only_its_keys() -> None:
    selecting = replies.schema_of("assistant", tools=[FREE, OTHER], max_calls=1, selecting=True)
    settled = replies.schema_of("assistant", tools=[FREE], max_calls=1)
    valid = jsonschema.Draft202012Validator(selecting).is_valid
    assert valid(call("close_ticket", ticket_id="T-1"))
    assert valid(call("close_ticket", ticket_id=None))          # while selecting, a value may be not yet known
    assert not valid(call("delete_ticket", ticket_id="T-1"))    # a tool not offered
    assert not valid(call("close_ticket", ticket_id="T-1", force=True))  # a key the tool does not have
    assert not valid(call("close_ticket", kind="audit"))        # another candidate's key
    full = {"kind": "audit", "payload": '{"a": 1}', "labels": None, "owner": None, "note": None, "count": None}
    assert jsonschema.validate(call("log_event", **full), settled) is None
    assert not jsonschema.Draft202012Validator(settled).is_valid(call("log_event", **{**full, "kind": None}))
    assert not jsonschema.Draft202012Validator(settled).is_valid(call("close_ticket", ticket_id="T-1"))


def test_values_come_back_as_the_tool_means_them() -> None:
    written = {"kind": "audit", "payload": '{"user": "ana", "ids": [1, 2]}', "labels": '{"env": "prod"}',
               "owner": {"id": "u7", "team": None}, "note": None, "count": None}
    assert jsonschema.Draft202012Validator(arguments_schema(FREE.parameters)).is_valid(written)
    meant = from_strict(written, FREE.parameters)
    # decoded where strict mode needed a string; a null that means "absent" left out; a required
    # parameter that may be null keeps it... and only one the tool requires
    assert meant == {"kind": "audit", "payload": {"user": "ana", "ids": [1, 2]}, "labels": {"env": "prod"},
                     "owner": {"id": "u7"}}
    required_null = {**FREE.parameters, "required": ["kind", "payload", "note"]}
    assert from_strict({"kind": "audit", "payload": "{}", "note": None}, required_null)["note"] is None
    # a call written in the tool's own shape (an unconstrained model, the offline backend) is unchanged
    own = {"kind": "debug", "payload": {"x": "1"}, "labels": {"a": "b"}, "count": 3}
    assert from_strict(own, FREE.parameters) == own
    # a string that is not the JSON the place asks for stays what it was, for the toolargs check to judge
    assert from_strict({"payload": "not json"}, FREE.parameters) == {"payload": "not json"}
    message = parse_assistant(json.dumps(call("log_event", **written)), "argument_filling", tools=[FREE])
    assert message.tool_calls[0].arguments == meant


def test_unnarrowed_arguments_are_a_json_encoded_object_read_back_as_the_object() -> None:
    reply = json.dumps({"thought": "t", "content": "", "tool_calls": [{"name": "a", "arguments": '{"x": 1}'}]})
    assert parse_assistant(reply, "tool_selection").tool_calls[0].arguments == {"x": 1}
    assert replies.validate("slots", {"arguments": '{"queue": "it"}'}).arguments == {"queue": "it"}


# --------------------------------------------------------------------------- which form each provider honours


@pytest.mark.parametrize("model,form", [("hosted_vllm/Qwen/Qwen3-8B", "json_schema"), ("ollama/llama3.2", "json_schema"),
                                        ("ollama_chat/qwen3", "json_schema"), ("openai/my-local", "json_object"),
                                        ("openai/gpt-4o-mini", "json_schema")])
def test_auto_picks_the_form_each_provider_honours(model: str, form: str) -> None:
    assert structured.Formats("auto").mode("assistant", model, None) == form


def test_litellm_hands_the_json_schema_form_to_ollama_and_vllm_with_its_schema() -> None:
    """What litellm 1.106.2 makes of each form: Ollama gets json_schema's schema as its `format` (and
    json_object as format "json", without the schema); vLLM gets response_format unchanged."""
    from litellm.utils import get_optional_params

    schema = replies.schema_of("goal")
    sent = structured.response_format("json_schema", structured.Shape(schema=schema, name="goal_reply"))
    for provider in ("ollama", "ollama_chat"):
        assert get_optional_params(model="m", custom_llm_provider=provider, response_format=sent)["format"] == schema
        bare = structured.response_format("json_object", structured.Shape(schema=schema))
        assert get_optional_params(model="m", custom_llm_provider=provider, response_format=bare)["format"] == "json"
    assert get_optional_params(model="m", custom_llm_provider="hosted_vllm", response_format=sent)[
        "response_format"] == sent


def gateway(srv: ScriptedOpenAIServer, tmp_path: Path, model: str = "openai/sim", **llm: Any) -> Gateway:
    os.environ.setdefault("UTCGEN_SIM_API_KEY", "sk-simulator-dummy")
    config = RunConfig.model_validate({"models": {"goal": model, "assistant": model, "user": model},
                                       "llm": {"api_base": srv.base_url, "api_key_env": "UTCGEN_SIM_API_KEY",
                                               "timeout": 60, "cache": False, "max_retries": 0,
                                               "cache_dir": str(tmp_path / "cache"), **llm}})
    return Gateway(ModelRegistry.from_config(config))


def test_a_hosted_vllm_model_is_sent_the_strict_json_schema_form_over_http(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(lambda request: '{"goal": "Close my open tickets."}') as srv:
        gw = gateway(srv, tmp_path, model="hosted_vllm/sim")
        assert asyncio.run(Roles(gw).goal(OTHER, Persona(id="p", text="A clerk."), 1)) == "Close my open tickets."
        gw.close()
    sent = srv.requests[0].response_format
    assert sent is not None and sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert structured.strict_problems(sent["json_schema"]["schema"]) == []


# --------------------------------------------------------------------------- re-asking with the parse error


def test_an_unusable_assistant_reply_is_asked_again_with_what_was_wrong(tmp_path: Path) -> None:
    answer = json.dumps(call("close_ticket", ticket_id="T-1"))
    plan = FaultPlan({0: Reply('Sure! {"thought": "which one", "content": "Which'), 1: Reply('{"content": ""}')})
    with ScriptedOpenAIServer(lambda request: answer, faults=plan) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_schema")
        message = asyncio.run(Roles(gw).assistant("argument_filling", [OTHER], OTHER,
                                                  [Message(role="user", content="Close T-1.")], 1))
        gw.close()
    assert message.tool_calls[0].arguments == {"ticket_id": "T-1"} and not message.parse_error
    first, *retries = [r.body["messages"] for r in srv.requests]
    assert len(retries) == 2
    for sent, bad, why in zip(retries, ['Sure! {"thought": "which one", "content": "Which', '{"content": ""}'],
                              ["invalid JSON", "empty reply"]):
        assert sent[:len(first)] == first and sent[len(first)] == {"role": "assistant", "content": bad}
        assert why in sent[-1]["content"] and sent[-1]["role"] == "user" and len(sent) == len(first) + 2
    assert len({json.dumps(m) for m in [first, *retries]}) == 3  # each a request of its own (and cache key)


def test_an_unusable_user_reply_is_asked_again_with_what_was_wrong(tmp_path: Path) -> None:
    plan = FaultPlan({0: Reply('["not", "an object"]')})
    with ScriptedOpenAIServer(lambda request: '{"message": "I need ticket T-1 closed."}', faults=plan) as srv:
        gw = gateway(srv, tmp_path, structured_output="json_object")
        text = asyncio.run(Roles(gw).user("tool_selection", OTHER, Persona(id="p", text="A clerk."), "Close T-1",
                                          [], {"ticket_id": "T-1"}, [], 1))
        gw.close()
    assert text == "I need ticket T-1 closed."
    first, retry = (r.body["messages"] for r in srv.requests)
    assert retry[:-2] == first and retry[-2] == {"role": "assistant", "content": '["not", "an object"]'}
    assert "expected a JSON object, got list" in retry[-1]["content"]


# --------------------------------------------------------------------------- reasoning kept as the thought


def test_a_think_block_before_the_json_is_the_thought_never_the_content() -> None:
    body = json.dumps({"thought": "", "content": "Which queue?", "tool_calls": []})
    m = parse_assistant(f"<think>Two queues fit {{maybe}}.</think>\n\n{body}", "tool_selection")
    assert (m.thought, m.content) == ("Two queues fit {maybe}.", "Which queue?")
    m = parse_assistant(f"Two queues fit.\n</think>\n{body}", "tool_selection")  # R1: <think> was in the prompt
    assert (m.thought, m.content) == ("Two queues fit.", "Which queue?")
    own = json.dumps({"thought": "my own", "content": "Which queue?", "tool_calls": []})
    assert parse_assistant(f"<think>block</think>{own}", "tool_selection").thought == "my own"
    assert parse_assistant(body, "tool_selection", reasoning="from the provider").thought == "from the provider"
    assert parse_assistant(body, "tool_selection").thought is None


def test_a_native_call_with_content_null_and_no_reasoning_has_no_thought() -> None:
    reply = LLMReply(text="", usage=Usage(), tool_calls=[{"name": "close_ticket", "arguments": '{"ticket_id": "T-1"}'}])
    m = parse_native(reply, "argument_filling")
    assert m.thought is None and m.content == "" and m.tool_calls[0].arguments == {"ticket_id": "T-1"}
    m = parse_native(reply.model_copy(update={"text": "<think>T-1 given.</think>"}), "argument_filling")
    assert (m.thought, m.content) == ("T-1 given.", "")


def _is_assistant(request: ChatRequest) -> bool:
    return role_of(request) == "assistant"


def bare_calls(request: ChatRequest) -> str | dict[str, Any]:
    """A native provider's usual reply: a call is `content: null` plus `tool_calls`, no reasoning."""
    reply = simulator_responder(request)
    if isinstance(reply, dict) and reply.get("tool_calls"):
        return {"content": None, "tool_calls": reply["tool_calls"]}
    return reply


def r1_style(request: ChatRequest) -> str | dict[str, Any]:
    """The JSON reply with its thought moved to a leading <think> block, as R1-style models write."""
    reply = simulator_responder(request)
    if _is_assistant(request) and isinstance(reply, str):
        data = json.loads(reply)
        thought, data["thought"] = data["thought"], ""
        return f"<think>\n{thought}\n</think>\n\n{json.dumps(data)}"
    return reply


def reasoning_content(request: ChatRequest) -> str | dict[str, Any]:
    """The JSON reply with its thought in the provider's reasoning_content instead."""
    reply = simulator_responder(request)
    if _is_assistant(request) and isinstance(reply, str):
        data = json.loads(reply)
        thought, data["thought"] = data["thought"], ""
        return {"content": json.dumps(data), "reasoning_content": thought}
    return reply


JOBS = 4


@pytest.fixture(scope="module")
def engine(embedder: Any, tmp_path_factory: pytest.TempPathFactory):
    from utcgen.pipeline.synthesis.run import Engine

    out = tmp_path_factory.mktemp("strict")
    engine = Engine(RunConfig.model_validate({"out": str(out / "out"), "num_dialogues": JOBS}), embedder=embedder)
    yield engine
    engine.close()


def http_run(engine: Any, responder: Any, **llm: Any) -> list[Any]:
    from tests.support.simulator import simulator_config
    from utcgen.pipeline.synthesis.attempt import synthesize

    with ScriptedOpenAIServer(responder) as srv:
        config = RunConfig.model_validate({**engine.config.model_dump(),
                                           **simulator_config(srv.base_url, llm={"timeout": 60, **llm})})
        gw = Gateway(ModelRegistry.from_config(config))

        async def jobs() -> list[Any]:
            return [await synthesize(engine.seed_for(job, 1), config, gw) for job in range(JOBS)]

        try:
            return asyncio.run(jobs())
        finally:
            gw.close()
            assert srv.responder_errors == []


@pytest.mark.slow
def test_native_calls_without_a_thought_are_accepted_over_http(simulated_gateway: None, engine: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    dialogues = http_run(engine, bare_calls, tool_format="native")
    bare = [d for d in dialogues if d.messages[-1].tool_calls and d.messages[-1].thought is None]
    assert bare, "no dialogue ended in a call without a thought"
    for d in bare:
        assert d.messages[-1].content == ""
        assert next(v for v in d.validation if v.validator == "format").passed
    assert any(d.accepted for d in bare)


@pytest.mark.slow
def test_reasoning_becomes_the_thought_over_http(simulated_gateway: None, engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    plain = http_run(engine, simulator_responder)
    for responder in (r1_style, reasoning_content):
        got = http_run(engine, responder)
        assert [d.model_dump(exclude={"id", "generation"}) for d in got] == \
            [d.model_dump(exclude={"id", "generation"}) for d in plain], responder.__name__
    assert any(d.accepted for d in plain)
    assert all(m.thought and "<think>" not in m.content for d in plain for m in d.messages if m.role == "assistant")


def test_the_format_rule_wants_a_thought_in_json_format_only() -> None:
    from tests.support.factories import make_dialogue
    from utcgen.validators.format import check_format

    def dialogue(tool_format: str) -> Any:
        d = make_dialogue()
        assert d.messages[-1].tool_calls and check_format(d).passed
        last = d.messages[-1].model_copy(update={"thought": None, "content": ""})
        models = {**d.generation.models, "assistant.tool_format": tool_format}
        return d.model_copy(update={"messages": [*d.messages[:-1], last],
                                    "generation": d.generation.model_copy(update={"models": models})})

    as_json = check_format(dialogue("json"))
    assert not as_json.passed and as_json.details["rule"] == "no_thought"
    assert check_format(dialogue("native")).passed
