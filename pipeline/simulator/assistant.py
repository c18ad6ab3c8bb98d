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
from ..dialogue.mentions import mentioned
from ..dialogue.parameter_labels import label
from ..dialogue.results import read_argument
from ..dialogue.said import user_said
from ..llm.requests import AssistantRequest, Said
from ..retrieval.chains import is_reference
from . import answering, phrasing, selection
from .wording import asked_for, reply_json

COMMIT_MARGIN = 0.5        # weighted-overlap lead the evaluation's model under test needs before it commits


def stated_arguments(tool: Tool, history: Sequence[Said]) -> dict[str, Any]:
    """The required values the user has stated, in the phrasing the offline user uses, and each
    required choice whose one option the user named in passing ('hold stock for a customer order'
    names the reason `customer_order`), as a reader takes it and the planning rule counts it."""
    said = user_said(history, sep="\n")
    known = phrasing.read_values(said, tool)
    for key in tool.required:
        schema = tool.properties.get(key) or {}
        if key not in known and isinstance(schema.get("enum"), list):
            named = [v for v in schema["enum"] if isinstance(v, str) and mentioned(v, schema, said) == "found"]
            if len(named) == 1:
                known[key] = named[0]
    return known


def reply(request: AssistantRequest) -> str:
    """The plain protocol's assistant turn: a question or a call in tool selection, the missing
    values or the call in argument filling."""
    if request.results and answering.last_result(request.history) is not None:
        return answering.answer(settled_tool(request), request.history, request.seed)
    task, found = answering.current_task(request.history)  # a later request, once an earlier one is answered
    if request.phase == "tool_selection":
        return _select(request.candidates, task, request.seed, found)
    return _fill(settled_tool(request), task, found)


def settled_tool(request: AssistantRequest) -> Tool:
    """The tool argument filling works on; ValueError when the request has none."""
    if request.tool is None:
        raise ValueError("the assistant's argument-filling request carries no settled tool")
    return request.tool


def known_arguments(tool: Tool, history: Sequence[Said], found: Any = None) -> dict[str, Any]:
    """`stated_arguments`, and each required reference (an id, a named thing) nobody stated that the
    earlier result `found` holds (`results.read_argument`): the value a later request takes from what an
    earlier one found."""
    known = stated_arguments(tool, history)
    if found is None:
        return known
    for key in tool.required:
        schema = tool.properties.get(key) or {}
        if key not in known and is_reference(tool, key) and (value := read_argument(found, key, schema)) is not None:
            known[key] = value
    return known


def _select(candidates: list[Tool], history: Sequence[Said], seed: int, found: Any = None) -> str:
    """Commit once the user's words set the best candidate apart from every other (the grounding
    rule), else ask a question that contrasts the candidates still in play (`selection`)."""
    # the plain protocol asks at least once: its dialogues teach clarifying, not acting on an opening
    decision = selection.decide(candidates, history, seed, ask_first=True)
    if decision.tool is not None:
        tool = decision.tool
        return reply_json(decision.thought, "", [{"name": tool.name, "arguments": known_arguments(tool, history, found)}])
    return reply_json(decision.thought, decision.question)


def _fill(tool: Tool, history: Sequence[Said], found: Any = None) -> str:
    required = tool.required
    known = known_arguments(tool, history, found)
    taken = [k for k in known if k not in stated_arguments(tool, history)]  # read from the earlier result
    missing = [k for k in required if k not in known]
    source = f" The earlier result gave {', '.join(taken)}." if taken else ""
    if not missing:
        thought = (f"I have every required argument for {tool.name}: {', '.join(required) or 'none needed'}."
                   f"{source} Calling it now.")
        return reply_json(thought, "", [{"name": tool.name, "arguments": known}])
    props = tool.properties
    listed = asked_for([label(k, props.get(k)) for k in missing])
    thought = f"{tool.name} needs {', '.join(required)}.{source} Still missing: {', '.join(missing)}."
    return reply_json(thought, ask_for(listed, history, tool.name))


# One sentence each: a courtesy and what is missing, in many wordings, so neither the courtesy nor a request
# for labels many tools share ('the owner and repo') recurs as a stock line.
# a request for values: an acceptance, then the request in the same sentence; the parts combine freely,
# so a pair of labels many tools share ('the owner and repo') is asked a different way in each dialogue
_ACCEPT = ["Sure, I can help you with that", "I can help you with that", "Sure, I can do that for you",
           "I can take care of that for you", "Of course, I can help with that", "Certainly, I can help you with that",
           "I'd be happy to help you with that", "Sure, I can help with this", "Of course, I can do that",
           "I can definitely help you with that", "Sure thing, I can help you with that", "Absolutely, I can help with that",
           "Happy to help with that", "No problem, I can sort that out for you"]
_REQUEST = [", so could you please give me the {x}?", ", but first I will need the {x}.", ", but could you please tell me the {x}?",
            ", so could you please provide the {x}?", ", but I will need the {x} first.", ", but I need to know the {x} first.",
            ", so could you please share the {x}?", ", but I will need you to tell me the {x}.",
            ", so could you please let me know the {x}?", ", but could you first give me the {x}?",
            ", but I will need the {x} from you.", ", so could you tell me the {x}, please?"]
# a request for more values: thanks for the last answer, then the request
_THANKS = ["Thank you for the information", "Thank you for your help", "Thanks for that", "Thank you", "Great, thank you",
           "Thank you, that helps", "Thanks", "Thank you so much", "Perfect, thank you", "Thanks for the details",
           "Got it, thanks"]
_REQUEST_MORE = [", and could you also give me the {x}?", ", so could you please tell me the {x}?",
                 ", and could you also tell me the {x}, please?", ", and I will need the {x} as well to finish this.",
                 ", and could you please give me the {x} as well?", ", and could you also share the {x} with me?",
                 ", and I will need you to tell me the {x} as well.", ", and could you please let me know the {x} too?",
                 ", and could you also provide the {x}?", ", so could you now give me the {x}?"]


def ask_for(listed: str, history: Sequence[Said], salt: str) -> str:
    """A request for the missing values `listed`, in a wording no earlier assistant turn used: the
    first acceptance, then thanks for each answer."""
    earlier = " ".join(m.content for m in history if m.role == "assistant")
    asked = any(f"{a}, " in earlier for a in _ACCEPT + _THANKS)
    lead, ends = (_THANKS, _REQUEST_MORE) if asked else (_ACCEPT, _REQUEST)
    rng = random.Random(f"{salt}:{len(history)}")
    fresh = [a for a in lead if f"{a}, " not in earlier] or lead
    return rng.choice(fresh) + rng.choice([e for e in ends if e.format(x=listed) not in earlier] or ends).format(x=listed)
