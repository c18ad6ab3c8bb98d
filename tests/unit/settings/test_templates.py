"""Prompt files: versions gathered once, over every file."""

from __future__ import annotations

from pathlib import Path

import pytest

from utcgen.pipeline import scenarios
from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.settings.templates import (
    SWITCHED_PROMPTS,
    PromptError,
    load_prompt,
    parse_prompt,
    prompt_versions,
)


def test_prompt_versions_cover_every_shipped_prompt_file_and_variant() -> None:
    """Each file's version lines (its own and its variants') and each scenario type's sections are recorded."""
    files = sorted(p.stem for p in shipped("prompts").glob("*.txt"))
    versions = prompt_versions()
    declared: dict[str, str] = {}
    for name in files:
        lines = (shipped("prompts") / f"{name}.txt").read_text(encoding="utf-8").splitlines()
        mine = {}
        for line in lines[:next(i for i, x in enumerate(lines) if x.startswith("==="))]:
            head, _, version = line.partition(":")
            mine[head.removeprefix("version").strip() or name] = version.strip()
        assert dict(load_prompt(name).versions) == mine, name
        declared |= mine
    from_types = {n: v for t in scenarios.all() for n, v in t.prompt_versions}
    # a switched feature's templates are listed only by runs that switch it on, and so are the sections of a
    # chained scenario type (it needs tool results)
    switched = {n for stem in SWITCHED_PROMPTS for n, _ in load_prompt(stem).versions} | \
        {n for t in scenarios.all() if t.chained for n, _ in t.prompt_versions}
    assert switched and not switched & set(versions)
    assert versions == dict(sorted((n, v) for n, v in {**declared, **from_types}.items() if n not in switched))
    assert prompt_versions(switched_on=set(SWITCHED_PROMPTS.values())) == dict(sorted({**declared, **from_types}.items()))
    # the names recorded before the scenario prompts were merged into one template per role stay recorded
    assert {"goal", "slots", "user_tool_selection", "user_argument_filling", "assistant_argument_filling",
            "scenario_assistant_tool_selection", "scenario_critique", "scenario_relevancy", "scenario_user_explicit",
            "scenario_user_fault", "scenario_user_fault_rewrite", "relevancy", "critique", "sft_system"} <= set(versions)


def test_prompt_versions_of_another_directory(tmp_path: Path) -> None:
    (tmp_path / "only.txt").write_text("version: only/3\n=== user\nhello {{name}}\n", encoding="utf-8")
    assert prompt_versions(tmp_path) == {"only": "only/3"}


def test_prompt_versions_is_a_fresh_dict() -> None:
    prompt_versions()["goal"] = "tampered"
    assert prompt_versions()["goal"] == "goal/2"


TEMPLATE = """version: t/1
version t_variant: t-variant/4
=== system
Always.
{% if a %}
A is {{value}}.
  {% if b %}
And B.
  {% else %}
Not B.
  {% endif %}
{% else %}
Not A.
{% endif %}
Inline {% if b %}b{% else %}no b{% endif %}.
=== user
{{transcript}}"""


@pytest.mark.parametrize(("a", "b", "expected"), [
    (True, True, "Always.\nA is 7.\nAnd B.\nInline b."),
    (True, False, "Always.\nA is 7.\nNot B.\nInline no b."),
    (False, True, "Always.\nNot A.\nInline b."),
    (False, False, "Always.\nNot A.\nInline no b."),
])
def test_conditional_sections_keep_the_lines_of_the_branch_taken(a: bool, b: bool, expected: str) -> None:
    prompt = parse_prompt("t", TEMPLATE)
    assert prompt.versions == (("t", "t/1"), ("t_variant", "t-variant/4")) and prompt.version == "t/1"
    assert prompt.render(a=a, b=b, value=7, transcript="...")[0]["content"] == expected


def test_a_placeholder_is_needed_only_in_the_branch_taken() -> None:
    prompt = parse_prompt("t", TEMPLATE)
    assert prompt.render(a=False, b=False, transcript="")[0]["content"].startswith("Always.")
    with pytest.raises(PromptError, match=r"^prompts/t.txt, section '=== system': 'value' is undefined$"):
        prompt.render(a=True, b=False, transcript="")
    with pytest.raises(PromptError, match=r"'b' is undefined"):
        prompt.render(a=True, value=1, transcript="")


