"""The offline user proxy writes like people: grammatical, varied, in the persona's style, never a
tool name nor a description's run; and every value it states is read back exactly."""

from __future__ import annotations

import json
import random
import re

import pytest

from tests.support.paths import REPO
from utcgen.pipeline.core import text
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue import grounding, parameter_labels, shortcuts
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.llm.requests import Said, SlotsRequest, UserRequest
from utcgen.pipeline.retrieval.personas import load_personas
from utcgen.pipeline.simulator import gold_values as values
from utcgen.pipeline.simulator import phrasing, user, user_openings, user_words, writers
from utcgen.pipeline.simulator.voice import FOREIGN, Voice, finish


@pytest.fixture(scope="module")
def tools():
    return load_catalog(REPO / "catalog" / "tools")


@pytest.fixture(scope="module")
def personas():
    return load_personas(REPO / "catalog" / "personas.jsonl")


def _state(tools, personas, i: int, history=None, phase="tool_selection", persona=None) -> UserRequest:
    tool = tools[(i * 11) % len(tools)]
    others = [t for t in tools if t.name != tool.name and t.line_of_business == tool.line_of_business][:4]
    persona = persona or personas[(i * 7) % len(personas)]
    gold = json.loads(writers.slots(SlotsRequest(tool=tool, persona=persona, required=tool.required, seed=i), []))["arguments"]
    return UserRequest(tool=tool, distractors=others, persona=persona, goal="", gold_arguments=gold,
                       history=history or [], phase=phase, seed=i)


def _turns(tools, personas, i: int) -> list[str]:
    """The opening and the first distinguishing answer of dialogue `i`."""
    state = _state(tools, personas, i)
    opening = user.user_text(state)
    history = [Said(role="user", content=opening), Said(role="assistant", content="Which of these do you need?")]
    return [opening, user.user_text(state.model_copy(update={"history": history, "seed": i + 1000}))]


def _trigram_ratio(texts: list[str]) -> float:
    grams = []
    for t in texts:
        w = re.findall(r"[a-z0-9']+", t.lower())
        grams += [tuple(w[i:i + 3]) for i in range(len(w) - 2)]
    return len(set(grams)) / len(grams)


def test_openings_are_varied(tools, personas):
    openings = [user.user_text(_state(tools, personas, i)) for i in range(40)]
    assert _trigram_ratio(openings) >= 0.6
    assert len(set(openings)) >= 38
    assert not re.search(r", [A-Z][a-z]+ I\b|, (?:Could|Can|May|There's) ", " ".join(openings))


def test_no_plural_label_takes_is_and_articles_fit(tools, personas):
    assert phrasing.verb("IDs") == "are" and phrasing.verb("start dates") == "are"
    assert phrasing.verb("status") == "is" and phrasing.verb("code for the cost center") == "is"
    assert [phrasing.article(w) for w in ("invoice", "user", "hour", "HR form", "ledger", "one-off")] == \
        ["an", "a", "an", "an", "a", "a"]
    rng = random.Random(1)
    for tool in tools:
        for key, schema in tool.properties.items():
            name = parameter_labels.label(key, schema)
            said = phrasing.state(name, "X-1", rng, form="is")
            assert not (parameter_labels.is_plural(name) and " is X-1" in said), said
    for i in range(60):
        for turn in _turns(tools, personas, i):
            assert not re.search(r"\b[Aa] [aeiou]\w+", turn.replace("a one", "")), turn
            assert not re.search(r"\b[Aa]n [bcdfgjklmnpqrstvwz]\w+", turn), turn
            assert not re.search(r"\bthe \w+ and the being\b|\bIDs is\b", turn), turn


def test_no_name_word_nor_description_run_across_the_catalog(tools, personas):
    """The opening says no distinctive word of the seed's name; the answer may say one only when it
    is a plain word of the seed's description (the name_leak rule), and never the name itself."""
    said_plainly = 0
    for i in range(len(tools)):
        state = _state(tools, personas, i)
        names = [d.name for d in state.distractors]
        plain = shortcuts.description_stems(state.tool.description)
        opening, answer = _turns(tools, personas, i)
        assert not shortcuts.name_hits(opening, state.tool.name, names), opening
        assert not shortcuts.name_hits(answer, state.tool.name, names, plain), answer
        assert not shortcuts.full_name_hit(answer, state.tool.name), answer
        said_plainly += bool(shortcuts.name_hits(answer, state.tool.name, names))
        for turn in (opening, answer):
            for t in [state.tool, *state.distractors]:
                assert not shortcuts.recited(turn, t.description), turn
            assert not shortcuts.key_hits(turn, list(state.tool.properties)), turn
    assert said_plainly > 0  # some answers do say what they need in the word the name also uses


