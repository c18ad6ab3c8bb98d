"""The offline assistant's tool choice: it commits only when the grounding rule holds for its best
candidate, and otherwise asks questions that contrast the candidates without reciting or repeating."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.paths import REPO
from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.dialogue import grounding, shortcuts
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.llm.requests import AssistantRequest, Said
from utcgen.pipeline.simulator import contrasts, conversation, selection
from utcgen.pipeline.simulator.user_words import offered


def tool(name: str, description: str, **params: dict[str, Any]) -> Tool:
    return Tool(name=name, description=description,
                parameters={"type": "object", "properties": params, "required": list(params)})


PLAYLISTS = [
    tool("add_tracks_to_playlist", "[DEPRECATED] Add one or more songs to the end of a user's playlist, in the "
         "order given, so that listeners hear them after the tracks already queued there.",
         playlist_id={"type": "string", "description": "The playlist."},
         uris={"type": "string", "description": "Song URIs to add."}),
    tool("change_playlist_details", "Change a playlist's name, description and whether it is public or "
         "private, as seen by other listeners on their profile pages.",
         playlist_id={"type": "string", "description": "The playlist."},
         visibility={"type": "string", "enum": ["public", "private"]}),
    tool("reorder_playlist_items", "Move a range of songs of a user's playlist to another position, keeping "
         "their order, for curators who arrange a listening sequence.",
         playlist_id={"type": "string", "description": "The playlist."},
         insert_before={"type": "integer", "description": "Target position."}),
]


def turn(history: list[Said], candidates: list[Tool] = PLAYLISTS) -> dict:
    request = AssistantRequest(phase="tool_selection", candidates=candidates, history=history, seed=3)
    return json.loads(conversation.assistant(request, []))


def user(text: str) -> Said:
    return Said(role="user", content=text)


def said_by_assistant(text: str) -> Said:
    return Said(role="assistant", content=text)


def test_it_does_not_commit_on_words_every_candidate_shares() -> None:
    history = [user("Hi, something about my playlist."), said_by_assistant("Which?"),
               user("The playlist, you know.")]
    reply = turn(history)
    assert reply["tool_calls"] == [] and reply["content"].endswith("?")


def test_it_commits_as_soon_as_the_users_words_set_one_candidate_apart() -> None:
    history = [user("Hi, something about my playlist."), said_by_assistant("Which?"),
               user("I want to add some songs to it.")]
    assert grounding.grounded(grounding.said_stems(history), PLAYLISTS[0], PLAYLISTS[1:])
    reply = turn(history)
    assert [c["name"] for c in reply["tool_calls"]] == ["add_tracks_to_playlist"]


def test_the_plain_protocol_asks_once_even_when_the_opening_is_clear() -> None:
    reply = turn([user("I want to add some songs to my playlist.")])
    assert reply["tool_calls"] == [] and reply["content"].endswith("?")


def test_a_scenario_assistant_acts_on_a_clear_opening_and_asks_on_an_unclear_one() -> None:
    def reply(opening: str) -> str:
        request = AssistantRequest(phase="tool_selection", candidates=PLAYLISTS, seed=1, may_decline=True,
                                   history=[user(opening)])
        return conversation.assistant(request, [])

    clear = reply("I need something done about my playlist. What matters is the songs to add.")
    assert [c["name"] for c in json.loads(clear)["tool_calls"]] == ["add_tracks_to_playlist"]
    vague = reply("I need something done about my playlist. What matters is the playlist.")
    assert json.loads(vague)["tool_calls"] == [] and json.loads(vague)["content"].endswith("?")


def _questions(candidates: list[Tool], answers: list[str], seed: int = 0) -> list[str]:
    history: list[Said] = [user("Something about my playlist, please.")]
    asked: list[str] = []
    for answer in [*answers, None]:
        request = AssistantRequest(phase="tool_selection", candidates=candidates, history=history, seed=seed)
        reply = json.loads(conversation.assistant(request, []))
        assert reply["tool_calls"] == [], "committed although nothing set a candidate apart"
        asked.append(reply["content"])
        if answer is None:
            break
        history += [said_by_assistant(reply["content"]), user(answer)]
    return asked


UNSURE = ["Hard to say.", "No idea, honestly.", "Not sure what it's called.", "I really can't tell.",
          "Could be anything.", "Whatever you think.", "Hmm."]


def test_a_question_never_offers_one_thing_twice_in_two_forms() -> None:
    """'the sub-issue, or the sub-issues?' asks nothing: the second option says something else of its own."""
    import random

    def tool(name: str, description: str) -> Tool:
        return Tool(name=name, description=description, parameters={"type": "object", "properties": {}})

    options = [tool("sub_issue_write", "Add a sub-issue to a parent issue in a GitHub repository."),
               tool("issue_read", "Get the sub-issues of an issue in a GitHub repository."),
               tool("label_write", "Remove a label from an issue in a GitHub repository.")]
    for seed in range(4):
        question, named = selection._question(options, frozenset(), random.Random(seed))
        said = offered(question)
        assert len(said) == len(named) == 3, question
        assert len({contrasts.coarse(o.removeprefix("the ")) for o in said}) == 3, question


@pytest.mark.parametrize("seed", range(4))
def test_questions_contrast_in_own_words_and_never_repeat_an_option_list(seed: int) -> None:
    asked = _questions(PLAYLISTS, UNSURE, seed)
    offered = []
    for i, text in enumerate(asked):
        for c in PLAYLISTS:
            assert not selection.recites(text, [c]), text                  # at most 4 description words in a row
            assert not shortcuts.names_written(text, [c.name]), text    # no tool names
            assert not shortcuts.full_name_hit(text, c.name), text
        assert "deprecated" not in text.lower()
        history = [user("Something about my playlist, please.")]
        for q, a in zip(asked[:i], UNSURE):
            history += [said_by_assistant(q), user(a)]
        options = selection.decide(PLAYLISTS, history, seed, ask_first=True).options
        assert not options or frozenset(options) not in offered, f"option list repeated: {options}"
        offered.append(frozenset(options))
    assert len(set(asked)) == len(asked)                                       # no question twice word for word
    runs = [{tuple(w[i:i + 8]) for i in range(len(w) - 7)} for w in map(shortcuts.split_words, asked)]
    assert not any(runs[i] & runs[j] for i in range(len(runs)) for j in range(i)), asked  # no shared 8-word run
    assert len({frozenset(o) for o in offered if o}) >= 2


def test_an_unsure_answer_narrows_the_choice() -> None:
    first = selection.decide(PLAYLISTS, [user("Something about my playlist, please.")], 0, ask_first=True)
    assert len(first.options) == 3
    history = [user("Something about my playlist, please."), said_by_assistant(first.question),
               user("Hard to say.")]
    second = selection.decide(PLAYLISTS, history, 0, ask_first=True)
    assert len(second.options) <= 2 and frozenset(second.options) != frozenset(first.options)


def test_candidates_the_users_words_ruled_out_are_not_offered_again() -> None:
    history = [user("Something about my playlist."), said_by_assistant("Which?"),
               user("It's about the songs in it.")]  # songs: adding or moving them, not the details
    d = selection.decide(PLAYLISTS, history, 0, ask_first=True)
    assert d.tool is None
    assert "change_playlist_details" not in d.options and len(d.options) == 2


def test_identical_candidates_are_never_guessed_between() -> None:
    twins = [PLAYLISTS[0], PLAYLISTS[0].model_copy(update={"name": "tracks_to_playlist_add"})]
    history = [user("Add songs to my playlist.")]
    for answer in ["The songs, at the end.", "Add them, the uris.", "Just add the songs."]:
        reply = turn(history, twins)
        assert reply["tool_calls"] == []
        history += [said_by_assistant(reply["content"]), user(answer)]


def test_on_the_shipped_catalog_questions_never_recite() -> None:
    tools = load_catalog(REPO / "catalog" / "tools")
    by_domain: dict[str, list[Tool]] = {}
    for t in tools:
        by_domain.setdefault(t.line_of_business or "", []).append(t)
    for group in by_domain.values():
        pool = group[:6]
        if len(pool) < 2:
            continue
        d = selection.decide(pool, [user("I have a task for today, can you help?")], 0, ask_first=True)
        assert d.tool is None
        assert not selection.recites(d.question, pool), d.question


ALBUMS = [
    tool("get_album", "Get Album. Get catalog information for a single album.",
         id={"type": "string", "description": "The ID of the album."}),
    tool("get_albums", "Get Several Albums. Get catalog information for multiple albums identified by their IDs.",
         ids={"type": "string", "description": "A comma-separated list of the IDs for the albums."}),
]


def test_a_qualifier_that_is_all_two_candidates_differ_by_is_asked_and_heard() -> None:
    """'a single album' and 'several albums' differ by a word the phrase cutter drops alone: the question
    offers it with its determiner, and the user's choice of it grounds the call."""
    reply = turn([user("Hi, I need something about an album.")], ALBUMS)
    assert "a single album" in reply["content"] and ("multiple albums" in reply["content"] or "several albums" in reply["content"])
    history = [user("Hi, I need something about an album."), said_by_assistant(reply["content"]),
               user("I need a single album.")]
    assert [c["name"] for c in turn(history, ALBUMS)["tool_calls"]] == ["get_album"]


