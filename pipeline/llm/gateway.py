"""The one gateway every role calls: litellm underneath, async, bounded, retried, cached, metered.

Every backend goes through litellm, including the offline one (a litellm custom
provider), so rendering, transport and parsing are the same code for all of them; the one
exception is transport to an OpenAI-compatible server (`direct`, `llm.direct_client`), which
sends litellm's request and raises litellm's errors for a fraction of its CPU per call.

Each role's call goes to its own endpoint with its own sampling (`registry.ModelEntry`). What an
endpoint refuses is learnt once per run: a response_format it cannot take (`structured`), and a
request parameter it does not support (a reasoning model's temperature, say: `params`), which is
then left out of its calls. Usage is counted per role as well as in total.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import sqlite3
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..core.records import Usage
from ..core.redaction import watch
from . import direct, structured
from .failures import (
    KEPT,
    Health,
    LLMError,
    LLMFatalError,
    category,
    describe,
    is_fatal,
    is_retryable,
    retry_after,
    short,
)
from .limits import AdaptiveLimit, Limits
from .params import Dropped, completion_params, with_prompt_cache
from .registry import ModelRegistry, is_local, quiet_litellm
from .requests import REQUEST_KEY, Request

__all__ = ["ROLE_USAGE", "Gateway", "LLMError", "LLMFatalError", "LLMReply", "ResponseCache",
           "shutdown"]

log = logging.getLogger("utcgen.llm")

# role -> usage of the calls made in this context: a synthesis attempt sets a fresh mapping so that its
# dialogue records what each role cost (its tasks, the judges' included, share the mapping).
ROLE_USAGE: ContextVar[dict[str, Usage] | None] = ContextVar("utcgen_role_usage", default=None)


class LLMReply(BaseModel):
    """What a call returns: the reply text, native tool calls and reasoning if the model gave
    any, the structured-output mode the request used, and what it cost."""

    text: str
    usage: Usage
    cached: bool = False
    # OpenAI-style calls as litellm normalised them: [{"name": str, "arguments": str | dict}]
    tool_calls: list[dict[str, Any]] = []
    reasoning: str | None = None  # the provider's reasoning_content, when it sends one
    structured_output: str = "off"  # the response_format mode sent (structured.LADDER, or off)


class ResponseCache:
    """SQLite map from request hash to reply: safe across threads, durable across runs."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")

    def get(self, key: str) -> LLMReply | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return LLMReply.model_validate_json(row[0]) if row else None

    def put(self, key: str, reply: LLMReply) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, reply.model_dump_json()))

    def close(self) -> None:
        with self._lock:
            self._db.close()


# Request fields that change how a call is made, never what it answers: left out of the cache key.
_NOT_IN_KEY = ("timeout", "num_retries", "api_key", "max_retries")


