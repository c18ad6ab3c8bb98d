"""The offline backend's contracts, checked over the whole shipped catalog."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest

from tests.conftest import REPO
from utcgen.pipeline.catalog.reader import load_catalog
from utcgen.pipeline.llm.offline import gold_values as values
from utcgen.pipeline.llm.offline import policies
from utcgen.pipeline.retrieval.personas import load_personas


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
        state = {"tool": tool.model_dump(), "persona": persona.model_dump(), "required": tool.required,
                 "seed": seed}
        args = json.loads(policies.slots(state, []))["arguments"]
        assert set(args) == set(tool.required), tool.name
        schema = {"type": "object", "properties": tool.properties, "required": tool.required}
        errors = list(jsonschema.Draft202012Validator(schema, format_checker=checker).iter_errors(args))
        assert not errors, (tool.name, args, [e.message for e in errors])


def test_spoken_values_read_back_exactly(tools, personas):
    rng = random.Random(5)
    for tool in tools:
        for key in tool.required:
            schema = tool.properties[key]
            value = values.generate(key, schema, personas[0].model_dump(), rng)
            assert values.read(values.say(value), schema) == value, (tool.name, key, value)


def test_patterns_generate_matching_strings():
    rng = random.Random(0)
    for pattern in ["^PO-[0-9]{7}$", "^INV-[A-Z]{2}-[0-9]{5}$", "^[A-Z0-9]{8}$", "^EMP[0-9]{6}$"]:
        for _ in range(20):
            assert re.fullmatch(pattern, values.from_pattern(pattern, rng))
    with pytest.raises(values.UnsupportedSchema):
        values.from_pattern("^(a|b)+$", rng)


def test_user_reveals_only_gold_values_and_assistant_extracts_them(tools, personas):
    tool = next(t for t in tools if len(t.required) >= 3)
    gold = json.loads(policies.slots({"tool": tool.model_dump(), "persona": personas[0].model_dump(),
                                      "required": tool.required, "seed": 0}, []))["arguments"]
    history: list[dict] = []
    state = {"phase": "argument_filling", "tool": tool.model_dump(), "persona": personas[0].model_dump(),
             "gold_arguments": gold, "seed": 0, "history": history}
    for _ in range(6):
        reply = json.loads(policies.assistant({**state, "history": history}, []))
        history.append({"role": "assistant", "content": reply["content"]})
        if reply["tool_calls"]:
            assert reply["tool_calls"][0] == {"name": tool.name, "arguments": gold}
            break
        history.append({"role": "user", "content": json.loads(policies.user({**state, "history": history}, []))["message"]})
    else:
        pytest.fail("the assistant never called the tool")


def test_assistant_in_tool_selection_does_not_see_the_seed_tool(tools):
    state = {"phase": "tool_selection", "candidates": [t.model_dump() for t in tools[:6]], "tool": None,
             "history": [{"role": "user", "content": "Need help with something."}], "seed": 0}
    reply = json.loads(policies.assistant(state, []))
    assert reply["tool_calls"] == [] and reply["content"].endswith("?")  # asks, never guesses on turn one
    assert reply["thought"].strip()  # every turn carries a private thought
