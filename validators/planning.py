"""Planning validator: no question about what is already known, and not far more questions than needed.

Q* (`utcgen.pipeline.dialogue.planning`) is the minimal number of questions the dialogue needed, from an
EVPI plan over its candidate calls. Two rules:
* redundant_question: an argument-filling question asks only for arguments the user had
  already stated (their gold values appear in earlier user turns). The value a user gave
  wrongly (infeasible) or hesitated over (a parameter fault) is not known until restated.
* over_clarified: the assistant asked more than 2 * Q* + 2 questions.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue.labels import action_of
from ..pipeline.dialogue.mentions import mentioned
from ..pipeline.dialogue.planning import asked_arguments, q_star
from ..pipeline.dialogue.said import user_said
from ..pipeline.scenarios import get as scenario_type
from .common import Problem, verdict

NAME = "planning"
SLACK = 2


def check_planning(d: Dialogue) -> Verdict:
    seed, info = d.seed_tool, d.scenario_info
    unsettled = {a for a in (info.infeasible.arg if info.infeasible else None,
                             info.fault.arg if info.fault else None) if a}
    problems: list[Problem] = []
    asks = 0
    for i, m in enumerate(d.messages, start=1):
        if m.role != "assistant" or (m.action or action_of(m)) != "ask":
            continue
        asks += 1
        if m.phase != "argument_filling":
            continue
        asked = asked_arguments(m.content, seed)
        said = user_said(d.messages[: i - 1])  # what the user had said before this question
        known = {a for a in asked if a in d.gold_arguments and a not in unsettled
                 and mentioned(d.gold_arguments[a], seed.properties.get(a) or {}, said) == "found"}
        if asked and known == set(asked):
            problems.append(Problem("redundant_question",
                                    f"message {i} asks for {', '.join(asked)}, which the user already gave"))
    need = d.q_star if d.q_star is not None else \
        q_star(d, scenario_type(d.scenario).tool_known_from_opening(d.scenario_info))
    if asks > 2 * need + SLACK:
        problems.append(Problem("over_clarified", f"{asks} questions where {need} would do (Q*)"))
    return verdict(NAME, problems, f"{asks} questions, Q* = {need}", questions=asks, q_star=need)
