"""Gold values for any catalog: values by meaning, whole numbers for ids and counts, person
names only for people, no phrase shared between unrelated parameters, lossless say/read,
spoken labels; and the plausibility rules that catch each fault the old generator had."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from typing import Any

import jsonschema
import pytest

from tests.support.factories import make_dialogue
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue import parameter_labels, person_names
from utcgen.pipeline.dialogue.values import implausible
from utcgen.pipeline.llm.requests import SlotsRequest
from utcgen.pipeline.simulator import gold_values as values
from utcgen.pipeline.simulator import phrasing, user, writers
from utcgen.pipeline.simulator.value_lexicon import LEXICON
from utcgen.validators import plausibility

PERSONAS = [Persona(id="", **p) for p in [
    {"text": "Mara maintains the payments platform and reviews pull requests for the checkout team.",
     "attributes": {"country": "DE", "city": "Berlin", "company": "Obelan Machine Works", "department": "Platform",
                    "currency": "EUR", "timezone": "Europe/Berlin"}},
    {"text": "Kenji curates playlists for a running club and follows new albums every Friday.",
     "attributes": {"country": "JP", "city": "Osaka"}},
    {"text": "", "attributes": {"country": "BR"}},
    {"text": ""},
]]
GITHUB = Tool(name="create_issue", description="Create a new issue in a GitHub repository.")
SPOTIFY = Tool(name="add_tracks_to_playlist", description="Add one or more items to a user's playlist.")
S = {"type": "string"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "owner": {**S, "description": "Repository owner"},
    "repo": {**S, "description": "Repository name"},
    "title": {**S, "description": "Issue title"},
    "body": {**S, "description": "Issue body content"},
    "issue_number": {"type": "number", "description": "Issue number"},
    "pull_number": {"type": "number"},
    "page": {"type": "number", "minimum": 1},
    "perPage": {"type": "number", "minimum": 1, "maximum": 100},
    "q": {**S, "description": "Search query using GitHub code search syntax"},
    "path": {**S, "description": "Path to file/directory"},
    "branch": {**S, "description": "Branch to create the file in"},
    "base": {**S, "description": "The name of the branch you want the changes pulled into"},
    "head": {**S, "description": "The name of the branch where your changes are implemented"},
    "sha": {**S, "description": "SHA of the file being replaced"},
    "era_name": {**S, "description": "Name of the historical era"},
    "assignees": {"type": "array", "items": S, "description": "Usernames to assign to this issue"},
    "labels": {"type": "array", "items": S, "description": "Labels to apply to this issue"},
    "id": {**S, "description": "The Spotify ID for the album."},
    "ids": {**S, "description": "A comma-separated list of the Spotify IDs for the tracks."},
    "market": {**S, "description": "An ISO 3166-1 alpha-2 country code."},
    "uri": {**S, "description": "The Spotify URI of the item"},
    "position": {"type": "integer", "minimum": 0},
    "name": {**S, "description": "The name for the new playlist"},
    "commit_message": {**S, "description": "Commit message"},
    "since": {**S, "format": "date-time"},
    "due_on": {**S, "format": "date"},
    "homepage": {**S, "format": "uri"},
    "contact_email": {**S, "format": "email"},
    "request_id": {**S, "format": "uuid"},
    "color": S, "timezone": S, "currency": {**S, "pattern": "^[A-Z]{3}$"}, "language": S, "locale": S,
    "limit": {"type": "integer", "maximum": 50}, "offset": {"type": "integer"},
    "latitude": {"type": "number", "minimum": -90, "maximum": 90}, "amount": {"type": "number", "minimum": 0},
    "reviewer": {**S, "description": "Person reviewing the change"}, "customer_name": S, "first_name": S,
    "display_name": S, "file_name": S, "repo_name": S, "branch_name": S, "reason": S, "version": S,
    "notes": {**S, "maxLength": 40}, "invoice_code": {**S, "pattern": "^INV-[0-9]{6}$"}, "tags": {"type": "array", "items": S},
    "state": {**S, "enum": ["open", "closed"]}, "draft": {"type": "boolean"},
    "filters": {"type": "object", "properties": {"status": {**S, "enum": ["a", "b"]}, "year": {"type": "integer"}},
                "required": ["status", "year"]},
}
CHECKER = jsonschema.FormatChecker()


def _all(seed: int, tool: Tool | None) -> list[tuple[str, dict, Any]]:
    rng = random.Random(seed)
    persona = PERSONAS[seed % len(PERSONAS)]
    return [(k, s, values.gold_value(k, s, persona, rng, tool)) for k, s in SCHEMAS.items()]


def _heard(key: str, schema: dict, value: Any) -> Any:
    """What the offline assistant reads back when the user says the value in a sentence."""
    name = parameter_labels.label(key, schema)
    said = f"Sure, the {name} {parameter_labels.copula(name)} {values.say_value(value)}; thanks."
    m = re.search(rf"the {re.escape(name)} (?:is|are) (.+?)(?=;\s|\.\s|\.$|\n|$)", said, re.IGNORECASE)
    assert m, (key, said)
    return values.read(m.group(1), schema)


@pytest.mark.parametrize("seed", range(12))
def test_values_validate_are_plausible_and_read_back_exactly(seed: int) -> None:
    for tool in (GITHUB, SPOTIFY, None):
        for key, schema, value in _all(seed, tool):
            errors = [e.message for e in jsonschema.Draft202012Validator(schema, format_checker=CHECKER).iter_errors(value)]
            assert not errors, (key, value, errors)
            assert implausible(key, value, schema, tool.description if tool else "") is None, (key, value)
            assert values.read(values.say_value(value), schema) == value, (key, value)
            assert _heard(key, schema, value) == value, (key, value)


def test_counts_numbers_and_ids_are_whole_even_when_typed_number() -> None:
    rng = random.Random(0)
    for key in ("issue_number", "pull_number", "page", "perPage", "per_page", "limit", "id", "count", "comment_id"):
        for _ in range(30):
            v = values.gold_value(key, {"type": "number"}, {}, rng)
            assert isinstance(v, int), (key, v)
    assert all(1 <= values.gold_value("page", {"type": "number"}, {}, rng) <= 5 for _ in range(20))
    assert {values.gold_value("per_page", {"type": "integer", "maximum": 100}, {}, rng) for _ in range(40)} <= {5, 10, 20, 25, 50, 100}
    assert any(not float(values.gold_value("amount", {"type": "number"}, {}, rng)).is_integer() for _ in range(10))


def test_a_salary_is_a_year_s_pay() -> None:
    rng = random.Random(0)
    assert all(28000 <= values.gold_value("new_base_salary", {"type": "number"}, {}, rng) <= 160000 for _ in range(20))


@pytest.mark.parametrize("key,low,high", [("bedrooms", 1, 12), ("passengers", 1, 12), ("years", 1, 30),
                                           ("age", 1, 70), ("volume_percent", 1, 100), ("number_of_trials", 1, 60)])
def test_a_count_a_person_states_is_one_they_would_have(key: str, low: int, high: int) -> None:
    """'the bedrooms are 339', 'the years are 419', 'the volume % is 384': counts nobody has."""
    rng = random.Random(0)
    said = [values.gold_value(key, {"type": "integer"}, {}, rng) for _ in range(40)]
    assert all(low <= v <= high for v in said) and len(set(said)) > 3, said


def test_an_option_with_underscores_is_said_in_words_and_read_back_as_the_option() -> None:
    schema = {"type": "string", "enum": ["ergonomic_chair", "standing_desk", "monitor"]}
    assert values.spoken_option("ergonomic_chair", schema) == "ergonomic chair"
    assert values.spoken_option("monitor", schema) == "monitor" and values.spoken_option("my_file", {}) == "my_file"
    tool = Tool(name="request_equipment", description="Request office equipment.",
                parameters={"type": "object", "properties": {"item": schema}, "required": ["item"]})
    said = user.values_sentence(tool, {"item": "ergonomic_chair"}, ["item"], random.Random(0))
    assert "ergonomic chair" in said and "_" not in said, said
    assert phrasing.read_values(said, tool) == {"item": "ergonomic_chair"}


def test_a_quoted_word_after_an_example_is_another_parameter_s_option_not_an_example() -> None:
    from utcgen.pipeline.simulator.value_kinds import examples

    said = "Provide a workflow ID or workflow file name (e.g. ci.yaml) for 'get_workflow' method."
    assert examples(said) == ["ci.yaml"]
    assert examples("The competition (for example, 'UEFA Champions League').") == ["UEFA Champions League"]


def test_an_expected_return_is_a_rate_people_expect() -> None:
    rng = random.Random(0)  # 'the return for the expected annual is 863.49'
    assert all(1 <= values.gold_value("expected_annual_return", {"type": "number"}, {}, rng) <= 12 for _ in range(30))


def test_a_name_described_as_a_repository_s_is_a_repository_name() -> None:
    rng = random.Random(0)  # 'the name is Thomas repository'
    persona = Persona(id="", text="", role="open-source maintainer")
    said = [values.gold_value("name", {"type": "string", "description": "Repository name"}, persona, rng) for _ in range(8)]
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", v) for v in said), said


def test_a_point_s_coordinates_are_small() -> None:
    rng = random.Random(0)  # 'the first point is 4641.02 and 4507.41'
    said = values.gold_value("point1", {"type": "array", "items": {"type": "number"}}, {}, rng)
    assert said and all(-20 <= v <= 20 for v in said), said


def test_a_from_date_is_never_after_its_to_date() -> None:
    """'the expected from is 2027-01-21 and the expected to is 2026-12-21' is no window anyone asks for."""
    rng = random.Random(0)
    args = values.consistent({"expected_from": "2027-01-21", "expected_to": "2026-12-21", "count": 3}, rng)
    assert args == {"expected_from": "2026-12-21", "expected_to": "2027-01-21", "count": 3}
    args = values.consistent({"created_after": "2026-05-02", "created_before": "2026-03-01"}, rng)
    assert args["created_after"] < args["created_before"]


def test_a_count_of_successes_is_no_more_than_its_trials() -> None:
    rng = random.Random(0)
    for trials in (1, 5, 40):
        args = values.consistent({"number_of_trials": trials, "number_of_successes": 50}, rng)
        assert 1 <= args["number_of_successes"] <= trials, args


def test_a_time_in_milliseconds_is_whole_seconds_a_person_would_pick() -> None:
    rng = random.Random(0)
    said = [values.gold_value("position_ms", {"type": "integer"}, {}, rng) for _ in range(30)]
    assert all(v % 1000 == 0 and 1000 <= v <= 600000 for v in said) and len(set(said)) > 10, said


@pytest.mark.parametrize("key,schema,person", [
    ("era_name", {"description": "Name of the historical era"}, False), ("file_name", {}, False),
    ("repo_name", {}, False), ("branch_name", {}, False), ("display_name", {}, False),
    ("name", {"description": "Name of the repository"}, False), ("name", {"description": "The name for the new playlist"}, False),
    ("first_name", {}, True), ("customer_name", {}, True), ("reviewer", {"description": "Person reviewing"}, True),
    ("name", {"description": "Full name of the employee"}, True),
])
def test_person_names_only_for_people(key: str, schema: dict, person: bool) -> None:
    assert person_names.means_person(key, schema.get("description", "")) == person
    rng = random.Random(4)
    got = [values.gold_value(key, {"type": "string", **schema}, PERSONAS[0], rng, GITHUB) for _ in range(20)]
    looks = [person_names.looks_like_person_name(v) or v in person_names.NAMES["de"][0] for v in got]
    assert all(looks) if person else not any(looks), got


def test_values_have_the_shape_their_key_means() -> None:
    rng = random.Random(2)
    persona = PERSONAS[0]
    for _ in range(20):
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", values.gold_value("owner", SCHEMAS["owner"], persona, rng, GITHUB))
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", values.gold_value("repo", SCHEMAS["repo"], persona, rng, GITHUB))
        assert re.fullmatch(r"[\w./-]+\.\w+", values.gold_value("path", SCHEMAS["path"], persona, rng, GITHUB))
        assert re.fullmatch(r"[0-9A-Za-z]{22}", values.gold_value("id", SCHEMAS["id"], persona, rng, SPOTIFY))
        assert re.fullmatch(r"spotify:track:[0-9A-Za-z]{22}", values.gold_value("uri", SCHEMAS["uri"], persona, rng, SPOTIFY))
        assert re.fullmatch(r"#[0-9a-f]{6}", values.gold_value("color", {"type": "string", "description": "Hex colour"}, persona, rng))
        assert re.fullmatch(r"[0-9a-f]{6}", values.gold_value(
            "color", {"type": "string", "description": "Label color as hex code without '#' prefix"}, persona, rng))
        assert values.gold_value("dominant_color", {"type": "string", "description": "The dominant color of the painting."},
                                 persona, rng) in LEXICON["color"]
        assert values.gold_value("size", {"type": "string", "description": "The size of the painting in inches, width by height."},
                                 persona, rng) in ("12x16", "16x20", "18x24", "24x36", "30x40", "11x14", "20x30")
        assert values.gold_value("base", SCHEMAS["base"], persona, rng, GITHUB) in ("main", "develop", "release/2.4")
        assert "/" in values.gold_value("head", SCHEMAS["head"], persona, rng, GITHUB)
        assert re.fullmatch(r"[0-9a-f]{7}|[0-9a-f]{40}", values.gold_value("sha", SCHEMAS["sha"], persona, rng, GITHUB))
    assert values.gold_value("timezone", S, persona, rng) == "Europe/Berlin"
    assert values.gold_value("loc", {"type": "string", "description": "Location of the nearest Walmart."}, persona, rng,
                             Tool(name="walmart.purchase", description="Buy groceries at Walmart.", parameters={})) \
        not in LEXICON["grocery"]
    assert values.gold_value("language", S, persona, rng) == "de"
    # free text never carries a word of the tool's own name (it would give the tool away)
    for _ in range(20):
        for key in ("title", "body", "q"):
            v = values.gold_value(key, SCHEMAS[key], persona, rng, GITHUB)
            assert "issue" not in v.lower().split() and "create" not in v.lower().split(), v


def test_a_renamed_key_holds_what_its_original_name_means() -> None:
    """The OpenAPI importer renames a query parameter and a body field that share a name
    (`query_ids`, titled by the original name): its values are ids, not search phrases."""
    schema = {"title": "Spotify Track IDs", "type": "string",
              "description": "A comma-separated list of the Spotify IDs. Maximum: 50 IDs."}
    rng = random.Random(4)
    for _ in range(10):
        value = values.gold_value("query_ids", schema, PERSONAS[0], rng, SPOTIFY)
        assert re.fullmatch(r"[0-9A-Za-z]{22}(,[0-9A-Za-z]{22})*", value), value
    body = {"title": "IDs", "type": "array", "items": {"type": "string"},
            "description": "A JSON array of the Spotify IDs. A maximum of 50 items can be specified in one request."}
    for _ in range(5):
        items = values.gold_value("body_ids", body, PERSONAS[0], rng, SPOTIFY)
        assert items and all(re.fullmatch(r"[0-9A-Za-z]{22}", v) for v in items), items
    assert values.gold_value("query", {"type": "string", "title": "Query"}, PERSONAS[0], rng, SPOTIFY).count(" ") >= 1


def test_a_thing_without_a_shape_takes_an_example_its_description_gives() -> None:
    """BFCL-style parameters name their examples in prose: a value is one of them, not a made-up
    'spring specialization'; a place described as a city is a city."""
    rng = random.Random(6)
    cases = {"specialization": ("Medical specialization. For example, 'Cardiology', 'Orthopedics'.", {"Cardiology", "Orthopedics"}),
             "platform": ("The gaming platform e.g. Xbox, Playstation, PC", {"Xbox", "Playstation", "PC"}),
             "location": ("The city and state, e.g. Chicago, IL.", {"Chicago, IL"}),
             "competition": ("The name of the competition (for example, 'UEFA Champions League').", {"UEFA Champions League"})}
    for key, (description, allowed) in cases.items():
        assert values.gold_value(key, {"type": "string", "description": description}, PERSONAS[0], rng) in allowed, key
    city = values.gold_value("location", {"type": "string", "description": "The city that you want the forecast for."},
                           PERSONAS[0], rng)
    assert not any(ch.isdigit() for ch in city), city  # a city, not a street address


@pytest.mark.parametrize("example", ["PRRT_kwDOxxx", "abc...", "<thread-id>", "YOUR_THREAD_ID", "foo"])
def test_an_example_that_only_shows_a_shape_is_never_the_value(example: str) -> None:
    schema = {"type": "string", "description": f"The node ID of the review thread to resolve (e.g., {example})"}
    drawn = {values.gold_value("threadID", schema, PERSONAS[0], random.Random(seed)) for seed in range(5)}
    assert not any(example.strip("<>.").lower() in v.lower() for v in drawn), drawn


def test_a_date_of_birth_is_in_the_past() -> None:
    rng = random.Random(5)
    for key in ("date_of_birth", "dob", "birthday", "birth_date"):
        born = values.gold_value(key, {"type": "string", "format": "date"}, PERSONAS[0], rng)
        assert "1955" <= born[:4] <= "2004", (key, born)


def test_no_phrase_is_shared_by_unrelated_parameters() -> None:
    """The old generator gave ~78% of string values to 3+ unrelated parameters (stock phrases)."""
    keys: dict[str, set[str]] = defaultdict(set)
    total = 0
    for seed in range(30):
        for key, _, value in _all(seed, GITHUB if seed % 2 else SPOTIFY):
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str) and key not in ("state", "currency", "timezone", "language", "locale", "market"):
                    keys[v].add(key)
                    total += 1
    shared = sum(len(ks) for ks in keys.values() if len(ks) >= 3)
    assert shared / total <= 0.02, {v: ks for v, ks in keys.items() if len(ks) >= 3}


@pytest.mark.parametrize("key,schema,expected", [
    ("query_ids", {"title": "IDs"}, "IDs"), ("ids", {"title": "Ids"}, "IDs"),
    ("id", {"title": "Get an Episode", "description": "The Spotify ID for the episode."}, "ID"), ("q", {"description": "Search query using code search syntax"}, "search query"),
    ("base", {"description": "The name of the branch you want the changes pulled into"}, "base branch"),
    ("closes", {"description": "Issue number this pull request closes"}, "issue number"),
    ("since", {}, "start time"), ("cost_center_code", None, "code for the cost center"), ("po_number", None, "purchase order number"),
    ("closes", None, "closes"), ("position_ms", {"type": "integer"}, "position in milliseconds"),
    ("base", {"description": "The base of the triangle."}, "base of the triangle"), ("func", None, "function"),
    ("content", {"description": "The emoji reaction type", "enum": ["+1", "laugh"]}, "emoji reaction type"),
    ("new_base_salary", None, "new base salary"), ("previous_end_date", None, "previous end date"),
    ("head", {"description": "Filter by head user/org and branch"}, "head user or org"),
    ("expected_annual_return", None, "expected annual return"), ("weight_earth_kg", None, "weight earth in kilograms"),
])
def test_labels_are_spoken_noun_phrases(key: str, schema: dict | None, expected: str) -> None:
    assert parameter_labels.label(key, schema) == expected
    assert parameter_labels.label(key) == parameter_labels.label(key, None)  # callers without a schema keep working


def test_copula_agrees_with_the_label() -> None:
    assert [parameter_labels.copula(x) for x in ("IDs", "tags", "status", "address", "code for the cost centers", "track IDs",
                                       "ids", "KPIs", "VAT", "analytics")] == \
        ["are", "are", "is", "is", "is", "are", "are", "are", "is", "is"]
    for key, schema in SCHEMAS.items():
        assert "_" not in parameter_labels.label(key, schema) and not re.search(r"[a-z][A-Z]", parameter_labels.label(key, schema)), key


# ---- plausibility: one test per fault ----------------------------------------------------------------

def test_non_whole_value_for_a_count_number_or_id_is_caught() -> None:
    assert "whole" in (implausible("issue_number", 1030.07, {"type": "number"}) or "")
    assert implausible("per_page", 12.5, {"type": "number"}) is not None
    assert implausible("issue_number", 1030, {"type": "number"}) is None
    assert implausible("amount", 1030.07, {"type": "number"}) is None


def test_a_person_name_for_a_thing_is_caught() -> None:
    why = implausible("era_name", "Kaito Kobayashi", {"type": "string"})
    assert why and "person" in why and "era_name" in why
    assert implausible("customer_name", "Kaito Kobayashi", {"type": "string"}) is None
    assert implausible("era_name", "late Heian era", {"type": "string"}) is None


def test_a_phrase_unrelated_to_an_identifier_or_search_is_caught() -> None:
    assert "not an owner" in (implausible("owner", "regional sales kickoff", S) or "")
    assert implausible("repo", "contract renewal cycle", S) is not None
    assert implausible("repo", "billing-service", S) is None
    q = {**S, "description": "Search query using GitHub code search syntax"}
    context = "search_code Fast and precise code search across all GitHub repositories"
    assert "shares no word" in (implausible("q", "budget reforecast", q, context) or "")
    assert implausible("q", "retry timeout repositories", q, context) is None


@pytest.mark.parametrize("value,schema", [
    ("pending", {**S, "enum": ["open", "closed"]}), (0, {"type": "integer", "minimum": 1}),
    (250, {"type": "integer", "maximum": 100}), ("INV-12", {**S, "pattern": "^INV-[0-9]{6}$"}),
    ("2026-13-40", {**S, "format": "date"}), ("not an address", {**S, "format": "email"}),
    ("www.example", {**S, "format": "uri"}), ("x" * 30, {**S, "maxLength": 10}),
])
def test_a_value_breaking_its_schema_is_caught(value: Any, schema: dict) -> None:
    assert implausible("field", value, schema) is not None


def test_one_value_for_two_required_parameters_is_caught() -> None:
    tool = Tool(name="create_pull_request", description="Open a pull request between two branches.",
                parameters={"type": "object", "required": ["owner", "repo", "head", "base"],
                            "properties": {k: dict(S) for k in ("owner", "repo", "head", "base")}})
    good = {"owner": "acme-data", "repo": "billing-service", "head": "feature/retry", "base": "main"}
    assert plausibility.check_plausibility(make_dialogue(seed_tool=tool, gold_arguments=good)).passed
    bad = {**good, "base": "feature/retry"}
    v = plausibility.check_plausibility(make_dialogue(seed_tool=tool, gold_arguments=bad))
    assert not v.passed and v.details["rule"] == "shared_value" and "'head'" in v.reason and "'base'" in v.reason


def test_two_parameters_of_one_call_never_share_a_value() -> None:
    """An origin and a destination both drawn as the persona's own city made a trip to nowhere
    (plausibility rejected them); each parameter gets a value of its own."""
    city = {"type": "string", "description": "The city name."}
    tool = Tool(name="flight.book", description="Book a direct flight between two cities.",
                parameters={"type": "object", "required": ["origin", "destination"],
                            "properties": {"origin": {**city, "description": "City of departure."},
                                           "destination": {**city, "description": "City of arrival."}}})
    persona = Persona(id="", text="", role="traveller", attributes={"city": "Braga", "country": "PT"})
    for attempt in range(20):
        request = SlotsRequest(tool=tool, persona=persona, required=["origin", "destination"], attempt=attempt,
                               seed=attempt)
        args = json.loads(writers.slots(request, []))["arguments"]
        assert args["origin"].lower() != args["destination"].lower(), args


SEARCH_SPOTIFY = Tool(name="search", description="Search for Item. Get Spotify catalog information about albums, "
                      "artists, playlists, tracks, shows, episodes or audiobooks that match a keyword string.",
                      parameters={"type": "object", "required": ["q"], "properties": {"q": {
                          "type": "string", "description": "Your search query. You can narrow down your search "
                          "using field filters: album, artist, track, year and genre."}}})
SEARCH_ISSUES = Tool(name="search_issues", description="Search for issues in GitHub repositories using issues "
                     "search syntax already scoped to is:issue.",
                     parameters={"type": "object", "required": ["query"], "properties": {"query": {
                         "type": "string", "description": "Search query using GitHub issues search syntax"}}})
REPEAT = Tool(name="set-repeat-mode", description="Set the repeat mode for the user's playback.",
              parameters={"type": "object", "required": ["state"], "properties": {"state": {
                  "type": "string", "description": "**track**, **context** or **off**.<br/>\n**track** will repeat"}}})
SPORTS = Tool(name="sports.match_results", description="Returns the results of a given match between two teams.",
              parameters={"type": "object", "required": ["team1", "team2", "season"], "properties": {
                  "team1": {"type": "string", "description": "The name of the first team."},
                  "team2": {"type": "string", "description": "The name of the second team."},
                  "season": {"type": "string", "description": "The season when the match happened."}}})


def _slot_values(tool: Tool, seeds: range) -> list[dict[str, Any]]:
    return [json.loads(writers.slots(SlotsRequest(tool=tool, persona=PERSONAS[s % 2], required=tool.required, seed=s),
                                     []))["arguments"] for s in seeds]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def test_a_music_search_is_what_people_type_not_the_descriptions_words() -> None:
    said = [args["q"] for args in _slot_values(SEARCH_SPOTIFY, range(40))]
    described = _words(SEARCH_SPOTIFY.description + " " + SEARCH_SPOTIFY.properties["q"]["description"])
    for q in said:
        assert _words(q) - described, q  # a name, a genre, a mood: not keyword soup of the description
        assert implausible("q", q, SEARCH_SPOTIFY.properties["q"], SEARCH_SPOTIFY.description) is None, q
    assert len(set(said)) >= 30


def test_an_issue_search_uses_the_search_syntax_and_a_real_problem() -> None:
    for args in _slot_values(SEARCH_ISSUES, range(20)):
        q = args["query"]
        assert re.search(r"\b(?:is|label):[\w-]+", q), q
        assert len(q.split()) >= 3 and values.read(values.say_value(q), {"type": "string"}) == q


def test_a_state_the_description_lists_takes_one_of_its_options() -> None:
    assert {args["state"] for args in _slot_values(REPEAT, range(30))} <= {"track", "context", "off"}


SUB_ISSUE = Tool(name="sub_issue_write", description="Add a sub-issue to a parent issue in a GitHub repository.",
                 parameters={"type": "object", "required": ["method"], "properties": {"method": {
                     "type": "string", "description": "The action to perform on a single sub-issue\nOptions are:\n"
                     "- 'add' - add a sub-issue to a parent issue.\n- 'remove' - remove a sub-issue from a parent issue.\n"
                     "- 'reprioritize' - change the order of sub-issues within a parent issue.\nWrites issue hierarchy."}}})


def test_an_action_the_description_lists_one_per_line_takes_one_of_them() -> None:
    assert {args["method"] for args in _slot_values(SUB_ISSUE, range(20))} <= {"add", "remove", "reprioritize"}


def test_a_team_is_a_real_team_and_two_teams_differ() -> None:
    for args in _slot_values(SPORTS, range(20)):
        assert args["team1"] in LEXICON["team"] and args["team2"] in LEXICON["team"], args
        assert args["team1"] != args["team2"]
        assert values.read(values.say_value(args["season"]), {"type": "string"}) == args["season"]


def test_slot_values_are_the_same_for_the_same_seed() -> None:
    for tool in (SEARCH_SPOTIFY, SEARCH_ISSUES, SPORTS):
        assert _slot_values(tool, range(5)) == _slot_values(tool, range(5))
        assert len({json.dumps(a) for a in _slot_values(tool, range(10))}) >= 8


GAME = Tool(name="game_result.get_winner", description="Get the winner of a specific basketball game.",
            parameters={"type": "object", "required": ["teams"], "properties": {
                "teams": {"type": "array", "items": {"type": "string"},
                          "description": "List of two teams who played the game."}}})


def test_a_game_s_teams_play_its_sport_and_a_list_holds_the_count_it_says() -> None:
    basketball = {"Milwaukee Bucks", "Denver Nuggets", "Miami Heat", "Phoenix Suns", "Sacramento Kings",
                  "Los Angeles Lakers", "Golden State Warriors", "Boston Celtics", "Chicago Bulls", "Toronto Raptors"}
    for args in _slot_values(GAME, range(12)):
        assert len(args["teams"]) == 2 and set(args["teams"]) <= basketball, args


CARDS = Tool(name="card_game_probability.calculate", description="Calculate the probability of drawing a card.",
             parameters={"type": "object", "required": ["total_cards", "desired_cards", "min_bet", "max_bet"],
                         "properties": {"total_cards": {"type": "integer", "description": "Total number of cards."},
                                        "desired_cards": {"type": "integer", "description": "Cards you want."},
                                        "min_bet": {"type": "integer"}, "max_bet": {"type": "integer"}}})


def test_numbers_keep_the_order_their_keys_state() -> None:
    for args in _slot_values(CARDS, range(30)):
        assert 1 <= args["desired_cards"] <= args["total_cards"], args
        assert args["min_bet"] <= args["max_bet"], args
