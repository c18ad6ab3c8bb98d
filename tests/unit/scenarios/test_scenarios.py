"""Scenario types end to end offline, their validator rules, turn labels, decision styles and the default mix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.factories import assistant_turn, make_dialogue, make_tool
from tests.support.paths import REPO
from utcgen.pipeline.core.records import Dialogue, Message, ScenarioInfo, ToolCall
from utcgen.pipeline.scenarios import get, names

SCENARIOS = tuple(n for n in names() if not get(n).chained)  # every registered one-call scenario type (multi-step: test_chained_tasks)
MIX = {name: 1.0 for name in SCENARIOS}


@pytest.fixture()
def run(scenario_run) -> dict[str, Any]:
    """The session's offline run of 48 dialogues, every scenario and decision style mixed (tests/conftest.py)."""
    return scenario_run


def _of(run: dict[str, Any], scenario: str) -> list[Dialogue]:
    return [d for d in run["accepted"] if d.scenario == scenario]


def test_every_scenario_yields_accepted_dialogues_that_keep_its_rule(run):
    from utcgen.pipeline.scenarios import problems

    for name in SCENARIOS:
        assert _of(run, name), f"no accepted {name} dialogue"
    for d in run["accepted"]:
        assert problems(d) == [], (d.scenario, problems(d))
        assert {v.validator for v in d.validation} >= {"scenario", "toolcall", "critique"}
        assert all(m.action is not None for m in d.assistant_turns)


def test_explicit_dialogues_call_at_once(run):
    for d in _of(run, "explicit"):
        assert len(d.assistant_turns) == 1 and d.assistant_turns[0].action == "call"
        assert d.assistant_turns[0].tool_calls[0].arguments == d.gold_arguments


def test_underspecified_dialogues_ask_for_the_masked_value(run):
    from utcgen.pipeline.dialogue.mentions import mentioned

    for d in _of(run, "underspecified"):
        masked = d.scenario_info.masked_arg
        assert masked in d.gold_arguments
        assert mentioned(d.gold_arguments[masked], {}, d.messages[0].content) != "found"
        assert any(m.act == "ask_parameter" for m in d.assistant_turns[:-1])
        assert d.messages[-1].tool_calls[0].arguments[masked] == d.gold_arguments[masked]


def test_unavailable_tool_dialogues_refuse_and_offer_without_calling(run):
    for d in _of(run, "unavailable_tool"):
        assert d.seed_tool.name not in {t.name for t in d.candidate_tools}
        assert {t.name for t in d.candidate_tools} == {t.name for t in d.distractor_tools}
        assert not any(m.tool_calls for m in d.messages)
        last = d.assistant_turns[-1]
        assert (last.action, last.act) == ("refuse", "propose_solution")
        assert isinstance(d.scenario_info.replaceable, bool)
        # the offer names what the look-alikes do; whether the missing tool is replaceable is not the
        # assistant's to know (it sees only the candidates and the dialogue), so it never relies on it
        assert "What I can do instead" in last.content


def test_infeasible_dialogues_raise_the_bad_value_and_call_with_a_valid_one(run):
    from utcgen.pipeline.dialogue import domains

    for d in _of(run, "infeasible_arguments"):
        bad = d.scenario_info.infeasible
        schema = d.seed_tool.properties[bad.arg]
        assert domains.problem(bad.arg, bad.value, schema, {**d.gold_arguments, bad.arg: bad.value})
        assert any(m.act == "report_blocker" for m in d.assistant_turns[:-1])
        call = d.messages[-1].tool_calls[0]
        assert call.arguments[bad.arg] != bad.value and call.arguments == d.gold_arguments


def test_input_fault_openings_carry_the_fault_and_are_resolved(run):
    kinds = set()
    for d in _of(run, "input_fault"):
        fault = d.scenario_info.fault
        kinds.add(fault.kind)
        assert d.messages[0].content == fault.faulted != fault.original
        assert d.assistant_turns[0].action == "ask"  # not solvable before clarification
        assert d.messages[-1].tool_calls[0].arguments == d.gold_arguments
    assert len(kinds) >= 2


