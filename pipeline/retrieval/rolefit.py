"""Role fit: would someone in this persona's ROLE plausibly use this tool?

A persona's whole text can mention something near any tool (an Employment Counsel whose text
speaks of a building), so the judgement reads only the role and its line of business ("Employment
Counsel in legal compliance"), embedded with the project's model, against the tool's text with its
line of business. Raw cosines of short role names are noisy and differ from tool to tool (a wordy
tool is near everything), so the judgement is relative, both ways:

* the role is among the roles closest to the tool: at most ROLE_SHARE of the REFERENCE roles (the
  distinct roles of the shipped pool: consumers, developers and ten lines of business) are closer;
* the tool is among the tools closest to the role: at most TOOL_SHARE of the reference TOOLS (the
  shipped catalog) are closer. A role of a line of business has its own line's tools there, so a
  tool that only shares a word with its name ("Customs Documentation Assistant" and a repository's
  issues, "Complaints Handler" and a pull-request comment) ranks below them.

The score is the larger of the two shares, each divided by its limit: the role agrees up to 1.
Both references ship with the package, so a score means the same in every run and on data made
elsewhere. One home for the judgement: the persona sampler draws only agreeing roles, synthesis
records the score in the persona's attributes (`ROLE_FIT_ATTRIBUTE`) for the persona-fit
validator, and the audit measures the share of dialogues whose role disagrees (`role_mismatch`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import numpy as np

from ..core.records import Dialogue, Tool
from ..core.resources import shipped
from ..ingest.reader import load_catalog
from .model import index_text
from .nearness import Embed, default_embed, unit

# Measured on the shipped catalog and GitHub's MCP, Spotify's OpenAPI and BFCL catalogs (shares of
# reference roles closer to the tool / of reference tools closer to the role): roles a person would
# call right are at 0-5% / 0-7% (Facilities Coordinator and a work-order tool 0.9% / 1.3%, a backend
# developer and GitHub's pull-request tools 2-5% / 0-7%, a vinyl hobbyist and a Spotify playlist
# 1.9% / 1.0%), absurd ones past 10% / 13% (Employment Counsel and work orders 21-57% / 15-50%, a
# Sustainability Coordinator and GitHub Projects 10-17% / 13-17%, Employment Counsel and a Spotify
# playlist 90% / 99%). ROLE_SHARE is about 32 of the 528 roles, as many as one line holds; with
# both limits every tool of the four catalogs but 2 of BFCL's 443 has agreeing roles (median 18-32).
ROLE_SHARE = 0.06
TOOL_SHARE = 0.25
MAX_SCORE = 1.0  # a role agrees with a tool up to this score (both shares within their limits)


def role_text(role: str, line_of_business: str | None = None) -> str:
    """What the judgement embeds of a persona: its role, with its line of business when it has one."""
    area = (line_of_business or "").replace("_", " ").strip()
    return f"{role.strip()} in {area}" if area else role.strip()


def tool_text(tool: Tool) -> str:
    """What the judgement embeds of a tool: the index's text, with the tool's line of business."""
    area = (tool.line_of_business or "").replace("_", " ").strip()
    return f"{index_text(tool)} ({area})" if area else index_text(tool)


@functools.cache
def reference_roles() -> tuple[str, ...]:
    """The distinct role texts of the shipped persona pool, sorted: the population every role is
    ranked against, whichever pool a run drew from, so a share means the same in every run."""
    texts: set[str] = set()
    for line in shipped("catalog", "personas.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip() and (item := json.loads(line)).get("role"):
            texts.add(role_text(item["role"], item.get("line_of_business")))
    return tuple(sorted(texts))


@functools.cache
def reference_tools() -> tuple[Tool, ...]:
    """The shipped catalog's tools: the population every tool is ranked against for a role."""
    return tuple(load_catalog(str(shipped("catalog", "tools"))))


def agrees(score: float) -> bool:
    """Whether a role of this `score` (`RoleJudge.scores`) would plausibly use the tool."""
    return score <= MAX_SCORE


class RoleJudge:
    """Role-fit scores of roles for a tool (`embed` encodes texts; default: the project's embedder)."""

    def __init__(self, embed: Embed | None = None) -> None:
        self.embed = embed or default_embed
        self.reference = unit(self.embed(list(reference_roles())))
        self.reference_tools = self.tool_vectors(reference_tools())

    def role_vectors(self, roles: Sequence[str]) -> np.ndarray:
        """Unit vectors of role texts (`role_text`)."""
        return unit(self.embed(list(roles)))

    def tool_vectors(self, tools: Sequence[Tool]) -> np.ndarray:
        return unit(self.embed([tool_text(t) for t in tools]))

    def scores(self, role_vectors: np.ndarray, tool_vector: np.ndarray) -> np.ndarray:
        """For each role vector: max(share of reference roles closer to the tool / ROLE_SHARE,
        share of reference tools closer to the role / TOOL_SHARE); the role agrees up to 1."""
        mine = role_vectors @ tool_vector
        reference = np.sort(self.reference @ tool_vector)
        roles_closer = (len(reference) - np.searchsorted(reference, mine, side="right")) / len(reference)
        tools_closer = (role_vectors @ self.reference_tools.T > mine[:, None]).mean(axis=1)
        return np.maximum(roles_closer / ROLE_SHARE, tools_closer / TOOL_SHARE)

    def score(self, role: str, line_of_business: str | None, tool: Tool) -> float:
        """The score of one role for one tool."""
        vector = self.role_vectors([role_text(role, line_of_business)])
        return float(self.scores(vector, self.tool_vectors([tool])[0])[0])


def role_mismatch(dialogues: Sequence[Dialogue], embed: Embed | None = None,
                  ) -> tuple[float | None, int, int, list[str]]:
    """(share of dialogues whose persona's role disagrees with the seed tool, dialogues judged,
    dialogues whose persona has no role to judge, a few disagreeing pairs as `role -> tool`)."""
    judged = [d for d in dialogues if (d.user_persona.role or "").strip()]
    if not judged:
        return None, 0, len(dialogues), []
    judge = RoleJudge(embed)
    roles = sorted({role_text(d.user_persona.role or "", d.user_persona.line_of_business) for d in judged})
    tools = {d.seed_tool.name: d.seed_tool for d in judged}
    role_rows = dict(zip(roles, judge.role_vectors(roles)))
    tool_rows = dict(zip(tools, judge.tool_vectors(list(tools.values()))))
    wrong: list[str] = []
    for d in judged:
        text = role_text(d.user_persona.role or "", d.user_persona.line_of_business)
        if not agrees(float(judge.scores(role_rows[text][None, :], tool_rows[d.seed_tool.name])[0])):
            wrong.append(f"{d.user_persona.role} -> {d.seed_tool.name}")
    examples = list(dict.fromkeys(wrong))[:5]
    return len(wrong) / len(judged), len(judged), len(dialogues) - len(judged), examples
