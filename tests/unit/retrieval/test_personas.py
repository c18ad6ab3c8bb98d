"""The shipped persona pool covers consumers and developers as well as employees, and the sampler
gives every seed tool a persona the persona-fit validator accepts (or composes one for it)."""

from __future__ import annotations

import json
import re
from collections import Counter
from zoneinfo import ZoneInfo

import pytest

from tests.support.paths import REPO
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue import shortcuts
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.personas import COMPOSED, LINE_BONUS, MIN_FIT, PersonaSampler, compose, load_personas
from utcgen.pipeline.retrieval.rolefit import agrees
from utcgen.validators import personafit

POOL = REPO / "catalog" / "personas.jsonl"
MUSIC = REPO / "tests" / "fixtures" / "catalogs" / "music_app_tools.json"
CONSUMER, DEVELOPER = "consumer", "software_development"
EMPLOYEE_ONLY = ("company", "cost_center", "employee_id", "department")


@pytest.fixture(scope="module")
def pool():
    return load_personas(POOL)


@pytest.fixture(scope="module")
def sampler(pool, embedder):
    return PersonaSampler(pool, embedder)


def test_pool_loads_with_unique_sorted_ids_and_texts(pool):
    assert len(pool) >= 500
    ids = [p.id for p in pool]
    assert ids == [f"p{i:04d}" for i in range(1, len(pool) + 1)]  # sorted, continuous, no gaps
    texts = [" ".join(p.text.lower().split()) for p in pool]
    assert len(set(texts)) == len(texts)
    raw = [json.loads(line) for line in POOL.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(raw) == len(pool)


def test_consumers_and_developers_are_present_worldwide(pool):
    lines = Counter(p.line_of_business for p in pool)
    assert lines[CONSUMER] >= 100 and lines[DEVELOPER] >= 80
    assert lines[CONSUMER] + lines[DEVELOPER] >= 200
    for line in (CONSUMER, DEVELOPER):
        group = [p for p in pool if p.line_of_business == line]
        assert len({p.attributes["country"] for p in group}) >= 25, f"{line}: too few countries"
        assert len({p.style for p in group}) >= 25, f"{line}: too few ways of talking"
        assert len({p.seniority for p in group}) >= 4, f"{line}: too few levels"
    styles = " ".join(p.style or "" for p in pool if p.line_of_business in (CONSUMER, DEVELOPER))
    for wanted in ("terse", "emoji", "formal", "chatty", "learning English", "code-switches"):
        assert wanted in styles, f"no consumer or developer persona is {wanted}"


def test_new_personas_have_a_consumers_facts_not_an_employees(pool):
    for p in pool:
        if p.line_of_business not in (CONSUMER, DEVELOPER):
            continue
        where = f"{POOL}: {p.id}"
        for key in ("country", "city", "currency", "timezone", "handle"):
            assert p.attributes.get(key), f"{where}: attribute {key!r} missing"
        ZoneInfo(p.attributes["timezone"])  # a real IANA zone, or this raises
        assert re.fullmatch(r"[A-Z]{2}", p.attributes["country"]), where
        assert re.fullmatch(r"[A-Z]{3}", p.attributes["currency"]), where
        assert p.attributes["handle"].startswith("@"), where
        if p.line_of_business == CONSUMER:
            assert not set(EMPLOYEE_ONLY) & set(p.attributes), f"{where}: a consumer has no employer's facts"
        sentences = len(re.findall(r"[.!?](?:\s|$)", p.text.strip()))
        assert 2 <= sentences <= 4, f"{where}: {sentences} sentences"
        assert p.role and p.style and p.seniority, where


def test_music_app_catalog_gets_consumer_personas_that_fit(sampler):
    tools = load_catalog(str(MUSIC))
    drawn = []
    for tool in tools:
        for attempt in range(6):
            persona = sampler.sample(tool, attempt=attempt)
            fit = sampler.fit(persona, tool)
            assert fit >= MIN_FIT, f"{tool.name}: {persona.id} fits {fit:.3f}"
            assert not persona.id.startswith(COMPOSED), f"{tool.name}: the pool should have a fitting persona"
            drawn.append(persona.line_of_business)
    lines = Counter(drawn)
    assert lines[CONSUMER] > len(drawn) / 2, lines
    assert lines[CONSUMER] + lines[DEVELOPER] >= 0.9 * len(drawn), lines


def test_sampler_never_draws_a_persona_below_the_threshold_when_one_reaches_it(pool, sampler, embedder):
    tool = Tool(name="create_playlist", description="Create a new playlist of songs in the listener's music library.")
    ranked = sampler.ranked(tool)
    fitting = {p.id for p, fit in ranked if fit >= MIN_FIT}
    assert fitting
    assert {sampler.sample(tool, attempt=a).id for a in range(40)} <= fitting
    # with the threshold raised above all but the best, only the best is ever drawn
    strict = PersonaSampler(pool, embedder, k=8, min_fit=(ranked[0][1] + ranked[1][1]) / 2)
    assert {strict.sample(tool, attempt=a).id for a in range(20)} == {ranked[0][0].id}


def test_a_tool_no_pooled_persona_fits_gets_a_composed_persona(pool, embedder):
    tool = Tool(name="algebra.quadratic_roots", description="Find the roots of a quadratic equation ax^2 + bx + c = 0.",
                parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})
    hr_only = [p for p in pool if p.line_of_business == "human_resources"]
    sampler = PersonaSampler(hr_only, embedder)
    best = sampler.ranked(tool)[0][1]
    assert best < MIN_FIT  # the precondition: nobody in HR needs this
    persona = sampler.sample(tool, attempt=0)
    assert persona.id.startswith(COMPOSED)
    fit = sampler.fit(persona, tool)
    assert fit >= MIN_FIT and fit > best
    assert shortcuts.recited(persona.text, tool.description) is None
    assert "quadratic_roots" not in persona.text and "algebra.quadratic" not in persona.text  # words, not the identifier
    assert sampler.sample(tool, attempt=0) == persona  # deterministic
    off = PersonaSampler(hr_only, embedder, compose_missing=False)
    assert off.sample(tool, attempt=0) in hr_only


