"""Data-quality figures (`export.quality`) on small hand-made dialogues whose right answer is known."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.support.factories import make_dialogue, make_tool
from utcgen.pipeline.core.records import Dialogue, Message, ToolCall
from utcgen.pipeline.export import quality as q

SEED = make_tool(name="create_invoice", description="Create a new invoice for a customer order.",
                 properties={"invoice_id": {"type": "string"}, "quantity": {"type": "number", "description": "Units billed."}})
OTHER = make_tool(name="cancel_shipment", description="Cancel a shipment that has not left the warehouse yet.",
                  properties={"shipment_id": {"type": "string"}})


def _dialogue(user: list[str], assistant: list[str], gold: dict[str, Any] | None = None, seed=SEED, accepted: bool = True,
              others=(OTHER,), id: str = "d") -> Dialogue:
    msgs: list[Message] = []
    for i, u in enumerate(user):
        msgs.append(Message(role="user", content=u))
        if i < len(assistant):
            msgs.append(Message(role="assistant", content=assistant[i], thought="private"))
    msgs.append(Message(role="assistant", content="", tool_calls=[ToolCall(name=seed.name, arguments=gold or {})]))
    base = make_dialogue(id=id)
    return base.model_copy(update={"seed_tool": seed, "candidate_tools": [seed, *others], "distractor_tools": list(others),
                                   "messages": msgs, "gold_arguments": gold or {}, "accepted": accepted})


def _bag_of_words(texts: Sequence[str]) -> np.ndarray:
    """A stand-in embedder: word counts over the texts' shared vocabulary (cosine = word overlap)."""
    vocab = sorted({w for t in texts for w in q.split_words(t)})
    out = np.zeros((len(texts), len(vocab)), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in q.split_words(t):
            out[i, vocab.index(w)] += 1
    return out


def test_seed_closest_compares_the_seed_with_every_candidate_on_the_words_before_the_call() -> None:
    earned = _dialogue(["I need to bill a customer order with a new invoice"], [], id="earned")
    unearned = _dialogue(["the shipment must not leave the warehouse, cancel it"], [], id="unearned")
    # words said after the call do not count
    late = earned.model_copy(update={"id": "late", "messages": [
        Message(role="user", content="cancel the shipment in the warehouse"),
        Message(role="assistant", content="", tool_calls=[ToolCall(name=SEED.name)]),
        Message(role="user", content="new invoice for a customer order")]})
    value, n = q.seed_closest([earned, unearned, late], embed=_bag_of_words)
    assert n == 3 and value == 1 / 3
    no_call = earned.model_copy(update={"messages": earned.messages[:1]})
    assert q.seed_closest([no_call], embed=_bag_of_words) == (None, 0)


def test_seed_closest_with_the_project_embedder() -> None:
    d = _dialogue(["Please bill the customer: I need a new invoice for their order."], [])
    assert q.seed_closest([d]) == (1.0, 1)


def test_description_echo_counts_assistant_turns_that_repeat_eight_words_of_a_description() -> None:
    d = _dialogue(["hello", "ok", "fine"],
                  ["Shall I CANCEL a shipment that has not left the warehouse?",  # 8 words of OTHER's description
                   "Do you want to create a new invoice for a customer?",  # 7 words of SEED's: not an echo
                   "Which order is it?"])
    value, turns = q.description_echo([d])
    assert turns == 3 and value == 1 / 3
    rejected = d.model_copy(update={"accepted": False})
    assert q.quality([rejected], embed=_bag_of_words)["description_echo"]["value"] is None


def test_repeated_runs_counts_dialogues_and_pairs_of_turns_sharing_eight_words() -> None:
    again = "Would you like the invoice for the order sent by mail today"
    d = _dialogue(["a", "b", "c"], [again, "Something else entirely now.", again.replace("today", "or tomorrow")], id="r")
    clean = _dialogue(["a", "b"], ["Would you like the invoice for the order", "sent by mail today, or later on?"], id="c")
    assert q.repeated_runs([d, clean]) == (1, 1)
    thrice = _dialogue(["a", "b", "c"], [again, again, again], id="t")
    assert q.repeated_runs([thrice]) == (1, 3)


def test_shared_values_needs_three_different_keys_in_three_different_tools() -> None:
    tools = [make_tool(name=f"tool_{i}", properties={k: {"type": "string"}}) for i, k in enumerate(["owner", "repo", "title"])]
    stock = [_dialogue(["x"], [], gold={next(iter(t.properties)): "Contract renewal cycle"},
                       seed=t, id=f"s{i}") for i, t in enumerate(tools)]
    same_key = [_dialogue(["x"], [], gold={"owner": "octocat"}, seed=make_tool(name=f"other_{i}", properties={"owner": {"type": "string"}}),
                          id=f"o{i}") for i in range(3)]
    value, n, examples = q.shared_value_rate([*stock, *same_key])
    assert n == 6 and value == 0.5 and examples == ["contract renewal cycle"]
    # the same phrase in two tools only is not shared
    assert q.shared_value_rate(stock[:2])[0] == 0.0


def test_non_whole_flags_fractional_counts_numbers_and_ids_only() -> None:
    tool = make_tool(name="update_issue", properties={
        "issue_number": {"type": "number"}, "page": {"type": "string"}, "perPage": {"type": "integer"},
        "price": {"type": "number", "description": "Unit price in euros."},
        "labels": {"type": "array", "description": "Label ids to apply."}})
    gold = {"issue_number": 1030.07, "page": "2.5", "perPage": 30, "price": 12.5, "labels": [4, 7.25]}
    count, examples = q.non_whole([_dialogue(["x"], [], gold=gold, seed=tool)])
    assert count == 3
    assert examples == ["update_issue.issue_number=1030.07", "update_issue.page=2.5", "update_issue.labels=7.25"]
    assert q.whole_kind("quantity", {"type": "number"}) and not q.whole_kind("price", {"type": "number"})


def test_opening_trigrams_is_distinct_over_all_trigrams_of_first_user_turns() -> None:
    a = _dialogue(["I need a new invoice", "later words do not count"], ["ok"], id="a")
    b = _dialogue(["I need a new invoice"], [], id="b")
    c = _dialogue(["cancel my shipment please"], [], id="c")
    value, n = q.opening_trigrams([a, b, c])
    assert n == 3 + 3 + 2 and value == (3 + 2) / 8


def test_quality_marks_each_figure_against_its_target() -> None:
    good = _dialogue(["I need to bill a customer order with a new invoice"], ["Which customer?"], gold={"quantity": 3}, id="g")
    bad = _dialogue(["cancel that"], [], accepted=False, id="b")
    figures = q.quality([good, bad], embed=_bag_of_words)
    assert list(figures) == list(q.TARGETS)
    assert figures["acceptance"] == {"value": 0.5, "attempts": 2, "accepted": 1, "target": ">= 30%", "met": True}
    assert figures["seed_closest"]["met"] is True and figures["non_whole"]["target"] == "<= 0"
    assert figures["shared_values"]["value"] is None and figures["shared_values"]["met"] is None
    assert q.meets("opening_trigrams", 0.59) is False and q.meets("repeated_runs", 0) is True


def test_sentences_split_after_end_marks_and_at_line_breaks() -> None:
    from utcgen.pipeline.core.text import sentences
    assert sentences("Got it.  Which one?\nThe blue one! v1.2 works") == ["Got it.", "Which one?", "The blue one!", "v1.2 works"]
    assert sentences("  \n ") == []


def test_stock_lines_count_a_sentence_once_per_dialogue_case_and_spacing_ignored() -> None:
    stock = "Happy to help with that."
    sets = [_dialogue([f"Please bill order {i}.", "Thanks."], [f"{stock}  {stock} Which customer?" if i < 4 else
                                                                  f"Which customer is order {i} for?"], id=f"d{i}")
            for i in range(100)]
    sets[0] = _dialogue(["Please bill order 0.", "THANKS."], ["happy  to help with THAT. Which customer?"], id="d0")
    share, count, top = q.stock_lines(sets)
    assert share == 1.0 and count == 3  # "thanks." in all 100; the stock reply in 4 (4% > 2%), said twice in each
    assert top == [("thanks.", 1.0), ("happy to help with that.", 0.04), ("which customer?", 0.04)]
    assert q.stock_lines(sets, top=1)[2] == [("thanks.", 1.0)]
    figures = q.quality(sets, embed=_bag_of_words)["stock_lines"]
    assert figures["met"] is False and figures["stock_lines"] == 3 and figures["target"] == "<= 2%"


def test_stock_lines_need_three_dialogues_and_more_than_the_share() -> None:
    few = [_dialogue([f"Bill order {i}."], ["Which customer?" if i < 2 else f"Customer {i}?"], id=f"d{i}")
           for i in range(60)]
    share, count, top = q.stock_lines(few)
    assert (share, count, top) == (0.0, 0, [])  # "which customer?" is in 2 of 60 (3.3%): coincidence, not stock
    assert q.stock_lines([]) == (None, 0, [])
    many = [_dialogue([f"Bill order {i}."], ["Sure thing." if i < 3 else f"On it, {i}."], id=f"d{i}") for i in range(200)]
    assert q.stock_lines(many) == (0.015, 0, [])  # in 3 dialogues, but 1.5% of them: at most the share, not stock


def test_a_mark_without_words_is_no_line_of_its_own() -> None:
    from utcgen.pipeline.core.text import sentences

    assert sentences("Thanks! ... Could you add it to my queue? 📦") == ["Thanks! ...", "Could you add it to my queue? 📦"]
    sets = [_dialogue([f"Please queue track {i}. 📦"], [f"Queued {i}."], id=f"d{i}") for i in range(40)]
    assert q.stock_lines(sets) == (0.0, 0, [])  # the emoji goes with its own sentence, which differs each time
