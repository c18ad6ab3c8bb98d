"""The one gateway every role calls: litellm underneath, async, bounded, retried, cached, metered.

Every backend goes through litellm, including the offline one (a litellm custom
provider), so rendering, transport and parsing are the same code for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import random
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..config import RunConfig
from ..errors import UtcgenError
from ..records import Usage
from . import offline, structured
from .limits import Limits

log = logging.getLogger("utcgen.llm")


class LLMError(UtcgenError):
    """A call the server refused for this request's own sake (a 4xx such as a prompt too long):
    the dialogue that made it is rejected and the run goes on."""


class LLMFatalError(LLMError):
    """A failure no other dialogue would get past (a rejected key, an unknown model, a server
    that stays down through every retry): the run stops instead of spending its seeds on it,
    and the unfinished job is not journaled, so the re-run does it."""


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


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait, from the error's response headers if any."""
    for attr in ("litellm_response_headers", "response"):
        source = getattr(exc, attr, None)
        headers = getattr(source, "headers", source)
        if headers is None:
            continue
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            value = headers.get("retry-after") or headers.get("Retry-After")
            if value is not None:
                return max(0.0, float(value))
    return None


def _is_retryable(exc: Exception) -> bool:
    from litellm import exceptions as litellm

    retryable = (
        litellm.Timeout,
        litellm.RateLimitError,
        litellm.APIConnectionError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
    )
    if isinstance(exc, (*retryable, asyncio.TimeoutError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(exc, litellm.APIError) and (status is None or status >= 500)


def _litellm() -> Any:
    """litellm, quiet and with the offline provider registered: what every use here expects."""
    import litellm

    litellm.suppress_debug_info = True
    offline.register()
    return litellm


def _is_fatal(exc: Exception) -> bool:
    """A bad key, a forbidden or an unknown model. By status too: litellm maps an OpenAI-style
    body of type invalid_request_error to BadRequestError whatever the status was."""
    from litellm import exceptions as litellm

    fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
    return isinstance(exc, fatal) or getattr(exc, "status_code", None) in (401, 403, 404)


_KEPT = "Finished work is kept: re-running the same command resumes where this run stopped."
_CREDENTIAL = re.compile(r"KEY|TOKEN|SECRET|PASSWORD")


def check_models(config: RunConfig) -> list[str]:
    """What would make every call to a role's model fail, found before the first call.

    Unknown providers and credentials missing from the environment; API bases are left to
    litellm's defaults (Ollama's local port, for one), so only credential variables count.
    """
    litellm = _litellm()
    settings = config.llm
    roles_of: dict[str, list[str]] = {}
    for role, model in config.models.model_dump().items():
        if not model.startswith(offline.PROVIDER + "/"):
            roles_of.setdefault(model, []).append(role)
    problems = []
    if roles_of and settings.api_key_env and not os.environ.get(settings.api_key_env):
        problems.append(f"llm.api_key_env: the environment variable {settings.api_key_env} is not set")
    for model, roles in roles_of.items():
        source = " (from UTCGEN_MODEL)" if os.environ.get("UTCGEN_MODEL") == model else ""
        where = f"models.{'/'.join(roles)} = {model!r}{source}"
        try:
            litellm.get_llm_provider(model, api_base=settings.api_base)
        except litellm.BadRequestError:
            problems.append(f"{where}: litellm knows no provider for it; write it as provider/model, "
                            "e.g. openai/gpt-4o-mini or hosted_vllm/<name>")
            continue
        if settings.api_key_env:
            continue
        found = litellm.validate_environment(model=model, api_base=settings.api_base)
        missing = [key for key in found.get("missing_keys", []) if _CREDENTIAL.search(key)]
        if missing:
            problems.append(f"{where}: needs {' and '.join(missing)} in the environment (for a local server "
                            "that ignores keys any value will do), or name another variable in llm.api_key_env")
    return problems


LOCAL_START_IN_FLIGHT = 2  # a local server is often one model on one thread: start low, grow on success
LOCAL_TIMEOUT = 300.0  # seconds; a local server's queue makes long waits normal


def is_local(api_base: str | None) -> bool:
    """True for a server on this machine (127.0.0.1, localhost, ::1)."""
    if not api_base:
        return False
    from urllib.parse import urlparse

    return (urlparse(api_base).hostname or "") in ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def effective_settings(config: RunConfig) -> Any:
    """`config.llm` with the local-server defaults applied where the user kept the shipped default:
    a longer timeout for a server on this machine. Returns (settings, first in-flight limit):
    `llm.start_in_flight` when set, else a low start for a local server, else None (the maximum)."""
    settings = config.llm
    defaults = type(settings).model_fields
    start = settings.start_in_flight
    if is_local(settings.api_base) and config.backend() != "offline":
        if settings.timeout == defaults["timeout"].default:
            settings = settings.model_copy(update={"timeout": LOCAL_TIMEOUT})
        if start is None:
            start = LOCAL_START_IN_FLIGHT
    return settings, None if start is None else min(start, settings.max_in_flight)


# Request fields that change how a call is made, never what it answers: left out of the cache key.
_NOT_IN_KEY = ("timeout", "num_retries", "api_key", "max_retries")


class Gateway:
    """Calls a role's model. One instance per run; share it across all concurrent dialogues.

    Calls in flight are bounded per (provider, model, api_base) by an adaptive limit
    (`limits.AdaptiveLimit`, at most `llm.max_in_flight`). `on_call(gateway)`, if set, is
    called after every call, cache hit and retry (progress bars read `usage`, `retries`
    and `in_flight()`)."""

    def __init__(self, config: RunConfig) -> None:
        _litellm()
        self.config = config
        self.settings, start = effective_settings(config)
        self.models = config.models.model_dump()
        self.limits = Limits(self.settings.max_in_flight, start)
        self.usage = Usage()
        self.retries = 0
        self.retry_reasons: dict[str, int] = {}
        self.on_call: Any = None
        cache_root = Path(self.settings.cache_dir or os.environ.get("UTCGEN_CACHE_DIR") or Path.home() / ".cache" / "utcgen")
        self.cache = ResponseCache(cache_root / "llm-cache.sqlite") if self.settings.cache else None
        self.formats = structured.Formats(self.settings.structured_output, self.settings.structured_output_roles)

    def in_flight(self) -> int:
        return self.limits.in_flight()

    def _notify(self) -> None:
        if self.on_call is not None:
            self.on_call(self)

    def _request_kwargs(self, role: str, model: str, messages: list[dict], state: dict | None) -> dict[str, Any]:
        """Everything a call sends to litellm; the cache key is made from it (see `_key`)."""
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
            "timeout": self.settings.timeout,
            "num_retries": 0,
        }
        if not model.startswith(offline.PROVIDER + "/"):
            if self.settings.api_base:
                kwargs["api_base"] = self.settings.api_base
            if self.settings.api_key_env:
                kwargs["api_key"] = os.environ.get(self.settings.api_key_env, "")
            if self.settings.send_state and state is not None:
                kwargs["extra_headers"] = {offline.STATE_HEADER: offline.encode_state(role, state)}
        kwargs.update(self._shape_kwargs(role, model))
        return kwargs

    def _shape_kwargs(self, role: str, model: str, mode: str | None = None) -> dict[str, Any]:
        """response_format and tools for this call (see `structured`); `mode` overrides the learnt one."""
        shape = structured.SHAPE.get()
        out: dict[str, Any] = {}
        if shape.tools:
            out["tools"] = shape.tools
            out["_skip_mcp_handler"] = True  # function tools only: spares litellm's MCP path (needs `mcp`)
        base = None if model.startswith(offline.PROVIDER + "/") else self.settings.api_base
        mode = mode or self.formats.mode(role, model, base)
        if (fmt := structured.response_format(mode, shape)) is not None:
            out["response_format"] = fmt
        return out

    def _key(self, kwargs: dict[str, Any], nonce: str) -> str:
        """The cache key: every request field that can change the reply (model, api_base, messages,
        sampling, response_format, tools, headers, ...), whatever `_request_kwargs` sends."""
        sent = {k: v for k, v in kwargs.items() if k not in _NOT_IN_KEY}
        blob = json.dumps([sent, nonce], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    async def chat(self, role: str, messages: list[dict], *, state: dict | None = None, nonce: str = "",
                   schema: dict | None = None, tools: list[dict] | None = None) -> LLMReply:
        """One completion for `role`. `state` drives the offline backend; `nonce` varies a retry's cache key;
        `schema` is the reply's JSON Schema (sent as response_format per `llm.structured_output`), `tools`
        the function specs of a native tool call (sent as the request's `tools`)."""
        # Read by _request_kwargs and _call in this task (a context variable: every chat sets its own).
        structured.SHAPE.set(structured.Shape(schema=schema, name=f"{role}_reply", tools=tools))
        model = self.models[role]
        # The offline backend is free and deterministic: caching it would only serve stale replies.
        cache = None if model.startswith(offline.PROVIDER + "/") else self.cache
        key = self._key(self._request_kwargs(role, model, messages, state), nonce) if cache else ""
        if cache and (hit := cache.get(key)) is not None:
            usage = hit.usage.model_copy(update={"cached_calls": 1, "cost_usd": 0.0})
            self.usage.add(usage)
            self._notify()
            return hit.model_copy(update={"usage": usage, "cached": True})
        reply = await self._call_with_retries(role, model, messages, state)
        if cache:
            cache.put(key, reply)
        self.usage.add(reply.usage)
        self._notify()
        return reply

    async def _call_with_retries(self, role: str, model: str, messages: list[dict], state: dict | None) -> LLMReply:
        s = self.settings
        # The offline backend is deterministic: its failures are bugs, never worth a retry.
        is_offline = model.startswith(offline.PROVIDER + "/")
        retries = 0 if is_offline else s.max_retries
        limit = self.limits.get(model, None if is_offline else s.api_base)
        for attempt in range(retries + 1):
            try:
                async with limit:  # the slot is held per attempt, not across backoff sleeps
                    reply = await self._call(role, model, messages, state)
                limit.success()
                return reply
            except Exception as exc:
                failure = f"{role} call to {model} failed: {_describe(exc, s.api_base)}"
                if _is_fatal(exc):
                    raise LLMFatalError(f"{failure}. Fix the model name, address or credentials, then re-run "
                                        f"the same command: {_KEPT}") from exc
                if not _is_retryable(exc):
                    raise LLMError(failure) from exc  # this request's own problem: its dialogue is rejected
                category = _category(exc)
                if attempt == retries:
                    tries = f"{attempt + 1} {'try' if attempt == 0 else 'tries'}"
                    hint = f"the server is down, overloaded or slower than llm.timeout ({s.timeout:g}s)"
                    if category == "timeout":
                        hint = (f"calls took longer than llm.timeout ({s.timeout:g}s): allow fewer calls in flight "
                                f"(--max-in-flight, now at most {limit.maximum}) or a longer llm.timeout")
                    raise LLMFatalError(f"{failure}. Gave up after {tries}: {hint}. {_KEPT}") from exc
                wait = _retry_after(exc)
                if category == "rate limited":
                    limit.rate_limited(wait)  # the server says it is overloaded: fewer calls in flight
                if wait is None:
                    wait = min(s.backoff_max, s.backoff_base * 2**attempt) * (0.5 + random.random() / 2)
                self.retries += 1
                self.retry_reasons[category] = self.retry_reasons.get(category, 0) + 1
                self._notify()
                if category == "timeout" and is_local(s.api_base):
                    log.warning("%s: no reply within %gs from the local server at %s, retry %d in %.2fs "
                                "(%d calls in flight allowed; a single-threaded server answers one at a time: "
                                "lower --max-in-flight or raise llm.timeout)", role, s.timeout, s.api_base,
                                attempt + 1, wait, limit.limit)
                else:
                    log.warning("%s: %s, retry %d in %.2fs", role, category, attempt + 1, wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _call(self, role: str, model: str, messages: list[dict], state: dict | None) -> LLMReply:
        import litellm

        kwargs = self._request_kwargs(role, model, messages, state)
        base = None if model.startswith(offline.PROVIDER + "/") else self.settings.api_base
        mode = self.formats.mode(role, model, base) if "response_format" in kwargs else "off"
        token = offline.CURRENT.set((role, state))
        try:
            while True:
                try:
                    # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation that arrives as the
                    # call completes, and the cancelled dialogue then runs on to its end.
                    async with asyncio.timeout(self.settings.timeout + 5):
                        response = await litellm.acompletion(**kwargs)
                    break
                except Exception as exc:
                    # `auto` and a server that refuses this response_format: the next form, at once.
                    step = self.formats.refused(role, model, base, mode, exc) if mode != "off" else None
                    if step is None:
                        raise
                    kwargs.pop("response_format", None)
                    kwargs.update(self._shape_kwargs(role, model, step))
                    mode = step if "response_format" in kwargs else "off"
        finally:
            offline.CURRENT.reset(token)
        message = response.choices[0].message
        text = message.content or ""
        calls = []
        for call in getattr(message, "tool_calls", None) or []:
            fn = getattr(call, "function", None)
            if fn is not None and getattr(fn, "name", None):
                calls.append({"name": fn.name, "arguments": fn.arguments if fn.arguments is not None else {}})
        reasoning = getattr(message, "reasoning_content", None)
        usage = getattr(response, "usage", None)
        cost = (getattr(response, "_hidden_params", {}) or {}).get("response_cost") or 0.0
        return LLMReply(
            text=text,
            tool_calls=calls,
            reasoning=reasoning if isinstance(reasoning, str) and reasoning.strip() else None,
            structured_output=mode,
            usage=Usage(
                calls=1,
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                cost_usd=float(cost),
            ),
        )

    def close(self) -> None:
        if self.cache:
            self.cache.close()


async def shutdown() -> None:
    """Lets litellm finish its queued success callbacks and closes its pooled connections.

    Call it last, on the loop that made the calls: otherwise the interpreter exits with
    litellm's logging task still pending and sockets unclosed, and prints warnings for both.
    """
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

    try:
        async with asyncio.timeout(5):
            await GLOBAL_LOGGING_WORKER.flush()
    except TimeoutError:
        log.warning("litellm callbacks still queued after 5 s; dropping them")
    await GLOBAL_LOGGING_WORKER.stop()
    await close_litellm_async_clients()


def _category(exc: Exception) -> str:
    """A retryable failure's kind, for logs, counters and the adaptive limit."""
    from litellm import exceptions as litellm

    if isinstance(exc, litellm.RateLimitError) or getattr(exc, "status_code", None) == 429:
        return "rate limited"
    if isinstance(exc, (litellm.Timeout, asyncio.TimeoutError)):
        return "timeout"
    if _refused(exc):
        return "connection refused"
    if isinstance(exc, litellm.APIConnectionError):
        return "connection error"
    status = getattr(exc, "status_code", None)
    return f"server error {status}" if isinstance(status, int) else f"server error ({type(exc).__name__})"


def _refused(exc: BaseException) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError) or "connection refused" in str(exc).lower() \
                or "connect call failed" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _describe(exc: Exception, api_base: str | None) -> str:
    """What went wrong, in words: a refused connection is called that, not InternalServerError."""
    if _refused(exc):
        return f"connection refused at {api_base or 'the provider'} (is the server running?)"
    return f"{type(exc).__name__}: {_short(exc).rstrip('.')}"


def _short(exc: Exception, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "..."


def now() -> float:
    return time.monotonic()
