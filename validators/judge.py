"""What the LLM validators share: transcript rendering, tolerant JSON reading, the retry loop.

A judge's reply is untrusted text. It is read leniently (code fences and prose around
the object are fine) but must contain a JSON object that validates as the judge's reply
model (`utcgen.pipeline.llm.replies`: RelevancyReply, CritiqueReply), whose JSON Schema
is also sent as response_format where the config asks for structured output; otherwise
the judge is asked again with a fresh nonce (so a cached
bad reply is not simply replayed), and after the retries the dialogue is rejected.
Nothing a judge or the gateway does makes a validator raise.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from ..pipeline.core.records import Dialogue, GenerationInfo, Message, Persona, ScenarioInfo, Verdict
from ..pipeline.llm import replies
from ..pipeline.llm.gateway import LLMError, LLMFatalError, LLMReply
from ..pipeline.llm.requests import CriticRequest, RelevancyRequest

log = logging.getLogger("utcgen.validators")

RETRIES = 2


class ChatGateway(Protocol):
    """What a judge needs: `utcgen.pipeline.llm.gateway.Gateway` or any wrapper with the same `chat` (e.g. a meter)."""

    async def chat(
        self, request: RelevancyRequest | CriticRequest, messages: list[dict], *, nonce: str = "",
        schema: dict | None = None,
    ) -> LLMReply: ...

_SNIPPET = 300


def transcript(d: Dialogue, *, thoughts: bool) -> str:
    """The dialogue as numbered lines; assistant thoughts (private) only when asked for."""
    lines: list[str] = []
    for i, m in enumerate(d.messages, start=1):
        if m.role == "user":
            lines.append(f"[{i}] USER: {m.content}")
            continue
        if m.role != "assistant":
            lines.append(f"[{i}] {m.role.upper()}: {m.content}")
            continue
        phase = f" ({m.phase})" if m.phase else ""
        if thoughts and m.thought:
            lines.append(f"[{i}] ASSISTANT{phase} private thought: {m.thought}")
        if m.content:
            lines.append(f"[{i}] ASSISTANT{phase}: {m.content}")
        for call in m.tool_calls:
            args = json.dumps(call.arguments, ensure_ascii=False, default=str)
            lines.append(f"[{i}] ASSISTANT{phase} calls tool {call.name} with {args}")
    return "\n".join(lines)


def judge_view(d: Dialogue, *, critic: bool) -> Dialogue:
    """The dialogue as a judge's prompt shows it, and all its typed request carries: the seed tool and
    the candidates (every one's description), the goal, the scenario, the transcript (phases and calls;
    thoughts for the critic), and for the critic the persona's traits, the values the user held and the
    scenario's facts. Record-keeping (id, labels, verdicts, how it was made) is left out."""
    seed = d.seed_tool.shown()
    candidates = [t.shown() for t in d.candidate_tools]
    return Dialogue(
        id="", seed_tool=seed, goal=d.goal, scenario=d.scenario, candidate_tools=candidates,
        distractor_tools=[t for t in candidates if t.name != seed.name],
        messages=[Message(role=m.role, content=m.content, phase=m.phase, tool_calls=m.tool_calls,
                          thought=m.thought if critic else None) for m in d.messages],
        user_persona=d.user_persona.shown() if critic else Persona(id="", text=""),  # relevancy shows no persona
        gold_arguments=d.gold_arguments if critic else {},
        scenario_info=d.scenario_info if critic else ScenarioInfo(),
        generation=GenerationInfo(utcgen_version="", backend="", models={}, prompt_versions={}, seed=0,
                                  created_at=""),
    )


_ROLE_OF_KEY = {"relevant": "relevancy", "passed": "critic"}


def parse_reply(text: str, key: str) -> dict[str, Any] | None:
    """The first JSON object in `text` that validates as the judge's reply model, as a dict
    (`key`, the verdict, a real bool; "true"/"false" strings are accepted for it).

    Every '{' is tried as the start of an object, so fences, a preamble or a trailing
    explanation do not matter.
    """
    found = replies.scan(_ROLE_OF_KEY[key], text)
    return None if found is None else found.model_dump()


async def ask(
    name: str,
    request: RelevancyRequest | CriticRequest,
    gateway: ChatGateway,
    messages: list[dict[str, str]],
    key: str,
    to_verdict: Callable[[dict[str, Any]], Verdict],
) -> Verdict:
    """Calls the judge, retrying unparseable replies; LLMError and garbage become a failed Verdict."""
    role = request.role
    last_text = ""
    for attempt in range(RETRIES + 1):
        nonce = f"retry-{attempt}" if attempt else ""
        try:
            reply = await gateway.chat(request, messages, nonce=nonce, schema=replies.schema_of(role))
        except LLMFatalError:
            raise
        except LLMError as exc:
            return Verdict(validator=name, passed=False, reason=str(exc), details={"error": "llm", "attempts": attempt + 1})
        last_text = reply.text
        parsed = parse_reply(reply.text, key)
        if parsed is not None:
            result = to_verdict(parsed)
            result.details.setdefault("attempts", attempt + 1)
            return result
        log.warning("%s judge reply unparseable (attempt %d): %.120r", name, attempt + 1, reply.text)
    return Verdict(
        validator=name,
        passed=False,
        reason="judge reply unparseable",
        details={"error": "unparseable", "attempts": RETRIES + 1, "reply": last_text[:_SNIPPET]},
    )
