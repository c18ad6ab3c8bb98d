"""Shortcut and leakage rules (pipeline.shortcuts and their validators), the offline backend's
avoidance of them, the persona fit record and T_max counting."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from tests.support.factories import make_dialogue
from utcgen.pipeline.core.records import Message, Persona, Tool, ToolCall
from utcgen.pipeline.dialogue import parameter_labels, person_names, shortcuts
from utcgen.pipeline.dialogue.values import implausible
from utcgen.pipeline.llm.requests import CriticRequest, Said, UserRequest
from utcgen.pipeline.simulator import conversation, gold_values, judges
from utcgen.validators import nameleak, paramkeys, personafit, plausibility, recitation, repetition

GOOD = make_dialogue()
SEED = GOOD.seed_tool.name


def say(d, index: int, text: str):
    msgs = [m.model_copy() for m in d.messages]
    msgs[index] = msgs[index].model_copy(update={"content": text})
    return d.model_copy(update={"messages": msgs})


def test_every_shortcut_rule_passes_the_factory_dialogue() -> None:
    for check in (nameleak.check_name_leak, recitation.check_recitation, paramkeys.check_param_keys,
                  repetition.check_repetition, plausibility.check_plausibility, personafit.check_persona_fit):
        v = check(GOOD)
        assert v.passed, (v.validator, v.reason)


def test_name_leak_catches_the_name_and_its_distinctive_tokens() -> None:
    named = nameleak.check_name_leak(say(GOOD, 0, f"Please run {SEED}."))
    assert not named.passed and named.details["rule"] == "name_token"
    assert shortcuts.distinctive_name_tokens("approve_leave_request", ["submit_leave_request", "get_leave_balance"]) == {"approv"}
    renamed = GOOD.model_copy(update={"seed_tool": GOOD.seed_tool.model_copy(update={"name": "approve_purchase_requisition"})})
    v = nameleak.check_name_leak(say(renamed, 0, "Could you help me get this approved today?"))
    assert not v.passed and "approved" in v.reason
    assert nameleak.check_name_leak(say(renamed, 0, "Could you help me with a purchase today?")).passed


def test_recitation_catches_six_shared_words_but_not_a_paraphrase() -> None:
    desc = "Creates a purchase requisition for goods or services that still need budget approval."
    d = GOOD.model_copy(update={"seed_tool": GOOD.seed_tool.model_copy(update={"description": desc})})
    words = desc.split()
    v = recitation.check_recitation(say(d, 0, "Hi. I need to " + " ".join(words[3:10]) + " please."))
    assert not v.passed and "recites the description" in v.reason
    assert shortcuts.recited("the quick brown fox", desc) is None


def test_param_keys_catches_identifiers_and_schema_phrases_but_not_plain_words() -> None:
    assert shortcuts.key_hits("What is the fiscal_year?", ["fiscal_year"]) == ["fiscal_year"]
    assert shortcuts.key_hits("Which PO number is it?", ["po_number"]) == ["po_number"]
    assert shortcuts.key_hits("What is the cost center code?", ["cost_center_code"]) == ["cost_center_code"]
    assert shortcuts.key_hits("Which fiscal year?", ["fiscal_year"]) == []
    # words in key order across a clause boundary are two phrases, not the key read aloud
    assert shortcuts.key_hits("The cost center it comes from, cost center it goes to?", ["from_cost_center"]) == []
    assert shortcuts.key_hits("Which from cost center?", ["from_cost_center"]) == ["from_cost_center"]
    assert shortcuts.key_hits("What is the to currency?", ["to_currency"]) == []
    key = next(iter(GOOD.seed_tool.properties))
    i = next(i for i, m in enumerate(GOOD.messages) if m.role == "user")
    v = paramkeys.check_param_keys(say(GOOD, i, f"The `{key}` is 12."))
    assert (v.passed, v.details.get("rule")) == (False, "user_key") or not shortcuts.identifier_like(key)


def test_repetition_catches_a_question_asked_twice() -> None:
    turns = [i for i, m in enumerate(GOOD.messages) if m.role == "assistant" and not m.tool_calls]
    assert len(turns) >= 2
    first = GOOD.messages[turns[0]].content
    v = repetition.check_repetition(say(GOOD, turns[1], first.upper() + "  "))
    assert not v.passed and v.details["rule"] == "repeated_question"


def test_repetition_catches_an_option_list_offered_again_in_another_frame() -> None:
    turns = [i for i, m in enumerate(GOOD.messages) if m.role == "assistant" and not m.tool_calls]
    d = say(GOOD, turns[0], "Glad to help. Are you after saved albums and albums, or saved tracks and tracks?")
    again = say(d, turns[1], "Okay. Is it more saved albums and albums, or saved tracks and tracks?")
    v = repetition.check_repetition(again)
    assert not v.passed and v.details["rule"] == "repeated_run"
    assert "albums and albums or saved tracks and tracks" in v.reason
    # seven shared words are a new question
    assert repetition.check_repetition(say(d, turns[1], "Is it more saved albums, or saved tracks and tracks?")).passed


@pytest.mark.parametrize("key,value,bad", [
    ("last_name", "Farah Tanaka", True), ("last_name", "van der Berg", False), ("last_name", "Tanaka", False),
    ("pay_period", "4986-50", True), ("pay_period", "2026-05", False),
    ("fiscal_year", 2095, True), ("fiscal_year", 2026, False),
    ("contact_phone", "P-91574", True), ("contact_phone", "+49 301 555 0199", False),
    ("start_date", "2091-01-01", True), ("start_date", "2026-03-02", False),
    ("ids", ["Adding context on the present business: the Osaka office relies on it."], True),
    ("ids", ["2ZWeqhFWCEPyYngFb51yBM"], False),
    ("date_of_birth", "2027-03-01", True), ("date_of_birth", "1984-03-01", False), ("dob", "2031-01-09", True),
    ("quantity", -4, True), ("quantity_delta", -4, False), ("discount_percent", 140, True),
])
def test_implausible_values(key: str, value: Any, bad: bool) -> None:
    assert (implausible(key, value) is not None) == bad


def test_persona_fit_reads_the_recorded_score() -> None:
    low = GOOD.model_copy(update={"user_persona": GOOD.user_persona.model_copy(
        update={"attributes": {**GOOD.user_persona.attributes, "tool_fit": "0.05"}})})
    v = personafit.check_persona_fit(low)
    assert not v.passed and v.details["rule"] == "low_fit"
    assert personafit.check_persona_fit(GOOD).details["checked"] is False


def test_offline_critic_refuses_what_the_rules_catch() -> None:
    for bad in (say(GOOD, 0, f"Please run {SEED}."),
                GOOD.model_copy(update={"gold_arguments": {**GOOD.gold_arguments, "fiscal_year": 2095}})):
        reply = json.loads(judges.critic(CriticRequest(dialogue=bad), []))
        assert reply["passed"] is False, reply


def test_offline_values_are_plausible_and_fit_the_persona() -> None:
    persona = Persona(id="", text="", attributes={"country": "JP"})
    rng = random.Random(3)
    for key, schema in [("last_name", {"type": "string"}), ("first_name", {"type": "string"}),
                        ("contact_phone", {"type": "string"}), ("fiscal_year", {"type": "integer"}),
                        ("pay_period", {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"}),
                        ("quantity", {"type": "integer", "minimum": 1, "maximum": 1000000}),
                        ("start_date", {"type": "string", "format": "date"})]:
        for _ in range(20):
            value = gold_values.gold_value(key, schema, persona, rng)
            assert implausible(key, value, schema) is None, (key, value)
    assert person_names.person_name(persona, random.Random(1), "last") in person_names.NAMES["jp"][1]
    assert shortcuts.key_hits("the " + parameter_labels.label("cost_center_code"), ["cost_center_code"]) == []


def test_a_title_is_said_without_its_bracketed_list() -> None:
    """Spotify titles a parameter 'Groups to include (single, album, appears_on, compilation)': a person
    says 'the groups to include', never the list of codes after it."""
    schema = {"type": "string", "title": "Groups to include (single, album, appears_on, compilation)"}
    assert parameter_labels.label("include_groups", schema) == "groups to include"
    assert parameter_labels.label("id", {"type": "string", "title": "Spotify Artist ID"}) == "Spotify artist ID"  # a name keeps its capital


def _user_text(request: UserRequest) -> str:
    """The offline user's message (its reply's text, whichever reply format the policy uses)."""
    text = conversation.user(request, [])
    try:
        return json.loads(text)["message"]
    except (ValueError, KeyError, TypeError):
        return text


def test_offline_opening_and_detail_never_name_or_recite_the_seed() -> None:
    tools = [GOOD.seed_tool, *GOOD.distractor_tools]
    state = UserRequest(tool=tools[0], distractors=tools[1:], persona=GOOD.user_persona, phase="tool_selection",
                        goal="", gold_arguments={}, history=[])
    others = [t.name for t in tools[1:]]
    for seed in range(30):
        opening = _user_text(state.model_copy(update={"seed": seed}))
        assert not shortcuts.name_hits(opening, tools[0].name, others), opening
        history = [Said(role="user", content=opening), Said(role="assistant", content="Which one?")]
        detail = _user_text(state.model_copy(update={"seed": seed, "history": history}))
        plain = shortcuts.description_stems(tools[0].description)  # an answer may say the need in plain words
        assert not shortcuts.name_hits(detail, tools[0].name, others, plain), detail
        assert not shortcuts.full_name_hit(detail, tools[0].name), detail
        assert all(shortcuts.recited(detail, t.description) is None for t in tools), detail


# ---- T_max: the dropped committing turn does not count ------------------------------------------------

class _Roles:
    """Scripted roles: the assistant asks once, commits to the seed (dropped), then calls it."""

    def __init__(self, tool: Tool) -> None:
        self.tool, self.replies = tool, 0

    async def user(self, *args: Any) -> str:
        return "Something about orders."

    async def assistant(self, phase: str, *args: Any, **kwargs: Any) -> Message:
        self.replies += 1
        if phase == "tool_selection" and self.replies == 1:
            return Message(role="assistant", content="Which one do you need?", thought="ask", phase=phase)
        return Message(role="assistant", content="", thought="call", phase=phase,
                       tool_calls=[ToolCall(name=self.tool.name, arguments={})])


def test_dropped_committing_turn_does_not_count_toward_t_max() -> None:
    from utcgen.pipeline.synthesis.attempt import Seed, _converse

    tool = GOOD.seed_tool
    seed = Seed(job=0, attempt=1, tool=tool, persona=GOOD.user_persona, distractors=GOOD.distractor_tools,
                candidates=[tool, *GOOD.distractor_tools], seed=0)
    messages: list[Message] = []
    # ask (1 kept turn), commit (dropped, not counted), final call (2nd kept turn): fits T_max = 2
    asyncio.run(_converse(seed, _Roles(tool), "goal", {}, messages, 2, 0))
    kept = [m for m in messages if m.role == "assistant"]
    assert len(kept) == 2 and kept[-1].tool_calls and kept[-1].phase == "argument_filling"
    messages = []
    asyncio.run(_converse(seed, _Roles(tool), "goal", {}, messages, 1, 0))
    assert [m.role for m in messages] == ["user", "assistant"] and not messages[-1].tool_calls


# ---- the shared text normaliser, "what the user said" and the name-leak detector -----------------

def test_text_words_split_identifiers_and_stem_to_a_width() -> None:
    from utcgen.pipeline.core import text

    assert text.split_words("costCenter_ID and line2-Address") == ["cost", "center", "id", "and", "line2", "address"]
    assert text.spoken("createPurchaseOrder") == "create purchase order"
    assert text.stem("approvals") == "approv" and text.stem("approval") == "approv"
    assert {text.stem(w, 5) for w in ("create", "created", "creation")} == {"creat"}
    assert text.stem("class") == "class"  # a double s is not a plural
    assert text.stems("Please list the open tickets") == ["list", "open", "ticket"]
    assert text.content_words("list the open tickets", stop={"open"}, min_len=4) == ["list", "tickets"]
    # the evaluation's token keeps identifiers whole: a metric definition, not a rule's word
    assert text.word_tokens("Don't e-mail costCenter") == ["don't", "e-mail", "costcenter"]


def test_user_said_reads_messages_and_dicts_up_to_a_stop() -> None:
    from utcgen.pipeline.dialogue.said import user_said, user_turns

    messages = [
        Message(role="user", content="I need the budget."),
        Message(role="assistant", content="Which one?", phase="tool_selection"),
        Message(role="user", content="The variance report."),
        Message(role="assistant", content="Which year?", phase="argument_filling"),
        Message(role="user", content="2026."),
        Message(role="assistant", content="", tool_calls=[ToolCall(name="get_budget", arguments={"year": 2026})]),
        Message(role="user", content="Thanks."),
    ]
    assert user_said(messages) == "I need the budget.\nThe variance report.\n2026.\nThanks."
    assert user_said(messages, until="call") == "I need the budget.\nThe variance report.\n2026."
    assert user_said(messages, until="argument_filling", sep=" ") == "I need the budget. The variance report."
    assert user_turns(messages, until="argument_filling") == [(0, "I need the budget."), (2, "The variance report.")]
    as_dicts = [m.model_dump() for m in messages]
    assert user_said(as_dicts, until="call") == user_said(messages, until="call")
    with pytest.raises(ValueError, match="until must be one of"):
        user_said(messages, until="later")  # type: ignore[arg-type]


def test_one_name_leak_detector_for_the_validator_and_the_offline_critic() -> None:
    d = make_dialogue()
    seed, others = d.seed_tool.name, [t.name for t in d.distractor_tools if t.name != d.seed_tool.name]
    spoken = " ".join(seed.split("_"))
    first_user = next(i for i, m in enumerate(d.messages) if m.role == "user")
    last_user = max(i for i, m in enumerate(d.messages) if m.role == "user")
    d.messages[first_user].content = f"I want to {spoken} today."
    d.messages[last_user].content = f"Also, call {seed} please."
    leaks = shortcuts.user_name_leaks(d.messages, seed, others)
    assert leaks == {first_user: spoken, last_user: seed}
    problems = nameleak.check_name_leak(d).details["problems"]
    assert [p["message"] for p in problems] == [f"user turn (message {i + 1}) uses {hit!r} from the seed tool's name"
                                               for i, hit in leaks.items()]
    critic = json.loads(judges.critic(CriticRequest(dialogue=d), []))
    assert any(f"message {last_user + 1}: the user gives the tool away by its name ('{seed}')" == issue
               for issue in critic["issues"])
    # after selection, a distinctive word alone no longer counts; the full name still does
    assert shortcuts.name_leaks("the requisition", seed, others, selecting=False) == []
    assert shortcuts.name_leaks(f"the {spoken}", seed, others, selecting=False) == [spoken]


def test_an_answer_may_say_a_name_word_that_is_a_plain_word_of_the_description() -> None:
    """The opening stays under-specified; once asked, the user may say 'albums' for a tool that checks
    saved albums (a word of its description), but not a name word its description lacks, nor the name."""
    seed = Tool(name="check_saved_albums", description="Check whether albums are saved in the user's library.",
                parameters={"type": "object", "properties": {}})
    others = ["check_saved_tracks", "check_saved_shows"]
    ask = Message(role="assistant", content="Which kind of item do you mean?")

    def leaks(opening: str, answer: str) -> dict[int, str]:
        messages = [Message(role="user", content=opening), ask, Message(role="user", content=answer)]
        return shortcuts.user_name_leaks(messages, seed.name, others, seed.description)

    assert leaks("Is something in my library saved?", "It's about albums.") == {}
    assert leaks("Are my albums saved?", "Yes.") == {0: "albums"}  # the opening gives it away
    assert leaks("Is something saved?", "Call check_saved_albums.") == {2: "check_saved_albums"}
    assert leaks("Is something saved?", "check saved albums, please") == {2: "check saved albums"}
    quiet = Tool(name="check_saved_albums", description="Check whether items are saved in the user's library.",
                 parameters={"type": "object", "properties": {}})
    messages = [Message(role="user", content="Is something saved?"), ask, Message(role="user", content="The albums.")]
    assert shortcuts.user_name_leaks(messages, quiet.name, others, quiet.description) == {2: "albums"}
    d = make_dialogue()
    d.seed_tool = seed
    d.distractor_tools = [Tool(name=n, description="Check whether items are saved.", parameters={"type": "object",
                                                                                             "properties": {}})
                          for n in others]
    d.messages = [Message(role="user", content="Is something in my library saved?"), ask,
                  Message(role="user", content="It's about albums.")]
    assert nameleak.check_name_leak(d).passed
