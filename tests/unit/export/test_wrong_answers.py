"""Preference pairs after tool results: each wrong answer (`wrong_answers`) is one the answers rules refuse
where the gold answer passes, and `reward_function` ranks the gold answer first, on a small offline run with
results on (errors among them)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.support.runs import scenario_lines_run
from utcgen import reward_function
from utcgen.pipeline.core.records import Dialogue, Message
from utcgen.pipeline.dialogue.results import results
from utcgen.pipeline.evaluation.reward import answer_problems, read_turn
from utcgen.pipeline.export.preference import preference_rows
from utcgen.pipeline.export.reading import tool_from_spec
from utcgen.pipeline.export.rows import PreferenceRow
from utcgen.pipeline.export.slicing import slice_dialogue
from utcgen.pipeline.export.wrong_answers import ANSWER_PATTERNS
from utcgen.pipeline.export.wrong_turns import PATTERNS
from utcgen.pipeline.synthesis.journal import in_job_order, selected
from utcgen.validators.answers import check_answers

# The answers rules each pattern's rejected turn must break (at least one of them).
BREAKS = {"contradicted_result": {"contradicted_value", "wrong_count", "invented_value"},
          "invented_field": {"invented_value"}, "repeated_call": {"repeated_call"},
          "success_after_error": {"success_after_error"}}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    made = scenario_lines_run(tmp_path_factory.mktemp("wrong-answers"), embedder, {
        "num_dialogues": 8, "seed": 11, "execution": {"results": True, "error_share": 0.5}})
    exported = list(selected(in_job_order(made["records"]), 8))  # what the export wrote, not jobs still in flight
    accepted, out = [d for d in exported if d.accepted], made["out"]
    return {"accepted": accepted, "by_id": {d.id: d for d in accepted},
            "stats": json.loads((out / "stats.json").read_text()), "card": (out / "README.md").read_text(),
            "rows": {fmt: _as_exported(exported, fmt) for fmt in ("chat", "json")}}


def _as_exported(every: list[Dialogue], fmt: str) -> list[PreferenceRow]:
    """The preference rows as the export makes them from the dialogues it exports (`selected`, in job order):
    each accepted dialogue with the rejected attempts of its seed tool seen before it."""
    attempts: dict[str, list[Dialogue]] = {}
    out: list[PreferenceRow] = []
    for d in every:
        if not d.accepted:
            attempts.setdefault(d.seed_tool.name, []).append(d)
            continue
        out += preference_rows([d], attempts.pop(d.seed_tool.name, []), fmt)
    return out


def _at(d: Dialogue, turn_index: int) -> int:
    """The index in `d.messages` of assistant turn `turn_index` (0-based, as rows count them)."""
    return [i for i, m in enumerate(d.messages) if m.role == "assistant"][turn_index]


def _new(rows: list[PreferenceRow]) -> list[PreferenceRow]:
    return [r for r in rows if r.pattern in ANSWER_PATTERNS]


def test_every_new_pattern_is_made(run: dict[str, Any]) -> None:
    counts = Counter(r.pattern for r in run["rows"]["chat"])
    assert all(counts[p] > 0 for p in ANSWER_PATTERNS), counts
    assert not set(ANSWER_PATTERNS) & set(PATTERNS), "the new patterns' names are their own"
    assert Counter(r.pattern for r in run["rows"]["json"]) == counts


def test_stats_and_card_count_the_new_patterns(run: dict[str, Any]) -> None:
    counts = Counter(r.pattern for r in run["rows"]["chat"])
    assert run["stats"]["preference"]["patterns"] == {p: counts[p] for p in (*PATTERNS, *ANSWER_PATTERNS)}
    assert run["stats"]["counts"]["preference_rows"] == len(run["rows"]["chat"])
    for p in ANSWER_PATTERNS:
        assert f"| `{p}` | {counts[p]} |" in run["card"]


def test_each_rejected_answer_breaks_its_rule_where_the_chosen_passes(run: dict[str, Any]) -> None:
    for row in _new(run["rows"]["chat"]):
        d = run["by_id"][row.dialogue_id]
        i = _at(d, row.turn_index)
        assert d.messages[i - 1].role == "tool", "a new pattern is made only where the turn answers a result"
        chosen, rejected = read_turn(row.chosen), read_turn(row.rejected)
        assert (chosen.content, chosen.tool_calls) == (d.messages[i].content, d.messages[i].tool_calls)
        assert check_answers(d).passed and check_answers(d.model_copy(update={"messages": d.messages[:i + 1]})).passed
        for messages in ([*d.messages[:i], rejected], [*d.messages[:i], rejected, *d.messages[i + 1:]]):
            verdict = check_answers(d.model_copy(update={"messages": messages}))
            rules = {p["rule"] for p in verdict.details.get("problems", [])}
            assert not verdict.passed and rules & BREAKS[row.pattern], (row.pattern, rejected.content, rules)


def test_each_rejected_answer_is_made_from_the_real_answer_and_result(run: dict[str, Any]) -> None:
    for row in _new(run["rows"]["chat"]):
        d = run["by_id"][row.dialogue_id]
        i = _at(d, row.turn_index)
        gold, bad = d.messages[i], read_turn(row.rejected)
        last = results(d.messages[:i])[-1]
        if row.pattern == "contradicted_result":  # one value changed, the rest word for word
            assert last.error is None and not bad.tool_calls and bad.content != gold.content
            a, b = gold.content.split(), bad.content.split()
            assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1, (gold.content, bad.content)
        elif row.pattern == "invented_field":  # the answer kept, one sentence added
            assert last.error is None and bad.content.startswith(gold.content.split(".")[0])
            assert len(bad.content) > len(gold.content)
        elif row.pattern == "repeated_call":
            assert last.error is None and last.call is not None
            assert [(c.name, c.arguments) for c in bad.tool_calls] == [(last.call.name, last.call.arguments)]
        else:
            assert row.pattern == "success_after_error" and last.error is not None and not bad.tool_calls


@pytest.mark.parametrize("fmt", ["chat", "json"])
def test_the_reward_ranks_the_faithful_answer_first(run: dict[str, Any], fmt: str) -> None:
    gold = {(r.dialogue_id, r.turn_index): r for d in run["accepted"] for r in slice_dialogue(d, fmt)}
    rows = _new(run["rows"][fmt])
    assert rows
    for row in rows:
        g = gold[(row.dialogue_id, row.turn_index)]
        tools = [tool_from_spec(s) for s in g.tools]
        assert answer_problems(row.prompt, read_turn(row.chosen), tools) == [], row.pattern
        assert answer_problems(row.prompt, read_turn(row.rejected), tools), (row.pattern, row.rejected)
        chosen, rejected = reward_function([row.prompt] * 2, [row.chosen, row.rejected], action=[g.action] * 2,
                                           gold_call=[g.gold_call] * 2, tools=[g.tools] * 2)
        assert chosen > rejected, (fmt, row.pattern, chosen, rejected)


def test_an_answer_without_results_is_scored_as_before() -> None:
    prompt = [{"role": "user", "content": "Please cancel order 42."}]
    turn = Message(role="assistant", content="Done: order 43 was cancelled, reference XK-991.")
    assert answer_problems(prompt, turn, []) == [], "no result in the prompt: the answers rules do not apply"
    after = [*prompt, {"role": "assistant", "content": "", "tool_calls": [
                 {"id": "call_1_0", "type": "function", "function": {"name": "cancel_order", "arguments": {"order_id": 42}}}]},
             {"role": "tool", "tool_call_id": "call_1_0", "content": '{"status": "cancelled", "order_id": 42}'}]
    assert set(answer_problems(after, turn, [])) >= {"invented_value"}
    assert answer_problems(after, Message(role="assistant", content="Done: order 42 is cancelled."), []) == []
