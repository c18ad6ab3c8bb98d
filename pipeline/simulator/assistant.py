"""The offline assistant: it does not know the seed tool in phase 1; it commits only once what
the user said sets its best candidate apart from every other candidate (the grounding rule,
`pipeline.grounding`) and otherwise asks a question that contrasts the candidates still in play
(`selection`). It never guesses: when turns run out, the attempt fails. It can still pick a
wrong near-duplicate when the user's words fit it better, which the engine then rejects, as
with a real model. In phase 2 it asks for missing values and calls.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..core.records import Tool
from ..dialogue.parameter_labels import label
from ..dialogue.said import user_said
from ..llm.requests import AssistantRequest, Said
from . import phrasing, selection
from .wording import reply_json

COMMIT_MARGIN = 0.5        # weighted-overlap lead the evaluation's model under test needs before it commits


def stated_arguments(tool: Tool, history: Sequence[Said]) -> dict[str, Any]:
    """The required values the user has stated, in the phrasing the offline user uses."""
    return phrasing.read_values(user_said(history, sep="\n"), tool)


def reply(request: AssistantRequest) -> str:
    """The plain protocol's assistant turn: a question or a call in tool selection, the missing
    values or the call in argument filling."""
    if request.phase == "tool_selection":
        return _select(request.candidates, request.history, request.seed)
    return _fill(settled_tool(request), request.history)


def settled_tool(request: AssistantRequest) -> Tool:
    """The tool argument filling works on; ValueError when the request has none."""
    if request.tool is None:
        raise ValueError("the assistant's argument-filling request carries no settled tool")
    return request.tool


def _select(candidates: list[Tool], history: Sequence[Said], seed: int) -> str:
    """Commit once the user's words set the best candidate apart from every other (the grounding
    rule), else ask a question that contrasts the candidates still in play (`selection`)."""
    # the plain protocol asks at least once: its dialogues teach clarifying, not acting on an opening
    decision = selection.decide(candidates, history, seed, ask_first=True)
    if decision.tool is not None:
        tool = decision.tool
        return reply_json(decision.thought, "", [{"name": tool.name, "arguments": stated_arguments(tool, history)}])
    return reply_json(decision.thought, decision.question)


def _fill(tool: Tool, history: Sequence[Said]) -> str:
    required = tool.required
    known = stated_arguments(tool, history)
    missing = [k for k in required if k not in known]
    if not missing:
        thought = (f"I have every required argument for {tool.name}: {', '.join(required) or 'none needed'}. "
                   "Calling it now.")
        return reply_json(thought, "", [{"name": tool.name, "arguments": known}])
    ask = missing[:3]
    props = tool.properties
    spoken = [label(k, props.get(k)) for k in ask]
    listed = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
    thought = f"{tool.name} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return reply_json(thought, ask_for(listed, history, tool.name))


# One sentence each: a courtesy and what is missing, in many wordings, so neither the courtesy nor a request
# for labels many tools share ('the owner and repo') recurs as a stock line.
ASK_FIRST = ["Sure, I can help you with that, so could you please give me the {x}?",
             "I can help you with that, but first I will need the {x}.",
             "Sure, I can do that for you, but could you please tell me the {x}?",
             "I can take care of that for you, so could you please provide the {x}?",
             "Of course, I can help with that, but I will need the {x} first.",
             "Certainly, I can help you with that, but I need to know the {x} first.",
             "I'd be happy to help you with that, so could you please share the {x}?",
             "Sure, I can help with this, but I will need you to tell me the {x}.",
             "Of course, I can do that, so could you please let me know the {x}?",
             "I can definitely help you with that, but could you first give me the {x}?",
             "Sure thing, I can help you with that, but I will need the {x} from you.",
             "Absolutely, I can help with that, so could you tell me the {x}, please?"]
ASK_MORE = ["Thank you for the information, and could you also give me the {x}?",
            "Thank you for your help, so could you please tell me the {x}?",
            "Thanks for that, and could you also tell me the {x}, please?",
            "Thank you, and I will need the {x} as well to finish this.",
            "Great, thank you, and could you please give me the {x} as well?",
            "Thank you, that helps, and could you also share the {x} with me?",
            "Thanks, and I will also need you to tell me the {x}.",
            "Thank you so much, and could you please let me know the {x} too?",
            "Perfect, thank you, and could you also provide the {x}?",
            "Thanks for the details, so could you now give me the {x}?"]


def ask_for(listed: str, history: Sequence[Said], salt: str) -> str:
    """A request for the missing values `listed`, in a wording no earlier assistant turn used."""
    earlier = " ".join(m.content for m in history if m.role == "assistant")
    forms = ASK_MORE if any(f.split("{")[0] in earlier for f in ASK_FIRST + ASK_MORE) else ASK_FIRST
    fresh = [f for f in forms if f.split("{")[0] not in earlier] or forms
    rng = random.Random(f"{salt}:{len(history)}")
    return rng.choice(fresh).format(x=listed)
