"""Multi-step tasks end to end offline: two calls in order, the second taking what the first result returned,
each step judged as a dialogue of its own, and the chain rules catching a broken chain."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support.runs import rows, scenario_lines_run
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Dialogue, ToolCall
from utcgen.pipeline.dialogue.results import read_field, results
from utcgen.pipeline.scenarios import problems, step_views
from utcgen.pipeline.settings.config import load_config
from utcgen.validators.cascade import run_cascade

SETTINGS = {"num_dialogues": 5, "seed": 5, "scenarios": {"multi_step": 1.0},
            "execution": {"results": True, "error_share": 0.2}}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    return scenario_lines_run(tmp_path_factory.mktemp("multi-step"), embedder, SETTINGS)


def _chained(run: dict[str, Any]) -> list[Dialogue]:
    found = [d for d in run["accepted"] if d.scenario == "multi_step"]
    assert found, "no accepted multi-step dialogue"
    return found


def test_the_second_call_takes_what_the_first_result_returned(run):
    for d in _chained(run):
        chain = d.scenario_info.chain
        assert chain is not None and chain.parameter in chain.fed
        calls = [(r.call, r.value) for r in results(d.messages) if r.call is not None]
        assert calls[0][0].name == chain.tool.name and calls[-1][0].name == d.seed_tool.name != chain.tool.name
        first_result = json.dumps(calls[0][1])
        second = next(c for c, _ in calls if c.name == d.seed_tool.name)
        for key, value in chain.fed.items():
            assert second.arguments[key] == value == d.gold_arguments[key]
            for part in value if isinstance(value, list) else [value]:
                assert json.dumps(part) in first_result or str(part) in first_result
        # nobody says the fed value before the second call: the assistant reads it from the result
        said = [m.content for m in d.messages[:d.messages.index(next(m for m in d.messages if second in m.tool_calls))]
                if m.role == "user"]
        assert not any(str(chain.fed[chain.parameter]).strip("[]'") in text for text in said)


def test_each_step_is_judged_with_its_own_tool_and_pool(run):
    for d in _chained(run):
        first, second = step_views(d)
        chain = d.scenario_info.chain
        assert first.seed_tool.name == chain.tool.name and first.candidate_tools == chain.candidates
        assert not any(m.role == "tool" for m in first.messages)
        assert second.messages[0].role == "user" and not any(m.role == "tool" for m in second.messages)
        assert not set(chain.fed) & set(second.seed_tool.properties)  # the fed values are the chain rule's
        assert {t.name for t in second.candidate_tools} == {t.name for t in d.candidate_tools}
        assert any(v.details.get("steps") == 2 for v in d.validation if v.validator == "toolcall")


def test_a_broken_chain_is_caught(run):
    d = _chained(run)[0]
    chain = d.scenario_info.chain
    assert problems(d) == []
    # the call the chain feeds: the seed tool's first call (a retry after an error result may follow it)
    fed = min(i for i, m in enumerate(d.messages) if m.tool_calls and m.tool_calls[0].name == d.seed_tool.name)
    messages = list(d.messages)
    call = messages[fed].tool_calls[0]
    wrong = ToolCall(name=call.name, arguments={**call.arguments, chain.parameter: "made-up-0001"})
    messages[fed] = messages[fed].model_copy(update={"tool_calls": [wrong]})
    broken = d.model_copy(update={"messages": messages})
    assert [rule for rule, _ in problems(broken)] == ["chain_unused"]
    first_only = d.model_copy(update={"messages": d.messages[:next(i for i, m in enumerate(d.messages)
                                                                   if m.role == "tool") + 2]})
    assert [rule for rule, _ in problems(first_only)] == ["chain_missing"]


def test_a_step_that_fails_a_rule_is_named(run):
    d = _chained(run)[0]
    first_call = next(i for i, m in enumerate(d.messages) if m.tool_calls)
    messages = list(d.messages)
    call = messages[first_call].tool_calls[0]
    messages[first_call] = messages[first_call].model_copy(
        update={"tool_calls": [ToolCall(name=call.name, arguments={**call.arguments, "unknown_key": 1})]})
    verdicts = asyncio.run(run_cascade(d.model_copy(update={"messages": messages}), gateway=None))  # type: ignore[arg-type]
    failed = next(v for v in verdicts if not v.passed)
    assert failed.reason.startswith("step 1:") and failed.details["step"] == 1


def test_the_sft_rows_hold_the_first_result_before_the_second_call(run):
    import pyarrow.parquet as pq

    rows = pq.read_table(run["out"] / "data" / "sft").to_pylist()
    chained = {d.id: d for d in _chained(run)}
    later = []
    for row in rows:
        if row["dialogue_id"] not in chained:
            continue
        d, prompt = chained[row["dialogue_id"]], [json.loads(m) for m in row["prompt"]]
        offered = {json.loads(t)["function"]["name"] for t in row["tools"]}
        # one tool set for the whole conversation: both steps' pools
        assert offered == {t.name for t in [*d.candidate_tools, *d.scenario_info.chain.candidates]}
        if row["gold_call"] and d.seed_tool.name in row["gold_call"] and any(m["role"] == "tool" for m in prompt):
            later.append(row)
    assert later, "no sft row whose prompt holds the first result and whose completion is the second call"


def test_multi_step_needs_tool_results(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("scenarios: {multi_step: 1}\n")
    with pytest.raises(InputError, match=r"run.yaml: field 'execution'.*multi_step needs tool results"):
        load_config(str(path))
    path.write_text("scenarios: {multi_step: 1}\nexecution: {results: true}\n")
    assert load_config(str(path)).execution.results


def test_a_reader_takes_the_nearest_field_named_for_the_parameter():
    album = {"items": [{"artists": [{"id": "art-1", "name": "X"}], "id": "alb-1", "name": "Y"}], "total": 3}
    assert read_field(album, "album_id") == "alb-1"  # the item's own id, not a nested artist's
    assert read_field({"owner": {"login": "okada"}, "name": "ledger"}, "owner") == "okada"
    assert read_field({"owner": {"login": "okada"}, "name": "ledger"}, "repo") is None  # whose name, unsaid
    assert read_field({"number": 12, "title": "Bug"}, "issue_number") == 12
    assert read_field({"status": "ok"}, "order_id") is None
    assert read_field({"id": "TRA-93516", "name": "Transfer 12"}, "sku") is None  # a transfer's id is no sku


def test_a_value_that_does_not_fit_the_parameter_is_not_read():
    from utcgen.pipeline.dialogue.results import read_argument

    rfq = {"type": "string", "pattern": "^RFQ-[0-9]{6}$"}
    assert read_argument({"rfq_id": "RFQ-204518"}, "rfq_id", rfq) == "RFQ-204518"
    assert read_argument({"id": "SUP-26351"}, "rfq_id", rfq) is None
    assert read_argument({"items": [{"id": "ITM-1"}]}, "item_ids", {"type": "array", "items": {"type": "string"}}) == ["ITM-1"]


def test_stats_count_chained_dialogues_and_the_card_shows_one(run):
    stats = json.loads((run["out"] / "stats.json").read_text())
    exported = {row["id"] for row in rows(run["out"], "dialogues")}  # a run exports num_dialogues of its accepted
    assert stats["results"]["chained_dialogues"] == sum(d.id in exported for d in _chained(run)) >= 1
    sample = stats["results"]["sample"]
    assert [t["role"] for t in sample].count("tool") >= 2  # the chained one: two calls, two results
    card = (run["out"] / "README.md").read_text()
    assert "A sample dialogue of this dataset" in card and "*multi-step* task" in card
    assert sample[-1]["text"] in card.replace("\\|", "|")


def test_a_call_is_chained_only_by_a_value_no_user_said():
    from utcgen.pipeline.core.records import Message
    from utcgen.pipeline.dialogue.results import fed_by_results

    def dialogue(user: str, result: str) -> list[Message]:
        return [Message(role="user", content=user),
                Message(role="assistant", content="", tool_calls=[ToolCall(name="list_orders", arguments={})]),
                Message(role="tool", content=result, tool_call_id="call_1_0"),
                Message(role="assistant", content="You have one open order."),
                Message(role="user", content="Cancel it, please."),
                Message(role="assistant", content="", tool_calls=[ToolCall(name="cancel_order",
                                                                           arguments={"order_id": "ORD-5521"})])]

    assert fed_by_results(dialogue("Show my orders.", '{"orders": [{"id": "ORD-5521"}]}'))
    assert not fed_by_results(dialogue("Show my orders, ORD-5521 included.", '{"orders": [{"id": "ORD-5521"}]}'))
    assert not fed_by_results(dialogue("Show my orders.", '{"error": {"type": "not_found", "message": "ORD-5521"}}'))


def test_the_audit_replays_each_step_as_the_cascade_judged_it(run, embedder):
    from utcgen.pipeline.export.audit import audit_dialogues

    report = audit_dialogues(_chained(run), embed=embedder.encode)
    rates = {name: stage["pass_rate"] for name, stage in report["validators"].items()}
    assert rates and all(rate == 1.0 for rate in rates.values()), rates
    assert "answers" in rates and "scenario" in rates
