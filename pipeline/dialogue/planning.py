"""Question planning by expected value of perfect information (SAGE §3), and Q* per dialogue.

Belief. Candidate calls are (tool, arguments) with each required argument either specified or
unknown. A candidate's certainty is the product over its required arguments of: 1 if the
value is specified, 1/|D| if it is unknown with a finite domain D (an enum, a boolean, or the
two values a user hesitated between), and EPSILON if the domain is open (free text, numbers,
ids: it cannot be guessed). When the tool itself is not yet clear, each candidate tool carries
the prior 1/|tools|. An invalid value counts as unknown: its domain is what remains once it is
excluded.

Questions and EVPI. A question targets one aspect: which tool, or one argument of the tool.
An answer resolves its aspect. With SAGE's independence across aspects, the certainty of the
intended call factorises as P(tool) x prod p(argument), and the EVPI of an aspect is the gain
in that certainty when the aspect is resolved: certainty / p(aspect) - certainty. (SAGE takes
the max over candidates; with a uniform tool prior that max is held by whichever look-alike
has the fewest unknown arguments, and the myopic value of asking "which tool" all but
vanishes although every later question depends on it. Q* is computed for a generated
dialogue, whose intended call is known, so the intended call's certainty is the one scored.)
Asking about an aspect already asked costs LAMBDA per earlier ask (SAGE's redundancy cost);
an aspect already known has EVPI 0. Greedy planning asks the best-scoring question until no
question is worth ALPHA times the current best certainty; Q* is the number it asked.

Degenerate cases, explicitly: one candidate tool with every argument specified gives every
EVPI 0 and Q* = 0 (act now); when the needed tool is not among the candidates no call can
succeed, every EVPI is 0 and Q* = 0 (the right move is to say so, not to ask).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.records import Dialogue, Message, ScenarioInfo, Tool
from ..core.text import split_words
from .mentions import mentioned
from .said import user_said

EPSILON = 1e-3  # certainty of an unknown value in an open domain
LAMBDA = 0.5  # redundancy cost per earlier ask of the same aspect (SAGE's operating point)
ALPHA = 0.05  # stop when the best score is below ALPHA times the best certainty
EXEC = 0.99  # act once a candidate is this certain
TOOL = "(tool)"


@dataclass
class Belief:
    """Per candidate tool, the certainty of each required argument; and whether the tool is settled."""

    tools: dict[str, dict[str, float]]
    tool_known: str | None = None
    asked: dict[str, int] = field(default_factory=dict)

    def certainty(self, tool: str) -> float:
        prior = 1.0 if self.tool_known == tool else (0.0 if self.tool_known else 1 / len(self.tools))
        return prior * math.prod(self.tools[tool].values())


def domain_certainty(schema: dict) -> float:
    """Certainty of an unknown value: 1/|D| for a finite domain, EPSILON for an open one."""
    if schema.get("enum"):
        return 1 / len(schema["enum"])
    if schema.get("type") == "boolean":
        return 0.5
    return EPSILON


def evpi(belief: Belief, aspect: tuple[str, str], intended: str) -> float:
    """EVPI of asking `aspect` — (TOOL, "") for which tool, (tool, argument) for one argument — for the
    intended call: 0 for an aspect already known."""
    now = belief.certainty(intended)
    tool, arg = aspect
    if tool == TOOL:
        if belief.tool_known or len(belief.tools) < 2:
            return 0.0
        return math.prod(belief.tools[intended].values()) - now
    certainty = belief.tools[tool].get(arg, 1.0)
    if certainty >= 1.0 or tool != intended:
        return 0.0
    return now / certainty - now


def questions(belief: Belief) -> list[tuple[str, str]]:
    out = [(TOOL, "")] if not belief.tool_known and len(belief.tools) > 1 else []
    settled = [belief.tool_known] if belief.tool_known else []
    for tool in settled:
        out += [(tool, a) for a, c in belief.tools[tool].items() if c < 1.0]
    return out


def score(belief: Belief, aspect: tuple[str, str], intended: str) -> float:
    """EVPI minus the redundancy cost of asking the same aspect again (scaled to the current certainty,
    so the cost means the same whether the call is nearly certain or far from it)."""
    scale = max(belief.certainty(intended), EPSILON ** 6)
    return evpi(belief, aspect, intended) - LAMBDA * scale * belief.asked.get("/".join(aspect), 0)


def plan(belief: Belief, intended: str, limit: int = 20) -> list[tuple[str, str]]:
    """The greedy question sequence for the intended call (each answer resolves its aspect); its length is Q*."""
    asked: list[tuple[str, str]] = []
    while len(asked) < limit and belief.certainty(intended) < EXEC:
        options = [(score(belief, q, intended), q) for q in questions(belief)]
        if not options:
            break
        best_score, q = max(options)
        if best_score <= ALPHA * belief.certainty(intended):
            break
        asked.append(q)
        belief.asked["/".join(q)] = belief.asked.get("/".join(q), 0) + 1
        if q[0] == TOOL:
            belief.tool_known = intended
        else:
            belief.tools[q[0]][q[1]] = 1.0
    return asked


def initial_belief(d: Dialogue, known_from_opening: bool) -> Belief | None:
    """The belief after the opening; None when the needed tool is not a candidate (nothing to plan).
    `known_from_opening`: the dialogue's scenario type names the tool in the opening
    (`ScenarioType.tool_known_from_opening`), which its caller asks."""
    opening = next((m.content for m in d.messages if m.role == "user"), "")
    return belief_after(d.seed_tool, d.candidate_tools, d.gold_arguments, opening, known_from_opening,
                        d.scenario_info)


def belief_after(seed: Tool, candidates: list[Tool], gold: dict[str, Any], heard: str, known_from_opening: bool,
                 info: ScenarioInfo) -> Belief | None:
    """The belief once the user has said `heard`; None when the needed tool is not a candidate."""
    if seed.name not in {t.name for t in candidates}:
        return None
    specific = known_from_opening
    tools: dict[str, dict[str, float]] = {seed.name: _arguments(seed, gold, heard)}
    for t in candidates:
        if t.name != seed.name:
            tools[t.name] = {a: domain_certainty(t.properties.get(a) or {}) for a in t.required}
    bad = info.infeasible
    if bad is not None and tools[seed.name].get(bad.arg) != 1.0:  # said, but not usable: unknown again
        tools[seed.name][bad.arg] = domain_certainty(seed.properties.get(bad.arg) or {})
    if info.fault is not None and info.fault.kind == "parameter" and info.fault.arg:
        tools[seed.name][info.fault.arg] = 0.5  # two values, one right
    return Belief(tools=tools, tool_known=seed.name if specific or len(tools) == 1 else None)


def next_question(seed: Tool, candidates: list[Tool], gold: dict[str, Any], history: list[Message],
                  known_from_opening: bool, info: ScenarioInfo, phase: str) -> tuple[str, str] | bool | None:
    """The planner's best next question for the dialogue so far: an aspect ((TOOL, "") or (tool,
    argument)); None when nothing is worth asking (act now); False when there is nothing to plan
    (the needed tool is not a candidate).

    The belief is the one after every user turn so far; a question asked earlier adds its redundancy
    cost, and an argument asked and answered counts as resolved when its domain keeps the answer
    uncheckable (a fault's two values)."""
    belief = belief_after(seed, candidates, gold, user_said(history), known_from_opening, info)
    if belief is None:
        return False
    if phase == "argument_filling":
        belief.tool_known = seed.name
    fault_arg = info.fault.arg if info.fault is not None and info.fault.kind == "parameter" else None
    for i, m in enumerate(history):
        if m.role != "assistant" or m.tool_calls:
            continue
        if m.phase == "tool_selection" and not belief.tool_known:
            belief.asked[TOOL + "/"] = belief.asked.get(TOOL + "/", 0) + 1
        for arg in asked_arguments(m.content, seed):
            key = f"{seed.name}/{arg}"
            belief.asked[key] = belief.asked.get(key, 0) + 1
            if arg == fault_arg and any(n.role == "user" for n in history[i + 1:]):
                belief.tools[seed.name][arg] = 1.0
    steps = plan(belief, seed.name, limit=1)
    return steps[0] if steps else None


def given_arguments(tool: Tool, gold: dict[str, Any], heard: str) -> list[str]:
    """The required arguments whose intended value `heard` states."""
    return [a for a in tool.required
            if a in gold and mentioned(gold[a], tool.properties.get(a) or {}, heard) == "found"]


def _arguments(tool: Tool, gold: dict[str, Any], opening: str) -> dict[str, float]:
    given = set(given_arguments(tool, gold, opening))
    return {a: 1.0 if a in given else domain_certainty(tool.properties.get(a) or {}) for a in tool.required}


def q_star(d: Dialogue, known_from_opening: bool) -> int:
    """The minimal number of questions the dialogue needed (0 when there is nothing worth asking);
    `known_from_opening` as for `initial_belief`."""
    belief = initial_belief(d, known_from_opening)
    return 0 if belief is None else len(plan(belief, d.seed_tool.name))


def asked_arguments(text: str, tool: Tool) -> list[str]:
    """The required arguments a question names: every word of the parameter's name appears in it."""
    said = set(re.findall(r"[a-z0-9]+", text.lower()))
    out = []
    for a in tool.required:
        words = [w for w in split_words(a) if len(w) > 1]
        if words and all(w in said for w in words):
            out.append(a)
    return out