def test_decision_styles_are_recorded_and_reported(run):
    styles = {d.scenario_info.decision_style for d in run["every"]}
    assert None not in styles and len(styles) >= 3
    stats = json.loads((run["out"] / "stats.json").read_text())
    reported = stats["scenarios"]["decision_styles"]
    assert sum(s["generated"] for s in reported.values()) == len(run["every"])
    assert set(reported) == styles


def test_stats_card_and_parquet_agree_per_scenario(run):
    import pyarrow.parquet as pq

    stats = json.loads((run["out"] / "stats.json").read_text())["scenarios"]["by_scenario"]
    assert set(stats) == set(SCENARIOS)
    rows = pq.read_table(next((run["out"] / "data" / "dialogues").glob("*.parquet"))).to_pylist()
    for name in SCENARIOS:
        assert stats[name]["accepted"] == sum(r["scenario"] == name for r in rows)
        generated = [d for d in run["every"] if d.scenario == name]
        assert stats[name]["generated"] == len(generated)
    card = (run["out"] / "README.md").read_text()
    assert "## Scenario types" in card
    for name in SCENARIOS:
        line = next(li for li in card.splitlines() if li.startswith(f"| {name} | {stats[name]['generated']} |"))
        assert f"| {stats[name]['accepted']} |" in line
    sft = pq.read_table(next((run["out"] / "data" / "sft").glob("*.parquet"))).to_pylist()
    assert {r["action"] for r in sft} >= {"call", "ask", "refuse"}
    refusals = [r for r in sft if r["action"] == "refuse"]
    assert all(r["scenario"] == "unavailable_tool" and r["act"] == "propose_solution" for r in refusals)


# ---- labels ---------------------------------------------------------------------------------------

def test_labels_of_a_hand_built_dialogue():
    from utcgen.pipeline.dialogue.labels import label_dialogue

    d = make_dialogue()
    names = [t.name for t in d.candidate_tools]
    d.messages = [
        Message(role="user", content="Something about a requisition."),
        assistant_turn(f"Do you mean {names[0]} or {names[1]}?", phase="tool_selection"),
        Message(role="user", content="The first. Quantity 5000."),
        assistant_turn("The quantity you gave, 5000, can't be used: above 100. Could you give a valid quantity?"),
        Message(role="user", content="Then 50."),
        assistant_turn("What is the plant code?"),
        Message(role="user", content="DE01."),
        assistant_turn("This cancels the order for good. Please confirm you want that."),
        Message(role="user", content="Yes."),
        assistant_turn(calls=[ToolCall(name=names[0], arguments={})]),
        Message(role="user", content="And the other thing?"),
        assistant_turn("I'm sorry, none of the tools I can use does that. What I can do instead: list orders."),
        Message(role="user", content="Ok."),
        assistant_turn("You're welcome."),
    ]
    labelled = [m for m in label_dialogue(d) if m.role == "assistant"]
    assert [(m.action, m.act) for m in labelled] == [
        ("ask", "disambiguate"), ("ask", "report_blocker"), ("ask", "ask_parameter"), ("ask", "confirm_risk"),
        ("call", None), ("refuse", "propose_solution"), ("answer", None)]
    assert labelled[0].act_candidates == names[:2]
    assert all(m.action is None for m in label_dialogue(d) if m.role == "user")


def test_records_made_before_scenarios_still_load():
    raw = make_dialogue().model_dump(mode="json")
    for key in ("scenario", "scenario_info"):
        raw.pop(key)
    for m in raw["messages"]:
        for key in ("action", "act", "act_candidates"):
            m.pop(key)
    d = Dialogue.model_validate(raw)
    assert d.scenario == "disambiguation" and d.scenario_info == ScenarioInfo()


# ---- decision styles, the default mix, config errors ----------------------------------------------

