"""The offline roles' wording: questions a user can answer by picking an option, statements of values the
assistant reads back whole, and no sentence said twice by one speaker."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.simulator import phrasing, questions
from utcgen.pipeline.simulator.nounphrases import bland, noun_phrases, qualified, the, thing
from utcgen.pipeline.simulator.user import sentences, values_sentence
from utcgen.pipeline.simulator.user_words import offered

NOUNS = ["the approved budget", "the spend analysis", "the current-year budget position"]
ACTS = ["check the approved budget", "list the purchase requests", "approve the expense report"]
FRAMES = [(f, False) for f in (*questions.FIRST, *questions.AGAIN, *questions.UNSURE)] + \
    [(f, True) for f in (*questions.FIRST_DO, *questions.AGAIN_DO, *questions.UNSURE_DO)]


@pytest.mark.parametrize(("frame", "acts"), FRAMES)
@pytest.mark.parametrize("count", [2, 3])
def test_every_question_is_one_sentence_whose_options_the_user_reads_back(frame: str, acts: bool, count: int) -> None:
    options = (ACTS if acts else NOUNS)[:count]
    question = frame.format(o=questions.listed(options, acts))
    assert question.endswith("?") and len(sentences(question)) == 1, question
    assert offered(question) == options, question


def test_an_open_question_offers_nothing_to_pick() -> None:
    for lead in questions.OPEN_LEADS["first"]:
        for q in questions.OPEN:
            assert offered(lead + q[:1].lower() + q[1:]) == []


TOOL = Tool(name="t", description="d", parameters={"type": "object", "required": ["cost_center", "fiscal_year", "title", "tags"],
                                                   "properties": {"cost_center": {"type": "string"},
                                                                  "fiscal_year": {"type": "integer"},
                                                                  "title": {"type": "string"},
                                                                  "tags": {"type": "array", "items": {"type": "string"}}}})


@pytest.mark.parametrize("after", ["", *phrasing.AFTERWORDS, *(r for rs in phrasing.REMARKS.values() for r in rs)])
def test_values_said_two_to_a_sentence_with_a_word_more_read_back_whole(after: str) -> None:
    cases: list[dict[str, Any]] = [
        {"cost_center": "CC-1", "fiscal_year": 2024, "title": "Salt and the sea", "tags": ["the Beatles", "rock"]},
        {"cost_center": "Paris, France", "fiscal_year": 2023, "title": f"Plan{after}", "tags": ["a", "b"]},
        {"cost_center": "CC-9", "fiscal_year": 2025, "title": "x  y", "tags": ["one and the other", "two"]},
    ]
    for gold in cases:
        said = values_sentence(TOOL, gold, list(gold), random.Random(0))
        said = said[:-1] + after + "."
        assert said.count(". ") == 1  # four values: two sentences of two
        assert phrasing.read_values(said, TOOL) == gold, said


def test_no_speaker_says_a_sentence_twice_in_a_dialogue(scenario_run: dict[str, Any]) -> None:
    checked = 0
    for d in scenario_run["accepted"]:  # the data; an attempt the user could not word at all runs out of ways to say so
        if d.scenario != "disambiguation":
            continue
        for role in ("user", "assistant"):
            said = [s for m in d.messages if m.role == role for s in sentences(m.content)]
            assert len(said) == len(set(said)), (d.id, role, said)
            checked += len(said)
    assert checked > 50


def test_a_remark_on_a_value_fits_what_it_holds_and_is_read_back_apart_from_it() -> None:
    tool = Tool(name="t", description="d", parameters={"type": "object", "required": ["owner", "repo", "issue_number", "labels"],
                                                       "properties": {"owner": {"type": "string", "description": "Repository owner"},
                                                                      "repo": {"type": "string", "description": "Repository name"},
                                                                      "issue_number": {"type": "integer"},
                                                                      "labels": {"type": "array", "items": {"type": "string"}}}})
    gold: dict[str, Any] = {"owner": "okada-platform", "repo": "ledger-api", "issue_number": 1020, "labels": ["bug"]}
    rng = random.Random(0)
    assert phrasing.remark("labels", tool.properties["labels"], gold["labels"], rng) is None  # a list is no one thing
    for key in ("owner", "repo", "issue_number"):
        said = phrasing.remark(key, tool.properties[key], gold[key], rng)
        assert said in phrasing.REMARKS[{"owner": "handle_org", "repo": "repo"}.get(key, "identifier")]
        text = values_sentence(tool, gold, [key], rng)[:-1] + said + "."
        assert phrasing.read_values(text, tool, keys=[key]) == {key: gold[key]}, text


def test_a_description_s_phrases_leave_out_api_fields_and_words_that_name_no_thing() -> None:
    said = noun_phrases("List issues. For pagination, use the 'endCursor' from the previous response's 'pageInfo'.", set())
    assert "pagination" in said and not any("cursor" in p.lower() or "pageinfo" in p.lower() for p in said), said
    assert noun_phrases("Reprioritize (reorder) a sub-issue relative to other sub-issues.", set()) == ["sub-issue", "sub-issues"]
    assert "exist" not in noun_phrases("Add a review comment to a pending review, which must already exist.", set())


@pytest.mark.parametrize(("description", "kept", "dropped"), [
    ("Get details of the authenticated GitHub user.", [], ["authenticated GitHub"]),  # a qualifier cut from its head
    ("Get an episode by its unique Spotify ID.", ["episode"], ["Spotify", "unique Spotify"]),
    ("List collaborators; the response includes paging fields.", ["collaborators", "paging fields"],
     ["response includes", "includes paging fields"]),
    ("Create and manage GitHub Projects: create projects.", ["GitHub Projects", "projects"], ["manage GitHub Projects"]),
    ("Replace items. Both operations can't be applied together.", ["operations"], ["operations can't", "applied together"]),
    # by the lexicon: a verb before its object, an adjective whose noun is a parameter, a past form, a lone name
    ("Unlock the account. Use when the user knows their password.", ["account", "password"], ["knows"]),
    ("Calculate the probability of favorable outcomes.", ["probability"], ["favorable"]),
    ("List the parcels a customer reported lost.", ["parcels", "customer"], ["lost", "reported lost"]),
    ("Find nearby music shops in Seattle.", ["nearby music shops"], ["Seattle"]),
    ("Schedule a meeting and logs it as a planned activity. Download logs for a job.", ["planned activity", "logs"], []),
    ("List SKUs whose available stock is low.", ["SKUs", "available stock"], []),
    # a participle after its noun, a verb of a clause, an aside on the API
    ("Approve all training requests currently waiting for a decision.", ["training requests"],
     ["requests currently waiting", "waiting"]),
    ("Return the budget the caller belongs to. Check whether the device meets security policy.",
     ["budget", "security policy"], ["belongs", "meets security policy"]),
    ("Transfer playback to a new device and optionally begin playback.", ["device"], ["begin playback"]),
    ("Start a new context or resume current playback on the user's active device.", ["context", "active device"],
     ["resume"]),
    ("Get an audiobook's chapters. Audiobooks are only available within the US, UK and Australia markets.",
     ["chapters"], ["Australia markets", "markets"]),
    ("Return the budget position of the cost center the caller owns.", ["cost center"], ["owns"]),  # a clause's verb
    ("List employees whose service anniversaries fall within the next days.", ["service anniversaries"],
     ["service anniversaries fall"]),  # a plural subject's verb
    ("Calculate the entropy change of an isothermal and reversible process.", ["entropy change"],
     ["isothermal", "reversible"]),  # adjectives the lexicon lacks
    ("Returns the number of free standard and accessible parking spaces.", ["accessible parking spaces"], ["free standard", "free"]),
    ("Get blame information for a file. When the cap is hit 'truncated' is set to true and 'total_ranges' reports the "
     "pre-cap match count.", ["file"],
     ["total ranges reports", "total ranges"]),  # an API field's name, read as words
])
def test_a_phrase_is_a_whole_thing_a_person_can_put_the_before(description: str, kept: list[str], dropped: list[str]) -> None:
    said = noun_phrases(description, set())
    assert all(k in said for k in kept) and not any(d in said for d in dropped), said


def test_a_person_who_is_a_clause_s_subject_is_no_thing_wanted() -> None:
    """'Use when a manager asks ...' says who asks, not what for: 'the manager' is no phrase of the need,
    while a person the tool acts on stays ('the employee')."""
    said = noun_phrases("Return the budget position of a cost center. Use when a manager asks how much is left.", set())
    assert "manager" not in said and "budget position" in said, said
    said = noun_phrases("Approve every pending request. Use only when the manager explicitly wants to clear the queue.", set())
    assert "manager" not in said and "queue" in said, said
    said = noun_phrases("Decline a training request and notify the employee with the reason.", set())
    assert "employee" in said, said


def test_a_phrase_only_a_usage_note_says_is_the_situation_not_the_thing() -> None:
    from utcgen.pipeline.simulator.nounphrases import usage_only

    note = ("Approve every training request waiting for the caller's decision. Use only when the manager wants to "
            "clear the whole queue. Useful for busy weeks.")
    assert usage_only(note, "whole queue") and usage_only(note, "busy weeks")
    assert not usage_only(note, "training request") and not usage_only(note, "decision")
    assert not usage_only("Use the saved albums of the user. Returns the saved albums.", "saved albums")


def test_a_compound_modifier_whose_noun_is_banned_names_nothing() -> None:
    said = noun_phrases("Return the current-year budget position. Fetch real-time stock prices.", {"budget", "stock"})
    assert "current-year" not in said and "real-time" not in said and "prices" in said, said


def test_a_product_s_name_with_bland_words_names_nothing() -> None:
    assert bland("Spotify catalog information") and bland("Spotify URIs")
    assert not bland("GitHub repository") and not bland("product catalog")
    assert bland("days") and bland("money") and not bland("sick days")  # 'help me with the days' names nothing


def test_bland_words_and_adjectives_alone_name_nothing() -> None:
    assert all(bland(p) for p in ("number", "example", "available information", "relevant values"))
    assert not any(bland(p) for p in ("saved albums", "episodes", "available stock", "invoice number"))


def test_an_option_or_a_lone_verb_is_no_thing() -> None:
    assert thing("market") and thing("playlist")
    assert not any(thing(w) for w in ("create", "done", "read", "manage", "always", "newest", "stale", "known", "sent"))
    assert all(thing(w) for w in ("commit", "logs", "repo", "ranking", "games", "records"))


def test_a_lone_verb_of_a_description_is_never_said_as_the_word_alone() -> None:
    """'the corresponds', 'the seek' read as nonsense; a noun the lexicon lacks passes when the description
    puts an article before it ('a commit')."""
    from utcgen.pipeline.simulator.nounphrases import said_alone

    playback = "Start playback. Only available when the context corresponds to an album. Seeks to the position."
    assert not said_alone("corresponds", playback) and not said_alone("seek", playback)
    assert said_alone("album", playback) and said_alone("commit", "Get details for a commit in a repository.")


@pytest.mark.parametrize("description,said", [
    ("Get Album. Get Spotify catalog information for a single album.", "a single album"),
    ("Skips to previous track in the user's queue.", "the previous track"),
    ("Get catalog information for several episodes based on their IDs.", "several episodes"),
])
def test_a_qualifier_before_a_phrase_is_kept_with_its_determiner(description: str, said: str) -> None:
    """'single', 'previous' and 'several' say nothing alone and the cutter drops them, yet before a noun
    they may be all that tells two tools apart: the phrase is also offered with them, said as a person would."""
    phrases = noun_phrases(description, set())
    assert said.split()[-1] in [p.lower() for p in phrases]  # the bare phrase, as before
    assert said in [the(p) for p in qualified(description, phrases)]


def test_a_qualifier_is_kept_only_before_the_thing_it_qualifies() -> None:
    """'the current Spotify user's albums' and 'a single album ID' qualify the user and the ID, not 'Spotify'
    or 'album'; 'Several Albums' and 'multiple albums' are one thing, said once."""
    description = "Get Several Albums. Get the current Spotify user's saved albums, or multiple albums, or a single album ID."
    phrases = noun_phrases(description, set())
    assert "Spotify" not in phrases
    assert qualified(description, phrases) == ["several albums"]


def test_a_verb_is_said_with_its_own_object_or_the_place_it_acts_in() -> None:
    """'Create a new pull request in a GitHub repository.': the user creates the pull request, or creates
    something in the repository, never 'the GitHub repository' itself; a phrase the verb does not reach
    ('for a single album') takes no verb at all."""
    from utcgen.pipeline.simulator.nounphrases import place as _place

    description = "Create a new pull request in a GitHub repository."
    assert _place(description, "create", "pull request") == ""
    assert _place(description, "create", "GitHub repository") == "in"
    assert _place("Add one or more items to a user's playlist.", "add", "playlist") == "to"
    assert _place("Get Spotify catalog information for a single album.", "get", "single album") is None
    assert _place("Remove Items from Library. Remove items from the library.", "remove", "library") == "from"


def test_a_heading_the_description_restates_is_not_read_one_that_adds_words_is() -> None:
    from utcgen.pipeline.simulator.nounphrases import about

    assert about("Seek To Position. Seeks to the given position in the playing track.") == \
        "Seeks to the given position in the playing track."
    assert "seek" not in [p.lower() for p in noun_phrases("Seek To Position. Seeks to the given position.", set())]
    assert about("Get Playlist Cover Image. Get the image of a playlist.").startswith("Get Playlist Cover Image.")


def test_two_things_are_said_together_only_as_the_description_ties_them() -> None:
    from utcgen.pipeline.simulator.nounphrases import linked

    assert linked("Delete a file from a GitHub repository.", "file", "GitHub repository") == \
        ("file", "from", "the GitHub repository")
    assert linked("List repository security advisories for a GitHub organization.", "GitHub organization",
                  "repository security advisories") == ("repository security advisories", "for", "the GitHub organization")
    assert linked("Retrieve the compatibility score between two Zodiac signs.", "Zodiac signs",
                  "compatibility score") == ("compatibility score", "between", "the Zodiac signs")
    assert linked("Get an album's tracks.", "album", "tracks") == ("tracks", "of", "the album")
    assert linked("Get the episodes saved in the current Spotify user's library.", "library", "episodes") == \
        ("episodes", "saved in", "the library")
    assert linked("List policies such as an updated code of conduct.", "updated code", "conduct") == \
        ("updated code", "of", "conduct")
    assert linked("Get details of the teams the user is a member of.", "member", "teams") is None
    # a second link between the two ties the first to something else: not 'the flights between the travel policy'
    assert linked("Search available flights between two airports within travel policy.", "available flights",
                  "travel policy") is None


def test_a_detail_never_joins_an_untied_thing_to_the_act(scenario_run: dict[str, Any]) -> None:
    """'I'd like to delete the file, along with the GitHub repository' asks for a second deletion."""
    said = [m.content for d in scenario_run["every"] for m in d.messages if m.role == "user" and m.content]
    assert len(said) > 100 and not [s for s in said if re.search(r", (?:along with|together with|including) the ", s)]


