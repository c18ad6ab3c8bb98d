"""The grounded-selection rule (`pipeline/dialogue/grounding.py`) and the `grounding` validator built on it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.factories import make_dialogue, make_tool
from utcgen.pipeline.core.records import Dialogue, Message, Tool, ToolCall
from utcgen.pipeline.dialogue import grounding
from utcgen.validators.cascade import RULE_STAGES
from utcgen.validators.grounding import check_grounding


def tool(name: str, description: str, **params: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": params, "required": list(params)}}


TRACKS = tool("add_tracks_to_playlist", "Add one or more items to a user's playlist.",
              uris={"type": "string", "description": "Spotify URIs of the songs."})
DETAILS = tool("change_playlist_details", "Change a playlist's name and public or private state.",
               visibility={"type": "string", "description": "Who can see it.", "enum": ["public", "private"]})


def said(*user_turns: str) -> frozenset[str]:
    return grounding.said_stems([{"role": "user", "content": t} for t in user_turns])


# ---- vocab and matching --------------------------------------------------------------------------

def test_vocab_holds_description_name_keys_parameter_descriptions_and_enums() -> None:
    v = grounding.vocab(DETAILS)
    assert {"change", "playli", "name", "privat", "visibi", "see"} <= v   # description, name, key, its description
    assert "public" in v and "detail" in v                               # enum value, name word
    assert "the" not in v and "or" not in v                              # stop words are not vocabulary


def test_prefix_matching_needs_five_letters() -> None:
    assert grounding.match("sched", "schedu")        # 5 letters, a prefix: matches either way
    assert grounding.match("schedu", "sched")
    assert not grounding.match("play", "playli")     # 4 letters: only an exact match counts
    assert grounding.match("play", "play")
    assert not grounding.match("sched", "scales")


def test_a_prefix_stem_said_separates() -> None:
    scheduler = tool("plan_shift", "Scheduling of shifts.")
    other = tool("pay_bonus", "Pay a bonus.")
    assert grounding.separating({"sched"}, grounding.vocab(scheduler), grounding.vocab(other)) == ["sched"]


# ---- separation ------------------------------------------------------------------------------------

def test_a_word_only_the_chosen_tool_has_separates_it() -> None:
    assert grounding.unseparated(said("I want to add some songs to it."), TRACKS, [DETAILS]) == []
    assert grounding.unseparated(said("Make it private, please."), DETAILS, [TRACKS]) == []


def test_a_word_both_tools_share_separates_nothing() -> None:
    heard = said("Something about my playlist.")  # 'playlist' is in both vocabularies
    assert grounding.unseparated(heard, TRACKS, [DETAILS]) == ["change_playlist_details"]
    assert grounding.unseparated(heard, DETAILS, [TRACKS]) == ["add_tracks_to_playlist"]


def test_a_word_only_in_a_name_counts() -> None:
    heard = said("It's about the tracks.")  # 'tracks' is only in add_tracks_to_playlist's name
    assert grounding.unseparated(heard, TRACKS, [DETAILS]) == []


def test_all_that_a_name_says_sets_a_tool_apart_from_one_whose_name_says_more() -> None:
    """Every word of delete_repository also fits delete_file ('Delete a file from a GitHub repository'):
    only asking for the repository, and not a file, tells them apart."""
    repo = tool("delete_repository", "Delete a GitHub repository.")
    file = tool("delete_file", "Delete a file from a GitHub repository.", path={"type": "string"})
    assert grounding.named("delete_repository") == {"reposi"}  # 'delete' is a general word of names
    heard = said("I want to delete the GitHub repository.")
    assert grounding.unseparated(heard, repo, [file]) == []
    assert grounding.unseparated(heard, file, [repo]) == ["delete_repository"]
    assert grounding.unseparated(said("Delete the file in the repository."), repo, [file]) == ["delete_file"]
    me = tool("get_me", "Get details of the authenticated GitHub user.")
    assert grounding.unseparated(said("I need the GitHub user."), me, [tool("search_users", "Find GitHub users.")]) \
        == ["search_users"]  # a name that says nothing but 'get' is never all said


def test_identical_tools_can_never_be_separated() -> None:
    same = {**TRACKS, "name": "tracks_to_playlist_add"}  # the same words in another order
    assert grounding.vocab(same) == grounding.vocab(TRACKS)
    heard = said("add songs, the uris, tracks, items")
    assert grounding.unseparated(heard, TRACKS, [same]) == [same["name"]]
    assert grounding.unseparated(heard, same, [TRACKS]) == [TRACKS["name"]]


def test_each_other_candidate_needs_its_own_separation() -> None:
    rename = tool("rename_playlist", "Give a playlist a new name.")
    heard = said("I want to add songs.")
    assert grounding.unseparated(heard, TRACKS, [DETAILS, rename]) == []
    heard = said("The new name.")
    assert grounding.unseparated(heard, DETAILS, [TRACKS, rename]) == ["rename_playlist"]
    assert not grounding.grounded(heard, DETAILS, [TRACKS, rename])


def test_the_chosen_tool_and_repeated_names_are_not_its_own_rivals() -> None:
    assert grounding.unseparated(said("hello"), TRACKS, [TRACKS]) == []
    assert grounding.unseparated(said("hello"), TRACKS, [DETAILS, DETAILS]) == ["change_playlist_details"]


def test_distinct_lists_what_sets_a_tool_apart_from_all_others() -> None:
    out = grounding.distinct(grounding.vocab(TRACKS), [grounding.vocab(DETAILS)])
    assert "song" in out and "track" in out and "playli" not in out


def test_said_stops_at_the_first_assistant_turn_that_calls_a_tool() -> None:
    messages = [{"role": "user", "content": "about my playlist"},
                {"role": "assistant", "content": "", "tool_calls": [{"name": "x", "arguments": {}}]},
                {"role": "user", "content": "add songs"}]
    assert "song" not in grounding.said_stems(messages)
    assert "song" in grounding.said_stems(messages, until="end")


# ---- the validator -------------------------------------------------------------------------------

SEED = make_tool("add_tracks_to_playlist", "Add one or more items to a user's playlist.",
                 {"uris": {"type": "string", "description": "Spotify URIs of the songs."}})
RIVAL = make_tool("change_playlist_details", "Change a playlist's name and public or private state.",
                  {"visibility": {"type": "string", "description": "Who can see it.", "enum": ["public", "private"]}})
CALL = ToolCall(name=SEED.name, arguments={"uris": "spotify:track:1"})


def dialogue(*turns: Message, distractors: list[Tool] | None = None) -> Dialogue:
    d = make_dialogue(seed_tool=SEED, distractors=[RIVAL] if distractors is None else distractors,
                      gold_arguments={"uris": "spotify:track:1"})
    return d.model_copy(update={"messages": list(turns)})


def user(text: str) -> Message:
    return Message(role="user", content=text)


def asks(text: str, phase: str = "tool_selection") -> Message:
    return Message(role="assistant", content=text, thought="t", phase=phase)


def calls() -> Message:
    return Message(role="assistant", content="", thought="t", phase="argument_filling", tool_calls=[CALL])


def test_grounding_runs_right_after_toolcall() -> None:
    assert RULE_STAGES[RULE_STAGES.index("toolcall") + 1] == "grounding"


def test_validator_passes_when_the_user_set_the_tool_apart() -> None:
    v = check_grounding(dialogue(user("Something about my playlist."), asks("Songs, or its name?"),
                                 user("I want to add songs."), asks("The URIs?", "argument_filling"),
                                 user("The uris are spotify:track:1."), calls()))
    assert v.passed, v.reason


def test_validator_rejects_a_call_the_user_never_earned() -> None:
    v = check_grounding(dialogue(user("Something about my playlist."), asks("Which one?"),
                                 user("The usual one."), calls()))
    assert not v.passed
    assert v.details["rule"] == "ungrounded"
    assert "'add_tracks_to_playlist'" in v.reason and "'change_playlist_details'" in v.reason
    assert v.details["unseparated"] == ["change_playlist_details"]


def test_evidence_after_the_call_does_not_count() -> None:
    early = Message(role="assistant", content="", thought="t", phase="argument_filling", tool_calls=[CALL])
    v = check_grounding(dialogue(user("Something about my playlist."), early, user("I want to add songs."), calls()))
    assert not v.passed and v.details["rule"] == "ungrounded"


@pytest.mark.parametrize("case", ["no call", "single candidate"])
def test_nothing_to_separate_passes(case: str) -> None:
    if case == "no call":
        d = dialogue(user("Something about my playlist."), asks("Which one?"))
    else:
        d = dialogue(user("Something about my playlist."), calls(), distractors=[])
    assert check_grounding(d).passed
