"""The offline assistant: it does not know the seed tool in phase 1; it commits only once what
the user said sets its best candidate apart from every other candidate (the grounding rule,
`pipeline.grounding`) and otherwise asks a question that contrasts the candidates still in play
(`selection`). It never guesses: when turns run out, the attempt fails. It can still pick a
wrong near-duplicate when the user's words fit it better, which the engine then rejects, as
with a real model. In phase 2 it asks for missing values and calls.
"""

from __future__ import annotations

from typing import Any

from ..dialogue.said import user_said
from . import gold_values as values
from . import phrasing, selection
from .policies import _reply

COMMIT_MARGIN = 0.5        # weighted-overlap lead the evaluation's model under test needs before it commits
_scores = selection.scores  # the weighted word overlap, shared with the evaluation's model under test


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
    """Commit once the user's words set the best candidate apart from every other (the grounding
    rule), else ask a question that contrasts the candidates still in play (`selection`)."""
    # the plain protocol asks at least once: its dialogues teach clarifying, not acting on an opening
    decision = selection.decide(candidates, history, state.get("seed", 0), ask_first=True)
    if decision.tool is not None:
        tool = decision.tool
        return _reply(decision.thought, "", [{"name": tool["name"], "arguments": extract(tool, history)}])
    return _reply(decision.thought, decision.question)


def _fill(tool: dict, history: list[dict]) -> str:
    required = tool["parameters"].get("required") or []
    known = extract(tool, history)
    missing = [k for k in required if k not in known]
    if not missing:
        thought = (f"I have every required argument for {tool['name']}: {', '.join(required) or 'none needed'}. "
                   "Calling it now.")
        return _reply(thought, "", [{"name": tool["name"], "arguments": known}])
    ask = missing[:3]
    props = tool["parameters"].get("properties") or {}
    spoken = [values.label(k, props.get(k)) for k in ask]
    listed = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
    asked = sum(m["role"] == "assistant" for m in history)
    forms = ["Could you give me the {}?", "Thanks. Could you tell me the {}?", "Got it. Could you also give me the {}?",
             "Nearly there: could you tell me the {}?", "And finally, I need the {}."]
    thought = f"{tool['name']} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return _reply(thought, forms[asked % len(forms)].format(listed))
