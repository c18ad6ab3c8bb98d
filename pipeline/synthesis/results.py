"""The tool-result role: the result of one tool call, written by the model that plays the tool.

Built like every generation role (`roles`): a typed request (`ToolResultRequest`: the tool as prompts
show it, its output schema, the call's arguments, the employee's persona and goal, and whether the
result is an error, and which kind), the prompt rendered from it (prompts/tool_result.txt), one
gateway call with the reply's strict schema where strict mode can hold it (`replies.result_reply_schema`),
and the reply read at the boundary (`replies.parse_result`), asked again with what was wrong when it
cannot be used. The pipeline decides the error before the call (`dialogue.outcomes.result_error`, from
`execution.error_share`), so the share of failed calls never depends on the model.

Runs only with `execution.results` on; the conversation that asks for results calls `tool_result`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..core.records import Persona, Tool, persona_text
from ..dialogue.outcomes import result_error
from ..llm import replies
from ..llm.gateway import Gateway, LLMReply
from ..llm.replies import ReplyError
from ..llm.requests import ToolResultRequest
from ..settings.templates import load_prompt
from .roles import reask


def result_request(tool: Tool, arguments: dict[str, Any], persona: Persona, goal: str, *, run_seed: int,
                   job: int, call: int | str, error_share: float, seed: int = 0,
                   holds: dict[str, dict[str, Any]] | None = None) -> ToolResultRequest:
    """The request for the result of call `call` of seed job `job`: an error or not as
    `result_error(run_seed, job, call, error_share)` decides; `seed` is the sampling seed, `holds` the
    fields a later step reads from it."""
    return ToolResultRequest(tool=tool, arguments=arguments, persona=persona, goal=goal,
                             error=result_error(run_seed, job, call, error_share), holds=holds or {}, seed=seed)


def render_tool_result(request: ToolResultRequest) -> list[dict]:
    """The tool-result role's prompt, from its request."""
    schema = request.result_schema()
    return load_prompt("tool_result").render(
        persona=persona_text(request.persona), goal=request.goal, tool=request.tool.spec_json(),
        schema=json.dumps(schema, ensure_ascii=False) if schema is not None else "",
        arguments=json.dumps(request.arguments, ensure_ascii=False), error=request.error or "",
        holds=json.dumps(request.holds, ensure_ascii=False) if request.holds else "")


async def tool_result(gateway: Gateway, request: ToolResultRequest, *, retries: int = 2, tag: str = "",
                      note: Callable[[str, LLMReply], None] | None = None) -> dict[str, Any]:
    """The call's result object (or its error object, when the request asks for one). `retries` re-asks a
    reply that cannot be used, `tag` varies each try's cache key (a dialogue's attempt), and `note`
    (`Roles.note`) is told of every reply, to charge it to its dialogue. ReplyError when no reply is usable."""
    schema = request.result_schema()
    reply_schema = replies.result_reply_schema(schema, request.error)
    messages = render_tool_result(request)
    last, sent = "", messages
    for retry in range(retries + 1):
        reply = await gateway.chat(request, sent, nonce=f"{tag}/tool_result/{retry}", schema=reply_schema)
        if note is not None:
            note(request.role, reply)
        try:
            return replies.parse_result(reply.text, request.error, schema)
        except ReplyError as exc:
            last, sent = f"{exc}; reply was {reply.text[:160]!r}", reask(messages, reply.text, exc)
    raise ReplyError(f"the tool-result role gave no usable result for {request.tool.name} in {retries + 1} "
                     f"replies: {last}")
