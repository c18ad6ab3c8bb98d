"""The contract between the rules and the prompts: every stage that can reject a dialogue tells the
model roles it judges what it checks.

Each stage of the cascade declares the roles it judges (`Rule.tells`, `Judge.tells`, or `untold`
with the reason no model is told). What each role is told lives in `prompts/rules_<role>.txt`, one
conditional block per stage, named after it; a role's prompt carries the rendered list through its
`{{rules}}` placeholder. A test renders every role, phase and scenario and fails when a declared
stage's block is missing from what the model receives: a rule cannot be added without telling the
model about it.
"""

from __future__ import annotations

from typing import Any

from ..pipeline.settings.templates import load_prompt
from .cascade import JUDGES, RULES

# The roles a stage may judge: the generation roles that write what the cascade reads.
JUDGED_ROLES: tuple[str, ...] = ("goal", "slots", "user", "assistant")


def told(role: str) -> tuple[str, ...]:
    """The stages that judge `role`, in cascade order."""
    return tuple(v.name for v in (*RULES, *JUDGES) if role in v.tells)


def instructions(role: str, only: str | None = None, **facts: Any) -> str:
    """What `role` is told about the stages that judge it (only stage `only`, when given), rendered with
    the job's `facts` (e.g. `name_words` for the user)."""
    flags = {v.name: (v.name == only if only else role in v.tells) for v in (*RULES, *JUDGES)}
    return load_prompt(f"rules_{role}").render(**flags, **facts)[0]["content"].strip()
