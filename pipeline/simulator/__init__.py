"""The offline backend: a deterministic litellm custom provider that plays every role.

It needs no network and no key. It receives the same rendered prompt a real model
would, plus the role's typed request (`utcgen.pipeline.llm.requests`: the facts that
prompt carries), which the gateway puts in the litellm call's metadata for this provider
only. It answers in exactly the format a real model must use, so the reply goes through
the same parser.
Its data is structurally faithful but template-worded: for dry runs, CI and benchmarks.

It accepts `response_format` and ignores it (its replies already follow the protocol).
When a request carries `tools`, the assistant answers as a native tool-calling model
would (`native_message`): its calls as the message's `tool_calls`, its thought as
`reasoning_content`, its words as the content.

Each role's policy is registered by role (`dispatch.policy`) in the module that plays it:
`writers` (goal, slots), `conversation` (the user proxy and the assistant, handing scenario
types to `scenario_user` and `scenario_assistant`), `judges` (relevancy, critic),
`evaluation` (under_test, voter, rubric) and `results` (tool_result, the tool's backend).
Importing the package registers them all. Only the
model registry (`pipeline.llm.registry`) imports this package.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm.
"""

from __future__ import annotations

import json
import time
import warnings
from typing import Any

from ..llm.requests import REQUEST_KEY, Request, parse_request
from ..settings.models import OFFLINE_PROVIDER

# each policy module registers its roles' policies when imported (`dispatch.policy`)
from . import conversation, evaluation, judges, results, writers  # noqa: F401
from .dispatch import policy_for

# litellm builds the provider's coroutine in an executor thread; when a run cancels a
# call in flight (its target reached), that coroutine is dropped unawaited. Ours wraps a
# pure function, so nothing is lost: silence exactly that warning.
warnings.filterwarnings("ignore", message=r"coroutine '.*OfflineLLM\.acompletion' was never awaited",
                        category=RuntimeWarning)

PROVIDER = OFFLINE_PROVIDER

_registered = False


def respond(request: Request, messages: list[dict]) -> str:
    """The reply text for a request, from its role's registered policy (which reads the request's fields)."""
    return policy_for(request.role)(request, messages)


def request_of(litellm_params: dict[str, Any] | None) -> Request | None:
    """The typed request a call carried in its metadata, validated; None when there is none."""
    raw = ((litellm_params or {}).get("metadata") or {}).get(REQUEST_KEY)
    return None if raw is None else parse_request(raw)


def native_message(text: str) -> dict[str, Any]:
    """An assistant reply in the JSON protocol, re-expressed as a native tool-calling message."""
    data = json.loads(text)
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {}, ensure_ascii=False)}}
             for i, c in enumerate(data.get("tool_calls") or [])]
    message: dict[str, Any] = {"role": "assistant", "content": data.get("content") or None}
    if data.get("thought"):
        message["reasoning_content"] = data["thought"]
    if calls:
        message["tool_calls"] = calls
    return message


def _estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


def register_provider() -> None:
    """Adds the provider to litellm once per process."""
    global _registered
    if _registered:
        return
    import litellm  # lazy: litellm takes seconds to import, and only a run that calls a model needs it
    from litellm.exceptions import BadRequestError  # lazy: as above
    from litellm.llms.custom_llm import CustomLLM  # lazy: as above

    class OfflineLLM(CustomLLM):
        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any):  # type: ignore[override]
            return self.completion(model, messages, *args, **kwargs)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any):  # type: ignore[override]
            try:
                request = request_of(kwargs.get("litellm_params"))
            except ValueError as exc:
                raise BadRequestError(message=f"the offline backend got a malformed request: {exc}",
                                      model=model, llm_provider=PROVIDER) from exc
            if request is None:
                raise BadRequestError(
                    message="the offline backend needs the role's typed request: call it through "
                            "utcgen.pipeline.llm.gateway.Gateway",
                    model=model,
                    llm_provider=PROVIDER,
                )
            role = request.role
            text = respond(request, messages)
            prompt = sum(_estimate_tokens(str(m.get("content", ""))) for m in messages)
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if role in ("assistant", "under_test") and (kwargs.get("optional_params") or {}).get("tools"):
                message = native_message(text)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            return litellm.ModelResponse(
                model=model,
                created=int(time.time()),
                choices=[{"index": 0, "finish_reason": finish, "message": message}],
                usage={"prompt_tokens": prompt, "completion_tokens": _estimate_tokens(text),
                       "total_tokens": prompt + _estimate_tokens(text)},
            )

    handler = OfflineLLM()
    litellm.custom_provider_map = [
        *[p for p in litellm.custom_provider_map if p.get("provider") != PROVIDER],
        {"provider": PROVIDER, "custom_handler": handler},
    ]
    _registered = True
