"""Role fit: would someone in this persona's ROLE plausibly use this tool?

A persona's whole text can mention something near any tool (an Employment Counsel whose text
speaks of a building), so the judgement reads only the role and its line of business: the vector of
"Employment Counsel in legal compliance" plus LINE_WEIGHT times that of "legal compliance" (a short
role name alone is read by its words: "Customs Documentation Assistant" near a repository's docs),
embedded with the project's model, against the tool's text (the index's: name, description,
parameter names; not its line of business, which dialogue records do not keep). Raw cosines of short role names are noisy and differ from tool to tool (a wordy tool is
near everything), so the judgement is relative, both ways:

* how many of the REFERENCE roles (the distinct roles of the shipped pool: consumers, developers and
  ten lines of business) are closer to the tool than this role: is the role among the tool's users?
* how many of the reference TOOLS (the shipped catalog) are closer to the role than this tool: is the
  tool among the role's tools? A role of a line of business has its own line's tools there, so a tool
  that only shares a word with its name ranks below them.

Either share alone is noisy (a tool near many roles, a role far from every shipped tool); their
geometric mean must stay within MAX_SHARE. The score is that mean divided by MAX_SHARE: the role
agrees up to 1. Both references ship with the package, so a score means the same in every run and on
data made elsewhere. One home for the judgement: the persona sampler draws only agreeing roles,
synthesis records the score in the persona's attributes (`ROLE_FIT_ATTRIBUTE`) for the persona-fit
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

# Measured on the shipped catalog and GitHub's MCP, Spotify's OpenAPI and BFCL catalogs. On the shipped
# catalog, whose tools and roles have lines of business, a role of the tool's own line agrees 53% of the
# time, a consumer with an employee's tool 5.0%, a role of another line 4.3%; of the roles agreeing with
# GitHub's tools 77% are developers', with Spotify's 95% consumers' or developers'; every tool of the
# four catalogs has agreeing roles (BFCL's median 17). Requiring each share within a limit instead (10%
# of roles, 25% of tools) agreed as often within a line but left 19 tools with no agreeing role and
# GitHub's agreeing roles 64% developers'. By eye: Facilities Coordinator and a work-order tool, a backend
# developer and GitHub's pull-request tools, a vinyl hobbyist and a playlist agree; Employment Counsel
# and work orders (mean 0.15-0.46), a Sustainability Coordinator and GitHub Projects (0.15), Employment
# Counsel and a playlist do not.
MAX_SHARE = 0.08
LINE_WEIGHT = 0.5
MAX_SCORE = 1.0  # a role agrees with a tool up to this score (the shares' geometric mean within MAX_SHARE)


def role_text(role: str, line_of_business: str | None = None) -> str:
    """What the judgement embeds of a persona: its role, with its line of business when it has one."""
    area = (line_of_business or "").replace("_", " ").strip()
    return f"{role.strip()} in {area}" if area else role.strip()


def tool_text(tool: Tool) -> str:
    """What the judgement embeds of a tool: the index's text (the same in a run and in its records)."""
    return index_text(tool)


Role = tuple[str, str | None]  # (role, line of business)


