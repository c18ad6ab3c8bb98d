"""Parameter-key validator: nobody reads the schema aloud.

Fails when a user turn, or the public content of an argument-filling assistant turn (where
the assistant asks for values; a selection question may quote what tools do), contains a parameter key
of a candidate tool written as an identifier (`fiscal_year`, `costCenter`) or the words
of a multi-word key that are not everyday speech (`shortcuts.distinctive_key_words`:
three or more words, or two with an abbreviation, e.g. "po number"). Thoughts and tool
calls are private and not checked. Rule codes: user_key, assistant_key.
"""

from __future__ import annotations

from ..pipeline import shortcuts
from ..pipeline.records import Dialogue, Verdict
from .common import Problem, verdict

NAME = "param_keys"


def check_param_keys(d: Dialogue) -> Verdict:
    keys = sorted({k for t in [d.seed_tool, *d.candidate_tools] for k in t.properties})
    problems: list[Problem] = []
    for i, m in enumerate(d.messages, start=1):
        if m.role not in ("user", "assistant") or not m.content:
            continue
        if m.role == "assistant" and m.phase != "argument_filling":
            continue  # a selection question may quote what the tools do; asking for values is where keys leak
        hits = shortcuts.key_hits(m.content, keys)
        if hits:
            who = "user turn" if m.role == "user" else "assistant question"
            problems.append(Problem(f"{m.role}_key", f"{who} (message {i}) exposes parameter key {hits[0]!r}"))
    return verdict(NAME, problems, "no parameter key is spoken", keys=len(keys))
