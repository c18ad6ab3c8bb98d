"""Toolcall validator (paper A.2): the dialogue ends with a call to the seed tool and nothing else.

A call to a distractor at any point means the assistant committed to the wrong
near-duplicate, which is exactly what the data must teach against, so it is a failure
even if a later turn corrects it. Earlier calls to the seed tool itself are allowed
(e.g. a premature call with incomplete arguments during argument filling).

Rule codes: no_final_call, wrong_tool, not_candidate, earlier_distractor, earlier_unknown.
"""

from __future__ import annotations

from ..pipeline import scenarios
from ..pipeline.core.records import Dialogue, Verdict
from .common import Problem, assistant_turns, final_call, verdict

NAME = "toolcall"


def check_toolcall(d: Dialogue) -> Verdict:
    """Final call names the seed tool, which is a candidate; no other tool was called before."""
    if not scenarios.get(d.scenario).expects_call:  # nothing may be called: the scenario validator checks that
        return verdict(NAME, [], "no call expected: the needed tool is unavailable")
    seed = d.seed_tool.name
    distractors = {t.name for t in d.distractor_tools}
    candidates = {t.name for t in d.candidate_tools}
    problems: list[Problem] = []

    call = final_call(d)
    if call is None:
        problems.append(Problem("no_final_call", "the dialogue does not end with a tool call"))
    elif call.name != seed:
        kind = "distractor" if call.name in distractors else "tool"
        problems.append(Problem("wrong_tool", f"final call is to {kind} '{call.name}', expected seed tool '{seed}'"))
    if seed not in candidates:
        problems.append(Problem("not_candidate", f"seed tool '{seed}' is not among the candidate tools"))

    turns = assistant_turns(d)
    for number, index, m in turns:
        for position, c in enumerate(m.tool_calls):
            if index == len(d.messages) - 1 and position == len(m.tool_calls) - 1:
                continue  # the final call, judged above
            if c.name == seed:
                continue
            if c.name in distractors or c.name in candidates:
                problems.append(Problem("earlier_distractor", f"assistant turn {number} called distractor '{c.name}'"))
            else:
                problems.append(Problem("earlier_unknown", f"assistant turn {number} called unknown tool '{c.name}'"))
    return verdict(
        NAME,
        problems,
        f"ends with a call to seed tool '{seed}'",
        final_call=call.name if call else None,
    )
