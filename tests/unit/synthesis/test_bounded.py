"""Bounded runs: the low-acceptance stop, replies that are not the role's object, input files edited
between sessions, oversized tools, endpoint health and the call counters summed over sessions."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Dialogue, Persona, Tool, Usage, Verdict
from utcgen.pipeline.llm.failures import Health
from utcgen.pipeline.llm.gateway import LLMReply
from utcgen.pipeline.runner import RunProgress, RunStopped
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.synthesis.journal import CallCounters, JobRecord, Journal
from utcgen.pipeline.synthesis.roles import ReplyError, Roles
from utcgen.pipeline.synthesis.schedule import (
    AcceptanceRule,
    AcceptanceStop,
    SeedJobs,
    acceptance_note,
    check_acceptance,
    check_fruitless,
)
from utcgen.pipeline.synthesis.sizes import prompt_sized, shrink_schema

# --------------------------------------------------------------------------- the low-acceptance stop

REASONS = [("format", {"rule": "parse_error"}), ("toolcall", {"rule": "wrong_tool"}),
           ("toolargs", {"rule": "value_mismatch"}), ("relevancy", {"relevant": False})]


def job(number: int, attempts: int, accepted: bool) -> JobRecord:
    """A finished job of `attempts` attempts, the last accepted if `accepted`; rejection reasons alternate."""
    dialogues = []
    for i in range(attempts):
        ok = accepted and i == attempts - 1
        stage, details = REASONS[(number + i) % len(REASONS)]
        dialogues.append(Dialogue.model_construct(
            accepted=ok, rejection_reason=None if ok else f"{stage}: no",
            validation=[] if ok else [Verdict(validator=stage, passed=False, reason="no", details=details)]))
    return JobRecord.model_construct(job=number, seed_tool="t", accepted=accepted, dialogues=dialogues,
                                     elapsed_s=0.0, finished_at=float(number))


def test_none_accepted_stops_after_the_threshold_whatever_the_mix_of_reasons() -> None:
    records = {n: job(n, 5, False) for n in range(9)}  # 45 attempts, four reasons in turn
    check_fruitless(records, stop_after=5)  # the same-reason rule never fires on alternating reasons
    check_acceptance(records, 10, AcceptanceRule(50, 0.02))
    records[9] = job(9, 5, False)  # 50 attempts
    with pytest.raises(AcceptanceStop, match=r"^stopped: none of 50 attempts was accepted\. .*stop_min_acceptance"):
        check_acceptance(records, 10, AcceptanceRule(50, 0.02))
    assert isinstance(AcceptanceStop("x"), RunStopped) and AcceptanceStop.exit_code == 1
    check_acceptance(records, 10, AcceptanceRule(50, 0.0))  # 0 = never
    check_acceptance(records, 10, AcceptanceRule(50, 0.02, slots=16))  # 5 attempts per job slot: 80


def test_a_low_rate_stops_only_from_twice_the_threshold_and_a_fair_rate_never() -> None:
    records = {n: job(n, 5, n == 0) for n in range(19)}  # 1 of 95 attempts accepted
    check_acceptance(records, 10, AcceptanceRule(50, 0.02))  # some accepted: judged from 100 attempts
    records[19] = job(19, 5, False)
    with pytest.raises(AcceptanceStop, match=r"only 1 of 100 attempts were accepted \(1\.0%.*about 1,000 attempts"):
        check_acceptance(records, 10, AcceptanceRule(50, 0.02))
    fair = {n: job(n, 5, n % 10 == 0) for n in range(40)}  # 4 of 200 = 2%: not below
    check_acceptance(fair, 100, AcceptanceRule(50, 0.02))
    check_acceptance(records, 1, AcceptanceRule(50, 0.02))  # the target is reached: nothing to stop


def test_a_run_holding_its_accepted_dialogues_is_never_stopped_as_fruitless() -> None:
    """Jobs 0-2 accepted, then 25 rejections of spare jobs finishing while a lower job still runs:
    the run has what it needs and only waits, so neither stop rule fires; one accepted fewer, they do."""
    records = {n: job(n, 1, n < 3) for n in range(3)} | {n: job(n, 1, False) for n in range(10, 35)}
    for r in records.values():
        r.dialogues[-1].validation = [] if r.accepted else [Verdict(validator="persona_fit", passed=False, reason="no")]
        r.dialogues[-1].rejection_reason = None if r.accepted else "persona_fit: no"
    work = SeedJobs(None, 3, stop_after=20, acceptance=AcceptanceRule(5, 0.5))  # type: ignore[arg-type]  # check reads no journal
    work.check(records)
    with pytest.raises(RunStopped):
        SeedJobs(None, 4, stop_after=20, acceptance=AcceptanceRule(5, 0.5)).check(records)  # type: ignore[arg-type]


def test_the_progress_note_says_when_acceptance_is_very_low() -> None:
    p = RunProgress(target=10, accepted=0, rejected=19)
    assert acceptance_note(p) is None  # too early to say
    p.rejected = 40
    assert acceptance_note(p) == "low acceptance: 0 of 40 attempts accepted (0%)"
    p.accepted = 5
    assert acceptance_note(p) is None


# --------------------------------------------------------------------------- replies that are not the object

TOOL = Tool(name="open_ticket", description="Opens a ticket.",
            parameters={"type": "object", "properties": {"queue": {"type": "string"}}, "required": ["queue"]})
PERSONA = Persona(id="p1", text="A service desk lead.")


class Scripted:
    """A gateway answering each call with the next scripted text."""

    def __init__(self, *texts: str) -> None:
        self.texts, self.calls = list(texts), 0
        self.settings = RunConfig().llm

    async def chat(self, request: Any, messages: list[dict], **kwargs: Any) -> LLMReply:
        self.calls += 1
        return LLMReply(text=self.texts.pop(0), usage=Usage(calls=1))


@pytest.mark.parametrize("bad", ['"just a string"', "[1, 2, 3]", "just a sentence", '{"other": 1}', ""])
def test_a_goal_that_is_not_the_goal_object_is_asked_again_then_rejected(bad: str) -> None:
    gw = Scripted(bad, bad, bad)
    with pytest.raises(ReplyError, match="no usable goal in 3 replies"):
        asyncio.run(Roles(gw, reply_retries=2).goal(TOOL, PERSONA, 1))  # type: ignore[arg-type]
    assert gw.calls == 3
    gw = Scripted(bad, '{"goal": "Open a ticket for the printer."}')
    assert asyncio.run(Roles(gw).goal(TOOL, PERSONA, 1)) == "Open a ticket for the printer."  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ['"just a string"', "[1, 2, 3]", "Hello there", '{"text": "hi"}'])
def test_a_user_turn_that_is_not_the_message_object_is_never_data(bad: str) -> None:
    gw = Scripted(bad, bad)
    with pytest.raises(ReplyError, match="user proxy gave no usable message in 2 replies"):
        asyncio.run(Roles(gw, reply_retries=1).user("tool_selection", TOOL, PERSONA, "g", [], {}, [], 1))  # type: ignore[arg-type]
    gw = Scripted(bad, '{"message": "I need a ticket."}')
    assert asyncio.run(Roles(gw).user("tool_selection", TOOL, PERSONA, "g", [], {}, [], 1)) == "I need a ticket."  # type: ignore[arg-type]


def test_an_assistant_reply_that_is_a_list_is_a_parse_error_not_a_turn() -> None:
    gw = Scripted("[1, 2, 3]", '"just a string"', "[]")
    message = asyncio.run(Roles(gw).assistant("tool_selection", [TOOL], None, [], 1))  # type: ignore[arg-type]
    assert message.parse_error and "expected a JSON object, got list" in message.parse_error and gw.calls == 3


# --------------------------------------------------------------------------- input files edited between sessions


def test_an_input_file_edited_in_place_is_refused_on_resume_naming_it(tmp_path: Path) -> None:
    catalog = tmp_path / "tools.json"
    tools = [TOOL.model_dump(), {**TOOL.model_dump(), "name": "close_ticket"}]
    catalog.write_text(json.dumps(tools))
    personas = tmp_path / "personas.jsonl"
    personas.write_text(json.dumps({"id": "p1", "text": "A lead."}) + "\n")
    cfg = RunConfig(catalog=str(catalog), personas=str(personas))
    Journal(tmp_path / "out", cfg)
    Journal(tmp_path / "out", cfg)  # unchanged: resumes
    catalog.write_text(json.dumps(tools[:1]))
    with pytest.raises(InputError, match=r"catalog file tools\.json .*changed content.*--allow-config-change") as raised:
        Journal(tmp_path / "out", cfg)
    assert raised.value.exit_code == 2
    Journal(tmp_path / "out", cfg, allow_config_change=True)
    Journal(tmp_path / "out", cfg)  # the digests now hold the new content
    personas.write_text(json.dumps({"id": "p1", "text": "A manager."}) + "\n")
    with pytest.raises(InputError, match=r"personas file personas\.jsonl"):
        Journal(tmp_path / "out", cfg)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "tools.json").write_bytes(catalog.read_bytes())
    Journal(tmp_path / "out", RunConfig(catalog=str(moved / "tools.json"), personas=str(personas)),
            allow_config_change=True)
    Journal(tmp_path / "out", RunConfig(catalog=str(moved / "tools.json"), personas=str(personas)))  # same content


# --------------------------------------------------------------------------- oversized tools


def test_an_oversized_description_and_schema_are_cut_for_prompts_with_one_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    enum = [f"value-{i}" for i in range(2000)]
    big = Tool(name="huge_tool", description="word " * 200_000, parameters={
        "type": "object", "required": ["a", "b"],
        "properties": {"a": {"type": "string", "description": "x" * 20_000, "enum": enum},
                       "b": {"type": "integer", "description": "a count"},
                       "c": {"type": "object", "properties": {"d": {"type": "string", "description": "y" * 9000}}}}})
    with caplog.at_level(logging.WARNING, logger="utcgen.synthesis"):
        sized = prompt_sized([big, TOOL], 2000, 8000)
    assert sized[1] is TOOL
    assert len(sized[0].description) <= 2000 and sized[0].description.endswith("[...]")
    params = sized[0].parameters
    assert len(json.dumps(params)) <= 8000
    assert set(params["properties"]) == {"a", "b", "c"} and params["required"] == ["a", "b"]
    assert set(params["properties"]["a"]["enum"]) <= set(enum)  # values kept whole, only fewer
    jsonschema.Draft202012Validator.check_schema(params)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "huge_tool" in warnings[0] and "1,000,000 characters cut to 2,000" in warnings[0]
    small = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert shrink_schema(small, 8000) is small


# --------------------------------------------------------------------------- endpoint health and counters


def test_health_needs_a_streak_or_a_high_rate_across_calls() -> None:
    h = Health(consecutive=3, rate=0.5)
    assert h.failed("m") is None and h.failed("m") is None
    h.ok("m")
    assert h.failed("m") is None and h.failed("m") is None
    assert "the last 3 calls" in (h.failed("m") or "")
    assert h.failed("other") is None  # per endpoint
    rated = Health(consecutive=100, rate=0.3)
    for i in range(30):
        outcome = rated.ok("m") if i % 3 else rated.failed("m")
        assert outcome is None or i >= 20
    assert rated.failed("m") is not None


def test_retries_are_summed_over_every_session(tmp_path: Path) -> None:
    cfg = RunConfig()
    first = Journal(tmp_path, cfg)
    first.write_counters(CallCounters(retries=3, retry_reasons={"timeout": 2, "rate limited": 1}, gave_up=1))
    first.write_counters(CallCounters(retries=4, retry_reasons={"timeout": 3, "rate limited": 1}, gave_up=1))
    second = Journal(tmp_path, cfg)
    second.write_counters(CallCounters())  # nothing counted: no file
    assert len(list((tmp_path / "journal").glob("calls-*.json"))) == 1
    second.write_counters(CallCounters(retries=2, retry_reasons={"server error 500": 2}))
    total = second.counters()
    assert (total.retries, total.gave_up) == (6, 1)
    assert total.retry_reasons == {"timeout": 3, "rate limited": 1, "server error 500": 2}


@pytest.mark.parametrize("text", ['"just a string"', "[1, 2, 3]", "[3]", "2", "null", '```json\n[2]\n```'])
def test_evaluation_replies_that_are_json_but_not_an_object_give_no_vote_and_no_grade(text: str) -> None:
    from utcgen.pipeline.evaluation.rubric import parse_grade
    from utcgen.pipeline.evaluation.voting import parse_choice

    assert parse_grade(text) is None and parse_choice(text, 3) is None
    assert parse_grade('{"grade": 3}') == 3 and parse_choice("I pick draft 2.", 3) == 1  # prose still read


def test_the_fault_mix_draws_each_fault_in_its_share_and_repeats_with_its_seed() -> None:
    from tests.support.fault_mix import FaultMix
    from tests.support.openai_server import ChatRequest, Headers, RateLimited, Reply, Slow

    def draws(seed: int) -> list[Any]:
        mix = FaultMix(seed=seed, rate_limited=0.1, server_error=0.05, slow=0.05, slow_delay=3.0, malformed=0.05,
                       empty=0.05, wrong_shape=0.05)
        return [mix(ChatRequest(index=i, body={}, headers=Headers())) for i in range(4000)]

    faults = draws(1)
    assert faults == draws(1) and faults != draws(2)
    assert 0.33 < sum(f is not None for f in faults) / len(faults) < 0.37
    assert 0.08 < sum(isinstance(f, RateLimited) for f in faults) / len(faults) < 0.12
    assert all(f.delay == 3.0 for f in faults if isinstance(f, Slow))
    shapes = {f.content for f in faults if isinstance(f, Reply)}
    assert shapes == {"", '"just a string"', "[1, 2, 3]", '{"unexpected": true}', "null"}
    with pytest.raises(ValueError, match="more than 1"):
        FaultMix(rate_limited=0.6, slow=0.6)
