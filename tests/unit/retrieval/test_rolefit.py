"""Role fit is judged on the persona's role, not its text: an Employment Counsel does not file facilities
work orders whatever the text says, a Facilities Coordinator does; the sampler never draws a role that
disagrees when one agrees, and the audit counts the dialogues whose role disagrees."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.factories import make_dialogue, make_persona
from tests.support.paths import REPO
from utcgen.pipeline.core.records import ROLE_FIT_ATTRIBUTE, Persona, Tool
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.index import ToolIndex
from utcgen.pipeline.retrieval.personas import COMPOSED, PersonaSampler, load_personas
from utcgen.pipeline.retrieval.rolefit import (
    MAX_SCORE,
    RoleJudge,
    agrees,
    neighbourhood,
    reference_roles,
    role_mismatch,
)
from utcgen.validators import personafit

POOL = REPO / "catalog" / "personas.jsonl"
MUSIC = REPO / "tests" / "fixtures" / "catalogs" / "music_app_tools.json"


def _props(*names: str) -> dict:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": []}


# GitHub's MCP server's tools, as its catalog gives them (name, description, parameter names)
PULL_REQUEST = Tool(name="create_pull_request", description="Create a new pull request in a GitHub repository.",
                    parameters=_props("base", "body", "draft", "head", "maintainer_can_modify", "owner", "repo",
                                      "reviewers", "title"))
PROJECTS = Tool(name="projects_list", description=(
    "Tools for listing GitHub Projects resources.\nUse this tool to list projects for a user or organization, or "
    "list project fields, items, views, and status updates for a specific project.\n"),
    parameters=_props("after", "before", "field_names", "fields", "method", "owner", "owner_type", "per_page",
                      "project_number", "query"))


# a repository host's tools, in short: the catalog a complaints handler's "issues" are not about
REPO_TOOLS = [Tool(name=n, description=d, parameters=_props(*p)) for n, d, p in [
    ("list_issues", "List the issues of a GitHub repository, newest first.", ("owner", "repo", "state", "labels")),
    ("create_issue", "Open a new issue in a GitHub repository with a title and an optional body.",
     ("owner", "repo", "title", "body")),
    ("add_issue_comment", "Comment on an issue or a pull request of a GitHub repository.",
     ("owner", "repo", "issue_number", "body")),
    ("update_issue_state", "Close or reopen an issue, giving the reason.",
     ("owner", "repo", "issue_number", "state", "state_reason")),
    ("search_issues", "Search the issues of GitHub repositories by what they are about.", ("query", "owner", "repo")),
    ("list_pull_requests", "List the pull requests of a GitHub repository.", ("owner", "repo", "state", "base")),
    ("merge_pull_request", "Merge a pull request of a GitHub repository.", ("owner", "repo", "pullNumber")),
    ("create_branch", "Create a branch in a GitHub repository from another branch.", ("owner", "repo", "branch")),
    ("list_commits", "List the commits of a branch of a GitHub repository.", ("owner", "repo", "sha", "author")),
    ("get_file_contents", "Read a file or a directory of a GitHub repository.", ("owner", "repo", "path", "ref")),
]]


@pytest.fixture(scope="module")
def judge(embedder):
    return RoleJudge(embedder.encode)


@pytest.fixture(scope="module")
def shipped_tools():
    return {t.name: t for t in load_catalog(str(REPO / "catalog" / "tools"))}


@pytest.fixture(scope="module")
def music():
    return {t.name: t for t in load_catalog(str(MUSIC))}


def test_the_reference_is_the_shipped_pools_roles_each_once():
    roles = reference_roles()
    assert len(roles) == len(set(roles)) >= 500
    assert ("Employment Counsel", "legal_compliance") in roles and ("Backend developer", "software_development") in roles


def test_a_role_agrees_with_the_tools_of_its_work_and_not_with_others(judge, shipped_tools, music):
    work_order = shipped_tools["create_maintenance_work_order"]
    cases = [  # (role, line of business, tool, agrees)
        ("Employment Counsel", "legal_compliance", work_order, False),
        ("Facilities Coordinator", "facilities", work_order, True),
        ("Backend developer", "software_development", PULL_REQUEST, True),
        ("Sustainability Coordinator", "facilities", PROJECTS, False),
        ("Vinyl hobbyist", "consumer", music["save_album"], True),
        ("Music listener", "consumer", music["create_playlist"], True),
        ("Employment Counsel", "legal_compliance", music["create_playlist"], False),
    ]
    for role, line, tool, expected in cases:
        score = judge.score(role, line, tool)
        assert agrees(score) is expected, (role, tool.name, score)


def test_the_judgement_reads_the_role_not_the_text(embedder, shipped_tools):
    """Two personas of one role get one score, whatever their texts mention."""
    tool = shipped_tools["create_maintenance_work_order"]
    counsel = [Persona(id=f"x{i}", text=text, role="Employment Counsel", line_of_business="legal_compliance")
               for i, text in enumerate(["Handles dismissals and works from the third floor of the building.",
                                         "Reports broken lights and leaking taps in the office every week."])]
    sampler = PersonaSampler(counsel, embedder, k=2, compose_missing=False)
    scores = {sampler.role_fit(p, tool) for p in counsel}
    assert len(scores) == 1 and not agrees(scores.pop() or 0.0)


def _read_in_catalogs(embedder, *catalogs: list[Tool]) -> list[tuple[Tool, np.ndarray | None]]:
    """Each tool of each catalog with its distractors' vectors, as a run reads it."""
    read: list[tuple[Tool, np.ndarray | None]] = []
    for tools in catalogs:
        index = ToolIndex(tools, embedder)
        read += [(t, np.stack([index.vector(n.tool) for n in index.distractors(t)])) for t in tools]
    return read


