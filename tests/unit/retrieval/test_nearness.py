"""Semantic nearness (`pipeline.nearness`): which candidate the user's words point to, as the offline
assistant weighs it before committing and the offline user when choosing how to say its need."""

from __future__ import annotations

import json
import random
import re

import numpy as np

from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.core.text import split_words
from utcgen.pipeline.dialogue import grounding
from utcgen.pipeline.llm.requests import Said, UserRequest
from utcgen.pipeline.retrieval import nearness
from utcgen.pipeline.simulator import conversation, selection, user_words
from utcgen.pipeline.simulator.voice import Voice


def tool(name: str, description: str, **params: dict) -> Tool:
    return Tool(name=name, description=description,
                parameters={"type": "object", "properties": params, "required": list(params)})


def asking(tool: Tool, distractors: list[Tool], history: list[Said], persona: Persona | None = None,
           seed: int = 0) -> UserRequest:
    """The user's request in tool selection: its tool, the distractors, the dialogue so far."""
    return UserRequest(phase="tool_selection", tool=tool, distractors=distractors, history=history, goal="",
                       persona=persona or Persona(id="", text="", role="student"), gold_arguments={}, seed=seed)


IDS = {"type": "string", "description": "A comma-separated list of track IDs."}
REMOVE = tool("remove_saved_tracks", "Remove one or more tracks from the current user's music library.", ids=IDS)
SAVE = tool("save_tracks", "Save one or more tracks to the current user's music library.", ids=IDS)
CHECK = tool("check_saved_tracks", "Check if one or more tracks is already saved in the current user's music library.",
             ids=IDS)


