"""Native tool calls: the assistant's candidate tools go in the request's `tools`, its calls come
back as the API's `tool_calls`, its thought as `reasoning_content` (or a <think> block), and the
dialogue recorded is the same as with the JSON reply protocol."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.simulator import role_of, simulator_config, simulator_responder, think_tag_responder
from utcgen.pipeline.core.records import Dialogue, Usage
from utcgen.pipeline.llm.gateway import Gateway, LLMReply
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.synthesis.attempt import synthesize
from utcgen.pipeline.synthesis.roles import ReplyError, parse_native
from utcgen.pipeline.synthesis.run import Engine

JOBS = 4


def reply(text: str = "", calls: list[dict] | None = None, reasoning: str | None = None) -> LLMReply:
    return LLMReply(text=text, usage=Usage(), tool_calls=calls or [], reasoning=reasoning)


# --------------------------------------------------------------------------- reading a native reply


def test_thought_from_reasoning_content_and_calls_from_tool_calls() -> None:
    m = parse_native(reply("", [{"name": "t", "arguments": '{"a": 1}'}], reasoning="I have a."), "argument_filling")
    assert (m.thought, m.content, [c.model_dump() for c in m.tool_calls]) == ("I have a.", "", [{"name": "t", "arguments": {"a": 1}}])


def test_thought_from_a_leading_think_block() -> None:
    m = parse_native(reply("<think>Two tools fit.</think>\nWhich queue do you mean?"), "tool_selection")
    assert (m.thought, m.content, m.tool_calls) == ("Two tools fit.", "Which queue do you mean?", [])


def test_content_in_the_json_protocol_is_read_as_such() -> None:
    m = parse_native(reply('{"thought": "t", "content": "Which one?", "tool_calls": []}'), "tool_selection")
    assert (m.thought, m.content) == ("t", "Which one?")


def test_plain_content_has_no_thought_and_empty_replies_are_refused() -> None:
    m = parse_native(reply("Which queue?"), "tool_selection")
    assert m.thought is None and m.content == "Which queue?"  # the format validator rejects it (no_thought)
    with pytest.raises(ReplyError, match="empty reply"):
        parse_native(reply(""), "tool_selection")
    with pytest.raises(ReplyError, match="not JSON"):
        parse_native(reply("", [{"name": "t", "arguments": "{broken"}], reasoning="r"), "argument_filling")


# --------------------------------------------------------------------------- same records either way


@pytest.fixture(scope="module")
def engine(embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    out = tmp_path_factory.mktemp("native")
    engine = Engine(RunConfig.model_validate({"out": str(out / "out"), "num_dialogues": JOBS}), embedder=embedder)
    yield engine
    engine.close()


def comparable(d: Dialogue) -> dict[str, Any]:
    """Everything recorded except how it was made (generation) and the id (derived from the config)."""
    return d.model_dump(exclude={"id", "generation"})


def run(engine: Engine, raw: dict[str, Any]) -> tuple[list[Dialogue], Gateway]:
    config = RunConfig.model_validate({**engine.config.model_dump(), **raw})
    gateway = Gateway(ModelRegistry.from_config(config))

    async def all_jobs() -> list[Dialogue]:
        return [await synthesize(engine.seed_for(job, 1), config, gateway) for job in range(JOBS)]

    try:
        return asyncio.run(all_jobs()), gateway
    finally:
        gateway.close()


def test_offline_native_and_json_give_identical_records(engine: Engine) -> None:
    as_json, _ = run(engine, {"llm": {"tool_format": "json", "cache": False}})
    native, _ = run(engine, {"llm": {"tool_format": "native", "cache": False}})
    assert [comparable(d) for d in native] == [comparable(d) for d in as_json]
    assert any(d.accepted for d in native) and any(m.tool_calls for d in native for m in d.messages)
    assert {d.generation.models["assistant.tool_format"] for d in native} == {"native"}
    assert {d.generation.models["assistant.tool_format"] for d in as_json} == {"json"}
    assert as_json[0].generation.models["goal"] == "utcgen-offline/default"  # the role columns are unchanged


@pytest.mark.slow
@pytest.mark.parametrize("responder", [simulator_responder, think_tag_responder], ids=["reasoning_content", "think_tag"])
def test_over_http_native_and_json_give_identical_records(simulated_gateway: None, engine: Engine, responder: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    results = {}
    for tool_format in ("json", "native"):
        with ScriptedOpenAIServer(responder) as srv:
            raw = simulator_config(srv.base_url, llm={"tool_format": tool_format, "timeout": 60})
            results[tool_format], _ = run(engine, raw)
            requests = srv.requests
        assistant = [r for r in requests if role_of(r) == "assistant"]
        assert assistant and srv.responder_errors == []
        if tool_format == "native":
            # every assistant request offers its tools natively and asks for no JSON reply
            assert all(r.tools and r.response_format is None for r in assistant)
            assert all("<think>" in r.body["messages"][0]["content"] for r in assistant)
        else:
            assert all(not r.tools and r.response_format["type"] == "json_object" for r in assistant)
        assert all(not r.tools for r in requests if role_of(r) != "assistant")
    assert [comparable(d) for d in results["native"]] == [comparable(d) for d in results["json"]]
    assert sum(d.accepted for d in results["native"]) >= 1