def test_an_api_heading_is_said_as_a_word_a_product_as_a_name() -> None:
    from utcgen.pipeline.simulator.user_openings import _about

    said = {_about("Image", "day-to-day", random.Random(seed)) for seed in range(20)}
    assert said and not any("Image" in s for s in said), said  # 'something in Image' names no place
    assert any("Spotify" in (_about("Spotify", "day-to-day", random.Random(seed)) or "") for seed in range(20))


def test_someone_without_a_job_says_my_not_our_and_with_nothing_to_name_asks_about_something() -> None:
    from utcgen.pipeline.simulator.user_openings import _about

    yours = "Add one or more items to your current playlist."
    mine = {_about("playlist", "day-to-day", random.Random(seed), job=False, description=yours) for seed in range(30)}
    assert "my playlist" in mine and not any("our" in (s or "") for s in mine), mine
    # 'my' only for what the description says is someone's: a card suit is nobody's ('the suit', never 'my suit')
    cards = "Calculate the probability of drawing a certain card or suit from a deck of cards."
    suits = {_about("suit", "day-to-day", random.Random(seed), job=False, description=cards) for seed in range(30)}
    assert "the suit" in suits and not any("my" in (s or "").split() for s in suits), suits
    assert "a stock" not in {_about("stock", "day-to-day", random.Random(seed)) for seed in range(30)}  # stock held
    assert "our playlist" in {_about("playlist", "day-to-day", random.Random(seed)) for seed in range(30)}
    assert _about(None, "day-to-day", random.Random(0), job=False) is None  # not 'something I'm trying to do'


