"""Offline policies for the evaluation roles: the model under test, the voter and the ConvRel rubric.

`under_test` plays a model being evaluated (`utcgen eval run --model utcgen-offline/default`).
It gets only what a real model sees: the candidate tools and the dialogue so far, its own
earlier thoughts included (a trained model sees them too). It never sees the gold tool or
values, so it infers the tool from the conversation, as the generation assistant does in tool
selection (weighted word overlap of what the user said with each candidate), writes the
choice into its thought ("Settled on `name`"), reads it back on later turns, asks for the
required values it cannot find in the user's words, and calls the tool once it has them all.
One phase, as an evaluated model: its first call ends the dialogue. In a multi-step case a result
comes back: it says what the result holds, and the user's next request starts afresh (its own
choice among the candidates), a required reference nobody said taken from that result.

`voter` picks the best of several user-proxy candidates (App. C.3), deterministically, from
what its prompt shows (persona, goal, transcript, drafts; never the tools): a candidate that
writes an identifier (a tool or parameter name), or talks like the assistant (JSON, tool
calls, offers of help) loses points; one that answers the assistant's last
question with something concrete gains one; ties go to the first shown.

`rubric` grades one assistant turn 1-3 for conversational relevance: 1 for an unusable or
empty turn, or a call of a tool not offered; 2 for a turn repeating an earlier one word for
word; 3 for a call of an offered tool or a question that uses words of the candidates (what
tells them apart, or a parameter); 2 for a question off the candidates' words; 1 otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..core.records import Tool
from ..dialogue.parameter_labels import label
from ..llm.requests import RubricRequest, Said, UnderTestRequest, VoterRequest
from . import answering
from .assistant import COMMIT_MARGIN, known_arguments
from .dispatch import policy
from .selection import scores
from .wording import asked_for, reply_json, tokens, wish

SETTLED = re.compile(r"Settled on `([^`]+)`")


# ---- the model under test ---------------------------------------------------------------------------

@policy("under_test")
def under_test(request: UnderTestRequest, messages: list[dict]) -> str:
    """One assistant turn in the JSON reply protocol (the gateway re-expresses it natively when asked)."""
    candidates = request.candidates
    by_name = {c.name: c for c in candidates}
    tool = _settled(request.history, by_name)
    if answering.last_result(request.history) is not None and tool is not None:
        return answering.answer(tool, request.history, 0)  # what the result holds; the next request starts afresh
    _, found = answering.current_task(request.history)  # the last successful result, if any
    last = max((i for i, m in enumerate(request.history) if m.role == "tool"), default=-1)
    history = request.history[last + 1:]  # the request under way: after the last result, success or not
    tool = _settled(history, by_name)
    if tool is None:
        user_turns = [m for m in history if m.role == "user"]
        ranked = scores(candidates, " ".join(m.content for m in user_turns))
        best = ranked[0]
        runner_up = ranked[1][0] if len(ranked) > 1 else float("-inf")
        informative = len(user_turns) >= 2 and scores(candidates, user_turns[-1].content)[0][0] > 0
        if len(user_turns) >= 2 and ((informative and best[0] >= runner_up + COMMIT_MARGIN) or len(user_turns) >= 3):
            tool = best[1]
        else:
            options = [c for _, c in ranked[:3]]
            listed = "; ".join(wish(c.description) for c in options)
            thought = (f"Several candidates still fit ({', '.join(c.name for c in options)}): "
                       "I must ask which one is meant.")
            opening = next((i for i, m in enumerate(history) if m.role == "user"), 0)  # after a result: its answer
            asked = sum(m.role == "assistant" for m in history[opening:])
            forms = ["I can help. Which of these do you need: {}?", "I still can't tell. Is it closer to: {}?",
                     "Sorry to ask again: which of these matches: {}?"]
            return reply_json(thought, forms[asked % len(forms)].format(listed))
    required = tool.required
    known = known_arguments(tool, history, found)
    missing = [k for k in required if k not in known]
    settled = f"Settled on `{tool.name}`."
    if not missing:
        return reply_json(f"{settled} Every required value is known; calling it.", "",
                      [{"name": tool.name, "arguments": known}])
    props = tool.properties
    listed = asked_for([label(k, props.get(k)) for k in missing])
    return reply_json(f"{settled} Still missing: {', '.join(missing)}.", f"Could you give me the {listed}?")


def _settled(history: Sequence[Said], by_name: dict[str, Tool]) -> Tool | None:
    """The tool the model's last thought in `history` (its own turns carry them) settled on, if any."""
    for m in reversed(history):
        if m.role == "assistant" and (found := SETTLED.search(getattr(m, "thought", None) or "")):
            return by_name.get(found.group(1))
    return None


# ---- the voter ----------------------------------------------------------------------------------------

ASSISTANT_TALK = re.compile(r"how can i (help|assist)|as an ai|i can help you|<tool_call>|\"tool_calls\"|"
                            r"^\s*(assistant|system)\s*:", re.IGNORECASE)


# what the vote prompt forbids a draft to write: a tool or parameter name as an identifier
IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*)(?![A-Za-z0-9])")


def vote_score(text: str, question: str) -> int:
    """How good a user-proxy candidate is, judged as the vote prompt asks, from the draft and the
    assistant's last turn alone: identifiers (tool or parameter names), JSON or assistant talk lose
    points, an empty draft loses most; one that answers the question gains one."""
    score = 0
    low = text.lower()
    if IDENTIFIER.search(text):
        score -= 3
    if ASSISTANT_TALK.search(text) or low.lstrip().startswith("{"):
        score -= 3
    if not text.strip():
        score -= 5
    if question and "?" in question and set(tokens(text)) & set(tokens(question)):
        score += 1
    return score


@policy("voter")
def voter(request: VoterRequest, messages: list[dict]) -> str:
    """`{"choice": k}`, k 1-based in the order shown (`request.shown`)."""
    question = next((m.content for m in reversed(request.history) if m.role == "assistant"), "")
    points = [vote_score(text, question) for text in request.shown]
    best = max(range(len(points)), key=lambda i: (points[i], -i))
    return json.dumps({"choice": best + 1})


# ---- the ConvRel rubric ---------------------------------------------------------------------------------

@policy("rubric")
def rubric(request: RubricRequest, messages: list[dict]) -> str:
    """`{"grade": 1|2|3, "reason": ...}` for `request.turn` (see the module docstring)."""
    turn, candidates = request.turn, request.candidates
    names = {c.name for c in candidates}
    calls = turn.tool_calls
    content = turn.content
    if turn.parse_error or (not content.strip() and not calls):
        return json.dumps({"grade": 1, "reason": "no usable reply"})
    if calls:
        ok = all(c.get("name") in names for c in calls)
        return json.dumps({"grade": 3 if ok else 1, "reason": "calls an offered tool" if ok else "calls an unknown tool"})
    if any(m.role == "assistant" and m.content.strip() == content.strip() for m in request.history):
        return json.dumps({"grade": 2, "reason": "repeats an earlier turn word for word"})
    vocabulary: set[str] = set()
    for c in candidates:
        vocabulary |= set(tokens(c.description)) | set(tokens(" ".join(c.properties)))
    asks = "?" in content
    on_topic = bool(set(tokens(content)) & vocabulary)
    grade = 3 if asks and on_topic else 2 if asks or on_topic else 1
    return json.dumps({"grade": grade, "reason": "question about the candidates" if grade == 3 else "partly relevant"})