def test_a_choice_checked_is_acted_on() -> None:
    """A word set the best candidate apart but the request read nearer another: the assistant checks
    (`_nearer`) once, then acts on the user's reply rather than asking on and on."""
    opening, asked = user("Hi, I need something about an album."), said_by_assistant("Which one do you need?")
    chosen = [opening, asked, user("I need a single album.")]
    checks = [said_by_assistant("Is there anything else I should know?"), user("It's for a single album."),
              said_by_assistant("What would you look at first?"), user("The one album, a single album.")]
    assert selection.CHECKS == 1
    assert not selection._checked(ALBUMS, chosen, ALBUMS[0])  # set apart only now: the check is still to come
    assert selection._checked(ALBUMS, [*chosen, *checks[:2]], ALBUMS[0])  # set apart before the reply to the check
    assert not selection._checked(ALBUMS, [opening, asked, user("Several albums, in fact."), *checks[2:]], ALBUMS[0])
    assert [c["name"] for c in turn([*chosen, *checks], ALBUMS)["tool_calls"]] == ["get_album"]


def test_a_tool_is_never_told_apart_by_a_word_of_its_note_on_how_to_call_it() -> None:
    import random

    params: dict[str, Any] = {"type": "object", "properties": {}}
    me = Tool(name="get_me", description="Get details of the authenticated GitHub user. Or when information is missing "
              "to build other tool calls.", parameters=params)
    others = [Tool(name="get_commit", description="Get details for a commit from a GitHub repository.", parameters=params)]
    words = contrasts.contrast_words(me, others, frozenset(), random.Random(0))
    assert "build" not in words, words


