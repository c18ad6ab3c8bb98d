"""Repetition validator: the assistant never asks the same question twice, word for word.

Fails when an assistant turn without a tool call has the same public content
(case, punctuation and spacing ignored) as an earlier assistant turn: a repeated
question teaches a model to loop. Rule code: repeated_question.
"""

from __future__ import annotations

from ..pipeline import shortcuts
from ..pipeline.records import Dialogue, Verdict
from .common import Problem, assistant_turns, verdict

NAME = "repetition"


def check_repetition(d: Dialogue) -> Verdict:
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for turn, _index, m in assistant_turns(d):
        text = shortcuts.normal_question(m.content)
        if m.tool_calls or not text:
            continue
        if text in seen:
            problems.append(Problem("repeated_question", f"assistant turn {turn} repeats turn {seen[text]} verbatim"))
        else:
            seen[text] = turn
    return verdict(NAME, problems, "every assistant question is new")
