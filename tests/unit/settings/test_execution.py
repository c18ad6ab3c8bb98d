"""The `execution` section and the `tool_result` role's model: off by default, and off changes nothing a
run records, dumps or hashes; on, the role runs and every one of its settings counts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.settings.fingerprint import changed_settings
from utcgen.pipeline.settings.models import MODEL_ROLES, OFFLINE_MODEL, ROLES, SWITCHED_ROLES

ON = {"execution": {"results": True}}


def write(tmp_path: Path, raw: dict) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_defaults_and_the_roles_a_run_calls() -> None:
    config = load_config()
    assert (config.execution.results, config.execution.error_share) == (False, 0.15)
    assert config.models.tool_result == OFFLINE_MODEL and "tool_result" in MODEL_ROLES
    assert "tool_result" not in ROLES and SWITCHED_ROLES == {"tool_result": "execution.results"}
    assert config.roles() == ROLES
    assert RunConfig.model_validate(ON).roles() == (*ROLES, "tool_result")


def test_off_records_dumps_and_hashes_what_a_run_did_before() -> None:
    config = load_config()
    dumped = config.model_dump()
    assert "execution" not in dumped and "tool_result" not in dumped["models"]
    assert set(config.models.names()) == set(ROLES)  # generation.models: the six roles, as before
    assert "tool_result" not in config.prompt_versions()
    assert set(ModelRegistry.from_config(config).entries) == set(ROLES)
    # what results would use, set while results are off, changes neither the fingerprint nor the backend
    idle = load_config(overrides={"execution": {"results": False, "error_share": 0.4}},
                       models={"tool_result": "openai/m"})
    assert idle.fingerprint() == config.fingerprint() and idle.backend() == "offline"
    assert set(idle.models.names()) == set(ROLES)


def test_on_the_role_runs_and_its_settings_count() -> None:
    off = load_config()
    on = load_config(overrides=ON)
    assert on.fingerprint() != off.fingerprint()
    assert on.prompt_versions()["tool_result"] == "tool_result/2"
    assert set(ModelRegistry.from_config(on).entries) == {*ROLES, "tool_result"}
    assert on.models.names(on.roles())["tool_result"] == OFFLINE_MODEL
    share = load_config(overrides={"execution": {"results": True, "error_share": 0.3}})
    assert share.fingerprint() != on.fingerprint()
    assert changed_settings("generate", on.model_dump(), share.model_dump()) == ["execution.error_share"]
    remote = load_config(overrides=ON, models={"tool_result": "openai/m"})
    assert remote.fingerprint() != on.fingerprint() and remote.backend() == "litellm"
    assert changed_settings("generate", off.model_dump(), on.model_dump()) == ["execution"]  # a resume names the section


def test_one_model_for_every_role_reaches_the_tool_result_role_only_when_it_runs() -> None:
    off, on = load_config(model="openai/m"), load_config(overrides=ON, model="openai/m")
    assert "tool_result" not in off.model_dump()["models"]  # the dump of such a run is what it was
    assert on.models.tool_result == "openai/m"
    assert load_config(overrides=ON, model="openai/m", models={"tool_result": "openai/t"}).models.tool_result == "openai/t"


def test_a_dump_reads_back_as_the_same_config() -> None:
    for config in (load_config(), load_config(overrides={"execution": {"results": True, "error_share": 0.5}},
                                              models={"tool_result": {"model": "openai/t", "temperature": 0.2}})):
        again = RunConfig.model_validate(config.model_dump())
        assert again == config and again.fingerprint() == config.fingerprint()


@pytest.mark.parametrize("execution,field,message", [
    ({"error_share": 1.5}, "execution.error_share", "less than or equal to 1"),
    ({"error_share": -0.1}, "execution.error_share", "greater than or equal to 0"),
    ({"results": "maybe"}, "execution.results", "valid boolean"),
    ({"result": True}, "execution.result", "Extra inputs are not permitted"),
])
def test_config_errors_name_the_field(tmp_path: Path, execution: dict, field: str, message: str) -> None:
    path = write(tmp_path, {"execution": execution})
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert f"{path}: field '{field}'" in str(caught.value) and message in str(caught.value)


def test_the_role_takes_a_model_mapping_and_its_own_structured_output(tmp_path: Path) -> None:
    path = write(tmp_path, {"execution": {"results": True},
                            "models": {"tool_result": {"model": "openai/t", "temperature": 3}}})
    with pytest.raises(InputError, match=r"field 'models.tool_result.temperature'"):
        load_config(path)
    config = load_config(overrides={"llm": {"structured_output_roles": {"tool_result": "off"}}, **ON})
    assert ModelRegistry.from_config(config).entry("tool_result").structured_output == "off"
    with pytest.raises(InputError, match="unknown role"):
        load_config(models={"tool_results": "openai/t"})


def test_a_users_own_tool_result_template_counts_only_when_results_are_on(tmp_path: Path) -> None:
    from utcgen.pipeline.core.resources import shipped

    mine = tmp_path / "prompts"
    mine.mkdir()
    text = (shipped("prompts") / "tool_result.txt").read_text(encoding="utf-8")
    (mine / "tool_result.txt").write_text(text.replace("You are the service", "You are the system"), encoding="utf-8")
    assert load_config(overrides={"prompts_dir": str(mine)}).fingerprint() == load_config().fingerprint()
    on = load_config(overrides={"prompts_dir": str(mine), **ON})
    assert on.fingerprint() != load_config(overrides=ON).fingerprint()
    assert "tool_result.txt" in on.fingerprint_settings()["prompt_templates"]