def test_sampler_never_draws_a_disagreeing_role_when_one_agrees(embedder, shipped_tools, music):
    pool = load_personas(POOL)
    sampler = PersonaSampler(pool, embedder)
    read = _read_in_catalogs(embedder, list(shipped_tools.values()), list(music.values()))
    for tool, neighbours in [*read[::15], *read[len(shipped_tools):], (PULL_REQUEST, None), (PROJECTS, None)]:
        scores = sampler.role_scores(tool, neighbours=neighbours)
        assert (scores <= MAX_SCORE).any(), tool.name  # every tool has roles of the pool that would use it
        for attempt in range(6):
            persona = sampler.sample(tool, attempt=attempt, neighbours=neighbours)
            if persona.id.startswith(COMPOSED):
                continue  # made for the tool: no pooled persona's text fitted it
            assert agrees(sampler.role_fit(persona, tool, neighbours=neighbours) or 0.0), (tool.name, persona.role)


def test_a_pool_with_no_agreeing_role_gets_a_composed_persona_or_its_closest(embedder, shipped_tools):
    tool = shipped_tools["create_maintenance_work_order"]
    lawyers = [p for p in load_personas(POOL) if p.line_of_business == "legal_compliance"]
    assert not any(agrees(PersonaSampler(lawyers, embedder).role_fit(p, tool) or 0.0) for p in lawyers)
    assert PersonaSampler(lawyers, embedder).sample(tool).id.startswith(COMPOSED)
    assert PersonaSampler(lawyers, embedder, compose_missing=False).sample(tool) in lawyers


def test_the_validator_judges_the_recorded_role_fit():
    def with_fit(value: str | None) -> object:
        attributes = {ROLE_FIT_ATTRIBUTE: value} if value is not None else {}
        return make_dialogue(persona=make_persona().model_copy(update={"attributes": attributes}))
    failed = personafit.check_persona_fit(with_fit(f"{MAX_SCORE + 0.01:.4f}"))
    assert not failed.passed and failed.details["rule"] == "low_fit"
    assert personafit.check_persona_fit(with_fit(f"{MAX_SCORE:.4f}")).passed
    unchecked = personafit.check_persona_fit(with_fit(None))
    assert unchecked.passed and unchecked.details["checked"] is False


def test_the_audit_counts_the_dialogues_whose_role_disagrees(embedder, shipped_tools):
    work_order = shipped_tools["create_maintenance_work_order"]
    base = make_persona()

    def persona(role: str | None, line: str | None) -> Persona:
        return base.model_copy(update={"role": role, "line_of_business": line})
    dialogues = [
        make_dialogue(id="a", seed_tool=work_order, persona=persona("Employment Counsel", "legal_compliance")),
        make_dialogue(id="b", seed_tool=work_order, persona=persona("Facilities Coordinator", "facilities")),
        make_dialogue(id="c", seed_tool=PULL_REQUEST, persona=persona("Backend developer", "software_development")),
        make_dialogue(id="d", seed_tool=PULL_REQUEST, persona=persona("Employment Counsel", "legal_compliance")),
        make_dialogue(id="e", seed_tool=work_order, persona=persona(None, None)),  # no role: not judged
    ]
    share, judged, unjudged, examples = role_mismatch(dialogues, embedder.encode)
    assert (share, judged, unjudged) == (0.5, 4, 1)
    assert examples == ["Employment Counsel -> create_maintenance_work_order",
                        "Employment Counsel -> create_pull_request"]
    assert role_mismatch(dialogues[-1:], embedder.encode)[:3] == (None, 0, 1)


def test_a_tool_read_in_its_catalog_keeps_the_roles_of_its_trade(embedder, judge):
    """Alone, "close or reopen an issue" is near a complaints handler's work; among a repository's tools
    it is a developer's, and a role of another line of business disagrees with each of them."""
    index = ToolIndex(REPO_TOOLS, embedder)
    outsiders = [("Complaints Handler", "customer_support"), ("Claims Handler", "customer_support"),
                 ("Chief Human Resources Officer", "human_resources")]
    vectors = judge.role_vectors([*outsiders, ("Open-source maintainer", "software_development")])
    lines = [line for _, line in outsiders] + ["software_development"]
    alone = judge.judged(vectors, lines, index.vector(REPO_TOOLS[3]))
    assert agrees(float(alone[0])) and agrees(float(alone[1])), alone  # the word "issue" alone misleads
    for tool in REPO_TOOLS:
        neighbours = np.stack([index.vector(n.tool) for n in index.distractors(tool)])
        scores = judge.judged(vectors, lines, index.vector(tool), neighbours)
        assert not any(agrees(float(x)) for x in scores[:3]) and agrees(float(scores[3])), (tool.name, scores)
        assert judge.behind(neighbourhood(index.vector(tool), neighbours))["software_development"] <= 1
