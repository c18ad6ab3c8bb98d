"""Turn labels: the next action of an assistant turn and the clarification act it performs.

Derived deterministically from the turn itself (its calls, its words) and the dialogue's
scenario, never asked of the model: every backend gets the same labels for the same turn,
and a classifier or reward model trained on them learns what the turn did, not what a
labeller guessed.

Action: `call` (the turn calls a tool), `refuse` (it says no available tool can do what is
asked), `ask` (it asks the user something), `answer` (anything else: a plain reply).
Act, on non-call turns: `report_blocker` (it names what stands in the way: an invalid
value, a missing earlier context), `disambiguate` (it weighs candidate tools; the tools it
names are its `act_candidates`), `ask_parameter` (it asks for an argument value),
`propose_solution` (a refusal that offers what can be done instead), `confirm_risk` (it asks
the user to confirm before acting).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core.records import Dialogue, Message
from ..core.text import identifier_re
from .results import parse

_REFUSAL = re.compile(
    r"\b(none of (the|my) tools|no tool (i|that)|not able to (do|help with) th|cannot do th|can't do th|"
    r"isn't something (i|any)|don't have a tool|no candidate)", re.IGNORECASE)
_OFFER = re.compile(r"\b(instead|what i can do|i can (help|offer|also)|alternatively|if you can)\b", re.IGNORECASE)
_REQUEST = re.compile(r"\b(please (provide|share|give|send|confirm|tell)|could you|can you|would you|"
                      r"let me know|what is|what's|which)\b", re.IGNORECASE)
_BLOCKER = re.compile(r"\b(isn't valid|is not valid|not a valid|can't be used|cannot be used|outside the allowed|"
                      r"not allowed|no record|don't have (access|any record)|same as the|"
                      r"didn't quite follow|couldn't follow)\b", re.IGNORECASE)
_CONFIRM = re.compile(r"\b(please confirm|can you confirm|could you confirm|are you sure|shall i go ahead)\b",
                      re.IGNORECASE)


def asks(text: str) -> bool:
    """Whether a reply asks the user something (a question mark or a request)."""
    return "?" in text or bool(_REQUEST.search(text))


def refuses(text: str) -> bool:
    """Whether a reply says no available tool can do what is asked."""
    return bool(_REFUSAL.search(text))


def action_of(m: Message) -> str:
    if m.tool_calls:
        return "call"
    if refuses(m.content):
        return "refuse"
    return "ask" if asks(m.content) else "answer"


def _named(m: Message, tools: Iterable[str]) -> list[str]:
    said = f"{m.thought or ''}\n{m.content}"
    return [t for t in tools if identifier_re(t, ignore_case=False).search(said)]


def label_turn(m: Message, candidates: list[str]) -> Message:
    """The turn with `action`, `act` and `act_candidates` set (a copy; user turns come back unchanged)."""
    if m.role != "assistant":
        return m
    action = action_of(m)
    act, named = None, []
    if action == "refuse":
        act = "propose_solution" if _OFFER.search(m.content) else "report_blocker"
    elif action in ("ask", "answer") and m.content:
        # the blocker is what the turn leads with; a listed option may hold the same words
        if _BLOCKER.search(re.split(r"(?<=[.!?])\s", m.content.strip(), maxsplit=1)[0]):
            act = "report_blocker"
        elif _CONFIRM.search(m.content):
            act = "confirm_risk"
        elif m.phase == "tool_selection":
            act, named = "disambiguate", _named(m, candidates)
        elif action == "ask":
            act = "ask_parameter"
    return m.model_copy(update={"action": action, "act": act, "act_candidates": named})


def label_dialogue(d: Dialogue) -> list[Message]:
    """Every message of `d`, assistant turns labelled. A turn that answers a successful tool result
    is an `answer` with no act, whatever courtesy question it ends with ('Anything else?'); after an
    error result, an explanation reports the blocker and a request for a corrected value asks."""
    chain = d.scenario_info.chain  # a multi-step task's first step has a pool of its own (`scenarios.offered`)
    names = [t.name for t in [*(chain.candidates if chain else []), *d.candidate_tools]]
    out: list[Message] = []
    for i, m in enumerate(d.messages):
        turn = label_turn(m, names)
        before = d.messages[i - 1] if i else None
        if m.role == "assistant" and not m.tool_calls and before is not None and before.role == "tool":
            result = parse(before.content)
            failed = isinstance(result, dict) and isinstance(result.get("error"), dict)
            act = None if not failed else "ask_parameter" if turn.action == "ask" else "report_blocker"
            action = turn.action if failed else "answer"
            turn = turn.model_copy(update={"action": action, "act": act, "act_candidates": []})
        out.append(turn)
    return out
