"""Turn slicing: one SFT row per assistant turn, prompt = [SYS] + prefix, completion = the turn.

Two formats: `chat` (default; OpenAI messages with reasoning_content and native tool_calls)
and `json` (one JSON reply string per assistant turn, tools listed in the system prompt).
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest

from tests.support.factories import make_dialogue, make_distractors, make_generation, make_persona, make_tool
from tests.support.tool_results import with_results
from utcgen.pipeline.core.records import Dialogue, Message, ToolCall
from utcgen.pipeline.export.column_types import storage_row
from utcgen.pipeline.export.rows import schema
from utcgen.pipeline.export.slicing import build_system_prompt, chat_message, slice_dialogue
from utcgen.pipeline.settings.templates import load_prompt


def _rows(d: Dialogue, sft_format: str = "json") -> list[dict[str, Any]]:
    """The slices as `datasets` returns them (JSON values decoded)."""
    return [r.model_dump() for r in slice_dialogue(d, sft_format)]


def _chat(m: Message) -> dict[str, Any]:
    """What a stored message must become in the chat format."""
    if m.role != "assistant":
        return {"role": m.role, "content": m.content}
    out: dict[str, Any] = {"role": "assistant", "content": m.content, "reasoning_content": m.thought}
    if m.tool_calls:
        out["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in m.tool_calls]
    return out


def _hand_built() -> Dialogue:
    """Two tool-selection turns, then two argument-filling turns ending in the gold call."""
    seed = make_tool()
    distractors = make_distractors(seed, k=5)
    gold = {"material_id": "MAT-10442", "quantity": 250, "plant_code": "DE01"}
    messages = [
        Message(role="user", content="I need to sort out an order for parts."),
        Message(
            role="assistant",
            thought="Create, update, approve, cancel and status tools all fit.",
            content="Is this a new requisition or one that already exists?",
            phase="tool_selection",
        ),
        Message(role="user", content="A new one, nothing has been raised yet."),
        Message(
            role="assistant",
            thought="New document: create_purchase_requisition. Needs material, quantity, plant.",
            content="I can raise a new purchase requisition. Which material and how many units?",
            phase="tool_selection",
        ),
        Message(role="user", content="Material MAT-10442, 250 units."),
        Message(
            role="assistant",
            thought="Plant code still missing.",
            content="Which plant should receive them?",
            phase="argument_filling",
        ),
        Message(role="user", content="Plant DE01."),
        Message(
            role="assistant",
            thought="All three required arguments known.",
            content="Raising the requisition now.",
            tool_calls=[ToolCall(name=seed.name, arguments=gold)],
            phase="argument_filling",
        ),
    ]
    return Dialogue(
        id="hand-1",
        seed_tool=seed,
        user_persona=make_persona(),
        goal="Order 250 units of MAT-10442 for plant DE01.",
        gold_arguments=gold,
        distractor_tools=distractors,
        candidate_tools=[distractors[0], distractors[1], seed, *distractors[2:]],
        messages=messages,
        accepted=True,
        generation=make_generation(),
    )


@pytest.mark.parametrize("sft_format", ["chat", "json"])
def test_one_row_per_assistant_turn_with_growing_prefix(sft_format: str) -> None:
    d = _hand_built()
    rows = _rows(d, sft_format)
    assert [list(r) for r in rows] == [schema("sft").names] * 4
    assistant = d.assistant_turns
    assert len(rows) == len(assistant) == 4
    # [SYS] u1 | [SYS] u1 a1 u2 | [SYS] u1 a1 u2 a2 u3 | ...
    assert [len(r["prompt"]) for r in rows] == [2, 4, 6, 8]
    assert [r["turn_index"] for r in rows] == [0, 1, 2, 3]
    assert [r["phase"] for r in rows] == ["tool_selection", "tool_selection", "argument_filling", "argument_filling"]
    for row, turn in zip(rows, assistant):
        expected = _chat(turn) if sft_format == "chat" else {"role": "assistant", "content": turn.reply_json()}
        assert row["completion"] == [expected]
        assert row["dialogue_id"] == "hand-1"
        assert row["seed_tool"] == "create_purchase_requisition"
        assert row["prompt"][0]["role"] == "system"
        assert row["prompt"][-1]["role"] == "user"


def test_prefix_reproduces_the_dialogue_in_wire_format() -> None:
    d = _hand_built()
    last = _rows(d)[-1]
    expected = [
        {"role": m.role, "content": m.reply_json() if m.role == "assistant" else m.content} for m in d.messages[:-1]
    ]
    assert last["prompt"][1:] == expected
    reply = json.loads(last["completion"][0]["content"])
    assert reply == {
        "thought": "All three required arguments known.",
        "content": "Raising the requisition now.",
        "tool_calls": [{"name": "create_purchase_requisition", "arguments": d.gold_arguments}],
    }
    # Earlier assistant turns are shown exactly as the model must write them.
    first_assistant = json.loads(last["prompt"][2]["content"])
    assert set(first_assistant) == {"thought", "content", "tool_calls"}
    assert first_assistant["tool_calls"] == []


def test_chat_format_is_openai_messages_with_native_tool_calls() -> None:
    d = _hand_built()
    rows = [r.model_dump() for r in slice_dialogue(d)]  # chat is the default
    assert rows == _rows(d, "chat")
    last = rows[-1]
    assert last["prompt"][1:] == [_chat(m) for m in d.messages[:-1]]
    assert last["completion"] == [{
        "role": "assistant",
        "content": "Raising the requisition now.",
        "reasoning_content": "All three required arguments known.",
        "tool_calls": [{"type": "function",
                        "function": {"name": "create_purchase_requisition", "arguments": d.gold_arguments}}],
    }]
    # No call, no tool_calls key (some templates reject an empty or null one).
    assert "tool_calls" not in rows[0]["completion"][0]
    assert all("tool_calls" not in m for m in last["prompt"])
    # Tools reach the model through the template: the system prompt does not list them.
    system = last["prompt"][0]["content"]
    assert "6 candidate tools" in system and '"type": "function"' not in system and "{{" not in system
    assert system == build_system_prompt(d.candidate_tools, "chat")
    assert last["tools"] == [t.openai_spec() for t in d.candidate_tools]


def test_rows_are_stored_as_json_text_and_decode_to_the_same_objects() -> None:
    row = slice_dialogue(_hand_built())[-1]
    stored = storage_row(row)
    assert all(isinstance(v, str) for v in stored["prompt"] + stored["completion"] + stored["tools"])
    assert [json.loads(v) for v in stored["completion"]] == row.completion
    assert [json.loads(v) for v in stored["tools"]] == row.tools
    assert stored["turn_index"] == row.turn_index


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sft format"):
        slice_dialogue(_hand_built(), "xml")


def test_chat_message_of_a_user_turn_has_role_and_content_only() -> None:
    assert chat_message(Message(role="user", content="hi")) == {"role": "user", "content": "hi"}


def test_system_prompt_lists_every_candidate_tool_in_order() -> None:
    d = _hand_built()
    rows = _rows(d)
    system = rows[0]["prompt"][0]["content"]
    positions = []
    for tool in d.candidate_tools:
        spec = json.dumps(tool.openai_spec(), ensure_ascii=False)
        assert spec in system
        positions.append(system.index(spec))
    assert positions == sorted(positions)
    assert "6 candidate tools" in system
    assert "{{" not in system
    assert not system.startswith(("version:", "==="))
    # The reply-format example survives rendering untouched.
    assert '"tool_calls": [{"name"' in system
    # Every slice of a dialogue shares one system prompt.
    assert all(r["prompt"][0]["content"] == system for r in rows)


@pytest.mark.parametrize("sft_format", ["chat", "json"])
def test_tools_column_is_candidate_specs_as_objects(sft_format: str) -> None:
    d = _hand_built()
    row = _rows(d, sft_format)[0]
    assert row["tools"] == [t.openai_spec() for t in d.candidate_tools]


def test_stored_system_messages_are_replaced_by_the_sft_prompt() -> None:
    d = _hand_built()
    d.messages.insert(0, Message(role="system", content="generation-time instructions"))
    rows = _rows(d)
    assert len(rows) == 4
    assert all("generation-time instructions" not in m["content"] for r in rows for m in r["prompt"])
    assert [len(r["prompt"]) for r in rows] == [2, 4, 6, 8]


def test_zero_argument_filling_turns() -> None:
    d = make_dialogue(tool_selection_turns=2, argument_filling_turns=0)
    rows = _rows(d)
    assert len(rows) == 2
    assert json.loads(rows[-1]["completion"][0]["content"])["tool_calls"][0]["arguments"] == d.gold_arguments
    chat = _rows(d, "chat")
    assert chat[-1]["completion"][0]["tool_calls"][0]["function"]["arguments"] == d.gold_arguments


def test_template_parses_with_the_project_prompt_loader() -> None:
    """prompts/ has one file format; the SFT template must stay loadable by utcgen.pipeline.settings.templates."""
    tools = [make_tool(), *make_distractors(make_tool(), k=2)]
    prompt = load_prompt("sft_system")
    assert prompt.version == "sft_system/1"
    rendered = prompt.render(tools="\n".join(t.spec_json() for t in tools), num_tools=str(len(tools)))
    assert rendered == [{"role": "system", "content": build_system_prompt(tools)}]


def test_chat_system_prompt_parses_with_the_project_prompt_loader() -> None:
    prompt = load_prompt("sft_system_chat")
    assert prompt.version == "sft_system_chat/1"
    assert prompt.placeholders == {"num_tools"}


def test_build_system_prompt_empty_candidates_is_explicit() -> None:
    assert "0 candidate tools" in build_system_prompt([])
    assert "0 candidate tools" in build_system_prompt([], "chat")


def _with_results() -> Dialogue:
    """The hand-built dialogue after its call: an error result, a question, the user's answer, a second call,
    its result and the answer from it (a stored system message first, as the ids count it)."""
    d = _hand_built()
    d.messages.insert(0, Message(role="system", content="generation-time instructions"))
    return with_results(d, error_first=True)


def test_chat_rows_after_results_hold_tool_messages_answering_calls_with_ids() -> None:
    d = _with_results()
    rows = _rows(d, "chat")
    assert len(rows) == len(d.assistant_turns) == 7  # every assistant turn, those after results included
    # each prompt is the one before it, its completion and what came after: one conversation
    for before, after in pairwise(rows):
        assert after["prompt"][:len(before["prompt"]) + 1] == before["prompt"] + before["completion"]
    tools = [(i, m) for i, m in enumerate(rows[-1]["prompt"]) if m["role"] == "tool"]
    stored = [m for m in d.messages if m.role == "tool"]
    assert [m for _, m in tools] == [{"role": "tool", "tool_call_id": s.tool_call_id, "content": s.content}
                                     for s in stored]
    for i, message in tools:
        call = rows[-1]["prompt"][i - 1]
        (tool_call,) = call["tool_calls"]
        assert tool_call["id"] == message["tool_call_id"] and tool_call["type"] == "function"
        assert isinstance(tool_call["function"]["arguments"], dict)
    # the ids are the record's: the call they name is the stored turn at that index
    assert all(d.messages[int(s.tool_call_id.split("_")[1])].tool_calls for s in stored if s.tool_call_id)
    # the answers are learned with the result as the prompt's last message; the calls carry their ids
    after = [r for r in rows if r["prompt"][-1]["role"] == "tool"]
    assert [r["completion"][0]["content"] for r in after] == [m.content for i, m in enumerate(d.messages)
                                                              if m.role == "assistant" and d.messages[i - 1].role == "tool"]
    assert [r["completion"][0]["tool_calls"][0]["id"] for r in rows if r["completion"][0].get("tool_calls")] == \
        [s.tool_call_id for s in stored]
    assert [r["gold_call"] is not None for r in rows] == [bool(m.tool_calls) for m in d.assistant_turns]


def test_json_rows_show_a_result_as_the_user_side_message_a_json_model_reads() -> None:
    d = _with_results()
    last = _rows(d, "json")[-1]
    stored = [m for m in d.messages if m.role == "tool"]
    shown = [m for m in last["prompt"] if m["content"].startswith("Tool result for ")]
    assert shown == [{"role": "user", "content": f"Tool result for {s.tool_call_id}:\n{s.content}"} for s in stored]
    assert all(m["role"] in ("system", "user", "assistant") for m in last["prompt"])
    # the assistant's turns keep the format's one JSON string, no ids
    assert all(set(m) == {"role", "content"} for m in last["prompt"])
    assert json.loads(last["completion"][0]["content"])["content"] == d.messages[-1].content


def test_a_dialogue_without_results_has_no_call_ids() -> None:
    rows = _rows(_hand_built(), "chat")
    calls = [c for r in rows for m in r["prompt"] + r["completion"] for c in m.get("tool_calls", [])]
    assert calls and all(set(c) == {"type", "function"} for c in calls)
