"""Name-leak validator: the user never gives the seed tool away by its name.

Fails when a user turn writes the seed tool's name (as the identifier or its words in
order), or when a user turn of the tool-selection phase (before the assistant starts
filling arguments) uses a distinctive token of the seed's name: a word of its name that
no distractor's name has. The opening request may use none; an answer to the assistant may
use one that is also a plain word of the seed's description ('albums' for a tool that checks
saved albums), since that is how a person says what they need once asked. One detector (`shortcuts.user_name_leaks`) serves this rule and
the offline critic. A model trained on such turns learns to match names instead of asking.
Rule code: name_token.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue import shortcuts
from .common import Problem, verdict

NAME = "name_leak"


def check_name_leak(d: Dialogue) -> Verdict:
    seed = d.seed_tool.name
    others = [t.name for t in d.distractor_tools if t.name != seed]
    problems = [Problem("name_token", f"user turn (message {i + 1}) uses {hit!r} from the seed tool's name")
                for i, hit in shortcuts.user_name_leaks(d.messages, seed, others, d.seed_tool.description).items()]
    return verdict(NAME, problems, "the user never names the seed tool",
                   distinctive_tokens=sorted(shortcuts.distinctive_name_tokens(seed, others)))