def test_decision_style_changes_how_the_offline_user_answers():
    from utcgen.pipeline.core.records import Persona
    from utcgen.pipeline.llm.requests import Said, UserRequest, UserScenario
    from utcgen.pipeline.simulator import scenario_user
    from utcgen.pipeline.simulator.phrasing import read_values

    tool = make_tool()
    gold = {"material_id": "MAT-1", "quantity": 4, "plant_code": "DE01"}
    history = [Said(role="user", content="hi"),
               Said(role="assistant", content="Could you give me the material ID, quantity and plant code?")]
    answers = {}
    for style in ("rational", "avoidant", "spontaneous"):
        request = UserRequest(phase="argument_filling", tool=tool, persona=Persona(id="", text=""), goal="",
                              distractors=[], gold_arguments=gold, history=history,
                              scenario=UserScenario(name="disambiguation", info={"decision_style": style}))
        answers[style] = scenario_user.scenario_user_text(request)
    assert len(set(answers.values())) == 3
    given = {style: read_values(text, tool, keys=list(gold)) for style, text in answers.items()}
    assert len(given["avoidant"]) == 1 < len(given["spontaneous"])  # one value at a time


def test_the_default_config_makes_disambiguation_only_and_keeps_its_fingerprint():
    from utcgen.pipeline.settings.config import RunConfig
    from utcgen.pipeline.synthesis.draw import draw_scenario

    default = RunConfig()
    assert default.scenarios == {"disambiguation": 1.0} and default.decision_styles == {}
    assert {draw_scenario(0, job, default.scenarios) for job in range(300)} == {"disambiguation"}
    same = RunConfig(scenarios={"disambiguation": 2.0, "explicit": 0})
    assert same.fingerprint() == default.fingerprint()
    assert RunConfig(scenarios={"disambiguation": 1, "explicit": 1}).fingerprint() != default.fingerprint()
    assert RunConfig(decision_styles={"rational": 1}).fingerprint() != default.fingerprint()
    drawn = [draw_scenario(0, job, MIX) for job in range(600)]
    assert set(drawn) == set(SCENARIOS) and max(drawn.count(n) for n in SCENARIOS) < 160


@pytest.mark.parametrize("mix, message", [
    ({"disambiguation": 1, "sarcasm": 1}, "unknown scenario 'sarcasm'"),
    ({"explicit": -1}, "weight must be a finite number >= 0"),
    ({"explicit": 0}, "every scenario weight is 0"),
    ({}, "the scenario mix is empty"),
])
def test_a_bad_scenario_mix_names_file_field_and_item(tmp_path: Path, mix, message):
    import yaml

    from utcgen.pipeline.core.errors import InputError
    from utcgen.pipeline.settings.config import load_config

    path = tmp_path / "mix.yaml"
    path.write_text(yaml.safe_dump({"scenarios": mix}))
    with pytest.raises(InputError) as err:
        load_config(path)
    text = str(err.value)
    assert str(path) in text and "'scenarios'" in text and message in text


def test_the_shipped_default_config_lists_the_default_mix():
    import yaml

    listed = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    assert listed["scenarios"] == {"disambiguation": 1.0} and listed["decision_styles"] == {}


# ---- question planning (EVPI, Q*) -----------------------------------------------------------------

def test_q_star_is_recorded_and_matches_each_scenario(run):
    for d in run["accepted"]:
        assert d.q_star is not None
    assert all(d.q_star == 0 for d in _of(run, "unavailable_tool"))  # no candidate can do it: nothing to ask
    assert all(d.q_star == 0 for d in _of(run, "explicit") if
               all(a in d.messages[0].content for a in map(str, d.gold_arguments.values())))
    assert all(d.q_star >= 1 for d in _of(run, "underspecified") + _of(run, "infeasible_arguments"))
    assert all(d.q_star >= 1 for d in _of(run, "disambiguation"))  # at least which tool
    stats = json.loads((run["out"] / "stats.json").read_text())["scenarios"]["by_scenario"]
    assert stats["unavailable_tool"]["q_star"]["max"] == 0 and stats["disambiguation"]["q_star"]["min"] >= 1


