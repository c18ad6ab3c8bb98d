"""Shared records: one JSON rendering of a tool, one usage type."""

from __future__ import annotations

import json

from tests.support.factories import make_dialogue, make_tool
from utcgen.pipeline.core.records import Dialogue, Usage, tools_json


def test_spec_json_is_the_openai_spec_compact_and_unescaped() -> None:
    tool = make_tool(description="Réserve un billet « aller-retour ».")
    text = tool.spec_json()
    assert json.loads(text) == tool.openai_spec()
    assert "Réserve" in text and "\\u" not in text  # non-ASCII kept as is
    assert text == json.dumps(tool.openai_spec(), ensure_ascii=False)


def test_tools_json_is_an_array_of_spec_json() -> None:
    tools = [make_tool(name="a_tool"), make_tool(name="b_tool")]
    text = tools_json(tools)
    assert json.loads(text) == [t.openai_spec() for t in tools]
    assert text == "[" + ", ".join(t.spec_json() for t in tools) + "]"
    assert tools_json([]) == "[]"


def test_usage_total_tokens_total_and_report() -> None:
    a = Usage(calls=2, prompt_tokens=100, completion_tokens=20, cost_usd=0.1234567, cached_calls=1)
    b = Usage(calls=3, prompt_tokens=50, completion_tokens=5, cost_usd=0.0000004)
    assert a.total_tokens == 120
    total = Usage.total([a, b])
    assert (total.calls, total.prompt_tokens, total.completion_tokens, total.cached_calls) == (5, 150, 25, 1)
    assert a.calls == 2  # inputs untouched
    assert Usage.total([]) == Usage()
    assert total.report() == {
        "calls": 5,
        "cached_calls": 1,
        "prompt_tokens": 150,
        "completion_tokens": 25,
        "total_tokens": 175,
        "cost_usd": 0.123457,
    }


def test_total_tokens_is_not_stored_so_journaled_dialogues_read_back() -> None:
    d = make_dialogue()
    dumped = d.model_dump_json()
    assert "total_tokens" not in dumped
    assert Dialogue.model_validate_json(dumped) == d