def test_details_separate_the_seed_from_every_distractor(tools, personas):
    """The grounded-selection rule: some stem the user said fits the seed and not the other tool."""
    grounded = 0
    for i in range(60):
        state = _state(tools, personas, i)
        said = text.stems(" ".join(user_words.separators(state, random.Random(i))))
        bags = [grounding.vocab(d) for d in state.distractors]
        seed_bag = grounding.vocab(state.tool)
        ok = all(any(grounding.fits(s, seed_bag) and not grounding.fits(s, bag) for s in said) for bag in bags)
        grounded += ok
    assert grounded >= 54  # a distractor may share every word of the seed's description and parameters


def test_a_detail_says_a_parameter_as_held_and_an_option_as_a_narrowing(tools, personas):
    """What the user is after is a thing of the description; a parameter's label is something the user
    can give ('and I can give you the country'), never a thing wanted ('the tracks, along with the country')."""
    held = 0
    for i in range(80):
        state = _state(tools, personas, i)
        history = [Said(role="user", content=user.user_text(state)), Said(role="assistant", content="Which one do you need?")]
        said = user.user_text(state.model_copy(update={"history": history, "seed": i + 500}))
        labels = [parameter_labels.label(k, s or {}) for k, s in state.tool.properties.items()]
        for lab in labels:
            for frame in ("along with the {}", "including the {}", "together with the {}", "I'm after the {}", "I need the {}"):
                assert frame.format(lab) + "," not in said and not said.endswith(frame.format(lab) + "."), said
        held += any(f"{verb} the {lab}" in said for lab in labels for verb in ("give you", "ready", "know", "tell you"))
        held += "ready" in said
    assert held >= 2  # a label inside a phrase already said ('country' in 'country code') is not said again


def test_styles_are_honoured(tools, personas):
    def styled(style: str) -> str:
        persona = personas[3].model_copy(update={"style": style})
        return " ".join(user.user_text(_state(tools, personas, i, persona=persona)) for i in range(12))

    emoji = styled("casual, lowercase, uses emoji")
    assert re.search(r"[\U0001F300-\U0001FAFF\u2709\u2728]", emoji)
    german = styled("code-switches between English and German")
    assert any(w in german for w in FOREIGN["german"][0] + FOREIGN["german"][1])
    japanese = styled("code-switches between English and Japanese")
    assert any(w in japanese for w in FOREIGN["japanese"][0] + FOREIGN["japanese"][1])
    upbeat = styled("upbeat, lots of exclamation marks")
    assert upbeat.count("!") >= 12
    turns = [user.user_text(_state(tools, personas, i, persona=personas[3].model_copy(
        update={"style": "upbeat, lots of exclamation marks"}))) for i in range(12)]
    assert all(t.count("!") <= 2 for t in turns), turns  # exclaimed at the end, not after every sentence
    cheer = Voice.of(Persona(id="", text="", style="upbeat, lots of exclamation marks"))
    assert finish(cheer, "Sure thing, ") + "the owner is kestrel-tech." == "Sure thing, the owner is kestrel-tech."
    assert finish(cheer, "That's all.") == "That's all!"
    plain = styled("direct and businesslike")
    assert plain != emoji and "!" not in plain.replace("Thank you!", "")
    assert Voice.of(Persona(id="", text="", style="terse, uses PO, PR and RFQ numbers")).terse


def _schemas() -> list[tuple[str, dict]]:
    return [("due_date", {"type": "string", "format": "date"}), ("amount", {"type": "number", "minimum": 1}),
            ("notify", {"type": "boolean"}), ("ids", {"type": "array", "items": {"type": "string"}}),
            ("quantity", {"type": "integer"}), ("employee_ids", {"type": "array", "items": {"type": "integer"}}),
            ("note", {"type": "string"}), ("cost_center_code", {"type": "string"}),
            ("from_currency", {"type": "string"}), ("email", {"type": "string", "format": "email"}),
            ("reason", {"type": "string", "title": "Reason for the change"}), ("date", {"type": "string"})]


