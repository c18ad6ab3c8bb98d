"""The question planner as the assistant's guide (`synthesis.plan_hint`): what it advises at each
point of a dialogue, how that reads in the prompt, and a run that sends it over HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.factories import make_tool
from tests.support.paths import REPO
from utcgen.pipeline.core.records import InputFault, Message, ScenarioInfo
from utcgen.pipeline.dialogue.planning import TOOL, next_question
from utcgen.pipeline.settings.config import load_config
from utcgen.pipeline.synthesis.roles import plan_hint

SEED = make_tool()
OTHER = make_tool(name="create_purchase_order", description="Raise a purchase order with a supplier.")
GOLD = {"material_id": "MAT-10442", "quantity": 40, "plant_code": "DE01"}
NONE = ScenarioInfo()


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def _ask(text: str, phase: str = "argument_filling") -> Message:
    return Message(role="assistant", content=text, phase=phase)


# The fifth argument: whether the opening names the tool (the scenario type's tool_known_from_opening;
# a parameter fault does, disambiguation and an unavailable tool do not).
def test_advice_follows_what_the_user_has_said() -> None:
    opening = [_user("I need to order some material for our plant.")]
    # two look-alikes, nothing settled: tell the tools apart first
    assert next_question(SEED, [SEED, OTHER], GOLD, opening, False, NONE, "tool_selection") == (TOOL, "")
    # the tool settled: ask for an open-domain value that has not been given
    q = next_question(SEED, [SEED, OTHER], GOLD, opening, False, NONE, "argument_filling")
    assert q is not None and q is not False and q[0] == SEED.name
    told = opening + [_ask("Which material and how many?"), _user("MAT-10442, 40 of them.")]
    assert next_question(SEED, [SEED, OTHER], GOLD, told, False, NONE, "argument_filling") == \
        (SEED.name, "plant_code")
    everything = told + [_ask("Which plant?"), _user("Plant DE01.")]
    assert next_question(SEED, [SEED, OTHER], GOLD, everything, False, NONE, "argument_filling") is None
    # the needed tool is not offered: nothing to plan, no advice
    assert next_question(SEED, [OTHER], GOLD, opening, False, NONE, "tool_selection") is False


def test_a_fault_value_asked_and_answered_is_settled() -> None:
    fault = ScenarioInfo(fault=InputFault(kind="parameter", original="x", faulted="y", arg="quantity", decoy=4))
    opening = [_user("Order MAT-10442, 40 or 4 units, for plant DE01.")]
    assert next_question(SEED, [SEED], GOLD, opening, True, fault, "argument_filling") == (SEED.name, "quantity")
    answered = opening + [_ask("Is the quantity 40 or 4?"), _user("40.")]
    assert next_question(SEED, [SEED], GOLD, answered, True, fault, "argument_filling") is None


def test_the_note_names_an_argument_only_once_the_tool_is_chosen() -> None:
    history = [_user("Order MAT-10442 please.")]
    note = plan_hint((SEED.name, "plant_code"), "argument_filling", SEED, GOLD, history)
    assert note is not None and "plant_code" in note and "Four-character receiving plant code" in note
    assert "Already given, so never asked again: material_id." in note
    act = plan_hint(None, "argument_filling", SEED, GOLD, history)
    assert act is not None and "enough for your next step" in act
    # in tool selection an argument question means "the tool is clear": act, naming no argument
    early = plan_hint((SEED.name, "plant_code"), "tool_selection", SEED, GOLD, history)
    assert early == act and "plant_code" not in early
    assert "tells them apart" in plan_hint((TOOL, ""), "tool_selection", SEED, GOLD, history)
    assert plan_hint(False, "tool_selection", SEED, GOLD, history) is None


def test_hints_change_the_fingerprint_only_when_on(tmp_path: Path) -> None:
    off, on = load_config(), load_config(overrides={"synthesis": {"plan_hint": True}})
    assert off.fingerprint() != on.fingerprint()
    raw = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    assert raw["synthesis"]["plan_hint"] is False


@pytest.mark.slow
def test_a_run_with_hints_sends_the_planners_advice(simulated_gateway: None, tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    """Every assistant request carries one planning note in its system prompt, an argument note names
    a required argument the user had not yet given, and none names an argument before the tool is chosen."""
    from tests.support.openai_server import ScriptedOpenAIServer
    from tests.support.simulator import decoded, simulator_config, simulator_responder
    from utcgen.pipeline.synthesis.journal import select
    from utcgen.pipeline.synthesis.run import Engine

    with ScriptedOpenAIServer(simulator_responder, latency=0.0) as srv:
        raw = simulator_config(srv.base_url, num_dialogues=3, out=str(tmp_path / "out"),
                               synthesis={"plan_hint": True, "max_jobs_in_flight": 3})
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
        engine = Engine(load_config(tmp_path / "run.yaml"), embedder=embedder)
        try:
            records = asyncio.run(engine.run())
        finally:
            engine.close()
        requests = srv.requests
    accepted, _, complete = select(records, 3)
    assert complete and len(accepted) == 3
    notes = {"tool": 0, "argument": 0, "act": 0}
    for r in requests:
        role, state = decoded(r)
        if role != "assistant":
            continue
        system = r.body["messages"][0]["content"]
        assert system.count("Planning note") == 1, system[-400:]
        if "tells them apart" in system:
            notes["tool"] += 1
        elif "worth asking" in system:
            notes["argument"] += 1
            assert state["phase"] == "argument_filling"
            arg = system.split("is the one for ")[1].split(" (")[0]
            assert arg in state["tool"]["parameters"]["required"]
        else:
            assert "enough for your next step" in system
            notes["act"] += 1
    assert notes["tool"] and notes["argument"] and notes["act"], notes
