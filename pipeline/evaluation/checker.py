"""The user-side checker of dynamic evaluation: flags dialogues where the user proxy, not the
model under test, went wrong (App. C.3: such dialogues are excluded, not scored).

Pure functions over a case and the evaluated messages. A user turn is flagged when it
* names the gold tool: its name in any phase, or, while the proxy is still in tool selection, a
  word of its name no distractor shares (`shortcuts.name_hits`, as the name_leak validator);
* speaks a parameter key of a candidate as an identifier or reads a multi-word key aloud
  (`shortcuts.key_hits`, as the param_keys validator does);
* breaks its role: JSON or tool-call syntax, or talking as the assistant ("how can I help");
* invents a value: a number of 3+ digits, a date, an e-mail address or a code with digits that
  is in neither V*, the persona, the goal, the scenario's given values (an infeasible value, a
  fault's decoy and faulted opening) nor anything the assistant said before.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.records import Message
from ..dialogue import shortcuts
from ..dialogue.values import invented_values
from .cases import Case

ROLE_BREAK = re.compile(r"how can i (help|assist)|as an ai\b|i('m| am) (an|the|your) assistant|<tool_call>|"
                        r"\"(tool_calls|arguments)\"\s*:|^\s*(assistant|system)\s*:|\{\s*\"", re.IGNORECASE | re.MULTILINE)


def _flatten(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k} {_flatten(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return " ".join(_flatten(v) for v in value)
    return str(value)


def _scenario_values(case: Case) -> list[str]:
    """Values the scenario hands the user besides V*: the infeasible value, the decoy, the faulted opening."""
    info = case.scenario_info
    out = []
    if info.infeasible is not None:
        out.append(_flatten(info.infeasible.value))
    if info.fault is not None:
        out += [_flatten(info.fault.decoy) if info.fault.decoy is not None else "", info.fault.faulted]
    return out


def check_user_turn(case: Case, text: str, before: list[Message], phase: str = "tool_selection") -> str | None:
    """The first problem of one user turn (uttered in `phase`), in words, or None."""
    others = [d.name for d in case.distractors]
    if shortcuts.full_name_hit(text, case.gold_tool.name):
        return f"user names the tool ({case.gold_tool.name!r})"
    answering = any(m.role == "user" for m in before)  # the opening may use no distinctive name token
    allowed = shortcuts.description_stems(case.gold_tool.description) if answering else frozenset()
    if hits := shortcuts.name_leaks(text, case.gold_tool.name, others, selecting=phase == "tool_selection",
                                    allowed=allowed):
        return f"user names the tool ({hits[0]!r})"
    keys = sorted({k for t in case.candidates for k in t.properties})
    if hits := shortcuts.key_hits(text, keys):
        return f"user speaks parameter key {hits[0]!r}"
    if match := ROLE_BREAK.search(text):
        return f"user breaks role ({match.group(0).strip()!r})"
    p = case.persona
    allowed = " ".join([_flatten(case.gold_arguments), p.text, _flatten(p.attributes), p.role or "", case.goal,
                        *(m.content for m in before if m.role == "assistant"), *_scenario_values(case)])
    if found := invented_values(text, allowed):
        return f"user invents value {found[0]!r} (not in the gold values, persona or goal)"
    return None


def check_dialogue(case: Case, messages: list[Message], phases: list[str] | None = None) -> str | None:
    """Why the dialogue must be excluded (first user turn at fault, 1-based), or None.

    `phases`: the phase each user turn was uttered in, in order; without it, a user turn is in
    argument filling from the first assistant turn marked so (as in reference dialogues)."""
    turn, phase = 0, "tool_selection"
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.phase == "argument_filling":
            phase = "argument_filling"
        if m.role != "user":
            continue
        said = phases[turn] if phases is not None and turn < len(phases) else phase
        turn += 1
        if problem := check_user_turn(case, m.content, messages[:i], said):
            return f"message {i + 1}: {problem}"
    return None
