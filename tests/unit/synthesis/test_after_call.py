"""After the call: an offline run with `execution.results` on gives each call its result as a tool turn,
answers from it, and recovers from every error; a run without the setting ends at the call."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.runs import scenario_lines_run
from utcgen.pipeline.core.records import Dialogue, Message
from utcgen.pipeline.dialogue.labels import asks
from utcgen.pipeline.dialogue.results import call_id, results
from utcgen.validators.answers import instructions


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    return scenario_lines_run(tmp_path_factory.mktemp("after-call"), embedder, {
        "num_dialogues": 12, "seed": 5, "execution": {"results": True, "error_share": 0.5}})


def _tool_turns(d: Dialogue) -> list[tuple[int, Message]]:
    return [(i, m) for i, m in enumerate(d.messages) if m.role == "tool"]


def test_every_call_gets_its_result_and_an_answer(run):
    # a job still in flight when the twelfth was accepted may finish with one more; the export keeps twelve
    stats = json.loads((run["out"] / "stats.json").read_text())
    assert stats["counts"]["accepted"] == 12 <= len(run["accepted"])
    for d in run["accepted"]:
        turns = _tool_turns(d)
        assert turns, d.id
        for i, m in turns:
            call = d.messages[i - 1]
            assert call.role == "assistant" and call.tool_calls, (d.id, i)
            assert m.tool_call_id == call_id(i - 1, 0)
            assert isinstance(json.loads(m.content), dict)
            assert d.messages[i + 1].role == "assistant", "a result is always followed by the assistant"
        assert d.messages[-1].role == "assistant" and not d.messages[-1].tool_calls, "it ends on the answer"
        assert d.generation.models.get("tool_result"), "the tool_result role is recorded when it ran"
        assert "answers" in {v.validator for v in d.validation}


def test_errors_are_followed_by_recovery_never_by_success(run):
    errors = 0
    for d in run["accepted"]:
        for r in results(d.messages):
            if r.error is None:
                continue
            errors += 1
            reply = d.messages[r.at + 1]
            assert reply.content, "an error is answered in words or a corrected call"
            low = reply.content.lower()
            assert not low.startswith(("done", "all set", "that went through", "here")), reply.content
            assert asks(reply.content) or "nothing was changed" in low, reply.content
    assert errors >= 3, "half the calls fail with error_share 0.5: some must be seen"


def test_an_asked_value_is_given_again_and_called_again(run):
    retried = [d for d in run["accepted"] if len(_tool_turns(d)) > 1]
    assert retried, "a not-found or invalid value is asked for again and retried"
    for d in retried:
        first, second = results(d.messages)[:2]
        assert first.error is not None, "only an error leads to a second call"
        assert first.call is not None and second.call is not None
        assert second.call.arguments == first.call.arguments, "the user checked the same value"


def test_answers_state_only_what_the_result_holds(run):
    answered = 0
    for d in run["accepted"]:
        heard = " ".join(m.content for m in d.messages if m.role == "user")
        for r in results(d.messages):
            reply = d.messages[r.at + 1]
            if r.error is not None or reply.tool_calls:
                continue
            answered += 1
            text = json.dumps(r.value, ensure_ascii=False)
            stated = re.findall(r'"([^"]+)"', reply.content) + re.findall(r"[\w-]*\d[\w.-]*\w|\d", reply.content)
            for value in stated:
                assert value in text or value in heard, (value, reply.content, text)
    assert answered >= 6


def test_the_assistant_is_told_the_answer_rules_and_the_user_never_sees_a_result(run):
    rules = instructions().splitlines()[1]
    after = [m for req, m in run["calls"] if req.role == "assistant" and getattr(req, "results", False)]
    assert after, "the assistant answered after results"
    assert all(rules in m[0]["content"] for m in after)
    for req, messages in run["calls"]:
        if req.role == "user":
            assert all(s.role != "tool" for s in req.history)
            assert not any(line.startswith("tool: ") for m in messages for line in str(m["content"]).splitlines())


def test_a_run_without_the_setting_ends_at_the_call(scenario_run):
    for d in scenario_run["accepted"]:
        assert not _tool_turns(d)
        assert "tool_result" not in d.generation.models


def test_turns_after_results_are_labelled_by_what_they_do(run):
    seen = set()
    for d in run["accepted"]:
        for r in results(d.messages):
            reply = d.messages[r.at + 1]
            if reply.tool_calls:
                assert reply.action == "call"
            elif r.error is None:
                assert (reply.action, reply.act) == ("answer", None), reply.content
            else:
                assert (reply.action, reply.act) in {("ask", "ask_parameter"), ("answer", "report_blocker")}, reply.content
            seen.add(reply.action)
    assert {"answer"} <= seen
