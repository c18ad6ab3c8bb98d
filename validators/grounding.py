"""Grounding validator: the tool the dialogue calls is one the user's words set apart.

A dialogue can end on the right tool by luck: the assistant guessed among near-duplicates and
the guess happened to be the seed tool. Such data teaches guessing. This rule (defined once in
`pipeline/dialogue/grounding.py`) asks whether, before argument filling begins (values given
afterwards do not choose the tool), the user said something that
fits the called tool and not each other candidate (or, where no word could, asked for all that
its name says it works on and not all that the other's says). Dialogues without a call, or with a single
candidate, pass. Rule code: ungrounded.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Tool, Verdict
from ..pipeline.dialogue import grounding
from .common import Problem, final_call, verdict

NAME = "grounding"


def _offered(d: Dialogue) -> list[Tool]:
    """Every tool the dialogue offered, each name once: candidates, distractors, the seed."""
    seen: dict[str, Tool] = {}
    for t in [*d.candidate_tools, *d.distractor_tools, d.seed_tool]:
        seen.setdefault(t.name, t)
    return list(seen.values())


def check_grounding(d: Dialogue) -> Verdict:
    call = final_call(d)
    tools = _offered(d)
    chosen = next((t for t in tools if call is not None and t.name == call.name), None)
    if call is None or chosen is None or len(tools) < 2:
        return verdict(NAME, [], "nothing to separate: no call to an offered tool, or a single candidate")
    said = grounding.said_stems(d.messages, until="argument_filling")  # values given while filling do not choose the tool
    others = [t for t in tools if t.name != chosen.name]
    missing = grounding.unseparated(said, chosen, others)
    problems = []
    if missing:
        listed = ", ".join(f"'{n}'" for n in missing)
        problems.append(Problem("ungrounded", f"the user never said what sets '{chosen.name}' apart from {listed} "
                                              "before the choice"))
    return verdict(NAME, problems, f"the user's words set '{chosen.name}' apart from every other candidate",
                   chosen=chosen.name, unseparated=missing)