@functools.cache
def reference_roles() -> tuple[Role, ...]:
    """The distinct (role, line of business) pairs of the shipped persona pool, sorted: the population
    every role is ranked against, whichever pool a run drew from, so a score means the same in every run."""
    roles: set[Role] = set()
    for line in shipped("catalog", "personas.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip() and (item := json.loads(line)).get("role"):
            roles.add((item["role"].strip(), item.get("line_of_business") or None))
    return tuple(sorted(roles, key=lambda r: (r[0], r[1] or "")))


@functools.cache
def reference_tools() -> tuple[Tool, ...]:
    """The shipped catalog's tools: the population every tool is ranked against for a role."""
    return tuple(load_catalog(str(shipped("catalog", "tools"))))


PLACES = 3  # decimals of a cosine the ranks are taken at


def agrees(score: float) -> bool:
    """Whether a role of this `score` (`RoleJudge.scores`) would plausibly use the tool."""
    return score <= MAX_SCORE


class RoleJudge:
    """Role-fit scores of roles for a tool (`embed` encodes texts; default: the project's embedder)."""

    def __init__(self, embed: Embed | None = None) -> None:
        self.embed = embed or default_embed
        self.reference = self.role_vectors(reference_roles())
        self.reference_tools = self.tool_vectors(reference_tools())

    def role_vectors(self, roles: Sequence[Role]) -> np.ndarray:
        """Unit vectors of (role, line of business) pairs: the role in its line, drawn LINE_WEIGHT
        towards the line itself."""
        vectors = unit(self.embed([role_text(role, line) for role, line in roles]))
        lines = [(line or "").replace("_", " ").strip() for _, line in roles]
        if named := [i for i, line in enumerate(lines) if line]:
            vectors[named] += LINE_WEIGHT * unit(self.embed([lines[i] for i in named]))
        return unit(vectors)

    def tool_vectors(self, tools: Sequence[Tool]) -> np.ndarray:
        return unit(self.embed([tool_text(t) for t in tools]))

    def scores(self, role_vectors: np.ndarray, tool_vector: np.ndarray) -> np.ndarray:
        """For each role vector: the geometric mean of the share of reference roles closer to the tool
        and of reference tools closer to the role, over MAX_SHARE; the role agrees up to 1."""
        # similarities are compared at PLACES decimals: a rank flips on float noise otherwise, and the same
        # tool embedded in another batch (another process, a dask worker) would score differently
        mine = np.round(role_vectors @ tool_vector, PLACES)
        reference = np.sort(np.round(self.reference @ tool_vector, PLACES))
        roles_closer = (len(reference) - np.searchsorted(reference, mine, side="right")) / len(reference)
        tools_closer = (np.round(role_vectors @ self.reference_tools.T, PLACES) > mine[:, None]).mean(axis=1)
        return np.sqrt(roles_closer * tools_closer) / MAX_SHARE

    def score(self, role: str, line_of_business: str | None, tool: Tool) -> float:
        """The score of one role for one tool."""
        vector = self.role_vectors([(role, line_of_business)])
        return float(self.scores(vector, self.tool_vectors([tool])[0])[0])


def _at_once(embed: Embed, texts: Sequence[str]) -> Embed:
    """`embed` called once on every text the judgement will need, then looked up: one call sees them
    all (an embedding that depends on the batch, as a test's word counts do, stays consistent)."""
    distinct = list(dict.fromkeys(t for t in texts if t))
    rows = dict(zip(distinct, unit(embed(distinct))))
    return lambda wanted: np.stack([rows[t] for t in wanted])


def _role(d: Dialogue) -> Role:
    return (d.user_persona.role or "").strip(), d.user_persona.line_of_business or None


def role_mismatch(dialogues: Sequence[Dialogue], embed: Embed | None = None,
                  ) -> tuple[float | None, int, int, list[str]]:
    """(share of dialogues whose persona's role disagrees with the seed tool, dialogues judged,
    dialogues whose persona has no role to judge, a few disagreeing pairs as `role -> tool`)."""
    judged = [d for d in dialogues if (d.user_persona.role or "").strip()]
    if not judged:
        return None, 0, len(dialogues), []
    roles = sorted({_role(d) for d in judged}, key=lambda r: (r[0], r[1] or ""))
    tools = {d.seed_tool.name: d.seed_tool for d in judged}
    every = [*reference_roles(), *roles]
    texts = [*(role_text(r, line) for r, line in every), *((line or "").replace("_", " ").strip() for _, line in every),
             *(tool_text(t) for t in [*reference_tools(), *tools.values()])]
    judge = RoleJudge(_at_once(embed or default_embed, texts))
    role_rows = dict(zip(roles, judge.role_vectors(roles)))
    tool_rows = dict(zip(tools, judge.tool_vectors(list(tools.values()))))
    wrong: list[str] = []
    for d in judged:
        if not agrees(float(judge.scores(role_rows[_role(d)][None, :], tool_rows[d.seed_tool.name])[0])):
            wrong.append(f"{d.user_persona.role} -> {d.seed_tool.name}")
    examples = list(dict.fromkeys(wrong))[:5]
    return len(wrong) / len(judged), len(judged), len(dialogues) - len(judged), examples