def test_phrasing_round_trip(tools, personas):
    rng = random.Random(7)
    awkward = ["Fix it. Then ship", "a; b", "ends with a dot.", 'say "hi"', "x as the y", "A, B and C", "Why?"]
    cases: list[tuple[Tool, dict]] = []
    for tool in tools:
        props = tool.properties
        keys = tool.required
        gold = {k: values.gold_value(k, props[k], personas[len(cases) % len(personas)], rng) for k in keys}
        cases.append((tool, gold))
    props = dict(_schemas())
    synthetic = Tool(name="t", description="", parameters={"type": "object", "properties": props, "required": list(props)})
    for n in range(200):
        gold = {k: values.gold_value(k, s, personas[n % len(personas)], rng) for k, s in props.items()}
        gold["note"] = rng.choice(awkward)
        gold["ids"] = rng.sample(awkward, 2)
        cases.append((synthetic, gold))
    for tool, gold in cases:
        keys = list(gold)
        rng.shuffle(keys)
        said = user.values_sentence(tool, gold, keys[: len(keys) // 2], rng) + " Sure. " + \
            user.values_sentence(tool, gold, keys[len(keys) // 2:], rng)
        assert phrasing.read_values(said, tool, keys=list(gold)) == gold, (said, gold)


def test_later_statement_wins_and_short_label_does_not_read_a_longer_one():
    tool = Tool(name="t", description="", parameters={"properties": {"date": {"type": "string"}, "due_date": {"type": "string"}},
                                                      "required": ["date", "due_date"]})
    said = "The due date is 2026-05-01. Date: 2026-01-02.\nSorry, use 2026-06-30 as the due date."
    assert phrasing.read_values(said, tool) == {"date": "2026-01-02", "due_date": "2026-06-30"}


def test_an_option_said_with_a_bare_qualifier_is_picked_as_a_thing() -> None:
    """'multiple albums' and 'several albums' take no article, yet are things: the user picks them
    as such ('I'm looking for multiple albums'), never as an act ('I want to multiple albums')."""
    def tool(name: str, description: str) -> Tool:
        return Tool(name=name, description=description, parameters={"type": "object", "properties": {}})

    seed = tool("get_albums", "Get catalog information for multiple albums.")
    other = tool("get_album", "Get catalog information for a single album.")
    persona = Persona(id="p1", text="Sam collects records.", role="Record collector")
    request = UserRequest(phase="tool_selection", tool=seed, persona=persona, goal="See some albums.",
                          distractors=[other], gold_arguments={}, seed=1,
                          history=[Said(role="user", content="Hi, something about albums."),
                                   Said(role="assistant", content="Sure, do you need a single album, or multiple albums?")])
    picks = user_words.answers_to_options(request, random.Random(0), Voice.of(persona))
    assert picks and all("multiple albums" in p and "to multiple" not in p for p in picks), picks


def test_someone_without_a_job_gives_their_own_reasons_and_none_twice(tools, personas):
    """A listener or a student has no manager, team, client or month-end; a reason said once in a dialogue
    is not said again."""
    at_work = [r.strip(", ") for r in (*user_openings._FOR_AT_WORK, *user_openings._WHY_AT_WORK)] + ["I work as"]
    jobless = [p for p in personas if not p.attributes.get("company")]
    turns = 0
    for i in range(60):
        persona = jobless[i % len(jobless)]
        state = _state(tools, personas, i, persona=persona)
        heading = "Player" if i % 2 else None  # an API's heading (an OpenAPI tag) is no line of work
        state = state.model_copy(update={"tool": state.tool.model_copy(update={"line_of_business": heading})})
        history: list[Said] = []
        for k in range(4):
            said = user.user_text(state.model_copy(update={"history": history, "seed": i * 10 + k}))
            assert not any(r.lower() in said.lower() for r in at_work), (persona.role, said)
            assert "consumer" not in said.lower(), said  # nobody calls their own errands 'the consumer side'
            assert not re.search(r"Player (?:work|side|matter)", said), said
            history += [Said(role="user", content=said), Said(role="assistant", content="Which one do you need?")]
            turns += 1
        reasons = [r.strip(", ") for r in (*user_openings._FOR, *user_openings._WHY)]
        for r in reasons:
            assert sum(r in s.content for s in history if s.role == "user") <= 1, (r, [s.content for s in history])
    assert turns == 240


def test_a_bland_word_alone_is_no_detail_and_a_detail_said_is_not_padded_again(personas):
    """'the number' of 'the number of episodes returned' names nothing wanted; asked again, the user does not
    pad the answer with the same extra phrase ('..., including the episodes' turn after turn)."""
    def tool(name: str, description: str) -> Tool:
        return Tool(name=name, description=description, parameters={"type": "object", "properties": {
            "id": {"type": "string", "description": "The show's ID."}}, "required": ["id"]})
    seed = tool("get_show_episodes", "Get information about a show's episodes and the podcast they come from. "
                                     "Optional parameters limit the number of episodes returned.")
    others = [tool("get_show", "Get information about a single show."),
              tool("get_episode", "Get information about a single episode.")]
    request = UserRequest(tool=seed, distractors=others, persona=personas[0], goal="", gold_arguments={"id": "x"},
                          history=[], phase="tool_selection", seed=1)
    first = user_words.separators(request, random.Random(0), most=3)
    assert first and "number" not in first, first
    asked = request.model_copy(update={"history": [Said(role="user", content=f"I'd like to see {', '.join(first)}."),
                                                   Said(role="assistant", content="Which one do you need?")]})
    again = user_words.separators(asked, random.Random(0), most=3)
    assert len(again) < len(first) or set(again) != set(first), (first, again)


def test_the_user_never_names_an_option_it_does_not_want(personas):
    """'Reserve stock for a customer order, a project or a quality hold': a user whose reason is 'project'
    says neither 'the customer order' nor picks it when offered."""
    tool = Tool(name="reserve_stock", description="Reserve stock of an item for a customer order, project or quality hold.",
                parameters={"type": "object", "required": ["item", "reason"], "properties": {
                    "item": {"type": "string"},
                    "reason": {"type": "string", "enum": ["customer_order", "project", "quality_hold"]}}})
    other = Tool(name="adjust_stock", description="Adjust the stock of an item after a count.",
                 parameters={"type": "object", "properties": {"item": {"type": "string"}}})
    request = UserRequest(tool=tool, distractors=[other], persona=personas[0], goal="", phase="tool_selection",
                          gold_arguments={"item": "SKU-1", "reason": "project"}, history=[], seed=3)
    for seed in range(10):
        assert "customer order" not in " ".join(user_words.separators(request, random.Random(seed))).lower()
    asked = request.model_copy(update={"history": [
        Said(role="user", content="I need a hand with the stock."),
        Said(role="assistant", content="Sure, do you need the customer order, or the count?")]})
    assert not any("customer order" in a for a in user_words.answers_to_options(asked, random.Random(0), Voice()))


def test_vague_answers_across_a_run_seldom_repeat_a_sentence(tools, personas) -> None:
    """Forty users unsure of the name: no sentence of theirs is said by three of them (a stock line)."""
    import collections
    import random

    said = collections.Counter()
    state = _state(tools, personas, 0, persona=personas[0])  # one subject for all: what a catalog of one API has
    for i in range(40):
        said.update(set(user.sentences(user._vague(state, random.Random(i), Voice.of(personas[0])))))
    assert said and max(said.values()) <= 2, said.most_common(3)


def test_a_vague_answer_says_honestly_once(tools, personas) -> None:
    import random

    state = _state(tools, personas, 0, persona=personas[0])
    for i in range(300):
        said = user._vague(state, random.Random(i), Voice.of(personas[0])).lower()
        assert said.count("honest") <= 1, said


def test_an_opening_names_the_work_area_once(tools, personas) -> None:
    import random

    from utcgen.pipeline.simulator.user_openings import work_area

    checked = 0
    for i in range(120):
        state = _state(tools, personas, i)
        area = work_area(state)
        if area == "day-to-day":
            continue
        checked += 1
        said = user_openings.opening(state, random.Random(i), Voice.of(state.persona)).lower()
        assert said.count(area.lower()) <= 1, said
    assert checked > 20


def test_an_opening_never_names_a_work_area_that_points_at_some_candidates(personas) -> None:
    """'a software development matter' beside search_users ('Useful for locating developers') chose it
    for the assistant: an area that fits some candidates and not others is no area to name."""
    params = {"type": "object", "properties": {}}
    code = Tool(name="search_code", description="Search code across repositories.", parameters=params,
                line_of_business="software_development")
    users = Tool(name="search_users", description="Find users. Useful for locating developers.", parameters=params)
    orgs = Tool(name="search_orgs", description="Find organisations.", parameters=params)
    worker = next(p for p in personas if p.line_of_business)

    def state(others: list[Tool]) -> UserRequest:
        return UserRequest(tool=code, distractors=others, persona=worker, goal="", gold_arguments={}, seed=0,
                           history=[], phase="tool_selection")

    assert user_words.work_area(state([orgs])) == "software development"
    assert user_words.work_area(state([orgs, users])) == "day-to-day"


def test_an_api_s_return_is_no_act_a_person_asks_for(tools, personas) -> None:
    """'Return the execution status of a payment': the user wants to see it, not to send it back."""
    state = _state(tools, personas, 0)
    for description, verb in (("Return the execution status of a payment.", None),
                              ("Returns the open balance of a customer.", None),
                              ("Approve the expense report of an employee.", "approve")):
        tool = Tool(name="payment_tool", description=description, parameters=state.tool.parameters)
        assert user_words.action_verb(state.model_copy(update={"tool": tool, "distractors": []})) == verb, description


def test_the_topic_of_an_opening_is_never_a_value_the_user_gives(personas) -> None:
    """'Delete a GitHub repository after the user confirms the exact owner': not 'help me with my owner'."""
    params = {"type": "object", "required": ["owner", "repo"], "properties": {"owner": {"type": "string"},
                                                                               "repo": {"type": "string"}}}
    topic = _opening_topic(personas, params, ("remove_project", "Remove a project after the user confirms the exact owner."),
                           "{verb} a file of an owner.")
    assert topic != "owner"


def _opening_topic(personas, params: dict, seed: tuple[str, str], other: str) -> str | None:
    """The opening topic of `seed` (name, description) beside three tools described as `other` ('{verb} ...')."""
    tool = Tool(name=seed[0], description=seed[1], parameters=params)
    others = [Tool(name=f"t{i}", description=other.format(verb=verb), parameters=params)
              for i, verb in enumerate(("Archive", "Copy", "Rename"))]
    request = UserRequest(tool=tool, distractors=others, persona=personas[0], goal="", gold_arguments={},
                          history=[], phase="tool_selection", seed=0)
    return user_words.topic_phrase(request)


def test_the_topic_of_an_opening_is_never_the_modifier_of_an_unsaid_name_word(personas) -> None:
    """'help me with the base' of 'the base branch' when 'branch' is a word of the tool's name."""
    topic = _opening_topic(personas, {"type": "object", "properties": {}},
                           ("update_branch", "Bring the base branch changes into the work of a review."),
                           "{verb} the base of a review.")
    assert topic not in ("base", None), topic


def test_a_lowercase_writer_restates_the_need_in_lowercase_too(tools, personas, monkeypatch) -> None:
    """'i wish i knew...' then 'I need to set the repeat mode for my playback.': one person, one case."""
    persona = personas[0].model_copy(update={"style": "writes in lowercase"})
    monkeypatch.setattr(user, "restated", lambda request: "I need to set the repeat mode for my playback.")
    monkeypatch.setattr(user, "answers_to_options", lambda request, rng, voice: [])
    monkeypatch.setattr(user, "VAGUE_FIRST_ANSWER", 0.0)
    monkeypatch.setattr(user, "VAGUE_DETAIL", 0.0)
    monkeypatch.setattr(user, "EARLY_VALUE", 0.0)
    monkeypatch.setattr(user, "_nearest", lambda request, drafts: next(d for d in drafts if "repeat mode" in d.lower()))
    state = _state(tools, personas, 1, persona=persona, history=[
        Said(role="user", content="hi, could you help me with something?"),
        Said(role="assistant", content="Sure, which one do you need: the queue, or the playback?")])
    assert user.user_text(state) == "i need to set the repeat mode for my playback."


def test_a_line_of_business_keeps_its_acronym(tools, personas) -> None:
    state = _state(tools, personas, 0)
    tool = state.tool.model_copy(update={"line_of_business": "it_service_management"})
    assert user_words.work_area(state.model_copy(update={"tool": tool, "distractors": []})) == "IT service management"


def test_two_things_tied_as_the_description_ties_them_never_recite_it() -> None:
    """'the latest changes from the base branch' is six words of the description: said so, the draft gives the
    tool away and the user falls back to 'I'm not sure how to put it'; the things are said apart instead."""
    def tool(name: str, description: str) -> Tool:
        return Tool(name=name, description=description, parameters={"type": "object", "properties": {}})

    seed = tool("update_pull_request_branch", "Update the branch of a pull request with the latest changes from the base branch.")
    others = [tool("update_pull_request_title", "Update the title of an existing pull request."),
              tool("create_pull_request", "Create a new pull request in a GitHub repository.")]
    history = [Said(role="user", content="Hello, I need some help with something."),
               Said(role="assistant", content="Sure, could you tell me more about what you need?")]
    for k in range(6):
        request = UserRequest(phase="tool_selection", tool=seed, distractors=others, history=history, goal="",
                              persona=Persona(id="", text="", role="developer"), gold_arguments={}, seed=k)
        said = user_openings.detail(request, random.Random(k), Voice.of(request.persona))
        assert user_words.safe(request, said) == said, said


def test_two_untied_things_are_said_in_the_description_s_order(tools, personas) -> None:
    """What the tool is about first, then a detail of it: 'the internal policy and the short note', never
    'I need to see the short note and the internal policy'."""
    by_name = {t.name: t for t in tools}
    seed = by_name["get_policy_version_history"]
    others = [by_name[n] for n in ("get_policy_document", "get_privacy_request_status", "get_contract_details",
                                   "list_my_pending_policy_attestations", "attest_policy_acknowledgement")]
    history = [Said(role="user", content="Hi, I've got a question about a legal compliance matter."),
               Said(role="assistant", content="Do you need the current version, or the privacy request?")]
    pairs = 0
    for k in range(12):
        request = UserRequest(phase="tool_selection", tool=seed, distractors=others, history=history, goal="",
                              persona=personas[0], gold_arguments={}, seed=k)
        said = user_openings.detail(request, random.Random(k), Voice.of(request.persona))
        assert "the short note and the" not in said, said
        pairs += "and the short note" in said
    assert pairs  # the two are still said together


def test_a_reminder_names_the_act_only_on_what_it_is_done_to(personas, monkeypatch) -> None:
    """'Remember, I need to merge the GitHub repository.' of a pull request asks for another act; the
    reminder then names the thing alone ('It's all for the GitHub repository.')."""
    seed = Tool(name="land_pr", description="Merge a pull request in a GitHub repository.",
                parameters={"type": "object", "properties": {}})
    other = Tool(name="make_repo", description="Create a new GitHub repository for the user.",
                 parameters={"type": "object", "properties": {}})
    request = UserRequest(phase="argument_filling", tool=seed, distractors=[other], history=[], goal="",
                          persona=personas[0], gold_arguments={}, seed=0)
    monkeypatch.setattr(user, "_heard", lambda request, drafts: (drafts, [-1.0] + [0.0] * (len(drafts) - 1)))
    for picked, act_said in ((["GitHub repository"], False), (["pull request"], True)):
        monkeypatch.setattr(user, "separators", lambda request, rng, params=True, picked=picked: picked)
        said = {user._still_pointing(request, "The owner is acme.", random.Random(k)) for k in range(12)}
        assert all(picked[0] in s for s in said), said  # a reminder is added
        assert any("merge the" in s for s in said) == act_said, said


def test_a_reason_follows_a_request_never_a_state(tools, personas) -> None:
    """'I've never handled a finance matter before, because it's been on my list since Monday' reads as if the
    reason were for never having handled it."""
    never = 0
    for i in range(80):
        persona = personas[i % len(personas)].model_copy(update={"style": "anxious, double-checks everything"})
        said = user.user_text(_state(tools, personas, i, persona=persona))
        if "never handled" in said:
            never += 1
            assert not re.search(r"never handled [^.?!]* before, (?:because|since)", said), said
    assert never  # the frame is still used


def test_an_answer_that_knows_nothing_gives_the_assistant_nothing_to_act_on() -> None:
    """'Don't know the name.' chose a playlist tool for its 'name', 'I've never handled a finance matter
    before' a carrier tool for its 'before': a reply that knows nothing carries no word the assistant weighs."""
    from utcgen.pipeline.simulator import selection

    replies = [f"{u}, {k}." for u in user._UNSURE for k in user._KNOWN_NOTHING]
    replies += ["No idea what it's called.", "Couldn't tell you, sorry.", "Not sure, sorry.",
                "Hi, I've never handled a routine chore before.", "I'm a buyer based in Accra, so could you ask around?"]
    for reply in replies:
        assert not selection.evidence([Said(role="user", content=reply)]) - {"accra", "buyer", "chore", "handl"}, reply
