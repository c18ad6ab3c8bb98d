"""`utcgen.reward_function`: the gold turn ranks first, each mistake costs what it should, both completion forms read."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from utcgen import reward_function
from utcgen.pipeline.export.dataset import load_split

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "description": "Cancel a customer order.",
                                            "parameters": {"type": "object", "required": ["order_id", "reason"],
                                                           "properties": {"order_id": {"type": "integer"},
                                                                          "reason": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "refund_order", "description": "Refund a customer order.",
                                            "parameters": {"type": "object", "required": ["order_id"],
                                                           "properties": {"order_id": {"type": "integer"}}}}}]
PROMPT = [{"role": "system", "content": "You help with orders."},
          {"role": "user", "content": "Please cancel order 42, the customer changed their mind."}]
GOLD = {"name": "cancel_order", "arguments": {"order_id": 42, "reason": "customer changed their mind"}}


def _score(*completions: Any, action: str = "call", gold: dict | None = GOLD, prompt: Any = PROMPT) -> list[float]:
    n = len(completions)
    return reward_function([prompt] * n, list(completions), action=[action] * n, gold_call=[gold] * n,
                           tools=[TOOLS] * n, trainer_state=None)


def _call(name: str, **arguments: Any) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": "", "tool_calls": [{"type": "function",
                                                                "function": {"name": name, "arguments": arguments}}]}]


def test_the_parts_of_the_reward_on_a_calling_turn() -> None:
    gold, half, typed, extra, other, ask, garbage = _score(
        _call("cancel_order", order_id=42, reason="customer changed their mind"),
        _call("cancel_order", order_id=42),
        _call("cancel_order", order_id="42", reason="customer changed their mind"),
        _call("cancel_order", order_id=42, reason="customer changed their mind", notify=True),
        _call("refund_order", order_id=42),
        [{"role": "assistant", "content": "Which order number is it?"}],
        "<tool_call>{not json</tool_call>")
    assert gold == 5.0                       # format + act + tool + every argument + a schema-valid call
    assert half == 4.0 and typed == 4.0      # one of two arguments right, and the call fails the schema
    assert extra == 4.75                     # an argument the gold call does not have costs 0.25
    assert other == 1.0                      # a call, but to the wrong tool: penalised
    assert ask == -0.5                       # asking when every value was already given
    assert garbage == 0.0                    # unreadable: nothing


def test_turns_that_should_not_call() -> None:
    question = [{"role": "assistant", "content": "Do you want it cancelled or refunded?"}]
    refusal = [{"role": "assistant", "content": "I'm sorry, none of the tools I can use does that."}]
    ask, call = _score(question, _call("refund_order", order_id=42), action="ask", gold=None)
    assert (ask, call) == (2.5, -1.0)
    refuse, lookalike, talk = _score(refusal, _call("refund_order", order_id=42), question, action="refuse", gold=None)
    assert (refuse, lookalike, talk) == (2.5, -1.0, 0.5)


def test_text_completions_in_both_documented_formats() -> None:
    tagged = ('<think>The user gave the order and the reason.</think>\n<tool_call>{"name": "cancel_order", '
              '"arguments": {"order_id": 42, "reason": "customer changed their mind"}}</tool_call>')
    as_json = json.dumps({"thought": "", "content": "", "tool_calls": [GOLD]})
    in_content = [{"role": "assistant", "content": tagged}]
    string_args = [{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "cancel_order", "arguments": json.dumps(GOLD["arguments"])}}]}]
    assert _score(tagged, as_json, in_content, string_args) == [5.0] * 4
    assert _score("Which order?", prompt="Please cancel order 42.")[0] < 0.5  # a string prompt is what was said


def test_mismatched_lengths_and_missing_columns_are_errors() -> None:
    with pytest.raises(ValueError, match="prompts"):
        reward_function([PROMPT], ["a", "b"], gold_call=[None, None])
    with pytest.raises(ValueError, match="gold_call"):
        reward_function([PROMPT], ["a"])


@pytest.fixture(scope="module")
def rows(scenario_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("reward-hf")
    return {"sft": load_split(scenario_run["out"], "sft", cache),
            "preference": load_split(scenario_run["out"], "preference", cache),
            "by_id": {d.id: d for d in scenario_run["accepted"]}}


def test_gold_beats_a_premature_call_to_another_candidate_on_every_row(rows: dict[str, Any]) -> None:
    sft = rows["sft"]
    assert sft.num_rows > 50
    for row in sft:
        gold_name = (row["gold_call"] or {}).get("name")
        others = [t["function"]["name"] for t in row["tools"] if t["function"]["name"] != gold_name]
        d = rows["by_id"][row["dialogue_id"]]
        wrong = [_call(name, **{k: v for k, v in d.gold_arguments.items()
                                if k in next(t.properties for t in d.candidate_tools if t.name == name)})
                 for name in others]
        scores = reward_function([row["prompt"]] * (1 + len(wrong)), [row["completion"], *wrong],
                                 action=[row["action"]] * (1 + len(wrong)), gold_call=[row["gold_call"]] * (1 + len(wrong)),
                                 tools=[row["tools"]] * (1 + len(wrong)))
        assert all(scores[0] > s for s in scores[1:]), (row["dialogue_id"], row["turn_index"], scores)


def test_gold_beats_every_rejected_turn_of_the_preference_config(rows: dict[str, Any]) -> None:
    sft = {(r["dialogue_id"], r["turn_index"]): r for r in rows["sft"]}
    means: dict[str, list[list[float]]] = defaultdict(lambda: [[], []])
    for row in rows["preference"]:
        gold = sft[(row["dialogue_id"], row["turn_index"])]
        cols = {"action": [gold["action"]] * 2, "gold_call": [gold["gold_call"]] * 2, "tools": [gold["tools"]] * 2}
        chosen, rejected = reward_function([row["prompt"]] * 2, [row["chosen"], row["rejected"]], **cols)
        assert chosen > rejected, (row["pattern"], chosen, rejected)
        means[row["pattern"]][0].append(chosen)
        means[row["pattern"]][1].append(rejected)
    print({p: (round(sum(a) / len(a), 3), round(sum(b) / len(b), 3), len(a)) for p, (a, b) in means.items()})


def test_the_docstring_example_holds() -> None:
    import doctest

    from utcgen.pipeline.evaluation import reward

    result = doctest.testmod(reward)
    assert result.attempted >= 1 and result.failed == 0
