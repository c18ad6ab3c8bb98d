"""The one table of what may change on resume (`fingerprint.MAY_CHANGE`), for generation and evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.evaluation.run import EvalSettings, checkpoint
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.settings.fingerprint import FINGERPRINT_VERSION, MAY_CHANGE, changed_settings, fingerprint
from utcgen.pipeline.settings.templates import prompt_versions
from utcgen.pipeline.synthesis.journal import Journal


def _leaves(data: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append(prefix + key)
    return out


def _set(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    *path, last = dotted.split(".")
    node = data
    for key in path:
        node = node[key]
    node[last] = value
    return data


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 3
    if isinstance(value, str):
        return value + "-other"
    return "set"  # None, {}


def _covers(names: set[str], name: str) -> bool:
    return any(name == n or name.startswith(n + ".") for n in names)


@pytest.mark.parametrize("config", [load_config(),
                                    RunConfig(models={r: "openai/m" for r in ("goal", "slots", "user", "assistant",
                                                                               "relevancy", "critic")})])
def test_every_generation_setting_counts_unless_the_table_frees_it(config: RunConfig) -> None:
    base = config.model_dump()
    versions = prompt_versions()
    fp = fingerprint("generate", base, versions)
    assert fp == config.fingerprint()
    free = {e.name for e in MAY_CHANGE["generate"] if e.when is None}
    conditional = {e.name for e in MAY_CHANGE["generate"] if e.when is not None}  # tested below
    checked = 0
    for name in _leaves(base):
        if _covers(conditional, name):
            continue
        moved = _set(base, name, _other(_get(base, name)))
        if _covers(free, name):
            assert fingerprint("generate", moved, versions) == fp, f"{name} may change on resume"
        else:
            assert fingerprint("generate", moved, versions) != fp, f"{name} must not change on resume"
            assert name in changed_settings("generate", base, moved)
            checked += 1
    assert checked > 20  # seed, catalog, models, sampling, synthesis settings, ...


def _get(data: dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        data = data[key]
    return data


def test_conditional_entries_free_a_setting_only_while_their_condition_holds() -> None:
    base = load_config().model_dump()
    versions = prompt_versions()
    fp = fingerprint("generate", base, versions)
    # unset or off: not counted, so folders made before the setting existed resume; set: counted
    assert fingerprint("generate", _set(base, "exclude_split", "s/split.json"), versions) != fp
    assert fingerprint("generate", _set(base, "synthesis.plan_hint", True), versions) != fp
    # the offline backend never calls its API base; a remote one does
    assert fingerprint("generate", _set(base, "llm.api_base", "http://127.0.0.1:9/v1"), versions) == fp
    remote = _set(base, "models.user", "openai/m")
    assert (fingerprint("generate", _set(remote, "llm.api_base", "http://127.0.0.1:9/v1"), versions)
            != fingerprint("generate", remote, versions))
    # prompt families count only when their feature is on
    scenario = next(k for k in versions if k.startswith("scenario_"))
    bumped = {**versions, scenario: "changed"}
    assert fingerprint("generate", base, bumped) == fp
    mixed = _set(base, "scenarios", {"disambiguation": 0.5, "explicit": 0.5})
    assert fingerprint("generate", mixed, bumped) != fingerprint("generate", mixed, versions)
    assert fingerprint("generate", base, {**versions, "eval_user_vote": "changed"}) == fp
    assert fingerprint("generate", base, {**versions, "user_tool_selection": "changed"}) != fp


def test_evaluation_uses_the_same_table() -> None:
    static = EvalSettings(benchmark="b", model="m", mode="static")
    fp = static.fingerprint()
    assert static.model_copy(update={"limit": 5, "benchmark": "elsewhere"}).fingerprint() == fp
    assert static.model_copy(update={"max_turns": 3, "votes": None}).fingerprint() == fp  # no proxy when static
    assert static.model_copy(update={"model": "other"}).fingerprint() != fp
    dynamic = static.model_copy(update={"mode": "dynamic"})
    assert dynamic.model_copy(update={"max_turns": 3}).fingerprint() != dynamic.fingerprint()
    assert changed_settings("evaluate", static.model_dump(), dynamic.model_dump())[0] == "max_turns"
    assert changed_settings("evaluate", static.model_dump(), static.model_copy(update={"limit": 2}).model_dump()) == []


def test_manifests_record_the_scheme_and_refuse_the_same_way(tmp_path: Path) -> None:
    config = load_config()
    Journal(tmp_path / "gen", config)
    manifest = json.loads((tmp_path / "gen" / "journal" / "run.json").read_text())
    assert manifest["fingerprint"] == config.fingerprint() and manifest["fingerprint_version"] == FINGERPRINT_VERSION
    with pytest.raises(InputError, match=r"gen: holds a run made with a different configuration \(seed\)"):
        Journal(tmp_path / "gen", config.model_copy(update={"seed": 5}))

    settings = EvalSettings(benchmark="b", model="m", mode="static")
    checkpoint(tmp_path / "ev", settings)
    assert json.loads((tmp_path / "ev" / "run.json").read_text())["fingerprint_version"] == FINGERPRINT_VERSION
    with pytest.raises(InputError, match=r"ev: holds an evaluation made with a different configuration \(model\)"):
        checkpoint(tmp_path / "ev", settings.model_copy(update={"model": "other"}))
    checkpoint(tmp_path / "ev", settings.model_copy(update={"model": "other"}), allow_config_change=True)
    history = json.loads((tmp_path / "ev" / "run.json").read_text())["previous_fingerprints"]
    assert history == [settings.fingerprint()]


# What every record and manifest held before the scenario prompt files were merged into one
# template per role: folders made then must keep resuming, so the recorded names and versions stay.
RECORDED_BEFORE_THE_MERGE = {
    "assistant_argument_filling": "assistant-argument-filling/4", "assistant_hint_act": "assistant-hint-act/1",
    "assistant_hint_argument": "assistant-hint-argument/1", "assistant_hint_tool": "assistant-hint-tool/2",
    "assistant_reply_json": "assistant-reply-json/1", "assistant_reply_native": "assistant-reply-native/2",
    "assistant_tool_selection": "assistant-tool-selection/5", "critique": "critique/4",
    "eval_conv_rel": "eval_conv_rel/1", "eval_user_vote": "eval_user_vote/1", "goal": "goal/2",
    "relevancy": "relevancy/2", "rules_assistant": "rules-assistant/3", "rules_goal": "rules-goal/1",
    "rules_slots": "rules-slots/1", "rules_user": "rules-user/1",
    "scenario_assistant_argument_filling": "scenario-assistant-argument-filling/3",
    "scenario_assistant_tool_selection": "scenario-assistant-tool-selection/4",
    "scenario_critique": "scenario-critique/4", "scenario_relevancy": "scenario-relevancy/2",
    "scenario_user_explicit": "user-explicit/2", "scenario_user_fault": "user-input-fault/1",
    "scenario_user_fault_rewrite": "user-fault-rewrite/2", "scenario_user_infeasible": "user-infeasible/1",
    "scenario_user_unavailable": "user-unavailable/1", "scenario_user_underspecified": "user-underspecified/1",
    "sft_system": "sft_system/1", "sft_system_chat": "sft_system_chat/1", "slots": "slots/2",
    "user_argument_filling": "user-argument-filling/5", "user_tool_selection": "user-tool-selection/5",
}


@pytest.mark.parametrize("settings", [{}, {"scenarios": {"disambiguation": 1, "input_fault": 1},
                                           "decision_styles": {"avoidant": 1}}],
                         ids=["default", "scenario-mix"])
def test_runs_made_before_the_prompt_merge_keep_their_fingerprint(settings: dict[str, Any]) -> None:
    """Generation and evaluation hash the same versions as before the merge (a prompt whose text is
    changed on purpose gets a new version, and this table moves with it)."""
    config = RunConfig.model_validate(settings)
    assert config.fingerprint() == fingerprint("generate", config.model_dump(), RECORDED_BEFORE_THE_MERGE)
    evaluation = EvalSettings(benchmark="b", model="m", mode="dynamic")
    assert evaluation.fingerprint() == fingerprint("evaluate", evaluation.model_dump(), {
        k: v for k, v in RECORDED_BEFORE_THE_MERGE.items()
        if k.startswith(("sft_", "user_", "eval_", "scenario_user_")) and k != "scenario_user_fault_rewrite"})
