"""Gateway against a real OpenAI-compatible server: retries, backoff, timeouts, bounds, cache, usage.

Every call goes through litellm and HTTP to ScriptedOpenAIServer playing the simulator;
waits are measured from the server's own request timestamps.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from tests.support.openai_server import (
    FaultPlan,
    Malformed,
    RateLimited,
    ScriptedOpenAIServer,
    ServerError,
    Slow,
    rough_tokens,
)
from tests.support.simulator import (
    ConcurrencyProbe,
    peak_overlap,
    role_of,
    simulator_config,
    simulator_responder,
)
from utcgen.pipeline import simulator as offline
from utcgen.pipeline.llm.gateway import Gateway, LLMError, LLMFatalError, LLMReply
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.llm.requests import GoalRequest, parse_request
from utcgen.pipeline.settings.config import RunConfig

pytestmark = pytest.mark.slow  # starts real servers

TOOL = {"name": "list_open_tickets", "description": "Lists open service tickets for a queue.",
        "parameters": {"type": "object", "properties": {"queue": {"type": "string"}}, "required": ["queue"]}}
PERSONA = {"id": "p1", "text": "A service desk lead.", "role": "a service desk lead", "attributes": {}}


def goal_state(seed: int = 1) -> GoalRequest:
    return parse_request({"role": "goal", "tool": TOOL, "persona": PERSONA, "seed": seed})  # type: ignore[return-value]


def messages(text: str = "Write a goal.") -> list[dict[str, str]]:
    return [{"role": "system", "content": "You write user goals."}, {"role": "user", "content": text}]


def gateway(srv: ScriptedOpenAIServer, tmp_path: Path, *, model: str | None = None, **llm: Any) -> Gateway:
    """A Gateway for the simulator: short timeout, fast exponential backoff, no cache unless asked."""
    settings = {"timeout": 0.5, "backoff_base": 0.05, "backoff_max": 0.2, "max_retries": 3,
                "cache_dir": str(tmp_path / "cache"), **llm}
    raw = simulator_config(srv.base_url, llm=settings)
    if model:
        raw["models"] = {role: model for role in raw["models"]}
    return Gateway(ModelRegistry.from_config(RunConfig.model_validate(raw)))


def chat(gw: Gateway, state: GoalRequest | None = None, msgs: list | None = None, nonce: str = "") -> LLMReply:
    return asyncio.run(gw.chat(state or goal_state(), msgs or messages(), nonce=nonce))


def expected_goal(state: GoalRequest | None = None) -> str:
    return offline.respond(state or goal_state(), messages())


# --------------------------------------------------------------------------- retries


def test_rate_limit_waits_the_retry_after_then_succeeds(simulated_gateway: None, tmp_path: Path) -> None:
    # Backoff alone would retry within 0.2 s: a >= 1 s gap proves Retry-After was read.
    with ScriptedOpenAIServer(simulator_responder, faults={0: RateLimited(1.0)}) as srv:
        gw = gateway(srv, tmp_path)
        reply = chat(gw)
        limited, retry = srv.exchanges

    assert reply.text == expected_goal()
    assert srv.status_counts == {429: 1, 200: 1}
    assert gw.retries == 1 and gw.usage.calls == 1
    waited = retry.request.received_at - limited.responded_at
    assert 1.0 <= waited < 1.8
    assert retry.request.body == limited.request.body
    assert role_of(retry.request) == "goal"


def test_short_retry_after_beats_long_backoff(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults={0: RateLimited(0.3)}) as srv:
        gw = gateway(srv, tmp_path, backoff_base=10, backoff_max=10)
        chat(gw)
        limited, retry = srv.exchanges
    assert 0.3 <= retry.request.received_at - limited.responded_at < 1.0


def test_one_call_out_of_retries_fails_alone_and_a_streak_stops_the_run(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan.always(RateLimited(0.05))) as srv:
        gw = gateway(srv, tmp_path, max_retries=2, abort_after_failures=2)
        with pytest.raises(LLMError, match="^llm_error: goal call.*RateLimitError.*Gave up after 3 tries") as first:
            chat(gw)
        assert not isinstance(first.value, LLMFatalError)  # its dialogue is rejected; the run goes on
        with pytest.raises(LLMFatalError, match="Gave up after 3 tries, and .* keeps failing: the last 2 calls"):
            chat(gw)
    assert srv.status_counts == {429: 6}
    assert gw.retries == 4 and gw.gave_up == 2 and gw.usage.calls == 0


def test_a_success_between_failures_breaks_the_streak(simulated_gateway: None, tmp_path: Path) -> None:
    down = FaultPlan.matching(lambda r: r.index % 3 != 2, ServerError(500), times=None)  # 2 of 3 fail
    with ScriptedOpenAIServer(simulator_responder, faults=down) as srv:
        gw = gateway(srv, tmp_path, max_retries=0, abort_after_failures=3, abort_failure_rate=1.0)
        outcomes = []
        for _ in range(9):
            try:
                chat(gw)
                outcomes.append("ok")
            except LLMFatalError:
                outcomes.append("fatal")
            except LLMError:
                outcomes.append("error")
    assert outcomes == ["error", "error", "ok"] * 3 and gw.gave_up == 6


def test_a_high_failure_rate_over_recent_calls_stops_the_run(simulated_gateway: None, tmp_path: Path) -> None:
    down = FaultPlan.matching(lambda r: r.index % 2 == 0, ServerError(500), times=None)  # every other call
    with ScriptedOpenAIServer(simulator_responder, faults=down) as srv:
        gw = gateway(srv, tmp_path, max_retries=0, abort_failure_rate=0.5)
        fatal = None
        for call in range(40):
            try:
                chat(gw)
            except LLMFatalError as exc:
                fatal = (call, str(exc))
                break
            except LLMError:
                pass
    # judged from 20 calls on: the first failure after that (call 20) makes 11 of 21
    assert fatal is not None and fatal[0] == 20 and "11 of its last 21 calls failed" in fatal[1]


@pytest.mark.parametrize("fault", [ServerError(500), ServerError(502), ServerError(503), Malformed],
                         ids=["500", "502", "503", "malformed-200"])
def test_server_errors_are_retried_then_succeed(simulated_gateway: None, tmp_path: Path, fault: Any) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan.first_n(2, fault)) as srv:
        gw = gateway(srv, tmp_path)
        reply = chat(gw)
    assert reply.text == expected_goal()
    assert len(srv.requests) == 3 and gw.retries == 2
    assert [e.status for e in srv.exchanges][-1] == 200
    assert gw.usage.calls == 1  # failed attempts are not billed as calls


def test_slow_reply_times_out_and_is_retried(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults={0: Slow(3.0)}) as srv:
        gw = gateway(srv, tmp_path, timeout=0.5)
        started = time.monotonic()
        reply = chat(gw)
        elapsed = time.monotonic() - started
        slow, retry = srv.requests
    assert reply.text == expected_goal()
    assert gw.retries == 1
    assert 0.5 <= retry.received_at - slow.received_at < 1.5  # gave up at the timeout, not after 3 s
    assert elapsed < 2.0


def test_always_slow_stops_the_run_after_every_retry(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan.always(Slow(3.0))) as srv:
        gw = gateway(srv, tmp_path, timeout=0.5, max_retries=2, abort_after_failures=1)
        started = time.monotonic()
        with pytest.raises(LLMFatalError, match=r"Timeout.*Gave up after 3 tries.*llm.timeout \(0.5s\)"):
            chat(gw)
        elapsed = time.monotonic() - started
        received = len(srv.requests)
    assert received == 3 and gw.retries == 2
    assert 1.5 <= elapsed < 3.5


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_fail_at_once_without_retry(simulated_gateway: None, tmp_path: Path, status: int) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults={0: ServerError(status, "scripted refusal")}) as srv:
        gw = gateway(srv, tmp_path, backoff_base=5)
        started = time.monotonic()
        with pytest.raises(LLMError, match="goal call to openai/sim failed") as raised:
            chat(gw)
        elapsed = time.monotonic() - started
    # A bad key, a forbidden or unknown model stops the run; a refused request only fails its dialogue.
    assert isinstance(raised.value, LLMFatalError) == (status in (401, 403, 404))
    assert srv.status_counts == {status: 1}
    assert gw.retries == 0 and elapsed < 1.0


# --------------------------------------------------------------------------- concurrency


def test_in_flight_calls_are_bounded(simulated_gateway: None, tmp_path: Path) -> None:
    probe = ConcurrencyProbe(hold=0.2)
    with ScriptedOpenAIServer(probe) as srv:
        gw = gateway(srv, tmp_path, max_in_flight=4, timeout=10)

        async def many() -> list[LLMReply]:
            # one prompt per call: the simulator knows a call's request by its prompt
            return await asyncio.gather(*(gw.chat(goal_state(i), messages(f"Write goal {i}.")) for i in range(20)))

        started = time.monotonic()
        replies = asyncio.run(many())
        elapsed = time.monotonic() - started
        exchanges = srv.exchanges

    assert [r.text for r in replies] == [expected_goal(goal_state(i)) for i in range(20)]
    assert probe.served == 20
    assert probe.peak == 4  # never more than the bound, and the bound is actually used
    assert peak_overlap((e.request.received_at, e.responded_at) for e in exchanges) <= 4
    assert 1.0 <= elapsed < 3.0  # 5 waves of 0.2 s


# --------------------------------------------------------------------------- cache and usage


def test_cache_hit_makes_no_request_and_costs_nothing(simulated_gateway: None, tmp_path: Path) -> None:
    # A priced model name, so the first call has a real cost that the cached one must drop.
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path, model="openai/gpt-4o-mini", cache=True)
        first = chat(gw)
        second = chat(gw)
        assert len(srv.requests) == 1
        other_nonce = chat(gw, nonce="retry-1")  # a re-ask must reach the model again
        assert len(srv.requests) == 2
        gw.close()
        reopened = gateway(srv, tmp_path, model="openai/gpt-4o-mini", cache=True)
        third = chat(reopened)  # durable across gateways (runs)
        reopened.close()
        assert len(srv.requests) == 2

    assert not first.cached and first.usage.cost_usd > 0 and first.usage.cached_calls == 0
    for hit in (second, third):
        assert hit.cached and hit.text == first.text
        assert hit.usage.cached_calls == 1 and hit.usage.cost_usd == 0.0
        assert hit.usage.prompt_tokens == first.usage.prompt_tokens
    assert not other_nonce.cached
    assert gw.usage.cached_calls == 1
    assert gw.usage.cost_usd == pytest.approx(first.usage.cost_usd + other_nonce.usage.cost_usd)


def test_usage_counts_the_servers_tokens(simulated_gateway: None, tmp_path: Path) -> None:
    calls = [messages("Write a goal."), messages("Write another goal, please, for a different queue.")]
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path)
        replies = [chat(gw, msgs=m, state=goal_state(i)) for i, m in enumerate(calls)]

    for msgs, reply in zip(calls, replies):
        assert reply.usage.prompt_tokens == rough_tokens("\n".join(m["content"] for m in msgs))
        assert reply.usage.completion_tokens == rough_tokens(reply.text)
        assert reply.usage.calls == 1
    assert gw.usage.calls == 2
    assert gw.usage.prompt_tokens == sum(r.usage.prompt_tokens for r in replies)
    assert gw.usage.completion_tokens == sum(r.usage.completion_tokens for r in replies)


def test_a_real_server_gets_the_prompt_and_never_the_typed_request(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        gw = gateway(srv, tmp_path)
        chat(gw)
        [request] = srv.requests
    sent = json.dumps(request.body) + json.dumps(dict(request.headers.items()))
    assert request.messages == messages()
    assert "utcgen" not in sent.lower() and "metadata" not in request.body
    assert TOOL["name"] not in sent and PERSONA["text"] not in sent  # the facts stay in this process
    assert request.model == "sim"
    assert request.headers["authorization"] == "Bearer " + os.environ["UTCGEN_SIM_API_KEY"]


# --------------------------------------------------------------------------- cancellation


def test_cancelling_a_call_is_never_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cancelled call must end cancelled, even when its reply lands in the same loop turn.

    The engine cancels the jobs it no longer needs; a call that swallowed the cancel would
    let its dialogue run on to the end (seen as a multi-second tail in the benchmark).
    litellm is replaced by a coroutine finishing after a known number of loop turns, and
    the cancel is sent at every turn in between, so the race is hit deterministically.
    """
    import litellm

    async def reply_after_a_few_turns(**kwargs: Any) -> Any:
        for _ in range(3):
            await asyncio.sleep(0)
        return litellm.ModelResponse(model="sim", choices=[{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "ok"}}],
                                     usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})

    monkeypatch.setattr(litellm, "acompletion", reply_after_a_few_turns)
    gw = Gateway(ModelRegistry.from_config(RunConfig.model_validate(simulator_config("http://127.0.0.1:9/v1", llm={"cache": False, "direct_client": False}))))

    async def cancel_at(turns: int) -> str:
        task = asyncio.ensure_future(gw.chat(goal_state(), messages()))
        for _ in range(turns):
            await asyncio.sleep(0)
        if task.done():
            return "finished before the cancel"
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "SWALLOWED"

    outcomes = [asyncio.run(cancel_at(turns)) for turns in range(12)]
    assert "SWALLOWED" not in outcomes, outcomes
    assert outcomes.count("cancelled") >= 3 and outcomes[-1] == "finished before the cancel"