def test_a_list_of_optional_lines_leaves_no_blank_line() -> None:
    """The rules prompts' form: each kept line under the heading, none left over at either end."""
    prompt = parse_prompt("t", "version: t/1\n=== system\nChecks:\n{%- if a +%}\n- A\n{%- endif %}\n"
                               "{%- if b +%}\n- B {{x}}\n{%- endif %}\n")
    assert [prompt.render(a=a, b=b, x="\n")[0]["content"] for a, b in ((1, 1), (0, 1), (1, 0), (0, 0))] == [
        "Checks:\n- A\n- B \n", "Checks:\n- B \n", "Checks:\n- A", "Checks:"]


@pytest.mark.parametrize("body", ["{% if a %}open", "{% endif %}", "{% else %}", "{% if a %}x{% else %}y{% else %}z{% endif %}"])
def test_unbalanced_conditionals_fail_when_the_file_is_read(body: str) -> None:
    with pytest.raises(PromptError, match=r"prompts/t.txt: section '=== system', line 1"):
        parse_prompt("t", f"version: t/1\n=== system\n{body}")


def test_the_block_syntax_before_jinja_is_refused_saying_what_to_write() -> None:
    with pytest.raises(PromptError, match=r"prompts/t.txt: section '=== system' uses '\{\{#if a\}\}'.*\{% if name %\}"):
        parse_prompt("t", "version: t/1\n=== system\n{{#if a}}\nx\n{{/if}}")


def test_a_template_runs_in_the_sandbox() -> None:
    """A template is text: it cannot reach Python's internals through a value."""
    prompt = parse_prompt("t", "version: t/1\n=== system\n{{ x.__class__.__mro__ }}")
    with pytest.raises(PromptError, match=r"prompts/t.txt, section '=== system': access to attribute '__class__'.*unsafe"):
        prompt.render(x="")


@pytest.mark.parametrize("phase", ["tool_selection", "argument_filling"])
@pytest.mark.parametrize("kind", scenarios.all(), ids=lambda k: k.name)
def test_every_role_renders_every_scenario_from_one_template(kind: scenarios.ScenarioType, phase: str) -> None:
    """The user, assistant, critic and relevancy prompts of each scenario type: the type's sections are
    in, the other variants' are out, and no tag or placeholder is left over."""
    from tests.support.factories import make_dialogue
    from utcgen.pipeline.core.records import Dialogue
    from utcgen.pipeline.llm.requests import AssistantRequest, UserRequest, UserScenario
    from utcgen.pipeline.synthesis.roles import render_assistant, render_user
    from utcgen.validators import critique, relevancy

    d = Dialogue.model_validate({**make_dialogue().model_dump(), "scenario": kind.name})
    info = {"masked_arg": "amount", "infeasible": {"arg": "amount", "value": -1, "why": "below 0"},
            "fault": {"kind": "premise", "original": "o", "faulted": "f"}}
    user = UserRequest(phase=phase, tool=d.seed_tool, persona=d.user_persona, goal=d.goal, distractors=[],
                       gold_arguments=d.gold_arguments, history=[], scenario=UserScenario(name=kind.name, info=info))
    assistant = AssistantRequest(phase=phase, candidates=d.candidate_tools, history=[], may_decline=not kind.plain,
                                 tool=d.seed_tool if phase == "argument_filling" else None)
    rendered = {"user": render_user(user, []), "assistant": render_assistant(assistant, [], "FORMAT", False),
                "critique": critique.render(d), "relevancy": relevancy.render(d)}
    for role, messages in rendered.items():
        assert all("{{" not in m["content"] for m in messages), role
    user_text, critic_text = rendered["user"][0]["content"], rendered["critique"][0]["content"]
    section = kind.user_section(info, {})
    if section is None:
        vague = "deliberately vague" in user_text
        assert vague == (phase == "tool_selection")
    else:
        assert section in user_text and "deliberately vague" not in user_text
    # the user holds its tool and values from the first turn, whatever the phase or scenario
    assert "The tool that would do what you need" in user_text and "The values you hold" in user_text
    assert ("say so plainly" in rendered["assistant"][0]["content"]
            or "say why and ask" in rendered["assistant"][0]["content"]) == (not kind.plain)
    assert (kind.critique_note in critic_text if kind.critique_note else "1. Two phases, in order." in critic_text)
    assert ("may end with\n  no call at all" in rendered["relevancy"][0]["content"]) == (not kind.expects_call)
