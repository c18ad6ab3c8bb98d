"""Repetition validator: the assistant never asks the same question twice, nor re-asks its words.

Fails when an assistant turn without a tool call has the same public content
(case, punctuation and spacing ignored) as an earlier assistant turn (rule code:
repeated_question), or when two assistant turns (calls' words too) share a run of `shortcuts.REPEAT_N` (8)
consecutive words, the same option list offered again in another frame (rule code:
repeated_run). Either teaches a model to loop instead of narrowing.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue import shortcuts
from .common import Problem, assistant_turns, verdict

NAME = "repetition"


def check_repetition(d: Dialogue) -> Verdict:
    seen: dict[str, int] = {}
    runs: list[tuple[int, set[tuple[str, ...]]]] = []
    problems: list[Problem] = []
    for turn, _index, m in assistant_turns(d):
        text = shortcuts.normal_question(m.content)
        mine = shortcuts.word_runs(m.content)
        shared = next(((t, sorted(r & mine)[0]) for t, r in runs if r & mine), None)
        runs.append((turn, mine))
        if text in seen and not m.tool_calls:
            problems.append(Problem("repeated_question", f"assistant turn {turn} repeats turn {seen[text]} verbatim"))
        elif shared:
            problems.append(Problem("repeated_run", f"assistant turn {turn} repeats {len(shared[1])} words of turn "
                                                    f"{shared[0]}: '{' '.join(shared[1])}'"))
        if text:
            seen.setdefault(text, turn)
    return verdict(NAME, problems, "every assistant question is new")
