"""Scenario types are registered objects: a type registered here, in the test, is drawn by the
config's mix, accepted by the records, rendered into the user's prompt, checked by its own rule
and generated end to end, with no other change to the code."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from tests.support.factories import make_dialogue
from utcgen.pipeline import scenarios
from utcgen.pipeline.core.records import FAULT_KINDS, Dialogue, Message, ToolCall
from utcgen.pipeline.scenarios.base import DialogueView, ScenarioType

LINES = {"finance"}


class Rushed(ScenarioType):
    """A toy type: the user is in a hurry and gives everything at once; the assistant must not ask."""

    name = "rushed"
    asks_nothing = True
    headline = "over_clarification"
    critique_note = "the user is in a hurry and gives every value; the assistant calls at once."
    prompt_versions: ClassVar[tuple[tuple[str, str], ...]] = (("scenario_user_rushed", "user-rushed/1"),)

    def user_section(self, info: dict, scenario: dict) -> str:
        return "How to behave:\n- You are in a hurry: say what you need and every value in one message."

    def opening(self, gold: dict[str, Any], info: dict) -> tuple[list[str], dict[str, Any]]:
        return sorted(gold), {}

    def tool_known_from_opening(self, info) -> bool:
        return True

    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        if any(m.action != "call" for m in view.asked):
            return [("rushed_asked", "the user was in a hurry, yet the assistant asked")]
        return []


def playing(scenario: str, **fields: Any) -> Dialogue:
    """A factory dialogue re-validated as a record of `scenario` (with `fields` replaced)."""
    return Dialogue.model_validate({**make_dialogue().model_dump(), **fields, "scenario": scenario})


@pytest.fixture
def rushed():
    kind = scenarios.register(Rushed())
    try:
        yield kind
    finally:
        scenarios.unregister(kind.name)


def test_registering_a_type_makes_it_known_everywhere_a_name_is_checked(rushed) -> None:
    from utcgen.pipeline.evaluation.cases import Case
    from utcgen.pipeline.settings.config import RunConfig
    from utcgen.pipeline.settings.templates import prompt_versions

    assert scenarios.get("rushed") is rushed and "rushed" in scenarios.names()
    assert RunConfig.model_validate({"scenarios": {"rushed": 1}}).scenarios == {"rushed": 1.0}
    assert playing("rushed").scenario == "rushed"
    assert prompt_versions()["scenario_user_rushed"] == "user-rushed/1"
    assert Case.model_fields["scenario"].annotation is str  # checked against the registry, not a Literal
    with pytest.raises(ValueError, match="already registered"):
        scenarios.register(Rushed())


def test_an_unregistered_name_is_refused_with_the_known_ones() -> None:
    from utcgen.pipeline.settings.config import RunConfig

    with pytest.raises(ValidationError, match=r"unknown scenario 'rushed'; known: disambiguation, explicit"):
        playing("rushed")
    with pytest.raises(ValidationError, match=r"unknown scenario 'rushed'"):
        RunConfig.model_validate({"scenarios": {"rushed": 1}})
    with pytest.raises(ValueError, match="built in"):
        scenarios.unregister("explicit")


def test_the_registered_types_rule_and_prompt_sections_are_used(rushed) -> None:
    from utcgen.pipeline.llm.requests import UserRequest, UserScenario
    from utcgen.pipeline.synthesis.roles import render_user
    from utcgen.validators import critique
    from utcgen.validators.scenario import check_scenario

    asked = playing("rushed", messages=[
        Message(role="user", content="Hi, I need X."),
        Message(role="assistant", content="Could you tell me which one?", thought="t", phase="tool_selection"),
        Message(role="user", content="The first."),
        Message(role="assistant", content="", thought="t", phase="argument_filling",
                tool_calls=[ToolCall(name="seed", arguments={})]),
    ])
    verdict = check_scenario(asked)
    assert not verdict.passed and "in a hurry" in verdict.reason
    assert rushed.critique_note in critique.render(asked)[0]["content"]
    d = playing("rushed")
    request = UserRequest(phase="argument_filling", tool=d.seed_tool, persona=d.user_persona, goal=d.goal,
                          distractors=[], gold_arguments={}, history=[], scenario=UserScenario(name="rushed"))
    system = render_user(request, [])[0]["content"]
    assert "You are in a hurry" in system and "The tool that would do what you need" in system


def test_a_registered_type_is_generated_end_to_end(rushed, tmp_path: Path) -> None:
    from utcgen.pipeline.core.resources import shipped
    from utcgen.pipeline.ingest.reader import load_catalog
    from utcgen.pipeline.retrieval.embeddings import Embedder
    from utcgen.pipeline.settings.config import load_config
    from utcgen.pipeline.synthesis.run import Engine

    catalog, personas = tmp_path / "tools.json", tmp_path / "personas.jsonl"
    tools = load_catalog(str(shipped("catalog", "tools")))
    catalog.write_text(json.dumps([t.model_dump() for t in tools if t.line_of_business in LINES]))
    mine = [line for line in shipped("catalog", "personas.jsonl").read_text().splitlines()
            if json.loads(line).get("line_of_business") in LINES]
    personas.write_text("".join(line + "\n" for line in mine[::3]))
    config = load_config(None, {"out": str(tmp_path / "run"), "num_dialogues": 4, "seed": 1, "catalog": str(catalog),
                                "personas": str(personas), "scenarios": {"rushed": 1}})
    config.llm.cache_dir = str(tmp_path / "cache")
    engine = Engine(config, embedder=Embedder(cache_dir=tmp_path / "cache" / "embeddings"))
    try:
        records = asyncio.run(engine.run())
    finally:
        engine.close()
    every = [d for r in records.values() for d in r.dialogues]
    assert every and {d.scenario for d in every} == {"rushed"}
    accepted = [d for d in every if d.accepted]
    assert accepted, [d.rejection_reason for d in every]
    for d in accepted:
        opening = d.messages[0].content
        assert all(re.search(re.escape(str(v)), opening) for v in d.gold_arguments.values()), opening
        assert d.generation.prompt_versions["scenario_user_rushed"] == "user-rushed/1"
        assert any(v.validator == "scenario" and v.passed for v in d.validation)


def test_every_fault_kind_has_its_hint_and_every_decision_style_its_offline_lead() -> None:
    from utcgen.pipeline.core.records import DECISION_STYLES
    from utcgen.pipeline.simulator.scenario_user import STYLE_LEADS

    assert set(scenarios.FAULT_HINTS) == set(FAULT_KINDS)
    assert set(STYLE_LEADS) == set(DECISION_STYLES)
