"""The offline assistant: it does not know the seed tool in phase 1; it ranks candidates by
weighted word overlap with what the user said, asks while the choice is open and commits on
a clear lead, so it can (and sometimes does) pick a wrong near-duplicate, which the engine
then rejects, as with a real model. In phase 2 it asks for missing values and calls.
"""

from __future__ import annotations

from typing import Any

from ...said import user_said
from . import gold_values as values
from . import phrasing
from .policies import _reply, tokens, tool_words, wish

COMMIT_MARGIN = 0.5        # weighted-overlap lead the assistant needs before it commits

def _scores(candidates: list[dict], user_text: str) -> list[tuple[float, dict]]:
    said = set(tokens(user_text))
    bags = [tool_words(c) for c in candidates]
    weight = {w: 1.0 - sum(w in b for b in bags) / len(bags) for w in set().union(*bags)} if bags else {}
    ranked = [(sum(weight[w] for w in bag & said), c) for bag, c in zip(bags, candidates)]
    return sorted(ranked, key=lambda sc: -sc[0])


def extract(tool: dict, history: list[dict]) -> dict[str, Any]:
    """The required values the user has stated, in the phrasing the offline user uses."""
    return phrasing.read_values(user_said(history, sep="\n"), tool)


def assistant(state: dict, messages: list[dict]) -> str:
    history = state["history"]
    if state.get("may_decline"):
        from . import scenario_policies

        return scenario_policies.assistant(state)
    if state["phase"] == "tool_selection":
        return _select(state["candidates"], history, state)
    return _fill(state["tool"], history)


def _select(candidates: list[dict], history: list[dict], state: dict) -> str:
    user_turns = [m for m in history if m["role"] == "user"]
    ranked = _scores(candidates, user_said(history, sep=" "))
    best, runner_up = ranked[0], ranked[1] if len(ranked) > 1 else (float("-inf"), None)
    # commit on a clear lead; after three user turns, commit to the best guess (it may be wrong)
    # an answer that adds nothing (a vague one) earns another question, not a guess
    informative = len(user_turns) >= 2 and _scores(candidates, user_turns[-1]["content"])[0][0] > 0
    decided = len(user_turns) >= 2 and ((informative and best[0] >= runner_up[0] + COMMIT_MARGIN)
                                        or len(user_turns) >= 3)
    if decided:
        tool = best[1]
        thought = (f"The user's details point to {tool['name']} (overlap {best[0]:.2f} vs "
                   f"{runner_up[0]:.2f} for the next candidate). I will use it.")
        return _reply(thought, "", [{"name": tool["name"], "arguments": extract(tool, history)}])
    options = [c for _, c in ranked[:3]]
    names = ", ".join(c["name"] for c in options)
    listed = "; ".join(wish(c["description"]) for c in options)
    thought = (f"The request fits several tools ({names}). They differ in scope, so I must ask which "
               "one the user means before doing anything.")
    asked = sum(m["role"] == "assistant" for m in history)
    forms = ["I can help with that. To pick the right action, which of these do you need: {}?",
             "Thanks. I still can't tell which one fits. Is it closer to: {}?",
             "Sorry to ask again: which of these matches what you need: {}?",
             "One more try so I get it right. Do you mean: {}?"]
    return _reply(thought, forms[asked % len(forms)].format(listed))


def _fill(tool: dict, history: list[dict]) -> str:
    required = tool["parameters"].get("required") or []
    known = extract(tool, history)
    missing = [k for k in required if k not in known]
    if not missing:
        thought = (f"I have every required argument for {tool['name']}: {', '.join(required) or 'none needed'}. "
                   "Calling it now.")
        return _reply(thought, "", [{"name": tool["name"], "arguments": known}])
    ask = missing[:3]
    spoken = [values.label(k) for k in ask]
    listed = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
    asked = sum(m["role"] == "assistant" for m in history)
    forms = ["Could you give me the {}?", "Thanks. What is the {}?", "Got it. Could you also give me the {}?",
             "Nearly there: could you tell me the {}?", "And finally, what is the {}?"]
    thought = f"{tool['name']} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return _reply(thought, forms[asked % len(forms)].format(listed))
