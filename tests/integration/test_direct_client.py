"""The direct client against litellm: the same server, the same calls, the same bodies and the same errors.

Each case makes one call through `litellm.acompletion` and one through `DirectClient.complete` with
the gateway's kwargs, against a real ScriptedOpenAIServer on 127.0.0.1, and compares what the
server received and what the gateway's failure rules make of each error."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from tests.support.openai_server import (
    ChatRequest,
    Malformed,
    RateLimited,
    ScriptedOpenAIServer,
    ServerError,
    Slow,
    echo_responder,
)
from utcgen.pipeline.llm import direct, failures, structured

pytestmark = pytest.mark.slow  # starts real servers

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Find my order."}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
TOOLS = [{"type": "function", "function": {"name": "find_order", "description": "Finds an order.",
                                           "parameters": SCHEMA}}]


def kwargs_for(srv: ScriptedOpenAIServer, **extra: Any) -> dict[str, Any]:
    """What the gateway passes for one call (see `Gateway._request_kwargs`)."""
    return {"model": "openai/test-model", "messages": MESSAGES, "temperature": 0.7, "max_tokens": 64,
            "timeout": 5.0, "num_retries": 0, "api_base": srv.base_url, "api_key": "sk-test", **extra}


async def through_litellm(kwargs: dict[str, Any]) -> Any:
    import litellm

    return await litellm.acompletion(**kwargs)


async def through_direct(kwargs: dict[str, Any]) -> Any:
    try:
        return await direct.DirectClient().complete(kwargs)
    finally:
        await direct.aclose_all()


def outcome(call: Any, kwargs: dict[str, Any]) -> Any:
    try:
        return asyncio.run(call(kwargs))
    except Exception as exc:  # the outcome under test
        return exc


@pytest.mark.parametrize("extra", [
    {},
    {"response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA}}},
    {"response_format": {"type": "json_object", "schema": SCHEMA}},
    {"response_format": {"type": "json_object"}},
    {"tools": TOOLS, "_skip_mcp_handler": True},
], ids=["plain", "json_schema", "json_object_schema", "json_object", "tools"])
def test_the_server_receives_the_same_body_and_key(extra: dict[str, Any]) -> None:
    with ScriptedOpenAIServer(echo_responder) as srv:
        kwargs = kwargs_for(srv, **extra)
        via_litellm = outcome(through_litellm, dict(kwargs))
        via_direct = outcome(through_direct, dict(kwargs))
        sent_by_litellm, sent_directly = srv.requests
    assert via_litellm.choices[0].message.content == via_direct.text == "echo: Find my order."
    assert sent_directly.body == sent_by_litellm.body
    assert sent_directly.headers["authorization"] == sent_by_litellm.headers["authorization"] == "Bearer sk-test"
    assert via_direct.prompt_tokens == via_litellm.usage.prompt_tokens > 0
    assert via_direct.completion_tokens == via_litellm.usage.completion_tokens > 0


def test_tool_calls_and_reasoning_are_read_alike() -> None:
    def calls(request: ChatRequest) -> dict[str, Any]:
        return {"content": None, "reasoning_content": "The order id is known.",
                "tool_calls": [{"id": "c1", "type": "function",
                                "function": {"name": "find_order", "arguments": '{"a": "A-1"}'}}]}

    with ScriptedOpenAIServer(calls) as srv:
        kwargs = kwargs_for(srv, tools=TOOLS, _skip_mcp_handler=True)
        via_litellm = outcome(through_litellm, dict(kwargs))
        via_direct = outcome(through_direct, dict(kwargs))
    [call] = via_litellm.choices[0].message.tool_calls
    assert via_direct.tool_calls == [{"name": call.function.name, "arguments": call.function.arguments}]
    assert via_direct.reasoning == via_litellm.choices[0].message.reasoning_content == "The order id is known."
    assert via_direct.text == ""


@pytest.mark.parametrize("fault", [
    RateLimited(0.7), ServerError(500), ServerError(502), ServerError(503), ServerError(400), ServerError(401),
    ServerError(403), ServerError(404), ServerError(422), Malformed,
], ids=["429", "500", "502", "503", "400", "401", "403", "404", "422", "malformed"])
def test_every_fault_is_the_same_error_to_the_gateway(fault: Any) -> None:
    with ScriptedOpenAIServer(echo_responder, faults={0: fault, 1: fault}) as srv:
        kwargs = kwargs_for(srv)
        by_litellm = outcome(through_litellm, dict(kwargs))
        by_direct = outcome(through_direct, dict(kwargs))
    assert isinstance(by_litellm, Exception) and isinstance(by_direct, Exception)
    assert type(by_direct) is type(by_litellm)
    assert getattr(by_direct, "status_code", None) == getattr(by_litellm, "status_code", None)
    for rule in (failures.is_retryable, failures.is_fatal, failures.category, failures.retry_after,
                 structured.refuses_format):
        assert rule(by_direct) == rule(by_litellm), rule.__name__
    # the server's own words reach the message (logs and the failure's description)
    assert str(by_direct).split(" - ", 1)[-1][:40] in str(by_litellm)


def test_a_refused_response_format_is_told_apart_alike() -> None:
    refusal = ServerError(500, "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
                               "  Input should be 'text' or 'json_object' [type=literal_error]")
    with ScriptedOpenAIServer(echo_responder, faults={0: refusal, 1: refusal}) as srv:
        kwargs = kwargs_for(srv, response_format={"type": "json_schema",
                                                  "json_schema": {"name": "reply", "schema": SCHEMA}})
        by_litellm = outcome(through_litellm, dict(kwargs))
        by_direct = outcome(through_direct, dict(kwargs))
    assert structured.refuses_format(by_litellm) and structured.refuses_format(by_direct)


def test_a_timeout_and_a_refused_connection_are_the_same_kind() -> None:
    with ScriptedOpenAIServer(echo_responder, faults={0: Slow(3.0), 1: Slow(3.0)}) as srv:
        kwargs = kwargs_for(srv, timeout=0.5)
        slow = [outcome(through_litellm, dict(kwargs)), outcome(through_direct, dict(kwargs))]
    assert [failures.category(e) for e in slow] == ["timeout", "timeout"]
    assert all(failures.is_retryable(e) for e in slow)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with ScriptedOpenAIServer(echo_responder) as srv:
        kwargs = {**kwargs_for(srv), "api_base": f"http://127.0.0.1:{port}/v1"}
    down = [outcome(through_litellm, dict(kwargs)), outcome(through_direct, dict(kwargs))]
    assert [failures.category(e) for e in down] == ["connection refused", "connection refused"]
    assert [failures.describe(e, kwargs["api_base"]) for e in down] == \
        [f"connection refused at {kwargs['api_base']} (is the server running?)"] * 2


def test_only_plain_openai_compatible_calls_go_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = {"model": "openai/m", "messages": MESSAGES, "api_base": "http://127.0.0.1:1/v1", "api_key": "k"}
    assert direct.serves(base)
    assert not direct.serves({**base, "api_base": None})  # the provider's own endpoint: litellm
    assert not direct.serves({**base, "model": "anthropic/claude"})
    assert not direct.serves({**base, "api_key": ""})  # litellm's own error for a missing key
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert direct.serves({**base, "api_key": ""})
