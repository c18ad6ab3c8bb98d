"""The LLM judges through a real Gateway against a scripted OpenAI-compatible server: an unparseable reply
retried, fences tolerated, a model's failing verdict kept, a refused request, and an endpoint that stays down
stopping the run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support.factories import make_dialogue
from tests.support.openai_server import FaultPlan, Reply, ScriptedOpenAIServer, ServerError
from utcgen.pipeline.llm.gateway import Gateway, LLMFatalError
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.settings.config import RunConfig
from utcgen.validators.critique import check_critique
from utcgen.validators.relevancy import check_relevancy

GOOD = make_dialogue()
SEED = GOOD.seed_tool.name


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def served_gateway(srv: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch, max_retries: int = 0) -> Gateway:
    monkeypatch.setenv("UTCGEN_TEST_KEY", "sk-test")
    cfg = RunConfig()
    cfg.models.relevancy = cfg.models.critic = "openai/test"
    cfg.llm.api_base = srv.base_url
    cfg.llm.api_key_env = "UTCGEN_TEST_KEY"
    cfg.llm.cache = False
    cfg.llm.max_retries = max_retries
    cfg.llm.timeout = 10
    return Gateway(ModelRegistry.from_config(cfg))


def test_unparseable_judge_is_retried_then_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAIServer(lambda req: "not json") as srv:
        v = run(check_relevancy(GOOD, served_gateway(srv, monkeypatch)))
        assert len(srv.requests) == 3  # first try + 2 retries
        sent = srv.requests[0].messages
    assert not v.passed
    assert v.reason == "judge reply unparseable"
    assert v.details["reply"] == "not json" and v.details["attempts"] == 3
    assert sent[0]["content"].startswith("You review synthetic conversations") and SEED in sent[1]["content"]


def test_judge_recovers_on_retry_and_tolerates_fences(monkeypatch: pytest.MonkeyPatch) -> None:
    good = 'Verdict:\n```json\n{"passed": true, "issues": [], "reason": "clean"}\n```'
    with ScriptedOpenAIServer(lambda req: good, faults=FaultPlan({0: Reply("I think it is fine.")})) as srv:
        v = run(check_critique(GOOD, served_gateway(srv, monkeypatch)))
        assert len(srv.requests) == 2
    assert v.passed and v.reason == "clean" and v.details["attempts"] == 2


def test_judge_failing_verdict_from_a_model_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = json.dumps({"passed": False, "issues": ["user names the tool", "no clarification"], "reason": ""})
    with ScriptedOpenAIServer(lambda req: reply) as srv:
        v = run(check_critique(GOOD, served_gateway(srv, monkeypatch)))
    assert not v.passed
    assert v.details["issues"] == ["user names the tool", "no clarification"]
    assert v.reason == "user names the tool; no clarification"


def test_a_refused_judge_request_becomes_a_failed_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAIServer(faults=FaultPlan.always(ServerError(400, "context too long"))) as srv:
        v = run(check_relevancy(GOOD, served_gateway(srv, monkeypatch)))
        assert len(srv.requests) == 1  # a 4xx is final: no gateway retry, no judge retry
    assert not v.passed
    assert v.reason.startswith("relevancy call to openai/test failed") and "context too long" in v.reason
    assert v.details["error"] == "llm"


def test_a_judge_server_that_stays_down_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAIServer(faults=FaultPlan.always(ServerError(500))) as srv:
        gw = served_gateway(srv, monkeypatch)  # max_retries=0
        verdicts = [run(check_relevancy(GOOD, gw)) for _ in range(9)]  # one failed call rejects its dialogue only
        assert all(not v.passed and v.details["error"] == "llm" and "llm_error" in v.reason for v in verdicts)
        with pytest.raises(LLMFatalError, match="relevancy call to openai/test failed.*Gave up after 1 try, .*"
                                                "keeps failing: the last 10 calls"):
            run(check_relevancy(GOOD, gw))  # the tenth in a row: the endpoint is down
        assert len(srv.requests) == 10