class Gateway:
    """Calls a role's model. One instance per run; share it across all concurrent dialogues.

    Built from the model registry (role -> model entry with its endpoint and sampling, and the shared
    call settings). Calls in flight are bounded per (provider, model, api_base) by an adaptive limit
    (`limits.AdaptiveLimit`, at most `llm.max_in_flight`). `on_call(gateway)`, if set, is
    called after every call, cache hit and retry (progress bars read `usage`, `retries`
    and `in_flight()`)."""

    def __init__(self, registry: ModelRegistry) -> None:
        quiet_litellm()
        watch(e.api_key_env for e in registry.entries.values())  # their values are redacted wherever text is written
        self.registry = registry
        self.settings, _ = registry.effective()
        self.limits = Limits(self.settings.max_in_flight)  # each endpoint's start: `registry.start_in_flight`
        self.usage = Usage()
        self.usage_by_role: dict[str, Usage] = {}  # this process's calls, role by role
        self.dropped = Dropped()  # request parameters each endpoint refused, left out of its later calls
        self.retries = 0
        self.retry_reasons: dict[str, int] = {}
        self.gave_up = 0  # calls that failed through all their retries (their dialogues were rejected)
        self.health = Health(self.settings.abort_after_failures, self.settings.abort_failure_rate)
        self.on_call: Any = None
        cache_root = Path(self.settings.cache_dir or os.environ.get("UTCGEN_CACHE_DIR") or Path.home() / ".cache" / "utcgen")
        self.cache = ResponseCache(cache_root / "llm-cache.sqlite") if self.settings.cache else None
        self.direct = direct.DirectClient() if self.settings.direct_client else None
        self.formats = structured.Formats(self.settings.structured_output,
                                          {role: e.structured_output for role, e in registry.entries.items()})

    @property
    def models(self) -> dict[str, str]:
        """role -> model string, as recorded in every dialogue."""
        return self.registry.models()

    def in_flight(self) -> int:
        return self.limits.in_flight()

    def _notify(self) -> None:
        if self.on_call is not None:
            self.on_call(self)

    def _count(self, role: str, usage: Usage) -> None:
        self.usage.add(usage)
        self.usage_by_role.setdefault(role, Usage()).add(usage)
        if (mine := ROLE_USAGE.get()) is not None:
            mine.setdefault(role, Usage()).add(usage)

    def _request_kwargs(self, request: Request, messages: list[dict], shape: structured.Shape) -> dict[str, Any]:
        """Everything a call sends to litellm; the cache key is made from it (see `_key`). Only the
        offline provider gets the typed request (in the call's metadata); a real model never does."""
        entry = self.registry.entry(request.role)
        kwargs: dict[str, Any] = {
            "model": entry.model,
            "messages": messages,
            **completion_params(entry.model, entry.temperature, entry.max_tokens),
            "timeout": entry.timeout,
            "num_retries": 0,
        }
        if entry.offline:
            kwargs["metadata"] = {REQUEST_KEY: request.model_dump(mode="json")}
        else:
            kwargs["messages"] = with_prompt_cache(entry.model, messages)
            kwargs.update(entry.extra)
            if entry.api_base:
                kwargs["api_base"] = entry.api_base
            if entry.api_key_env:
                kwargs["api_key"] = os.environ.get(entry.api_key_env, "")
        kwargs.update(self._shape_kwargs(request.role, shape))
        return kwargs

    def _shape_kwargs(self, role: str, shape: structured.Shape, mode: str | None = None) -> dict[str, Any]:
        """response_format and tools for this call (see `structured`); `mode` overrides the learnt one."""
        entry = self.registry.entry(role)
        out: dict[str, Any] = {}
        if shape.tools:
            out["tools"] = shape.tools
            out["_skip_mcp_handler"] = True  # function tools only: spares litellm's MCP path (needs `mcp`)
        mode = mode or self.formats.mode(role, entry.model, entry.api_base)
        if (fmt := structured.response_format(mode, shape)) is not None:
            out["response_format"] = fmt
        return out

    def _key(self, kwargs: dict[str, Any], nonce: str) -> str:
        """The cache key: every request field that can change the reply (model, api_base, messages,
        sampling, response_format, tools, ...), whatever `_request_kwargs` sends."""
        sent = {k: v for k, v in kwargs.items() if k not in _NOT_IN_KEY}
        blob = json.dumps([sent, nonce], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    async def chat(self, request: Request, messages: list[dict], *, nonce: str = "",
                   schema: dict | None = None, tools: list[dict] | None = None) -> LLMReply:
        """One completion for `request.role`, whose prompt is `messages`. `nonce` varies a retry's cache
        key; `schema` is the reply's JSON Schema (sent as response_format per `llm.structured_output`),
        `tools` the function specs of a native tool call (sent as the request's `tools`)."""
        shape = structured.Shape(schema=schema, name=f"{request.role}_reply", tools=tools)
        entry = self.registry.entry(request.role)
        # The offline backend is free and deterministic: caching it would only serve stale replies.
        cache = None if entry.offline else self.cache
        key = self._key(self._request_kwargs(request, messages, shape), nonce) if cache else ""
        if cache and (hit := cache.get(key)) is not None:
            usage = hit.usage.model_copy(update={"cached_calls": 1, "cost_usd": 0.0})
            self._count(request.role, usage)
            self._notify()
            return hit.model_copy(update={"usage": usage, "cached": True})
        reply = await self._call_with_retries(request, messages, shape)
        if cache:
            cache.put(key, reply)
        self._count(request.role, reply.usage)
        self._notify()
        return reply

    async def _call_with_retries(self, request: Request, messages: list[dict], shape: structured.Shape) -> LLMReply:
        s, role = self.settings, request.role
        entry = self.registry.entry(role)
        model = entry.model
        # The offline backend is deterministic: its failures are bugs, never worth a retry.
        retries = 0 if entry.offline else s.max_retries
        limit = self.limits.get(model, entry.api_base, self.registry.start_in_flight(entry.api_base))
        endpoint = f"{model} at {entry.api_base}" if entry.api_base else model
        for attempt in range(retries + 1):
            try:
                reply = await self._call(request, messages, shape, limit)
                limit.success()
                self.health.ok(endpoint)
                return reply
            except Exception as exc:
                failure = f"{role} call to {model} failed: {describe(exc, entry.api_base)}"
                if is_fatal(exc):
                    raise LLMFatalError(f"{failure}. Fix the model name, address or credentials, then re-run "
                                        f"the same command: {KEPT}") from exc
                if not is_retryable(exc):
                    raise LLMError(failure) from exc  # this request's own problem: its dialogue is rejected
                kind = category(exc)
                if attempt == retries:
                    tries = f"{attempt + 1} {'try' if attempt == 0 else 'tries'}"
                    self.gave_up += 1
                    if (down := self.health.failed(endpoint)) is None:  # a sporadic fault: this dialogue only
                        raise LLMError(f"llm_error: {failure}. Gave up after {tries}") from exc
                    hint = f"the server is down, overloaded or slower than llm.timeout ({entry.timeout:g}s)"
                    if kind == "timeout":
                        hint = (f"calls took longer than llm.timeout ({entry.timeout:g}s): allow fewer calls in flight "
                                f"(--max-in-flight, now at most {limit.maximum}) or a longer llm.timeout")
                    raise LLMFatalError(f"{failure}. Gave up after {tries}, and {endpoint} keeps failing: {down}; "
                                        f"{hint}. {KEPT}") from exc
                wait = retry_after(exc)
                if kind == "rate limited":
                    limit.rate_limited(wait)  # the server says it is overloaded: fewer calls in flight
                if wait is None:
                    wait = min(s.backoff_max, s.backoff_base * 2**attempt) * (0.5 + random.random() / 2)
                self.retries += 1
                self.retry_reasons[kind] = self.retry_reasons.get(kind, 0) + 1
                self._notify()
                if kind == "timeout" and is_local(entry.api_base):
                    log.warning("%s: no reply within %gs from the local server at %s, retry %d in %.2fs "
                                "(%d calls in flight allowed; a single-threaded server answers one at a time: "
                                "lower --max-in-flight or raise llm.timeout)", role, entry.timeout, entry.api_base,
                                attempt + 1, wait, limit.limit)
                else:
                    log.warning("%s: %s, retry %d in %.2fs", role, kind, attempt + 1, wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _call(self, request: Request, messages: list[dict], shape: structured.Shape,
                    limit: AdaptiveLimit) -> LLMReply:
        """One try of a call. The slot of `limit` is held while the request is out, not while it is built
        or its reply read, and never across a backoff sleep."""
        litellm = quiet_litellm()

        role = request.role
        entry = self.registry.entry(role)
        kwargs = self.dropped.apply(entry.endpoint, self._request_kwargs(request, messages, shape))
        mode = self.formats.mode(role, entry.model, entry.api_base) if "response_format" in kwargs else "off"
        while True:
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation that arrives as the
                # call completes, and the cancelled dialogue then runs on to its end.
                async with limit, asyncio.timeout(entry.timeout + 5):
                    if self.direct and direct.serves(kwargs):
                        completion = await self.direct.complete(kwargs)
                    else:
                        completion = _completion(await litellm.acompletion(**kwargs))
                break
            except Exception as exc:
                # A parameter the endpoint does not support: left out of its calls from now on, sent again at once.
                if (learnt := self.dropped.learn(entry.endpoint, kwargs, exc)) is not None:
                    param, news = learnt
                    if news:
                        log.warning("%s: %s does not support the request parameter '%s': it is no longer sent "
                                    "in this model's calls for the rest of the run (%s)", role, entry.model, param,
                                    short(exc, 200))
                    kwargs = self.dropped.apply(entry.endpoint, kwargs)
                    continue
                # `auto` and a server that refuses this response_format: the next form, at once.
                step = self.formats.refused(role, entry.model, entry.api_base, mode, exc) if mode != "off" else None
                if step is None:
                    raise
                kwargs.pop("response_format", None)
                kwargs.update(self._shape_kwargs(role, shape, step))
                mode = step if "response_format" in kwargs else "off"
        return LLMReply(text=completion.text, tool_calls=completion.tool_calls, reasoning=completion.reasoning,
                        structured_output=mode,
                        usage=Usage(calls=1, prompt_tokens=completion.prompt_tokens,
                                    completion_tokens=completion.completion_tokens, cost_usd=completion.cost_usd))

    def close(self) -> None:
        if self.cache:
            self.cache.close()


def _completion(response: Any) -> direct.Completion:
    """What the gateway keeps of a litellm response: text, native calls, reasoning, usage and cost."""
    message = response.choices[0].message
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        fn = getattr(call, "function", None)
        if fn is not None and getattr(fn, "name", None):
            calls.append({"name": fn.name, "arguments": fn.arguments if fn.arguments is not None else {}})
    reasoning = getattr(message, "reasoning_content", None)
    usage = getattr(response, "usage", None)
    cost = (getattr(response, "_hidden_params", {}) or {}).get("response_cost") or 0.0
    return direct.Completion(
        text=message.content or "", tool_calls=calls,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning.strip() else None,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost_usd=float(cost))


async def shutdown() -> None:
    """Lets litellm finish its queued success callbacks and closes its pooled connections (and the
    direct client's).

    Call it last, on the loop that made the calls: otherwise the interpreter exits with
    litellm's logging task still pending and sockets unclosed, and prints warnings for both.
    """
    litellm = quiet_litellm()
    logging_worker = litellm.litellm_core_utils.logging_worker.GLOBAL_LOGGING_WORKER
    close_litellm_async_clients = litellm.llms.custom_httpx.async_client_cleanup.close_litellm_async_clients

    try:
        async with asyncio.timeout(5):
            await logging_worker.flush()
    except TimeoutError:
        log.warning("litellm callbacks still queued after 5 s; dropping them")
    await logging_worker.stop()
    await close_litellm_async_clients()
    await direct.aclose_all()
