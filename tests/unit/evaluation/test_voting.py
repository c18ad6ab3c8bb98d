"""The voting user proxy (App. C.3) and the user-side checker of dynamic evaluation."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.support.eval_bench import cases
from utcgen.pipeline.core.records import Message
from utcgen.pipeline.dialogue.values import invented_values
from utcgen.pipeline.evaluation import voting
from utcgen.pipeline.evaluation.checker import check_dialogue, check_user_turn
from utcgen.pipeline.evaluation.dynamic import proxy_phase
from utcgen.pipeline.evaluation.models import make_gateway


def test_votes_map_back_through_the_permutation() -> None:
    rng = random.Random(3)
    shown = voting.permutation(rng, 4)
    assert sorted(shown) == [0, 1, 2, 3]
    for position, original in enumerate(shown):
        assert voting.original_index(position, shown) == original
    # the same draft chosen under different orders is the same vote
    a, b = [2, 0, 1], [1, 2, 0]
    assert voting.original_index(a.index(1), a) == voting.original_index(b.index(1), b) == 1


def test_pool_is_the_mode_with_ties_to_the_lowest_index() -> None:
    assert voting.pool([2, 2, 1], 3) == 2
    assert voting.pool([2, 1], 3) == 1           # a tie
    assert voting.pool([0, 2, 1], 3) == 0        # three-way tie
    assert voting.pool([], 3) == 0               # everyone abstained
    assert voting.pool([5, 5, 1], 3) == 1        # out-of-range votes do not count


def test_parse_choice_reads_json_or_a_number_and_rejects_out_of_range() -> None:
    assert voting.parse_choice('{"choice": 2, "reason": "x"}', 3) == 1
    assert voting.parse_choice("I pick draft 3.", 3) == 2
    assert voting.parse_choice('{"choice": 7}', 3) is None
    assert voting.parse_choice("none of them", 3) is None


@pytest.fixture
def case():
    return next(c for c in cases() if c.gold_tool.required and c.distractors)


def test_offline_voters_pick_the_draft_without_leaks_whatever_order_they_see(case, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    gateway = make_gateway({"user": "utcgen-offline/default", "voter": "utcgen-offline/default"})
    key = case.gold_tool.required[0]
    drafts = [f"I want to use {case.gold_tool.name} please.",          # names the tool
              f'{{"{key}": "x"}}',                                     # JSON, a key
              "It is for my team's usual weekly booking, nothing unusual."]
    proxy = voting.UserProxy(gateway, votes=(3, 5), seed=1)
    history = [Message(role="user", content="Hi, I need help with something."),
               Message(role="assistant", content="Sure, what is it about?")]
    winner, votes = asyncio.run(proxy.vote(case, drafts, history, turn=1))
    gateway.close()
    assert votes == [2] * 5 and winner == 2   # every voter saw its own order, all map back to draft 2
    assert proxy.usage.calls == 5


def test_voting_proxy_utters_one_of_its_drafts(case, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    gateway = make_gateway({"user": "utcgen-offline/default", "voter": "utcgen-offline/default"})
    proxy = voting.UserProxy(gateway, votes=(3, 3), seed=0)
    text = asyncio.run(proxy.utter(case, "tool_selection", [], turn=0))
    gateway.close()
    (ballot,) = proxy.ballots
    assert len(ballot["drafts"]) == 3 and len(ballot["votes"]) == 3
    assert text == ballot["drafts"][ballot["winner"]]
    assert proxy.usage.calls == 6   # 3 drafts + 3 votes


def test_checker_flags_a_leaked_tool_name(case) -> None:
    text = f"Please run {case.gold_tool.name} for me."
    assert "names the tool" in check_user_turn(case, text, [])


def test_checker_flags_an_invented_value(case) -> None:
    problem = check_user_turn(case, "The reference is 99887766.", [])
    assert problem is not None and "invents value '99887766'" in problem
    # a value the assistant said first, or one of V*, is not invented
    said = [Message(role="assistant", content="Is it booking 99887766?")]
    assert check_user_turn(case, "Yes, 99887766.", said) is None
    value = str(next(iter(case.gold_arguments.values())))
    assert check_user_turn(case, f"It is {value}.", []) is None


def test_checker_flags_a_spoken_key_and_a_role_break(case) -> None:
    key = next(k for c in case.candidates for k in c.properties if "_" in k)
    assert "parameter key" in check_user_turn(case, f"Set {key} to what I said.", [])
    assert "breaks role" in check_user_turn(case, "How can I help you today?", [])
    assert "breaks role" in check_user_turn(case, '{"tool_calls": []}', [])


def test_checker_passes_the_reference_dialogues() -> None:
    for c in cases():
        assert check_dialogue(c, c.reference) is None, c.id


def test_invented_values_accept_separators_of_known_numbers() -> None:
    assert invented_values("the amount is 1,250.50", "amount 1250.5") == []
    assert invented_values("ship to bob@example.com", "email ann@example.com") == ["bob@example.com"]


def test_proxy_phase_moves_on_naming_the_tool_or_asking_for_its_parameter(case) -> None:
    assert proxy_phase(case, "Which of these do you need?", "tool_selection") == "tool_selection"
    assert proxy_phase(case, f"I will use {case.gold_tool.name}.", "tool_selection") == "argument_filling"
    key = case.gold_tool.required[0]
    assert proxy_phase(case, f"What is the {key.replace('_', ' ')}?", "tool_selection") == "argument_filling"
    assert proxy_phase(case, "Anything", "argument_filling") == "argument_filling"


@pytest.mark.slow
def test_voting_with_a_served_generator_and_voter(case, tmp_path, monkeypatch) -> None:
    """n drafts from the served generator (distinct requests), m voters who each pick the first draft
    they are shown: every vote maps back through that voter's own permutation."""
    import itertools
    import json

    from tests.support.openai_server import ChatRequest, ScriptedOpenAIServer

    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-dummy")
    counter = itertools.count()
    shown_orders: list[list[str]] = []

    def responder(request: ChatRequest) -> str:
        system = request.messages[0]["content"]
        if "Pick the single draft" in system:
            listed = request.messages[-1]["content"].split("next message:\n", 1)[1].split("\n\n", 1)[0]
            shown_orders.append([json.loads(line.split(". ", 1)[1]) for line in listed.splitlines()])
            return json.dumps({"choice": 1, "reason": "first"})
        return json.dumps({"message": f"It is about my usual request, version {next(counter)}."})

    with ScriptedOpenAIServer(responder) as srv:
        monkeypatch.setenv("UTCGEN_API_BASE", srv.base_url)
        gateway = make_gateway({"user": "openai/proxy", "voter": "openai/voter"})
        proxy = voting.UserProxy(gateway, votes=(3, 4), seed=5)
        text = asyncio.run(proxy.utter(case, "tool_selection", [], turn=0))
        gateway.close()
        voter_requests = [r for r in srv.requests if "Pick the single draft" in r.messages[0]["content"]]
    assert len(voter_requests) == 4
    assert all("choice" in json.dumps(r.response_format) for r in voter_requests)  # the reply's schema is sent
    (ballot,) = proxy.ballots
    drafts = ballot["drafts"]
    assert len(set(drafts)) == 3                         # three separate samples
    assert len(shown_orders) == 4 and all(sorted(o) == sorted(drafts) for o in shown_orders)
    assert len({tuple(o) for o in shown_orders}) > 1     # the voters saw different orders
    assert ballot["votes"] == [drafts.index(order[0]) for order in shown_orders]
    rng = random.Random(f"5:{case.id}:0:vote")
    assert ballot["votes"] == [voting.permutation(rng, 3)[0] for _ in range(4)]
    assert text == drafts[voting.pool(ballot["votes"], 3)]


def test_the_voter_judges_from_what_its_prompt_shows() -> None:
    from utcgen.pipeline.llm.requests import VoterRequest
    from utcgen.pipeline.simulator.evaluation import vote_score

    assert set(VoterRequest.model_fields) == {"role", "persona", "goal", "history", "shown"}  # no tools
    question = "Which queue should the ticket go to?"
    plain = vote_score("The queue is the network team's.", question)
    assert plain == 1  # answers the question
    assert vote_score("Use queueName network please.", question) < 0  # a camelCase identifier
    assert vote_score("Call open_ticket for the network queue.", question) < 0  # a snake_case identifier
    assert vote_score("A follow-up on the day-to-day queue.", question) == plain  # hyphens are plain speech