def test_who_the_user_is_is_no_evidence_of_the_tool_they_need() -> None:
    """'I'm a support engineer' says nothing of a tool that 'Supports adding comments'."""
    params = {"type": "object", "properties": {}}
    read = Tool(name="get_discussion_comments", description="Get comments from a discussion.", parameters=params)
    write = Tool(name="discussion_comment_write", description="Write operations for discussion comments. Supports "
                 "adding top-level comments and replying to comments.", parameters=params)
    history = [Said(role="user", content="Hi, I'm a support engineer at Acme, and I need some help."),
               Said(role="assistant", content="Sure, do you need the answer, or the reaction?"),
               Said(role="user", content="I need to get comments from a discussion.")]
    said = selection.evidence(history)
    assert not said & {"suppor", "engine", "support"} and {"commen", "discus"} <= said, said
    assert selection.decide([write, read], history).tool is None  # nothing sets either apart: it asks
    kept = selection.evidence([Said(role="user", content="I'm a support engineer and I need support tickets.")])
    assert "suppor" in kept or "support" in kept, kept  # said of the need too, it counts


GITHUB = {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}}


def test_an_option_is_named_by_what_it_is_not_by_what_every_candidate_works_on() -> None:
    """'GitHub' is 'git' and 'hub' to a vocabulary, and every candidate works on a repository: an option
    is its own thing ('the issues', even once the user said it), never 'the GitHub repository'."""
    import random

    from utcgen.pipeline.core import text

    issues = Tool(name="list_issues", description="List issues in a GitHub repository.", parameters=GITHUB)
    commits = Tool(name="list_commits", description="Get list of commits of a branch in a GitHub repository.",
                   parameters=GITHUB)
    tags = Tool(name="list_tags", description="List git tags in a GitHub repository.", parameters=GITHUB)
    for seed in range(4):
        question, named = selection._question([issues, commits, tags], frozenset(text.stems("the issues")),
                                              random.Random(seed),
                                              setting=contrasts.setting_words([issues, commits, tags]))
        assert "repository" not in question and "the issues" in question, question
        assert len(named) == 3


def test_a_check_names_what_the_user_asked_for_or_asks_nothing() -> None:
    """A check after 'I'd like to see the issues' offers the issues against a rival ('do you mean the
    issues, or the commits?'); with nothing of the user's to name, no such question (the assistant then
    asks in its own words)."""
    import random

    from utcgen.pipeline.core import text

    issues = Tool(name="list_issues", description="List issues in a GitHub repository.", parameters=GITHUB)
    commits = Tool(name="list_commits", description="Get list of commits of a branch.", parameters=GITHUB)
    heard = frozenset(text.stems("I'd like to see the issues"))
    question, named = selection._question([issues, commits], heard, random.Random(0), mood="check", heard=heard)
    assert "the issues" in question and "the commits" in question and named == [issues, commits], question
    elsewhere = frozenset(text.stems("something about the weather"))
    assert selection._question([issues, commits], elsewhere, random.Random(0), mood="check", heard=elsewhere) == ("", [])


def test_who_the_user_is_and_how_long_they_tried_is_no_evidence() -> None:
    """'I'm a support engineer for an API' and 'I've been trying' chose tools whose descriptions say 'API'
    and 'have been': neither says what the user needs."""
    said = selection.evidence([user("I'm a support engineer for an API in Limerick, and I've been trying to fix it.")])
    assert not {"api", "been", "suppor", "engine"} & said, said
    assert {"limeri", "fix"} <= said, said
