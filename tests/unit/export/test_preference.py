"""The `preference` config: gold turns against realistic wrong turns of named patterns, on the session's run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from utcgen.pipeline.core.records import Message, ToolCall
from utcgen.pipeline.dialogue.arguments import type_ok
from utcgen.pipeline.dialogue.labels import action_of
from utcgen.pipeline.dialogue.mentions import mentioned
from utcgen.pipeline.dialogue.said import user_said
from utcgen.pipeline.dialogue.shortcuts import key_hits
from utcgen.pipeline.export.dataset import load_split
from utcgen.pipeline.export.preference import preference_rows
from utcgen.pipeline.export.wrong_turns import PATTERNS, invented_key

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def run(scenario_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("pref-hf")
    out = scenario_run["out"]
    return {**scenario_run, "preference": load_split(out, "preference", cache), "sft": load_split(out, "sft", cache),
            "stats": json.loads((out / "stats.json").read_text()), "card": (out / "README.md").read_text(),
            "by_id": {d.id: d for d in scenario_run["accepted"]}}


def _message(m: dict[str, Any]) -> Message:
    calls = [ToolCall(name=c["function"]["name"], arguments=c["function"]["arguments"]) for c in m.get("tool_calls") or []]
    return Message(role="assistant", content=m["content"], thought=m.get("reasoning_content"), tool_calls=calls)


def test_every_pattern_but_run_attempts_is_in_the_run_and_counted(run: dict[str, Any]) -> None:
    rows = run["preference"]
    counts = Counter(rows["pattern"])
    assert set(counts) <= set(PATTERNS)
    assert all(counts[p] > 0 for p in PATTERNS if p != "run_attempt"), counts
    assert run["stats"]["counts"]["preference_rows"] == rows.num_rows
    assert run["stats"]["preference"]["patterns"] == {p: counts[p] for p in PATTERNS}
    for p in PATTERNS:  # the card's table holds every pattern with its count
        assert f"| `{p}` | {counts[p]} |" in run["card"]
    assert "config_name: preference" in run["card"]


def test_rows_reuse_the_sft_slice_and_differ_from_it(run: dict[str, Any]) -> None:
    sft = {(r["dialogue_id"], r["turn_index"]): r for r in run["sft"]}
    for row in run["preference"]:
        gold = sft[(row["dialogue_id"], row["turn_index"])]
        assert row["prompt"] == gold["prompt"] and row["tools"] == gold["tools"]
        assert row["chosen"] == gold["completion"] and row["action"] == gold["action"]
        assert len(row["rejected"]) == 1 and row["rejected"][0]["role"] == "assistant"
        assert row["rejected"] != row["chosen"], row["pattern"]


def test_each_rejected_turn_makes_its_named_mistake(run: dict[str, Any]) -> None:
    for row in run["preference"]:
        d = run["by_id"][row["dialogue_id"]]
        seed, props = d.seed_tool.name, d.seed_tool.properties
        bad, gold = _message(row["rejected"][0]), _message(row["chosen"][0])
        said = user_said(row["prompt"])
        pattern = row["pattern"]
        call = bad.tool_calls[0] if bad.tool_calls else None
        if pattern in ("premature_call", "unavailable_call"):
            assert not gold.tool_calls and call is not None and call.name != seed
            assert call.name in {t.name for t in d.candidate_tools}
            assert call.name == next(t.name for t in d.distractor_tools if t.name in {c.name for c in d.candidate_tools})
        elif pattern == "missing_argument":
            assert call is not None and call.name == seed
            assert any(k not in call.arguments for k in d.seed_tool.required if k in d.gold_arguments)
        elif pattern == "hallucinated_argument":
            assert call is not None and any(k not in props for k in call.arguments)
        elif pattern == "wrong_argument_type":
            assert call is not None and any(not type_ok(v, props[k]) for k, v in call.arguments.items())
        elif pattern == "wrong_argument_value":
            changed = {k: v for k, v in call.arguments.items() if v != gold.tool_calls[0].arguments[k]} if call else {}
            assert len(changed) == 1
            (key, value), = changed.items()
            assert mentioned(value, props[key], said) != "found"
        elif pattern == "unneeded_question":
            assert gold.tool_calls and not bad.tool_calls and action_of(bad) == "ask"


def test_spoken_words_of_rejected_turns_name_no_key_and_no_tool(run: dict[str, Any]) -> None:
    for row in run["preference"]:
        if row["pattern"] == "run_attempt":
            continue
        d = run["by_id"][row["dialogue_id"]]
        text = row["rejected"][0]["content"]
        said = {k: str(s.get("description") or "") for t in d.candidate_tools for k, s in t.properties.items()}
        assert not key_hits(text, sorted(said), said), (row["pattern"], text)
        assert not any(t.name in text for t in d.candidate_tools), text


def test_rows_are_the_same_on_every_export(run: dict[str, Any]) -> None:
    every = run["every"]
    first = preference_rows(run["accepted"], [d for d in every if not d.accepted])
    again = preference_rows(run["accepted"], [d for d in every if not d.accepted])
    assert [r.model_dump() for r in first] == [r.model_dump() for r in again]
    assert len(first) == run["preference"].num_rows
    counts = Counter(r.pattern for r in first)
    assert run["stats"]["preference"]["patterns"] == {p: counts[p] for p in PATTERNS}


def test_a_rejected_attempt_with_the_same_prefix_becomes_a_run_attempt_row(run: dict[str, Any]) -> None:
    d = next(d for d in run["accepted"] if len(d.assistant_turns) >= 2)
    last = max(i for i, m in enumerate(d.messages) if m.role == "assistant")
    wrong = Message(role="assistant", phase=d.messages[last].phase, thought="I am not sure which one they mean.",
                    content="Could you say a bit more about what you need?")
    attempt = d.model_copy(update={"id": "attempt-2", "accepted": False, "rejection_reason": "toolcall",
                                   "messages": [*d.messages[:last], wrong]})
    opening = Message(role="user", content="Something else entirely, please.")
    other = attempt.model_copy(update={"id": "attempt-3", "messages": [opening, *d.messages[1:]]})  # parts at a user turn
    rows = [r for r in preference_rows([d], [attempt, other]) if r.pattern == "run_attempt"]
    assert len(rows) == 1
    assert rows[0].turn_index == len(d.assistant_turns) - 1
    assert rows[0].rejected[0]["content"] == wrong.content


def test_invented_keys_are_not_parameters() -> None:
    assert invented_key("invoice_id", {"invoice_id"}) == "invoice_number"
    assert invented_key("startDate", {"startDate"}) == "beginDate"
    assert invented_key("id", {"id", "number"}) == "id_value"


def test_an_empty_run_still_has_the_config(tmp_path: Path) -> None:
    from utcgen.pipeline.export.rows import schema

    assert {"prompt", "chosen", "rejected", "tools", "pattern"} <= set(schema("preference").names)
    assert preference_rows([], []) == []


def test_json_format_rows_hold_the_wrong_turn_as_the_json_reply(run: dict[str, Any]) -> None:
    """In the `json` sft format the rejected turn is the same JSON reply protocol as the chosen one, and the
    reward reads both."""
    from utcgen import reward_function
    from utcgen.pipeline.export.slicing import slice_dialogue

    accepted = run["accepted"][:12]
    gold = {(r.dialogue_id, r.turn_index): r for r in (r for d in accepted for r in slice_dialogue(d, "json"))}
    rows = preference_rows(accepted, [], "json")
    assert rows
    for row in rows:
        reply = json.loads(row.rejected[0]["content"])
        assert set(reply) == {"thought", "content", "tool_calls"}
        g = gold[(row.dialogue_id, row.turn_index)]
        chosen, rejected = reward_function([row.prompt] * 2, [row.chosen, row.rejected], action=[g.action] * 2,
                                           gold_call=[g.gold_call] * 2, tools=[g.tools] * 2)
        assert chosen > rejected, (row.pattern, chosen, rejected)
