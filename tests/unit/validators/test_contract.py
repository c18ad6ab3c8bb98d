"""One contract between the rules and the prompts: every stage that can reject a dialogue tells each
model role it judges, in the prompt that role receives, in every phase and scenario type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.factories import make_dialogue
from utcgen.pipeline import scenarios
from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.llm.requests import AssistantRequest, GoalRequest, SlotsRequest, UserRequest, UserScenario
from utcgen.pipeline.settings.templates import prompts_from
from utcgen.pipeline.synthesis.roles import render_assistant, render_goal, render_slots, render_user
from utcgen.validators.cascade import JUDGES, RULES
from utcgen.validators.contract import JUDGED_ROLES, instructions

PHASES = ("tool_selection", "argument_filling")
INFO = {"masked_arg": "amount", "infeasible": {"arg": "amount", "value": -1, "why": "below 0"},
        "fault": {"kind": "premise", "original": "o", "faulted": "f"}}


def rendered_prompts() -> list[tuple[str, str, str]]:
    """(role, where, system prompt) for every judged role in every phase and scenario type."""
    d = make_dialogue()
    out = []
    for kind in [scenarios.get(name) for name in scenarios.names()]:
        for phase in PHASES:
            where = f"{kind.name}/{phase}"
            user = UserRequest(phase=phase, tool=d.seed_tool, persona=d.user_persona, goal=d.goal,  # type: ignore[arg-type]
                               distractors=d.distractor_tools, gold_arguments=d.gold_arguments, history=[],
                               scenario=None if kind.plain else UserScenario(name=kind.name, info=INFO))
            assistant = AssistantRequest(phase=phase, candidates=d.candidate_tools, history=[],  # type: ignore[arg-type]
                                         may_decline=not kind.plain,
                                         tool=d.seed_tool if phase == "argument_filling" else None)
            out += [("user", where, render_user(user, [])[0]["content"]),
                    ("assistant", where, render_assistant(assistant, [], "FORMAT", False)[0]["content"])]
    out.append(("goal", "-", render_goal(GoalRequest(tool=d.seed_tool, persona=d.user_persona,
                                                    gold_arguments=d.gold_arguments))[0]["content"]))
    out.append(("slots", "-", render_slots(SlotsRequest(tool=d.seed_tool, persona=d.user_persona,
                                                        required=d.seed_tool.required))[0]["content"]))
    return out


MARK = "\x00"  # stands for a job's fact in an instruction: the text around it must be in the prompt


def untold() -> list[str]:
    """Every (stage, role, phase/scenario) whose instruction the role's prompt lacks."""
    missing = []
    prompts = rendered_prompts()
    for stage in (*RULES, *JUDGES):
        for role in stage.tells:
            text = instructions(role, only=stage.name, name_words=MARK)
            if "- " not in text:
                missing.append(f"{stage.name} -> {role}: prompts/rules_{role}.txt has no block for it")
                continue
            parts = [p for p in text[text.index("- "):].split(MARK) if p.strip()]
            missing += [f"{stage.name} -> {role} ({where})" for r, where, prompt in prompts
                        if r == role and not all(p in prompt for p in parts)]
    return missing


def test_every_stage_tells_the_roles_it_judges_or_says_why_not() -> None:
    for stage in (*RULES, *JUDGES):
        assert stage.tells or stage.untold, f"{stage.name}: tells no role and gives no reason"
        assert set(stage.tells) <= set(JUDGED_ROLES), stage.name


def test_every_prompt_states_every_rule_that_judges_it() -> None:
    assert untold() == []


def test_the_contract_fails_when_one_rule_instruction_is_removed(tmp_path: Path) -> None:
    """A folder of templates whose user rules lack the name_leak block: the check names that rule."""
    folder = tmp_path / "prompts"
    shutil.copytree(shipped("prompts"), folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    rules = folder / "rules_user.txt"
    text = rules.read_text()
    start = text.index("{%- if name_leak +%}")
    rules.write_text(text[:start] + text[text.index("{%- endif %}", start) + len("{%- endif %}\n"):])
    with prompts_from(folder):
        missing = untold()
    assert missing and all(m.startswith("name_leak -> user") for m in missing), missing


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_the_user_and_the_assistant_are_told_every_rule_in_the_cascade_that_reads_their_turns(role: str) -> None:
    """The rules that read user turns or assistant turns each tell that role."""
    reads = {"user": {"format", "grounding", "name_leak", "recitation", "param_keys", "toolargs", "scenario"},
             "assistant": {"format", "toolcall", "grounding", "toolargs", "param_keys", "repetition", "planning",
                           "scenario"}}[role]
    told = {stage.name for stage in (*RULES, *JUDGES) if role in stage.tells}
    assert reads <= told, reads - told
