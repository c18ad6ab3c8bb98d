"""Recitation validator: the user describes the need in their own words, not a tool's description.

Fails when a user turn shares a run of `shortcuts.RECITE_N` (6) or more consecutive words,
at least `RECITE_CONTENT` of them content words, with the description of any candidate
tool: a user who recites the spec makes selection a string match. Rule code: recited.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue import shortcuts
from .common import Problem, verdict

NAME = "recitation"


def check_recitation(d: Dialogue) -> Verdict:
    tools = {t.name: t for t in [*d.candidate_tools, *d.distractor_tools, d.seed_tool]}
    problems: list[Problem] = []
    for i, m in enumerate(d.messages, start=1):
        if m.role != "user":
            continue
        for tool in tools.values():
            run = shortcuts.recited(m.content, tool.description)
            if run:
                problems.append(Problem("recited", f"user turn (message {i}) recites the description of "
                                                   f"{tool.name}: '{run}'"))
                break
    return verdict(NAME, problems, "no user turn recites a tool description", n=shortcuts.RECITE_N)
