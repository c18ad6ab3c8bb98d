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
agrees up to 1.

A word can pull a role towards a tool of another trade: a Complaints Handler is near GitHub's issue
tools. So the tool is read in its catalog neighbourhood (its vector plus NEIGHBOUR_WEIGHT times the
mean of its distractors', the nearest tools of its catalog, which every dialogue records), and it has
lines of business: those of the reference lines within LINE_MARGIN of the nearest, a line's nearness
being that of its LINE_ROLES nearest roles taken relative to its mean over the reference tools (a
line whose roles are near every tool, as customer support's are, is not every tool's). A role of a reference line the
tool does not have disagrees: its score grows by how far its line is behind, in LINE_MARGINs. A role of
another line, or of none, is judged by the shares alone, and so is any role for a tool read alone.
Both references ship with the package, so a score means the same in every run and on
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

# Measured on the shipped catalog and GitHub's MCP, Spotify's OpenAPI and BFCL catalogs. With the shares
# alone, a role of a shipped tool's own line agreed 53% of the time; of the roles agreeing with GitHub's
# tools 77% were developers', with Spotify's 80% consumers'; Complaints and Claims Handlers agreed with 39
# and 29 GitHub tools. Read in its neighbourhood and its lines: own line 61%, GitHub 95% developers',
# Spotify 96% consumers', the two handlers 16 and 15 GitHub tools (pull-request review comments); every
# shipped, GitHub and Spotify tool keeps agreeing roles whose persona texts fit it, 1 of BFCL's 443 has no
# agreeing role and 69 none whose text fits (the sampler composes a persona for them, 33 with the shares
# alone). A line's mean vector instead of its nearest roles made BFCL's sports tools human resources'
# (Talent Sourcer, not Fantasy football manager); a line's raw nearness instead of its relative one made
# customer support the nearest line of 42 GitHub tools. By eye: Facilities Coordinator and a work-order
# tool, a backend developer and GitHub's pull-request tools, a vinyl hobbyist and a playlist agree;
# Employment Counsel and work orders, a Sustainability Coordinator and GitHub Projects, Employment Counsel
# and a playlist do not.
MAX_SHARE = 0.08
LINE_WEIGHT = 0.5
NEIGHBOUR_WEIGHT = 1.0  # the tool's neighbours' mean vector counts as much as the tool's own
LINE_MARGIN = 0.03  # a tool has every reference line within this much of its nearest
LINE_ROLES = 3  # a line's nearness to a tool: that of its roles this many nearest
MAX_SCORE = 1.0  # a role agrees with a tool up to this score (the shares' geometric mean within MAX_SHARE)


def role_text(role: str, line_of_business: str | None = None) -> str:
    """What the judgement embeds of a persona: its role, with its line of business when it has one."""
    area = (line_of_business or "").replace("_", " ").strip()
    return f"{role.strip()} in {area}" if area else role.strip()


def tool_text(tool: Tool) -> str:
    """What the judgement embeds of a tool: the index's text (the same in a run and in its records)."""
    return index_text(tool)


Role = tuple[str, str | None]  # (role, line of business)


def line_key(line: str | None) -> str:
    """A line of business as the reference spells it ("Supply chain" -> "supply_chain"; none: "")."""
    return "_".join((line or "").lower().split())


def neighbourhood(tool_vector: np.ndarray, neighbours: np.ndarray | None = None) -> np.ndarray:
    """The vector a tool is judged by: its own plus NEIGHBOUR_WEIGHT times its neighbours' mean (rows of
    `neighbours`: its distractors', the nearest tools of its catalog), of length 1."""
    if neighbours is None or not len(neighbours):
        return unit(np.asarray(tool_vector)[None, :])[0]
    return unit((tool_vector + NEIGHBOUR_WEIGHT * np.asarray(neighbours).mean(axis=0))[None, :])[0]


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
        kinds = [line_key(line) for _, line in reference_roles()]
        self.lines = sorted({k for k in kinds if k})
        self._line_rows = [np.array([k == line for k in kinds]) for line in self.lines]
        self.line_offsets = self.line_nearness(self.reference_tools).mean(axis=0)

    def line_nearness(self, tool_vectors: np.ndarray) -> np.ndarray:
        """(tools, lines): for each reference line, the mean cosine of its LINE_ROLES roles nearest the tool
        (a line's roles differ too much for their mean to stand for them: a fantasy football manager and
        a birdwatcher are both consumers)."""
        cosines = tool_vectors @ self.reference.T
        return np.stack([np.sort(cosines[:, rows], axis=1)[:, -LINE_ROLES:].mean(axis=1) for rows in self._line_rows],
                        axis=1)

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

    def behind(self, tool_vector: np.ndarray) -> dict[str, float]:
        """Per reference line: how far it is behind the tool's nearest line, in LINE_MARGINs (the tool
        has the lines up to 1)."""
        near = np.round(self.line_nearness(tool_vector[None, :])[0] - self.line_offsets, PLACES)
        return {line: float(gap) / LINE_MARGIN for line, gap in zip(self.lines, near.max() - near)}

    def scores(self, role_vectors: np.ndarray, tool_vector: np.ndarray,
               lines: Sequence[str | None] | None = None) -> np.ndarray:
        """For each role vector: the geometric mean of the share of reference roles closer to the tool
        and of reference tools closer to the role, over MAX_SHARE, plus, for a role of a reference line
        (`lines`, one per row) the tool does not have, how far that line is behind (`behind`); the role
        agrees up to 1. `tool_vector` is the tool's `neighbourhood`."""
        # similarities are compared at PLACES decimals: a rank flips on float noise otherwise, and the same
        # tool embedded in another batch (another process, a dask worker) would score differently
        mine = np.round(role_vectors @ tool_vector, PLACES)
        reference = np.sort(np.round(self.reference @ tool_vector, PLACES))
        roles_closer = (len(reference) - np.searchsorted(reference, mine, side="right")) / len(reference)
        tools_closer = (np.round(role_vectors @ self.reference_tools.T, PLACES) > mine[:, None]).mean(axis=1)
        shares = np.sqrt(roles_closer * tools_closer) / MAX_SHARE
        if lines is None:
            return shares
        behind = self.behind(tool_vector)
        return shares + np.array([gap if (gap := behind.get(line_key(line), 0.0)) > 1 else 0.0 for line in lines])

    def judged(self, role_vectors: np.ndarray, lines: Sequence[str | None], tool_vector: np.ndarray,
               neighbours: np.ndarray | None = None) -> np.ndarray:
        """`scores` of roles (their vectors and lines of business) for a tool read with its neighbours'
        vectors. A tool read alone is judged by the shares only: one tool's words are too few to place
        it in a line of business (a music app's list_podcast_episodes alone is nearest finance)."""
        alone = neighbours is None or not len(neighbours)
        return self.scores(role_vectors, neighbourhood(tool_vector, neighbours), None if alone else lines)

    def score(self, role: str, line_of_business: str | None, tool: Tool,
              neighbours: Sequence[Tool] = ()) -> float:
        """The score of one role for one tool whose catalog neighbours (its distractors) are `neighbours`."""
        vector = self.role_vectors([(role, line_of_business)])
        tools = self.tool_vectors([tool, *neighbours])
        return float(self.judged(vector, [line_of_business], tools[0], tools[1:])[0])


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
    tools = {t.name: t for d in judged for t in (d.seed_tool, *d.distractor_tools)}
    every = [*reference_roles(), *roles]
    texts = [*(role_text(r, line) for r, line in every), *((line or "").replace("_", " ").strip() for _, line in every),
             *(tool_text(t) for t in [*reference_tools(), *tools.values()])]
    judge = RoleJudge(_at_once(embed or default_embed, texts))
    role_rows = dict(zip(roles, judge.role_vectors(roles)))
    tool_rows = dict(zip(tools, judge.tool_vectors(list(tools.values()))))
    wrong: list[str] = []
    for d in judged:
        neighbours = np.stack([tool_rows[t.name] for t in d.distractor_tools]) if d.distractor_tools else None
        score = judge.judged(role_rows[_role(d)][None, :], [_role(d)[1]], tool_rows[d.seed_tool.name], neighbours)
        if not agrees(float(score[0])):
            wrong.append(f"{d.user_persona.role} -> {d.seed_tool.name}")
    examples = list(dict.fromkeys(wrong))[:5]
    return len(wrong) / len(judged), len(judged), len(dialogues) - len(judged), examples
