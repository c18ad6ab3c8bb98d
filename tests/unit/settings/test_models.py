"""The configured models are checked before the run: each problem names the roles, the model and the fix."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO
from utcgen.pipeline.llm.registry import check_models
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.settings.models import ROLES

ALL_ROLES = "models." + "/".join(ROLES)


def config(models: dict[str, str] | str, **llm: object) -> RunConfig:
    if isinstance(models, str):
        models = {role: models for role in ROLES}
    return RunConfig.model_validate({"models": models, "llm": llm})


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "UTCGEN_MODEL", "UTCGEN_API_BASE", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_offline_default_needs_nothing() -> None:
    assert check_models(RunConfig()) == []


def test_a_missing_key_is_named_once_for_all_the_roles_using_it(monkeypatch: pytest.MonkeyPatch) -> None:
    [problem] = check_models(config("openai/gpt-4o-mini"))
    assert problem.startswith(f"{ALL_ROLES} = 'openai/gpt-4o-mini': needs OPENAI_API_KEY in the environment")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    assert check_models(config("openai/gpt-4o-mini")) == []


def test_only_the_roles_on_a_keyed_provider_are_named() -> None:
    models = {role: "utcgen-offline/default" for role in ROLES} | {"assistant": "anthropic/claude-3-5-sonnet"}
    [problem] = check_models(config(models))
    assert problem.startswith("models.assistant = 'anthropic/claude-3-5-sonnet': needs ANTHROPIC_API_KEY")


def test_an_unknown_provider_is_named() -> None:
    [problem] = check_models(config("nonsense/foo"))
    assert problem.startswith(f"{ALL_ROLES} = 'nonsense/foo': litellm knows no provider for it")


def test_api_key_env_must_name_a_set_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config("openai/local-model", api_key_env="MY_KEY", api_base="http://127.0.0.1:9/v1")
    assert check_models(cfg) == ["llm.api_key_env: the environment variable MY_KEY is not set"]
    monkeypatch.setenv("MY_KEY", "anything")
    assert check_models(cfg) == []  # OPENAI_API_KEY is not needed when the key comes from MY_KEY


def test_a_local_server_with_default_address_needs_no_setting() -> None:
    # Ollama and vLLM take no key; Ollama's default address is used when none is set.
    assert check_models(config("ollama/llama3.1")) == []
    assert check_models(config("hosted_vllm/Qwen/Qwen2.5-7B-Instruct")) == []


def test_the_problem_says_when_the_model_came_from_utcgen_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_MODEL", "openai/gpt-4o-mini")
    [problem] = check_models(load_config())
    assert f"{ALL_ROLES} = 'openai/gpt-4o-mini' (from UTCGEN_MODEL): needs OPENAI_API_KEY" in problem


@pytest.mark.slow  # the console script
def test_generate_without_a_key_stops_before_doing_anything(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env |= {"UTCGEN_MODEL": "openai/gpt-4o-mini", "UTCGEN_CACHE_DIR": str(tmp_path / "cache"),
            "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run([UTCGEN, "generate", "--out", str(out), "--no-progress"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "needs OPENAI_API_KEY in the environment" in result.stderr
    assert "retry" not in result.stderr and not out.exists()
