"""Offline goals: a person's first-person sentence with a reason from their world, never the
description pasted after 'As <role>, I need to'; varied; the same for the same seed."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.dialogue.shortcuts import recited
from utcgen.pipeline.llm.requests import GoalRequest
from utcgen.pipeline.simulator import writers
from utcgen.pipeline.simulator.goal_text import act, intro

TOOLS = [
    Tool(name="get-several-audio-features", description="Get several tracks' audio features. Get audio features for "
         "multiple tracks based on their Spotify IDs."),
    Tool(name="search_code", description="Fast and precise code search across ALL GitHub repositories using GitHub's "
         "native search engine. Best for finding exact symbols, functions, classes, or specific code patterns."),
    Tool(name="calculate_return_on_investment", description="Calculate the return on investment for a given stock "
         "based on its purchase price, sale price, and any dividends received."),
    Tool(name="create_issue", description="Create a new issue in a GitHub repository with a title and optional body."),
    Tool(name="get-a-show", description="Get Show. Get Spotify catalog information for a single show identified by its "
         "unique Spotify ID."),
]
PERSONAS = [
    Persona(id="", text="A collector of old records.", role="Vinyl hobbyist",
            attributes={"city": "Leeds", "country": "GB"}),
    Persona(id="", text="Keeps new-hire checklists moving.", role="HR Coordinator",
            attributes={"city": "Gurugram", "company": "Obelan Machine Works", "department": "Human Resources"}),
    Persona(id="", text="Runs the deploy pipeline.", role="Site reliability engineer", attributes={"city": "Oslo"}),
]


def _goal(tool: Tool, persona: Persona, seed: int) -> str:
    return json.loads(writers.goal(GoalRequest(tool=tool, persona=persona, seed=seed), []))["goal"]


def _all_goals(seeds: range = range(20)) -> list[tuple[Tool, str]]:
    return [(t, _goal(t, p, s)) for t in TOOLS for p in PERSONAS for s in seeds]


def test_a_goal_is_a_first_person_sentence_not_a_pasted_description() -> None:
    for tool, goal in _all_goals():
        assert re.search(r"\b(?:I|I'm|I'd|my|me)\b", goal, re.IGNORECASE), goal
        assert goal[:1].isupper() and goal.endswith((".", "?")), goal
        assert not re.match(r"As [A-Z]", goal), goal  # the old frame: "As Vinyl hobbyist, I need to ..."
        assert not recited(goal, tool.description, n=6, content=0), (goal, recited(goal, tool.description, n=6, content=0))
        assert "  " not in goal and " ," not in goal and " ." not in goal, goal


def test_the_act_is_the_description_verb_made_plain_and_cut_to_its_object() -> None:
    said, reads = act(TOOLS[2])
    assert said.startswith("work out the return on investment") and reads
    assert "given" not in said and "dividends" not in said
    assert act(TOOLS[4])[0] == "look up the show"  # a title-case summary: the article put back
    assert not act(TOOLS[3])[1]  # creating is not reading


def test_a_role_takes_its_article_and_prose_case() -> None:
    said = {intro(p, random.Random(i)) for p in PERSONAS[:2] for i in range(10)}
    assert any(s.endswith(("a vinyl hobbyist in Leeds",)) for s in said), said
    assert any("an HR coordinator" in s for s in said), said
    assert not any("a HR" in s or "Vinyl" in s for s in said), said


def test_goals_vary_in_frame_and_reason() -> None:
    goals = [g for _, g in _all_goals(range(40))]
    openings = Counter(" ".join(g.split()[:3]) for g in goals)
    assert openings.most_common(1)[0][1] / len(goals) <= 0.12, openings.most_common(3)
    assert len(set(goals)) >= 0.85 * len(goals)


def test_the_same_seed_gives_the_same_goal_and_another_seed_another() -> None:
    tool, persona = TOOLS[0], PERSONAS[0]
    assert _goal(tool, persona, 7) == _goal(tool, persona, 7)
    assert len({_goal(tool, persona, s) for s in range(10)}) >= 8
