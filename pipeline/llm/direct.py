"""A direct client for OpenAI-compatible chat servers: litellm's request and litellm's errors,
at a fraction of its CPU per call.

litellm stays the route to every provider. The gateway sends a call here only when its model is
`openai/<name>` at an `api_base` with a key (vLLM, llama.cpp, TGI, Ollama, a proxy: any server
speaking OpenAI's chat completions) and `llm.direct_client` is on. The body is what litellm sends
for the same call; a failure raises the litellm exception litellm would raise (same class, status,
headers and server message), so retries, Retry-After, the adaptive limit, the structured-output
fallback and fatal errors work unchanged. `tests/test_direct_client.py` puts both clients
before the same server and the same faults.

Why: through litellm and the OpenAI SDK a call costs 5-6 ms of CPU before and after the network
(request transforms, cost lookups, logging objects); with 32 calls in flight that CPU, not the
server, was what held a run back.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx

from .registry import quiet_litellm

PREFIX = "openai/"
# What the gateway's kwargs carry that is not part of the request body.
_NOT_IN_BODY = frozenset({"model", "messages", "api_base", "api_key", "timeout", "num_retries", "metadata",
                          "_skip_mcp_handler"})


@dataclass
class Completion:
    """What the gateway keeps of a reply, whichever client fetched it."""

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def api_key(kwargs: dict[str, Any]) -> str | None:
    """The key litellm would send: the call's own, else OPENAI_API_KEY."""
    return kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY") or None


def serves(kwargs: dict[str, Any]) -> bool:
    """True when litellm would make this call as a plain OpenAI-compatible request."""
    return str(kwargs.get("model", "")).startswith(PREFIX) and bool(kwargs.get("api_base")) and bool(api_key(kwargs))


def body(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSON body litellm sends for these call kwargs (None values left out)."""
    out = {"model": kwargs["model"][len(PREFIX):], "messages": kwargs["messages"]}
    out.update((k, v) for k, v in kwargs.items() if k not in _NOT_IN_BODY and v is not None)
    return out


# One session per event loop, shared by every client of the process (sessions belong to the loop that
# made them); `aclose_all` on that loop closes it.
_SESSIONS: dict[asyncio.AbstractEventLoop, Any] = {}


def _session() -> Any:
    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(loop)
    if session is None or session.closed:
        for old in [lp for lp in _SESSIONS if lp.is_closed()]:  # loops gone: their sessions too
            del _SESSIONS[old]
        # no connection cap here: the gateway's adaptive limit bounds calls in flight
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), trust_env=True)
        _SESSIONS[loop] = session
    return session


async def aclose_all() -> None:
    """Closes the running loop's session (`gateway.shutdown` calls it last)."""
    session = _SESSIONS.pop(asyncio.get_running_loop(), None)
    if session is not None:
        await session.close()


class DirectClient:
    """Sends a gateway's calls over the loop's shared session; keeps the model prices it looked up."""

    def __init__(self) -> None:
        self._prices: dict[str, tuple[float, float]] = {}

    async def complete(self, kwargs: dict[str, Any]) -> Completion:
        model = kwargs["model"]
        url = kwargs["api_base"].rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {api_key(kwargs)}", "Content-Type": "application/json"}
        timeout = float(kwargs.get("timeout") or 600)
        try:
            async with _session().post(url, data=json.dumps(body(kwargs)), headers=headers,
                                            timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                raw = await response.read()
                status, response_headers = response.status, dict(response.headers)
        except TimeoutError as exc:
            raise _timeout(model, timeout) from exc
        except aiohttp.ClientError as exc:
            raise _connection_error(model, url, exc) from exc
        if status >= 400:
            raise status_error(status, raw, model, url, response_headers)
        try:
            return self._completion(model, json.loads(raw))
        except (ValueError, LookupError, TypeError, AttributeError) as exc:  # litellm: an InternalServerError
            raise status_error(500, str(exc).encode(), model, url, response_headers) from exc

    def _completion(self, model: str, data: dict[str, Any]) -> Completion:
        message = data["choices"][0]["message"]
        calls = []
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            if fn.get("name"):
                arguments = fn.get("arguments")
                calls.append({"name": fn["name"], "arguments": arguments if arguments is not None else {}})
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        usage = data.get("usage") or {}
        prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        per_prompt, per_completion = self._price(model)
        return Completion(text=message.get("content") or "", tool_calls=calls,
                          reasoning=reasoning if isinstance(reasoning, str) and reasoning.strip() else None,
                          prompt_tokens=prompt, completion_tokens=completion,
                          cost_usd=prompt * per_prompt + completion * per_completion)

    def _price(self, model: str) -> tuple[float, float]:
        """USD per prompt and per completion token, as litellm prices the model (0 when it does not)."""
        if model not in self._prices:
            litellm = quiet_litellm()
            try:
                per_prompt = litellm.cost_per_token(model=model, prompt_tokens=1_000_000, completion_tokens=0)[0]
                per_completion = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=1_000_000)[1]
                self._prices[model] = (per_prompt / 1e6, per_completion / 1e6)
            except Exception:  # litellm raises a bare Exception for a model it has no price for
                self._prices[model] = (0.0, 0.0)
        return self._prices[model]


def status_error(status: int, raw: bytes, model: str, url: str, headers: dict[str, str]) -> Exception:
    """The exception litellm raises for this error reply: the OpenAI SDK's wording of it, put through
    litellm's own exception mapping (so a 401 whose body says invalid_request_error is a
    BadRequestError here too, as it is through litellm)."""
    litellm = quiet_litellm()
    exception_type = litellm.litellm_core_utils.exception_mapping_utils.exception_type
    OpenAIError = litellm.llms.openai.common_utils.OpenAIError
    text = raw.decode("utf-8", "replace").strip()
    body: Any = None
    try:
        parsed = json.loads(text)
        message = f"Error code: {status} - {parsed}"
        body = parsed.get("error", parsed) if isinstance(parsed, dict) else None
    except ValueError:
        message = text or f"Error code: {status}"
    request = httpx.Request("POST", url)
    original = OpenAIError(status_code=status, message=message, headers=headers,
                           body=body if isinstance(body, dict) else None, request=request,
                           response=httpx.Response(status, headers=headers, request=request))
    try:
        exception_type(model=model[len(PREFIX):], original_exception=original, custom_llm_provider="openai")
    except Exception as mapped:  # exception_type raises the mapped exception
        return mapped
    return original


def _timeout(model: str, seconds: float) -> Exception:
    x = quiet_litellm().exceptions
    return x.Timeout(f"APITimeoutError - Request timed out. timeout value={seconds:g}", model, "openai")


def _connection_error(model: str, url: str, exc: Exception) -> Exception:
    """A failed connection, its cause chained so that `failures.refused` can tell a refused one."""
    x = quiet_litellm().exceptions
    return x.APIConnectionError(f"APIConnectionError: OpenAIException - {exc}", "openai", model,
                                request=httpx.Request("POST", url))
