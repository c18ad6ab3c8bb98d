"""An endpoint per role: each entry of `models:` may carry its own server, key, sampling and extra request
parameters; the judges default to temperature 0; a parameter a model refuses is left out of its calls;
Anthropic models get their system prompt marked for caching; usage is counted per role."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import yaml

from tests.support.openai_server import ChatRequest, FaultPlan, ScriptedOpenAIServer, ServerError, echo_responder
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.llm.registry import LOCAL_START_IN_FLIGHT, LOCAL_TIMEOUT, ModelRegistry, check_models
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.settings.models import ROLES

SYSTEM = [{"role": "system", "content": "You write goals."}, {"role": "user", "content": "hi"}]


def registry(models: dict[str, Any], **llm: Any) -> ModelRegistry:
    return ModelRegistry.from_config(RunConfig.model_validate({"models": models, "llm": llm}))


def goal_request():
    from utcgen.pipeline.llm.requests import GoalRequest

    tool = Tool(name="get_invoice", description="Fetch one invoice.", parameters={"type": "object", "properties": {}})
    return GoalRequest(tool=tool, persona=Persona(id="p1", text="A clerk."))


# --------------------------------------------------------------------------- configuration


def test_a_role_mapping_overrides_the_llm_defaults_for_that_role_only() -> None:
    reg = registry({"assistant": {"model": "openai/a", "api_base": "https://api.example.com/v1", "temperature": 0.2,
                                  "max_tokens": 300, "timeout": 9, "api_key_env": "A_KEY",
                                  "extra": {"reasoning_effort": "low"}},
                    "user": "openai/u", "relevancy": "openai/j", "critic": {"model": "openai/j", "temperature": 0.5}},
                   api_base="https://llm.example.com/v1", api_key_env="SHARED_KEY", temperature=0.9, max_tokens=700)
    a, u, rel, critic = (reg.entry(r) for r in ("assistant", "user", "relevancy", "critic"))
    assert (a.api_base, a.api_key_env, a.temperature, a.max_tokens, a.timeout, a.extra) == (
        "https://api.example.com/v1", "A_KEY", 0.2, 300, 9, {"reasoning_effort": "low"})
    assert (u.api_base, u.api_key_env, u.temperature, u.max_tokens, u.timeout, u.extra) == (
        "https://llm.example.com/v1", "SHARED_KEY", 0.9, 700, 60, {})
    assert (rel.temperature, critic.temperature) == (0.0, 0.5)  # judges: greedy unless their mapping says
    assert reg.entry("goal").offline and reg.entry("goal").api_base is None


def test_a_null_api_base_in_a_role_mapping_means_the_providers_own_endpoint() -> None:
    reg = registry({"assistant": {"model": "openai/gpt-4o-mini", "api_base": None}, "user": "openai/u"},
                   api_base="http://127.0.0.1:8000/v1")
    assert reg.entry("assistant").api_base is None and reg.entry("user").api_base == "http://127.0.0.1:8000/v1"
    # hosted keeps 60 s and starts at the maximum; the local role gets the long timeout and a low start
    assert (reg.entry("assistant").timeout, reg.start_in_flight(reg.entry("assistant").api_base)) == (60, None)
    assert (reg.entry("user").timeout, reg.start_in_flight(reg.entry("user").api_base)) == (LOCAL_TIMEOUT,
                                                                                               LOCAL_START_IN_FLIGHT)
    again = RunConfig.model_validate(RunConfig.model_validate(
        {"models": {"assistant": {"model": "openai/gpt-4o-mini", "api_base": None}}}).model_dump())
    assert "api_base" in again.models.spec("assistant").model_fields_set  # the null survives a dump


def test_a_local_role_beside_a_hosted_default_gets_the_local_defaults() -> None:
    reg = registry({"user": {"model": "openai/u", "api_base": "http://localhost:9000/v1"},
                    "assistant": {"model": "openai/a", "api_base": "http://localhost:9001/v1", "timeout": 20}},
                   api_base="https://api.example.com/v1")
    assert reg.entry("user").timeout == LOCAL_TIMEOUT and reg.entry("assistant").timeout == 20
    assert reg.entry("critic").timeout == 60


def test_the_string_form_and_a_model_only_mapping_are_the_same_setting() -> None:
    plain = RunConfig.model_validate({"models": {r: "openai/m" for r in ROLES}})
    mapped = RunConfig.model_validate({"models": {r: {"model": "openai/m"} for r in ROLES}})
    assert mapped.model_dump() == plain.model_dump() and mapped.fingerprint() == plain.fingerprint()
    assert mapped.models.names() == {r: "openai/m" for r in ROLES} and mapped.backend() == "litellm"
    transport = RunConfig.model_validate({"models": {**{r: "openai/m" for r in ROLES},
                                                     "user": {"model": "openai/m", "timeout": 5, "api_key_env": "K"}}})
    assert transport.fingerprint() == plain.fingerprint()  # key variable and timeout may change on resume
    sampled = RunConfig.model_validate({"models": {**{r: "openai/m" for r in ROLES},
                                                   "user": {"model": "openai/m", "temperature": 0.1}}})
    assert sampled.fingerprint() != plain.fingerprint()


def test_a_malformed_mapping_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"models": {"critic": {"model": "openai/j", "temperature": 3, "top_p": 1}}}))
    with pytest.raises(InputError) as raised:
        load_config(path)
    text = str(raised.value)
    assert f"{path}: field 'models.critic.temperature'" in text and f"{path}: field 'models.critic.top_p'" in text
    assert "model mapping" not in text and "model string" not in text
    path.write_text(yaml.safe_dump({"models": {"user": {"model": "openai/u", "extra": {"temperature": 0}}}}))
    with pytest.raises(InputError, match=r"field 'models.user.extra'.*temperature cannot be set in extra"):
        load_config(path)


def test_load_config_keeps_the_string_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"models": {"user": {"model": "openai/u", "api_base": "http://127.0.0.1:1/v1"}}}))
    config = load_config(path, models={"assistant": "openai/a"})
    assert config.models.names()["assistant"] == "openai/a" and config.models.spec("user").api_base
    monkeypatch.setenv("UTCGEN_MODEL", "openai/every")
    assert set(load_config(path).models.names().values()) == {"openai/every"}


def test_check_models_names_each_roles_own_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ROLE_KEY", "SHARED_KEY", "UTCGEN_MODEL"):
        monkeypatch.delenv(name, raising=False)
    base = "http://127.0.0.1:9/v1"
    config = RunConfig.model_validate({"models": {
        "user": {"model": "openai/u", "api_base": base, "api_key_env": "ROLE_KEY"},
        "critic": {"model": "openai/j", "api_base": base, "api_key_env": "ROLE_KEY"},
        "assistant": "openai/a"}, "llm": {"api_base": base, "api_key_env": "SHARED_KEY"}})
    assert check_models(config) == ["models.user/critic.api_key_env: the environment variable ROLE_KEY is not set",
                                    "llm.api_key_env: the environment variable SHARED_KEY is not set"]
    monkeypatch.setenv("ROLE_KEY", "x")
    assert check_models(config) == ["llm.api_key_env: the environment variable SHARED_KEY is not set"]
    monkeypatch.setenv("SHARED_KEY", "y")
    assert check_models(config) == []


# --------------------------------------------------------------------------- what the gateway sends


def test_each_role_sends_its_own_values() -> None:
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.structured import Shape

    reg = registry({"goal": {"model": "openai/g", "api_base": "http://127.0.0.1:7/v1", "temperature": 0.3,
                             "max_tokens": 99, "timeout": 4, "extra": {"top_p": 0.9}},
                    "user": "openai/o3-mini", "critic": "openai/gpt-5-mini"},
                   api_base="http://127.0.0.1:8/v1", cache=False)
    gateway = Gateway(reg)
    try:
        request = goal_request()
        goal = gateway._request_kwargs(request, SYSTEM, Shape())
        assert {k: goal[k] for k in ("model", "api_base", "temperature", "max_tokens", "timeout", "top_p")} == {
            "model": "openai/g", "api_base": "http://127.0.0.1:7/v1", "temperature": 0.3, "max_tokens": 99,
            "timeout": 4, "top_p": 0.9}
        user = gateway._request_kwargs(request.model_copy(update={"role": "user"}), SYSTEM, Shape())
        critic = gateway._request_kwargs(request.model_copy(update={"role": "critic"}), SYSTEM, Shape())
    finally:
        gateway.close()
    # reasoning models: max_completion_tokens, never max_tokens
    assert user["max_completion_tokens"] == 1024 and "max_tokens" not in user and user["temperature"] == 0.7
    assert critic["max_completion_tokens"] == 1024 and critic["temperature"] == 0.0
    assert user["messages"] == SYSTEM  # no cache marks outside Anthropic


@pytest.mark.parametrize("model", ["anthropic/claude-3-5-sonnet-20240620", "claude-3-haiku-20240307"])
def test_anthropic_models_get_their_system_prompt_marked_for_caching(model: str) -> None:
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.structured import Shape

    gateway = Gateway(registry({"goal": model}, cache=False))
    try:
        sent = gateway._request_kwargs(goal_request(), SYSTEM, Shape())
    finally:
        gateway.close()
    assert sent["messages"][0] == {"role": "system", "content": [
        {"type": "text", "text": "You write goals.", "cache_control": {"type": "ephemeral"}}]}
    assert sent["messages"][1] == SYSTEM[1]  # the dialogue itself is not marked
    assert SYSTEM[0]["content"] == "You write goals."  # the caller's messages are left alone


def test_litellm_reports_a_reasoning_models_temperature_as_unsupported() -> None:
    """The library boundary: litellm refuses o-series' temperature before any request, naming it."""
    import litellm
    from litellm.exceptions import UnsupportedParamsError

    from utcgen.pipeline.llm.params import unsupported_param

    with pytest.raises(UnsupportedParamsError) as raised:
        litellm.completion(model="o3-mini", messages=SYSTEM, temperature=0.7, api_key="sk-none")
    assert unsupported_param({"model": "o3-mini", "temperature": 0.7, "max_completion_tokens": 9},
                             raised.value) == "temperature"


