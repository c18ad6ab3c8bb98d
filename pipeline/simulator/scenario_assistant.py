"""The scenario types' offline assistant, under the prompts that also cover refusing and invalid
values. It gets what a real one gets (`requests.AssistantRequest`): the candidates, the tool it
settled on and the dialogue. It never learns the scenario: it reads the situation from the user's
words, as a model must, and answers in the same JSON reply format.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..core.records import Tool
from ..dialogue import domains
from ..llm.requests import AssistantRequest, Said
from . import contrasts, phrasing, selection
from . import gold_values as values
from .scenario_terms import PREMISE, speaker_tool, spoken_label, stated_scenario_arguments
from .wording import asked_for, reply_json, tokens, tool_words

DETAIL = re.compile(r"What matters is the (.+?)\.", re.IGNORECASE)


PLAIN_OPENING = "i need something done about"


def _opening(history: Sequence[Said]) -> str:
    return next((m.content for m in history if m.role == "user"), "")


def _unclear(opening: str) -> str | None:
    """Why an opening cannot be acted on: it says what it is about but not what to do ("intention"),
    or it is garbled ("expression"); None when it singles a need out."""
    if DETAIL.search(opening) or "it's the usual one we use" in opening.lower():
        return None
    return "intention" if PLAIN_OPENING in opening.lower() else "expression"


def _missing_tool(candidates: list[Tool], opening: str) -> bool:
    """The need the user singled out uses words no candidate has: the tool for it is not offered."""
    found = DETAIL.search(opening)
    if not found:
        return False
    known = set().union(*(tool_words(c) for c in candidates)) if candidates else set()
    return bool(set(tokens(found.group(1))) - known)


def reply(request: AssistantRequest) -> str:
    """The assistant's turn: refuse, ask or call in tool selection; question a value or call in argument filling."""
    history = request.history
    if request.phase == "tool_selection":
        return _select(request, history)
    return _fill(request, history)


def _select(request: AssistantRequest, history: Sequence[Said]) -> str:
    """Refuse when no candidate does what the user singled out; act once the user's words set the
    best candidate apart from every other (the grounding rule); else ask a contrasting question,
    saying first what was unclear in the opening."""
    user_turns = [m for m in history if m.role == "user"]
    opening = _opening(history)
    if _missing_tool(request.candidates, opening):
        return _refuse(request)
    unclear = _unclear(opening) if len(user_turns) == 1 else None
    # the scenarios' openings request the whole need: checking nearness there would over-clarify
    decision = selection.decide(request.candidates, history, request.seed, near=False)
    if decision.tool is not None and not unclear:
        tool = decision.tool
        return reply_json(decision.thought, "", [{"name": tool.name,
                                                   "arguments": stated_scenario_arguments(request.model_copy(update={"tool": tool}), history)}])
    if decision.tool is not None:  # grounded by chance on a garbled or aimless opening: ask all the same
        decision = selection.decide(request.candidates, history, request.seed, ask_first=True, near=False)
    if unclear:
        why = ("the request names the subject but not what should be done" if unclear == "intention"
               else "the request is garbled")
        lead = ("I didn't quite follow your message. " if unclear == "expression"
                else "I see what it's about, but not what you want done. ")
        return reply_json(f"I can't act yet: {why}. {decision.thought}", lead + _unled(decision.question))
    return reply_json(decision.thought, decision.question)


def _unled(question: str) -> str:
    """A question without its courtesy ("Sure, I can help you with that, but first, could you ..."),
    when another lead replaces it: the words from its asking verb on."""
    found = re.search(r"\b(?:could you|do you|are you|is it|would you|which one)\b.*", question)
    if not found:
        return question
    said = found.group(0)
    return said[:1].upper() + said[1:]


def _refuse(request: AssistantRequest) -> str:
    candidates = request.candidates
    near = selection.ranked(candidates, request.history)[:2]
    offer = " or ".join(_phrase_of(c, [o for o in near if o is not c]) for c in near)
    thought = (f"None of the candidates ({', '.join(c.name for c in candidates)}) does what the user asks; "
               f"the closest, {', '.join(c.name for c in near)}, do something else, so calling one would be wrong.")
    return reply_json(thought, f"I'm sorry, none of the tools I can use does that. What I can do instead is "
                                f"help with {offer}.")


def _phrase_of(tool: Tool, others: list[Tool]) -> str:
    """A tool's subject in a few words of its own (never a run of its description)."""
    words = contrasts.contrast_phrases(tool, others, frozenset(), random.Random(tool.name))
    return " and ".join(words) if words else "something close to it"


def _fill(request: AssistantRequest, history: Sequence[Said]) -> str:
    tool = speaker_tool(request)
    props = tool.properties
    required = tool.required
    known = stated_scenario_arguments(request, history)
    assistant_turns = sum(m.role == "assistant" for m in history)
    said = "\n".join(m.content for m in history if m.role == "user").lower()
    for key in required:  # two values given for one detail: which is right?
        name = spoken_label(key, request)
        said_as = f"the {name.lower()} {phrasing.verb(name)} "
        if said_as + "either" in said and said.count(said_as) < 2:
            thought = f"The user gave two values for {key}; I must know which before calling."
            return reply_json(thought, f"You mentioned two values for the {name}. Which one is right?")
    for key in required:
        if key in known and (why := domains.problem(key, known[key], props.get(key) or {}, known)):
            name = spoken_label(key, request)
            thought = f"The value given for {key} ({known[key]!r}) cannot be used: {why}. I must not call with it."
            return reply_json(thought, f"The {name} you gave, {values.say_value(known[key])}, can't be used: {why}. "
                                        f"Could you give me a valid {name}?")
    missing = [k for k in required if k not in known]
    if not missing:
        thought = f"Every required argument of {tool.name} is known and valid. Calling it now."
        return reply_json(thought, "", [{"name": tool.name, "arguments": known}])
    listed = asked_for([spoken_label(k, request) for k in missing])
    lead = ""
    if PREMISE.lower() in _opening(history).lower() and assistant_turns == 0:
        lead = "I don't have access to earlier requests, so I need the details again. "
    thought = f"{tool.name} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return reply_json(thought, f"{lead}Could you give me the {listed}?")
