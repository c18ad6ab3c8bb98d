"""What the user said: the one reading of a message list that every rule, planner, metric and
offline role uses when it asks "did the user say it?".

Messages may be `records.Message` objects or their plain-dict form (the offline backend works on
dicts). `until` says where the reading stops:

* "end": every user turn;
* "call": the user turns before the first assistant turn that calls a tool (what the model had
  heard when it acted);
* "argument_filling": the user turns before the first assistant turn of the argument-filling
  phase (the tool-selection part of the dialogue: the need, not the values).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol


class Turn(Protocol):
    """A turn as any transcript holds it (`records.Message`, a typed request's `Said`): who spoke, the words."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


Spoken = Turn | Mapping[str, Any]  # a turn, or its plain-dict form
Until = Literal["end", "call", "argument_filling"]
UNTIL: tuple[Until, ...] = ("end", "call", "argument_filling")


def _field(m: Spoken, name: str) -> Any:
    return m.get(name) if isinstance(m, Mapping) else getattr(m, name, None)


def _stops(m: Spoken, until: Until) -> bool:
    if _field(m, "role") != "assistant":
        return False
    if until == "call":
        return bool(_field(m, "tool_calls"))
    return until == "argument_filling" and _field(m, "phase") == "argument_filling"


def user_turns(messages: Iterable[Spoken], until: Until = "end") -> list[tuple[int, str]]:
    """(index from 0 in `messages`, text) of each user turn up to `until` (module docstring)."""
    if until not in UNTIL:
        raise ValueError(f"until must be one of {', '.join(UNTIL)}, not {until!r}")
    out: list[tuple[int, str]] = []
    for i, m in enumerate(messages):
        if _stops(m, until):
            break
        if _field(m, "role") == "user":
            out.append((i, _field(m, "content") or ""))
    return out


def user_said(messages: Iterable[Spoken], until: Until = "end", sep: str = "\n") -> str:
    """The user's turns up to `until`, joined with `sep` (one turn per line by default)."""
    return sep.join(text for _, text in user_turns(messages, until))
