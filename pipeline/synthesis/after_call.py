"""After the call (`execution.results` on): the tool's result, the assistant's answer from it, and
the recovery an error result calls for.

Each call the assistant makes gets its result from the tool-result role (`results.tool_result`),
recorded as a `tool` turn that names the call's id (`dialogue.results.call_id`). The assistant then
answers from the result. After an error result it may ask the user for a corrected value, and the
user's reply leads to another call; an explanation of what went wrong ends the dialogue, as an
answer after a successful result does. At most `MAX_CALLS` calls are made, so a tool that keeps
failing ends the dialogue with the assistant's last word on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core.records import Message, Persona, Tool
from ..dialogue.labels import asks
from ..dialogue.results import call_id, results
from ..llm.gateway import Gateway
from .results import result_request, tool_result
from .roles import Roles

MAX_CALLS = 3  # calls of one dialogue (the first and any retries after an error)


@dataclass(frozen=True)
class Execution:
    """What the tool-result role is asked with: the run's seed and error share, and the seed job."""

    gateway: Gateway
    run_seed: int
    job: int
    error_share: float
    retries: int = 2
    holds: dict[str, dict] | None = None  # fields a later step reads from the results (`ToolResultRequest.holds`)


async def after_call(ex: Execution, roles: Roles, tool: Tool, persona: Persona, goal: str,
                     distractors: list[Tool], gold: dict, messages: list[Message], rng_seed: int,
                     start: int = 0, context: dict | None = None) -> None:
    """Runs the dialogue on from its last message, an assistant call, until the assistant answers
    without calling or `MAX_CALLS` calls have had their results. `start`: the number the first of these
    calls has among the dialogue's (a later step's calls draw their outcomes apart from an earlier
    step's); `context`: the scenario as the user is told it."""
    made = 0
    while made < MAX_CALLS and messages[-1].role == "assistant" and messages[-1].tool_calls:
        turn = len(messages) - 1
        for index, call in enumerate(messages[turn].tool_calls):
            number = start + made
            request = result_request(tool, call.arguments, persona, goal, run_seed=ex.run_seed, job=ex.job,
                                     call=number, error_share=ex.error_share, seed=rng_seed + number,
                                     holds=ex.holds)
            result = await tool_result(ex.gateway, request, retries=ex.retries, tag=f"{roles.attempt_tag}/{number}",
                                       note=roles.note)
            messages.append(Message(role="tool", content=json.dumps(result, ensure_ascii=False),
                                    tool_call_id=call_id(turn, index)))
            made += 1
        reply = await roles.assistant("argument_filling", [], tool, messages, rng_seed, None, None, results=True)
        messages.append(reply)
        failed = results(messages)[-1].error is not None
        if reply.parse_error or reply.tool_calls or not failed or not asks(reply.content) or made >= MAX_CALLS:
            continue  # a new call gets its result; an answer, or an explanation of an error, ends it
        text = await roles.user("argument_filling", tool, persona, goal, distractors, gold, messages, rng_seed,
                                context)
        messages.append(Message(role="user", content=text))
        reply = await roles.assistant("argument_filling", [], tool, messages, rng_seed, None, None, results=True)
        messages.append(reply)
