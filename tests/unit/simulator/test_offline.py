"""The offline backend's contracts, checked over the whole shipped catalog."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest

from tests.support.paths import REPO
from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.llm.requests import ROLES, AssistantRequest, Said, SlotsRequest, UserRequest
from utcgen.pipeline.retrieval.personas import load_personas
from utcgen.pipeline.simulator import conversation, writers
from utcgen.pipeline.simulator import gold_values as values
from utcgen.pipeline.simulator.dispatch import POLICIES, policy, policy_for


# Loaded when a test runs, not at collection.
@pytest.fixture(scope="module")
def tools():
    return load_catalog(REPO / "catalog" / "tools")


@pytest.fixture(scope="module")
def personas():
    return load_personas(REPO / "catalog" / "personas.jsonl")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_values_validate_for_every_shipped_tool(seed, tools, personas):
    checker = jsonschema.FormatChecker()
    for i, tool in enumerate(tools):
        persona = personas[(i * 7 + seed) % len(personas)]
        request = SlotsRequest(tool=tool, persona=persona, required=tool.required, seed=seed)
        args = json.loads(writers.slots(request, []))["arguments"]
        assert set(args) == set(tool.required), tool.name
        schema = {"type": "object", "properties": tool.properties, "required": tool.required}
        errors = list(jsonschema.Draft202012Validator(schema, format_checker=checker).iter_errors(args))
        assert not errors, (tool.name, args, [e.message for e in errors])


def test_spoken_values_read_back_exactly(tools, personas):
    rng = random.Random(5)
    for tool in tools:
        for key in tool.required:
            schema = tool.properties[key]
            value = values.gold_value(key, schema, personas[0], rng)
            assert values.read(values.say_value(value), schema) == value, (tool.name, key, value)


def test_patterns_generate_matching_strings():
    rng = random.Random(0)
    for pattern in ["^PO-[0-9]{7}$", "^INV-[A-Z]{2}-[0-9]{5}$", "^[A-Z0-9]{8}$", "^EMP[0-9]{6}$"]:
        for _ in range(20):
            assert re.fullmatch(pattern, values.from_pattern(pattern, rng))
    with pytest.raises(values.UnsupportedSchema):
        values.from_pattern("^(a|b)+$", rng)


def test_user_reveals_only_gold_values_and_assistant_extracts_them(tools, personas):
    tool = next(t for t in tools if len(t.required) >= 3)
    gold = json.loads(writers.slots(SlotsRequest(tool=tool, persona=personas[0], required=tool.required), []))["arguments"]
    history: list[Said] = []
    for _ in range(6):
        asked = AssistantRequest(phase="argument_filling", candidates=[], tool=tool, history=history)
        reply = json.loads(conversation.assistant(asked, []))
        history.append(Said(role="assistant", content=reply["content"]))
        if reply["tool_calls"]:
            assert reply["tool_calls"][0] == {"name": tool.name, "arguments": gold}
            break
        answering = UserRequest(phase="argument_filling", tool=tool, persona=personas[0], goal="", distractors=[],
                                gold_arguments=gold, history=history)
        history.append(Said(role="user", content=json.loads(conversation.user(answering, []))["message"]))
    else:
        pytest.fail("the assistant never called the tool")


def test_four_missing_values_are_asked_in_one_question_and_given_in_one_answer(personas):
    """A tool needing four values takes one question and one answer, not a question per leftover value."""
    tool = Tool(name="open_pull_request", description="Open a pull request in a repository.",
                parameters={"type": "object", "required": ["owner", "repo", "title", "head"],
                            "properties": {"owner": {"type": "string", "description": "Repository owner"},
                                           "repo": {"type": "string", "description": "Repository name"},
                                           "title": {"type": "string", "description": "Pull request title"},
                                           "head": {"type": "string", "description": "Branch with the changes"}}})
    gold = json.loads(writers.slots(SlotsRequest(tool=tool, persona=personas[0], required=tool.required), []))["arguments"]
    history: list[Said] = []
    for _ in range(2):
        reply = json.loads(conversation.assistant(AssistantRequest(phase="argument_filling", candidates=[], tool=tool,
                                                                   history=history), []))
        history.append(Said(role="assistant", content=reply["content"]))
        if reply["tool_calls"]:
            break
        assert all(w in reply["content"] for w in ("owner", "repo", "title")), reply["content"]
        answering = UserRequest(phase="argument_filling", tool=tool, persona=personas[0], goal="", distractors=[],
                                gold_arguments=gold, history=history)
        history.append(Said(role="user", content=json.loads(conversation.user(answering, []))["message"]))
    assert reply["tool_calls"] == [{"name": tool.name, "arguments": gold}], history
    assert sum(m.role == "user" for m in history) == 1


def test_assistant_in_tool_selection_does_not_see_the_seed_tool(tools):
    request = AssistantRequest(phase="tool_selection", candidates=tools[:6],
                               history=[Said(role="user", content="Need help with something.")])
    reply = json.loads(conversation.assistant(request, []))
    assert reply["tool_calls"] == [] and reply["content"].endswith("?")  # asks, never guesses on turn one
    assert reply["thought"].strip()  # every turn carries a private thought


# ---- the typed request: the only thing the offline provider reads besides the prompt ----------------------

def _goal_request(tools, personas):
    from utcgen.pipeline.llm.requests import GoalRequest

    return GoalRequest(tool=tools[0], persona=personas[0], seed=3)


def test_only_the_offline_provider_gets_the_typed_request(tools, personas):
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.registry import ModelRegistry
    from utcgen.pipeline.llm.structured import Shape

    request = _goal_request(tools, personas)
    msgs = [{"role": "user", "content": "Write a goal."}]
    gateway = Gateway(ModelRegistry.of({"goal": "utcgen-offline/default", "user": "openai/m"}))
    try:
        sent = gateway._request_kwargs(request, msgs, Shape())
        assert sent["metadata"] == {"utcgen_request": request.model_dump(mode="json")}
        gateway.registry.entries["goal"] = gateway.registry.entries["user"]  # the same request to a real model
        real = gateway._request_kwargs(request, msgs, Shape())
        assert "metadata" not in real and tools[0].name not in json.dumps(real)
    finally:
        gateway.close()


def test_the_offline_provider_validates_the_request_it_receives(tools, personas):
    import asyncio

    from litellm.exceptions import BadRequestError

    from utcgen.pipeline.llm.registry import quiet_litellm

    litellm = quiet_litellm()
    msgs = [{"role": "user", "content": "Write a goal."}]
    request = _goal_request(tools, personas)

    async def call(metadata):
        return await litellm.acompletion(model="utcgen-offline/default", messages=msgs, metadata=metadata)

    reply = asyncio.run(call({"utcgen_request": request.model_dump(mode="json")}))
    assert json.loads(reply.choices[0].message.content)["goal"]
    with pytest.raises(BadRequestError, match="needs the role's typed request"):
        asyncio.run(call({}))
    broken = {**request.model_dump(mode="json"), "history": []}  # a goal writer sees no transcript
    with pytest.raises(BadRequestError, match=r"malformed request: not a valid role request \(goal\.history: Extra inputs"):
        asyncio.run(call({"utcgen_request": broken}))


def test_the_generation_assistant_request_carries_no_seed_tool_gold_or_scenario():
    from utcgen.pipeline.llm.requests import AssistantRequest

    # `results` says only which prompt variant to render (calls get results), like `may_decline`
    assert set(AssistantRequest.model_fields) == {"role", "phase", "candidates", "tool", "history", "may_decline",
                                                  "hint", "considered", "results", "seed"}


def test_an_old_config_that_sets_send_state_is_refused_by_name(tmp_path):
    from utcgen.pipeline.core.errors import InputError
    from utcgen.pipeline.settings.config import load_config

    path = tmp_path / "old.yaml"
    path.write_text("llm:\n  send_state: false\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"old\.yaml.*llm.*send_state is gone"):
        load_config(path)


def test_every_role_with_a_typed_request_has_one_registered_policy():
    assert set(POLICIES) == set(ROLES)
    with pytest.raises(ValueError, match="already has a policy for role 'goal'"):
        policy("goal")(writers.goal)
    with pytest.raises(ValueError, match="no policy for role 'nobody'"):
        policy_for("nobody")
