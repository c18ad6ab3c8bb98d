"""Tests for tests/support/openai_server.py, driven by real HTTP clients (litellm, httpx)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import pytest

from tests.support.openai_server import (
    ChatRequest,
    FaultPlan,
    Malformed,
    RateLimited,
    Reply,
    ScriptedOpenAIServer,
    ServerError,
    Slow,
    echo_responder,
    rough_tokens,
)

pytestmark = pytest.mark.slow  # starts real servers

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Book a table for two."}]


def acompletion(srv: ScriptedOpenAIServer, **kwargs: Any) -> Any:
    """Run one real litellm.acompletion against ``srv`` and return the response."""
    import litellm  # loads in seconds: only the tests that call it pay for it

    kwargs.setdefault("messages", MESSAGES)
    return asyncio.run(litellm.acompletion(model="openai/test", api_base=srv.base_url,
                                           api_key="x", **kwargs))


def error_class(dotted: str) -> type[Exception]:
    """`"litellm.Timeout"` -> the class, imported when a test needs it (not at collection)."""
    import importlib

    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def client(srv: ScriptedOpenAIServer, **kwargs: Any) -> httpx.Client:
    """A plain httpx client for ``srv`` that ignores any proxy settings."""
    return httpx.Client(base_url=srv.base_url, trust_env=False, **kwargs)


def chat_body(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "test", "messages": [{"role": "user", "content": text}], **extra}


# --------------------------------------------------------------------------- happy path


def test_litellm_gets_responder_content_and_usage() -> None:
    def responder(request: ChatRequest) -> str:
        return f"scripted reply #{request.index} to {request.last_user_text!r}"

    with ScriptedOpenAIServer(responder) as srv:
        response = acompletion(srv)

    expected = "scripted reply #0 to 'Book a table for two.'"
    assert response.choices[0].message.content == expected
    assert response.choices[0].message.role == "assistant"
    assert response.choices[0].finish_reason == "stop"
    prompt_tokens = rough_tokens("You are terse.\nBook a table for two.")
    assert response.usage.prompt_tokens == prompt_tokens
    assert response.usage.completion_tokens == rough_tokens(expected)
    assert response.usage.total_tokens == prompt_tokens + rough_tokens(expected)
    [request] = srv.requests
    assert request.index == 0 and request.model == "test"
    assert request.messages == MESSAGES
    assert srv.status_counts == {200: 1}


def test_raw_completion_shape_models_endpoint_and_path_without_v1() -> None:
    with ScriptedOpenAIServer(model_id="test") as srv, client(srv) as http:
        models = http.get("/models").json()
        raw = httpx.post(f"{srv.url}/chat/completions", json=chat_body("yo"), trust_env=False)

    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["test"]
    assert raw.status_code == 200
    data = raw.json()
    assert data["object"] == "chat.completion" and data["id"].startswith("chatcmpl-")
    assert isinstance(data["created"], int) and data["model"] == "test"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "echo: yo"}
    assert set(data["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert srv.requests[0].path == "/chat/completions"


def test_stream_and_bad_bodies_are_rejected_with_400() -> None:
    with ScriptedOpenAIServer() as srv, client(srv) as http:
        stream = http.post("/chat/completions", json=chat_body(stream=True))
        not_json = http.post("/chat/completions", content=b"{nope",
                             headers={"Content-Type": "application/json"})
        no_messages = http.post("/chat/completions", json={"model": "test"})
        unknown = http.post("/embeddings", json={"input": "x"})

    assert stream.status_code == 400
    assert "stream=true is not supported" in stream.json()["error"]["message"]
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]["message"]
    assert no_messages.status_code == 400
    assert unknown.status_code == 404
    assert srv.status_counts == {400: 3, 404: 1}


# --------------------------------------------------------------------------- faults


def test_rate_limited_sends_retry_after_once() -> None:
    with ScriptedOpenAIServer(faults=FaultPlan({0: RateLimited(2.0)})) as srv, \
            client(srv) as http:
        limited = http.post("/chat/completions", json=chat_body())
        after = http.post("/chat/completions", json=chat_body())

    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "2"
    assert limited.headers["retry-after-ms"] == "2000"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert after.status_code == 200
    assert [e.status for e in srv.exchanges] == [429, 200]
    assert isinstance(srv.exchange(0).fault, RateLimited)


def test_litellm_retry_waits_for_retry_after() -> None:
    with ScriptedOpenAIServer(faults={0: RateLimited(1.0)}) as srv:
        response = acompletion(srv, num_retries=1)

    assert response.choices[0].message.content == "echo: Book a table for two."
    assert srv.status_counts == {429: 1, 200: 1}
    first, retry = srv.exchanges
    assert retry.request.received_at - first.responded_at >= 1.0
    assert retry.request.headers["x-stainless-retry-count"] == "1"


def test_litellm_raises_rate_limit_without_retries() -> None:
    with ScriptedOpenAIServer(faults={0: RateLimited(1.0)}) as srv, pytest.raises(error_class("litellm.RateLimitError")):
        acompletion(srv, num_retries=0)
    assert srv.status_counts == {429: 1}


@pytest.mark.parametrize(
    ("fault", "status", "expected"),
    [
        (ServerError(), 500, "litellm.InternalServerError"),
        (ServerError(503), 503, "litellm.ServiceUnavailableError"),
        (Malformed, 200, "openai.APIError"),
    ],
    ids=["500", "503", "malformed"],
)
def test_server_errors_and_malformed_raise_at_client(fault: Any, status: int,
                                                     expected: str) -> None:
    import openai

    with ScriptedOpenAIServer(faults={0: fault}) as srv:
        with pytest.raises(error_class(expected)) as info:
            acompletion(srv, num_retries=0)
        ok = acompletion(srv, num_retries=0)  # a fault fires once by default

    assert isinstance(info.value, openai.APIError)
    assert ok.choices[0].message.content.startswith("echo:")
    assert [e.status for e in srv.exchanges] == [status, 200]


def test_slow_reply_exceeds_litellm_timeout_and_stop_cuts_the_wait() -> None:
    import litellm
    import openai

    srv = ScriptedOpenAIServer(faults={0: Slow(5.0)}).start()
    try:
        started = time.monotonic()
        with pytest.raises(litellm.Timeout) as info:
            acompletion(srv, timeout=0.5, num_retries=0)
        elapsed = time.monotonic() - started
        assert isinstance(info.value, openai.APITimeoutError | openai.APIConnectionError)
        assert 0.4 < elapsed < 3.0
        assert srv.wait_for_requests(1)
    finally:
        stopping = time.monotonic()
        srv.stop()
    assert time.monotonic() - stopping < 1.0  # the 5 s wait was cut short


def test_slow_request_does_not_block_others() -> None:
    plan = FaultPlan.matching(lambda r: r.last_user_text == "slow", Slow(1.0))
    with ScriptedOpenAIServer(faults=plan) as srv:
        async def main() -> tuple[float, float]:
            async with httpx.AsyncClient(base_url=srv.base_url, trust_env=False) as http:
                async def timed(text: str) -> float:
                    t0 = time.monotonic()
                    (await http.post("/chat/completions", json=chat_body(text))).raise_for_status()
                    return time.monotonic() - t0
                slow_task = asyncio.create_task(timed("slow"))
                await asyncio.sleep(0.05)
                fast = await timed("fast")
                return await slow_task, fast
        slow, fast = asyncio.run(main())
    assert slow >= 1.0
    assert fast < 0.5


def test_reply_fault_overrides_content_and_callable_faults() -> None:
    def faults(request: ChatRequest) -> Reply | None:
        return Reply('{"not": "what you asked"}') if request.index % 2 else None

    with ScriptedOpenAIServer(faults=faults) as srv:
        contents = [acompletion(srv).choices[0].message.content for _ in range(3)]
    assert contents == ["echo: Book a table for two.", '{"not": "what you asked"}',
                        "echo: Book a table for two."]


def test_responder_exception_becomes_500() -> None:
    def broken(request: ChatRequest) -> str:
        raise ValueError("boom")

    with ScriptedOpenAIServer(broken) as srv, client(srv) as http:
        response = http.post("/chat/completions", json=chat_body())
    assert response.status_code == 500
    assert "ValueError: boom" in response.json()["error"]["message"]
    assert [type(e) for e in srv.responder_errors] == [ValueError]


def test_fault_plan_rules() -> None:
    def req(index: int, text: str = "hi") -> ChatRequest:
        return ChatRequest(index=index, body=chat_body(text), headers=None)  # type: ignore[arg-type]

    first = FaultPlan.first_n(2, ServerError())
    assert [first(req(i)) for i in range(3)] == [ServerError(), ServerError(), None]

    plan = FaultPlan({1: Malformed}).when(lambda r: r.last_user_text == "x", Slow(1), times=2)
    decided = [plan(req(i, "x")) for i in range(4)]
    assert decided == [Slow(1), Malformed(), Slow(1), None]

    always = FaultPlan.always(RateLimited(0.1))
    assert all(always(req(i)) == RateLimited(0.1) for i in range(5))

    with pytest.raises(TypeError):
        FaultPlan({0: "boom"})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        ServerError(200)


# --------------------------------------------------------------------------- headers / body


def test_litellm_extra_headers_and_extra_body_reach_the_server() -> None:
    seen: list[tuple[str | None, Any]] = []

    def responder(request: ChatRequest) -> str:
        seen.append((request.headers.get("X-Test-Tag"), request.body.get("test_tag")))
        return "ok"

    state = {"dialogue": "d-17", "turn": 3}
    with ScriptedOpenAIServer(responder) as srv:
        acompletion(srv, extra_headers={"X-Test-Tag": "d-17:3"},
                    extra_body={"test_tag": state})

    assert seen == [("d-17:3", state)]
    [request] = srv.requests
    assert request.headers["x-test-tag"] == "d-17:3"  # case-insensitive
    assert "test_tag" in request.body and request.body["model"] == "test"


# --------------------------------------------------------------------------- performance


def test_64_concurrent_requests_with_latency_run_in_parallel() -> None:
    import aiohttp

    n, latency = 64, 0.3
    with ScriptedOpenAIServer(latency=latency) as srv:
        async def main() -> list[float]:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=n)) as http:
                async def one(i: int) -> None:
                    async with http.post(f"{srv.base_url}/chat/completions",
                                         json=chat_body(f"m{i}")) as response:
                        assert response.status == 200
                        assert (await response.json())["choices"][0]["message"]["content"]
                rounds = []
                for _ in range(2):  # fresh connections, then reused keep-alive ones
                    t0 = time.monotonic()
                    await asyncio.gather(*(one(i) for i in range(n)))
                    rounds.append(time.monotonic() - t0)
                return rounds
        rounds = asyncio.run(main())

    # serial would be n * latency = 19.2 s; measured ~0.35 s per round
    assert max(rounds) < 3.0, f"{n} requests with {latency}s latency took {rounds}"
    assert sorted(r.index for r in srv.requests) == list(range(2 * n))
    assert srv.status_counts == {200: 2 * n}
    assert all(e.delivered for e in srv.exchanges)


def test_64_concurrent_litellm_calls_run_in_parallel() -> None:
    import litellm

    n, latency = 64, 0.3
    with ScriptedOpenAIServer(latency=latency) as srv:
        async def main() -> tuple[list[str], float]:
            t0 = time.monotonic()
            responses = await asyncio.gather(*(
                litellm.acompletion(model="openai/test", api_base=srv.base_url, api_key="x",
                                    messages=[{"role": "user", "content": f"m{i}"}])
                for i in range(n)))
            return [r.choices[0].message.content for r in responses], time.monotonic() - t0
        contents, elapsed = asyncio.run(main())

    assert contents == [f"echo: m{i}" for i in range(n)]
    # serial would be 19.2 s; measured ~0.7-1.1 s (litellm client overhead dominates)
    assert elapsed < 6.0, f"{n} litellm calls took {elapsed:.2f}s"


def test_keep_alive_round_trips_are_fast_and_nodelay_is_set() -> None:
    with ScriptedOpenAIServer() as srv, client(srv) as http:
        http.post("/chat/completions", json=chat_body()).raise_for_status()  # warm up
        t0 = time.monotonic()
        for _ in range(30):
            http.post("/chat/completions", json=chat_body()).raise_for_status()
        per_request = (time.monotonic() - t0) / 30
        connections = list(srv._httpd._connections)  # type: ignore[union-attr]
        nodelay = [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in connections]
    assert len(connections) == 1  # one keep-alive connection served all 31 requests
    assert all(nodelay)
    assert per_request < 0.02, f"{per_request * 1000:.1f} ms per request (Nagle?)"


def test_many_servers_start_and_stop_cleanly() -> None:
    baseline = threading.active_count()
    t0 = time.monotonic()
    ports = set()
    with httpx.Client(trust_env=False) as http:  # outlives the servers: idle keep-alives
        for _ in range(20):
            with ScriptedOpenAIServer(latency=0.01) as srv:
                http.post(f"{srv.base_url}/chat/completions", json=chat_body()).raise_for_status()
                ports.add(srv.port)
    assert time.monotonic() - t0 < 5.0
    assert len(ports) == 20
    assert threading.active_count() <= baseline
    with pytest.raises(RuntimeError):
        srv.start()  # single-use
    assert echo_responder(ChatRequest(0, chat_body("x"), None)) == "echo: x"  # type: ignore[arg-type]