def test_evpi_follows_the_certainty_rules_and_the_degenerate_case():
    from utcgen.pipeline.dialogue.planning import EPSILON, TOOL, Belief, evpi, plan

    one = Belief(tools={"t": {"a": 1.0}}, tool_known="t")
    assert evpi(one, (TOOL, ""), "t") == 0 and evpi(one, ("t", "a"), "t") == 0 and plan(one, "t") == []
    finite = Belief(tools={"t": {"mode": 1 / 4, "id": EPSILON}, "u": {"x": 1.0}})
    # which tool first: every argument question waits for it; then the open id before the finite mode
    assert plan(finite, "t") == [(TOOL, ""), ("t", "id"), ("t", "mode")]
    known = Belief(tools={"t": {"a": 1.0, "b": 0.5}}, tool_known="t")
    assert evpi(known, ("t", "a"), "t") == 0 and evpi(known, ("t", "b"), "t") == pytest.approx(0.5)


def test_planning_validator_flags_known_questions_and_over_clarification():
    from utcgen.validators.planning import check_planning

    d = make_dialogue(tool_selection_turns=1, argument_filling_turns=1)
    d.messages[0] = Message(role="user", content=f"I need a requisition: the quantity is {d.gold_arguments['quantity']}.")
    d.messages[1] = assistant_turn("What quantity do you need?")
    v = check_planning(d)
    assert not v.passed and v.details["rule"] == "redundant_question" and "quantity" in v.reason
    long = make_dialogue(tool_selection_turns=9, argument_filling_turns=1)
    long.q_star = 1
    v = check_planning(long)
    assert not v.passed and v.details["rule"] == "over_clarified"
    assert check_planning(make_dialogue()).passed


def test_a_blocker_is_what_a_turn_leads_with_not_words_of_a_listed_option():
    from utcgen.pipeline.dialogue.labels import label_turn

    listing = assistant_turn("I see what it's about, but not what you want done. Which of these do you need: file a "
                         "disclosure of outside employment; cancel a booking?", phase="tool_selection")
    assert label_turn(listing, []).act == "disambiguate"
    premise = assistant_turn("I don't have access to earlier requests, so I need the details again. Could you give me "
                         "the quantity?")
    assert (label_turn(premise, []).action, label_turn(premise, []).act) == ("ask", "report_blocker")


def test_audit_reports_every_scenario_from_the_exported_folder(run):
    from utcgen.pipeline.cli.audit import to_text
    from utcgen.pipeline.export.audit import audit_dialogues as audit
    from utcgen.pipeline.export.reading import load_dialogues
    from utcgen.validators.scenario import check_scenario

    dialogues, source = load_dialogues(run["out"])
    report = audit(dialogues)
    assert set(report["scenarios"]) == set(SCENARIOS)
    unavailable = report["scenarios"]["unavailable_tool"]
    assert unavailable["pass_rates"]["toolcall"] == 1.0  # no call expected: not a missing one
    accepted = [d for d in dialogues if d.accepted]
    assert all(check_scenario(d).passed for d in accepted)  # read back from parquet, the rules still hold
    assert "per scenario" in to_text(report, source)


def test_evaluation_prompts_never_change_a_generation_fingerprint(monkeypatch):
    import utcgen.pipeline.settings.config as config  # the run config reads the prompt versions it imported
    from utcgen.pipeline.settings.config import RunConfig

    before = RunConfig().fingerprint()
    real = config.prompt_versions
    monkeypatch.setattr(config, "prompt_versions", lambda *a, **k: {**real(*a, **k), "eval_new_judge": "eval_new_judge/1"})
    assert RunConfig().fingerprint() == before
    monkeypatch.setattr(config, "prompt_versions", lambda *a, **k: {**real(*a, **k), "goal": "goal/99"})
    assert RunConfig().fingerprint() != before  # a generation prompt does count