def test_a_composed_persona_has_the_role_that_agrees_best_when_one_does(embedder):
    """A role that would use the tool, whose pooled texts say nothing of it: the composed persona keeps
    the role (judged like any other) and says what the tool is about."""
    tool = Tool(name="algebra.quadratic_roots", description="Find the roots of a quadratic equation ax^2 + bx + c = 0.",
                parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})
    pool = [Persona(id=f"s{i}", text=text, role="Private maths tutor", line_of_business="consumer")
            for i, text in enumerate(["Walks the dog at dawn and reads crime novels.", "Bakes bread for the neighbours."])]
    sampler = PersonaSampler(pool, embedder)
    pooled = sampler.role_fit(pool[0], tool)
    assert pooled is not None and agrees(pooled) and sampler.ranked(tool)[0][1] < MIN_FIT
    persona = sampler.sample(tool, attempt=0)
    assert persona.id.startswith(COMPOSED) and persona.role == "Private maths tutor" and persona.line_of_business == "consumer"
    assert persona.text.startswith("A Private maths tutor who") and "quadratic" in persona.text
    composed = sampler.role_fit(persona, tool)
    assert composed is not None and agrees(composed) and sampler.fit(persona, tool) >= MIN_FIT


def test_composed_personas_name_the_tools_domain_in_a_few_words():
    import random

    tool = Tool(name="book_table", description="Reserve a restaurant table for a party at a given time.",
                line_of_business="hospitality")
    a, b = compose(tool, random.Random(1)), compose(tool, random.Random(1))
    assert a == b and a.text.startswith("Someone working in hospitality")
    assert "restaurant" in a.text and a.line_of_business == "hospitality"
    assert "reserve" not in a.text and "given" not in a.text  # what the tool is about, not what it does
    colours = compose(Tool(name="mix_colors", description="Mix two colors by color proportions."), random.Random(0))
    assert colours.text.count("color") == 1  # one word per stem
    assert compose(Tool(name="x_y", description=""), random.Random(0)).text  # no description: still a persona
    planets = compose(Tool(name="weight.in_space", description="Calculate the weight of an object on different planets."), random.Random(0))
    assert "different" not in planets.text and "weight" in planets.text  # topics are things, not adjectives


def test_validator_rejects_below_the_samplers_threshold(sampler):
    from tests.support.factories import make_dialogue

    tool = load_catalog(str(MUSIC))[0]
    persona = sampler.sample(tool)
    for fit, passed in ((MIN_FIT - 0.001, False), (MIN_FIT, True), (sampler.fit(persona, tool), True)):
        d = make_dialogue().model_copy(update={"user_persona": persona.model_copy(update={"attributes": {"tool_fit": f"{fit:.4f}"}})})
        assert personafit.check_persona_fit(d).passed is passed, fit


def test_personas_of_the_tools_line_rank_higher_but_keep_their_plain_fit(sampler):
    tools = load_catalog(str(REPO / "catalog" / "tools"))[::10]
    with_line = without = 0
    for tool in tools:
        ranked = sampler.ranked(tool)
        plain = sampler.ranked(tool.model_copy(update={"line_of_business": None}))
        with_line += sum(p.line_of_business == tool.line_of_business for p, _ in ranked)
        without += sum(p.line_of_business == tool.line_of_business for p, _ in plain)
        for persona, fit in ranked:
            assert fit == pytest.approx(sampler.fit(persona, tool), abs=1e-5)  # the recorded fit is the cosine
        assert ranked[0][1] >= plain[-1][1] - LINE_BONUS  # a bonus reorders only close calls
    assert with_line > without