REFUSAL = "Unsupported parameter: 'temperature' is not supported with this model."


def no_temperature(request: ChatRequest) -> bool:
    return "temperature" in request.body


@pytest.mark.slow
@pytest.mark.parametrize("direct_client", [True, False], ids=["direct", "litellm"])
def test_a_refused_parameter_is_dropped_for_the_endpoint_with_one_warning(
        direct_client: bool, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from utcgen.pipeline.llm.gateway import Gateway, shutdown

    monkeypatch.setenv("UTCGEN_TEST_KEY", "sk-test")
    plan = FaultPlan().when(no_temperature, ServerError(400, REFUSAL), times=None)  # as OpenAI answers o-series
    with ScriptedOpenAIServer(echo_responder, faults=plan) as srv:
        gateway = Gateway(registry({"critic": "openai/o4-mini", "relevancy": "openai/o4-mini"},
                                   api_base=srv.base_url, api_key_env="UTCGEN_TEST_KEY", cache=False,
                                   direct_client=direct_client))

        async def calls() -> list[str]:
            request = goal_request()
            replies = []
            for role in ("critic", "relevancy", "critic"):
                reply = await gateway.chat(request.model_copy(update={"role": role}), SYSTEM)
                replies.append(reply.text)
            await shutdown()
            return replies

        try:
            with caplog.at_level(logging.WARNING, logger="utcgen.llm"):
                replies = asyncio.run(calls())
        finally:
            gateway.close()
        bodies = [r.body for r in srv.requests]
    assert replies == ["echo: hi"] * 3
    # the first call was refused and sent again at once without temperature; later calls never send it.
    # Through litellm the refusal comes before any request (its o-series rules), from the server otherwise.
    assert [("temperature" in b) for b in bodies] == ([True] if direct_client else []) + [False] * 3
    assert all(b["max_completion_tokens"] == 1024 and "max_tokens" not in b for b in bodies)
    warnings = [r.getMessage() for r in caplog.records if "does not support" in r.getMessage()]
    assert len(warnings) == 1 and all(w in warnings[0] for w in ("critic", "openai/o4-mini", "'temperature'"))
    assert gateway.retries == 0 and gateway.usage.calls == 3
    assert gateway.dropped.report() == {f"openai/o4-mini at {srv.base_url}": ["temperature"]}


@pytest.mark.slow
def test_usage_is_counted_per_role(monkeypatch: pytest.MonkeyPatch) -> None:
    from utcgen.pipeline.llm.gateway import ROLE_USAGE, Gateway, shutdown

    monkeypatch.setenv("UTCGEN_TEST_KEY", "sk-test")
    with ScriptedOpenAIServer(echo_responder) as srv:
        gateway = Gateway(registry({"goal": "openai/m", "critic": "openai/m"}, api_base=srv.base_url,
                                   api_key_env="UTCGEN_TEST_KEY", cache=False))
        mine: dict = {}

        async def calls() -> None:
            ROLE_USAGE.set(mine)
            request = goal_request()
            await gateway.chat(request, SYSTEM)
            await asyncio.gather(*(gateway.chat(request.model_copy(update={"role": "critic"}), SYSTEM)
                                   for _ in range(2)))  # tasks share the attempt's mapping
            await shutdown()

        try:
            asyncio.run(calls())
        finally:
            gateway.close()
    assert {r: u.calls for r, u in gateway.usage_by_role.items()} == {"goal": 1, "critic": 2}
    assert {r: u.calls for r, u in mine.items()} == {"goal": 1, "critic": 2}
    assert sum(u.prompt_tokens for u in mine.values()) == gateway.usage.prompt_tokens > 0


# --------------------------------------------------------------------------- a run over three servers


@pytest.mark.slow
def test_a_run_with_three_roles_at_three_local_servers(simulated_gateway: None, tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    from tests.support.simulator import API_KEY_ENV, role_of, simulator_responder
    from utcgen.pipeline.synthesis.run import Engine

    n = 3
    with ScriptedOpenAIServer(simulator_responder) as talk, ScriptedOpenAIServer(simulator_responder) as act, \
            ScriptedOpenAIServer(simulator_responder) as judge:
        raw = {
            "num_dialogues": n, "out": str(tmp_path / "out"),
            "synthesis": {"max_jobs_in_flight": 3, "speculate": False},
            "models": {"goal": "openai/sim-talk", "slots": "openai/sim-talk", "user": "openai/sim-talk",
                       "assistant": {"model": "openai/sim-act", "api_base": act.base_url, "temperature": 0.3,
                                     "max_tokens": 512, "extra": {"top_p": 0.9}},
                       "relevancy": {"model": "openai/sim-judge", "api_base": judge.base_url, "max_tokens": 256},
                       "critic": {"model": "openai/sim-judge", "api_base": judge.base_url, "max_tokens": 256}},
            "llm": {"api_base": talk.base_url, "api_key_env": API_KEY_ENV, "cache": False, "max_in_flight": 8},
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(raw), encoding="utf-8")
        engine = Engine(load_config(path), embedder=embedder)
        try:
            records = asyncio.run(engine.run())
            summary = engine.export(records)
        finally:
            engine.close()
        seen = {name: srv.requests for name, srv in (("talk", talk), ("act", act), ("judge", judge))}

    def log(requests: list[ChatRequest]) -> list[tuple[str | None, str, Any, Any, Any]]:
        return sorted({(role_of(r), r.model, r.body.get("temperature"), r.body.get("max_tokens"),
                        r.body.get("top_p")) for r in requests}, key=str)

    request_log = {name: log(requests) for name, requests in seen.items()}
    print("request log (role, model, temperature, max_tokens, top_p) per server:")
    for name, requests in seen.items():
        print(f"  {name}: {len(requests)} requests: {request_log[name]}")
    assert request_log["talk"] == [("goal", "sim-talk", 0.7, 1024, None), ("slots", "sim-talk", 0.7, 1024, None),
                                   ("user", "sim-talk", 0.7, 1024, None)]
    assert request_log["act"] == [("assistant", "sim-act", 0.3, 512, 0.9)]
    assert request_log["judge"] == [("critic", "sim-judge", 0.0, 256, None),
                                    ("relevancy", "sim-judge", 0.0, 256, None)]

    # every call is charged to its role in its dialogue's record, and stats.json sums them role by role
    calls = {role: sum(d.generation.usage_by_role[role].calls for r in records.values() for d in r.dialogues
                       if role in d.generation.usage_by_role) for role in ROLES}
    assert calls["goal"] + calls["slots"] + calls["user"] == len(seen["talk"])
    assert calls["assistant"] == len(seen["act"]) and calls["relevancy"] + calls["critic"] == len(seen["judge"])
    stats = json.loads(summary.stats_path.read_text())
    by_role = stats["usage_by_role"]
    assert set(by_role) == set(ROLES) and summary.accepted == n
    assert sum(u["calls"] for u in by_role.values()) == stats["usage"]["calls"]
    assert by_role["assistant"]["per_accepted_dialogue"]["calls"] == pytest.approx(by_role["assistant"]["calls"] / n,
                                                                                 abs=1e-3)
    assert stats["run"]["models"]["assistant"] == "openai/sim-act"
    assert {d.generation.models["critic"] for r in records.values() for d in r.dialogues} == {"openai/sim-judge"}