def test_a_product_s_name_is_kept_in_an_option_and_said_alone_for_its_vague_information() -> None:
    from utcgen.pipeline.simulator.user_words import _named_only

    tool = Tool(name="create_pull_request", description="Create a new pull request in a GitHub repository.",
                parameters={"type": "object", "properties": {}})
    assert questions.option(tool, "GitHub repository", True) == "create the GitHub repository"
    assert questions.option(tool, "Saved Albums", False) == "the saved albums"
    assert questions.option(tool, "user ID", False) == "the user ID"
    assert _named_only("Spotify catalog information") == "Spotify"
    assert [_named_only(p) for p in ("catalog information", "Spotify playlist", "GitHub Spotify data")] == \
        ["catalog information", "Spotify playlist", "GitHub Spotify data"]


def test_a_description_s_verb_is_said_in_its_base_form() -> None:
    from utcgen.pipeline.simulator.wording import imperative

    assert [imperative(s) for s in ("Analyzes the impact", "Fetches rows", "Applies a discount", "Lists tickets")] == \
        ["analyze the impact", "fetch rows", "apply a discount", "list tickets"]


def test_the_assistant_offers_acts_only_on_what_each_act_is_done_to() -> None:
    from utcgen.pipeline.simulator.selection import _question

    params: dict[str, Any] = {"type": "object", "properties": {}}
    tools = [Tool(name="transfer-playback", description="Transfer playback to a new device and optionally begin playback.",
                  parameters=params),
             Tool(name="set-volume", description="Set the volume for the current playback device.", parameters=params),
             Tool(name="pause-playback", description="Pause playback on the user's account.", parameters=params)]
    asked = [_question(tools, frozenset(), random.Random(seed))[0] for seed in range(6)]
    assert all(asked) and not any(act in q for q in asked for act in ("transfer the", "pause the account")), asked
    two = [tools[1], Tool(name="skip-next", description="Skip the next track in the queue.", parameters=params)]
    solo = [_question(two, frozenset(), random.Random(seed))[0] for seed in range(6)]
    assert all("set the volume" in q for q in solo), solo  # each phrase its verb's object: acts are said


def test_a_user_does_not_start_two_turns_with_the_same_lead(scenario_run: dict[str, Any]) -> None:
    """'To clarify, it has to do with the shows.' then 'To clarify, I'm looking into the shows.'"""
    from utcgen.pipeline.simulator.user_openings import _DETAIL_LEADS

    leads = {x.lower() for x in (*_DETAIL_LEADS["plain"], *_DETAIL_LEADS["formal"]) if x}
    checked = 0
    for d in scenario_run["every"]:
        started = [next((x for x in leads if m.content.lower().startswith(x)), None)
                   for m in d.messages if m.role == "user" and m.content]
        started = [x for x in started if x]
        checked += len(started)
        assert len(started) == len(set(started)), (d.id, started)
    assert checked > 20


def test_a_message_given_as_a_value_is_quoted_a_name_is_not() -> None:
    from utcgen.pipeline.simulator import phrasing

    said = phrasing.sentence([("message", "Guard against broken link in docs"), ("company", "Obelan Machine Works Ltd")],
                             random.Random(0))
    assert '"Guard against broken link in docs"' in said and '"Obelan' not in said, said
