"""Name-leak validator: the user never gives the seed tool away by its name.

Fails when a user turn writes the seed tool's name (as the identifier or its words in
order), or when a user turn of the tool-selection phase (before the assistant starts
filling arguments) uses a distinctive token of the seed's name: a word of its name that
no distractor's name has (`shortcuts.distinctive_name_tokens`). A model trained on such
turns learns to match names instead of asking. Rule code: name_token.
"""

from __future__ import annotations

from ..pipeline import shortcuts
from ..pipeline.records import Dialogue, Verdict
from .common import Problem, verdict

NAME = "name_leak"


def selection_user_turns(d: Dialogue) -> list[tuple[int, str]]:
    """(message number from 1, text) of the user turns before argument filling began."""
    out = []
    for i, m in enumerate(d.messages, start=1):
        if m.role == "assistant" and m.phase == "argument_filling":
            break
        if m.role == "user":
            out.append((i, m.content))
    return out


def check_name_leak(d: Dialogue) -> Verdict:
    seed = d.seed_tool.name
    others = [t.name for t in d.distractor_tools if t.name != seed]
    selecting = {i for i, _ in selection_user_turns(d)}
    problems: list[Problem] = []
    for i, m in enumerate(d.messages, start=1):
        if m.role != "user":
            continue
        hits = shortcuts.name_hits(m.content, seed, others)
        if i not in selecting:
            hits = [h for h in hits if h == seed or " " in h]  # after selection only the full name counts
        if hits:
            problems.append(Problem("name_token", f"user turn (message {i}) uses {hits[0]!r} from the seed tool's name"))
    return verdict(NAME, problems, "the user never names the seed tool",
                   distinctive_tokens=sorted(shortcuts.distinctive_name_tokens(seed, others)))