def _bag_of_words(texts: list[str]) -> np.ndarray:
    vocab = sorted({w for t in texts for w in split_words(t)})
    out = np.zeros((len(texts), len(vocab)), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in split_words(t):
            out[i, vocab.index(w)] += 1
    return out


def test_margins_are_the_chosen_tools_cosine_minus_the_nearest_others() -> None:
    saids = ["remove tracks from my library", "save tracks to my library"]
    near, far = nearness.margins(saids, REMOVE, [SAVE, CHECK], embed=_bag_of_words)
    assert near > 0 > far
    assert nearness.margins(saids, REMOVE, [], embed=_bag_of_words) == [1.0, 1.0]
    assert nearness.name_and_description(REMOVE).startswith("remove saved tracks. Remove one")


def test_the_assistant_asks_when_a_word_sets_one_apart_but_the_request_reads_as_another() -> None:
    """'already' fits CHECK and not GET, so the grounding rule holds for CHECK; yet the request reads
    as asking for the list of saved tracks, and a careful listener asks before acting."""
    get = tool("get_saved_tracks", "Get a list of the tracks saved in the current user's music library.", ids=IDS)
    history = [Said(role="user", content="Hi, about my music library."), Said(role="assistant", content="Which?"),
               Said(role="user", content="Could you show me the tracks already saved in my music library?")]
    assert grounding.grounded(grounding.said_stems(history), CHECK, [get])
    assert not grounding.grounded(grounding.said_stems(history), get, [CHECK])
    decision = selection.decide([CHECK, get], history)
    assert decision.tool is None and decision.question.endswith("?"), decision
    assert "read closer to get_saved_tracks" in decision.thought
    # said plainly, the same choice is made at once
    plain = [*history[:2], Said(role="user", content="Check if these tracks are already saved in my library, yes or no.")]
    assert selection.decide([CHECK, get], plain).tool.name == "check_saved_tracks"


def test_the_user_says_what_it_needs_in_the_words_that_point_nearest_its_tool() -> None:
    """Asked which one, the offline user weighs several ways of saying its need and says the one after
    which its words, as a whole, point nearest the seed: 'check' here, which the others do not do."""
    persona = Persona(id="", text="", role="music student", style="")
    history = [Said(role="user", content="Hi, something about my music library."),
               Said(role="assistant", content="Are you after saved tracks, or the library?"),
               Said(role="user", content="Not sure what it's called."),  # a second answer is never vague
               Said(role="assistant", content="No problem. Which one, then?")]
    for seed in range(4):
        said = json.loads(conversation.user(asking(CHECK, [REMOVE, SAVE], history, persona, seed), []))["message"]
        heard = f"{history[0].content} {said}"
        assert nearness.margins([heard], CHECK, [REMOVE, SAVE])[0] > 0, said
        assert re.search(r"\bcheck\b", said.lower()), said


def test_the_user_can_restate_its_need_in_its_own_words_but_never_recites() -> None:
    hi = [Said(role="user", content="Hi.")]
    assert user_words.restated(asking(CHECK, [REMOVE, SAVE], hi)) == \
        "I need to check if a few tracks are already saved in my music library."
    recites = tool("calculate_area", "Calculate the area of a triangle given its base and height.")
    assert user_words.restated(asking(recites, [], hi)) is None  # 6 words of the description
    heading = tool("get_album", "Get Album Tracks.")
    assert user_words.restated(asking(heading, [], hi)) is None  # a Title Case heading
    access = tool("forum_replies", "Write operations for discussion comments. Supports adding and replying to comments.")
    assert user_words.restated(asking(access, [], hi)) is None  # a kind of access, never 'I need to write operations'


def test_a_quoted_product_name_is_dropped_before_the_need_is_cut_short() -> None:
    """The cut to 16 words comes after the product's quoted name is dropped, so the sentence never
    ends on a half-said phrase ('saved in my.')."""
    long = tool("check_saved_tracks", "Check if one or more tracks is already saved in the current Spotify user's "
                                      "'Your Music' library.", ids=IDS)
    answering = asking(long, [REMOVE, SAVE], [Said(role="user", content="Hi.")])
    assert user_words.restated(answering) == "I need to check if a few tracks are already saved in my library."


SHOWS = tool("get_saved_shows", "Get a list of shows saved in the current user's library.", ids=IDS)
ALBUMS = tool("get_saved_albums", "Get a list of the albums saved in the current user's music library.", ids=IDS)


def test_asked_to_choose_the_user_answers_with_the_option_that_fits_its_tool() -> None:
    """Offered options, a person picks the one that fits: the reply carries the option's words that
    set the seed apart, and not an option that fits a distractor."""
    persona = Persona(id="", text="", role="student", style="")
    history = [Said(role="user", content="Hi, it's about my library."),
               Said(role="assistant", content="Happy to help. Which fits best: albums, shows, or tracks?")]
    state = asking(SHOWS, [ALBUMS, SAVE], history, persona, 3)
    picks = user_words.answers_to_options(state, random.Random(0), Voice.of(persona))
    assert picks and all("shows" in p and "albums" not in p and "tracks" not in p for p in picks), picks
    # the option is said whole, as the question put it; an open question offers nothing to pick
    asked = "Sure, I can help you with that, but first, could you tell me whether you need the saved albums, or the saved shows?"
    state = state.model_copy(update={"history": [history[0], Said(role="assistant", content=asked)]})
    picks = user_words.answers_to_options(state, random.Random(0), Voice.of(persona))
    assert picks and all("the saved shows" in p and "albums" not in p for p in picks), picks
    state = state.model_copy(update={"history": [history[0], Said(role="assistant", content="What would you check, shows first?")]})
    assert user_words.answers_to_options(state, random.Random(0), Voice.of(persona)) == []
    # no option fits the seed: nothing to pick
    state = state.model_copy(update={"history": [history[0], Said(role="assistant", content="Which fits best: albums, or tracks?")]})
    assert user_words.answers_to_options(state, random.Random(0), Voice.of(persona)) == []


def test_a_tie_in_words_is_broken_by_the_request_read_as_a_whole() -> None:
    """One word each way ('music' fits the music library, 'shows' fits the shows) is a tie the
    assistant does not settle by counting. When the request as a whole points clearly nearer one
    candidate it commits to it; when it does not, it asks."""
    history = [Said(role="user", content="Hi, it's about music."), Said(role="assistant", content="Which one?"),
               Said(role="user", content="Get the list of shows saved in my library, the shows please.")]
    seps = selection._separations(selection.evidence(history), [SHOWS, ALBUMS])
    assert seps["get_saved_shows"]["get_saved_albums"] == seps["get_saved_albums"]["get_saved_shows"] == 1
    decision = selection.decide([SHOWS, ALBUMS], history)
    assert decision.tool is not None and decision.tool.name == "get_saved_shows", decision
    vague = [*history[:2], Said(role="user", content="The shows.")]
    seps = selection._separations(selection.evidence(vague), [SHOWS, ALBUMS])
    assert seps["get_saved_shows"]["get_saved_albums"] == seps["get_saved_albums"]["get_saved_shows"] == 1
    assert nearness.margins([user_said_all(vague)], SHOWS, [ALBUMS])[0] < selection.NEAR_MARGIN
    decision = selection.decide([SHOWS, ALBUMS], vague)
    assert decision.tool is None and decision.question.endswith("?"), decision


def user_said_all(history: list[Said]) -> str:
    return " ".join(m.content for m in history if m.role == "user")


def test_asked_again_the_user_rephrases_rather_than_repeats_itself() -> None:
    """An open question after an answer gets a new sentence, not the same one word for word."""
    persona = Persona(id="", text="", role="music student", style="")
    history = [Said(role="user", content="Hi, something about my music library."),
               Said(role="assistant", content="Are you after saved tracks, or the library?"),
               Said(role="user", content="Not sure what it's called."),
               Said(role="assistant", content="No problem. Which one, then?")]
    for seed in range(4):
        state = asking(CHECK, [REMOVE, SAVE], history, persona, seed)
        first = json.loads(conversation.user(state, []))["message"]
        again = [*history, Said(role="user", content=first),
                 Said(role="assistant", content="What would you look at first to check it worked?")]
        second = json.loads(conversation.user(state.model_copy(update={"history": again}), []))["message"]
        assert second != first, first


def test_an_option_of_two_phrases_is_picked_as_offered() -> None:
    """'artist and keywords' is answered 'the artist and keywords', not run together."""
    persona = Persona(id="", text="", role="student", style="")
    artists = tool("get_artist_albums", "Get the albums of an artist, found by keywords.", ids=IDS)
    state = asking(artists, [ALBUMS, SAVE], [Said(role="user", content="Hi."),
                     Said(role="assistant", content="Is it more artist and keywords, or music library?")], persona)
    picks = user_words.answers_to_options(state, random.Random(0), Voice.of(persona))
    assert picks and all("artist and keywords" in p for p in picks), picks
