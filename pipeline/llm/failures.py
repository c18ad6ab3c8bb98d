"""What a failed call was: the run's two error types, how a litellm exception is classified
(retryable, fatal, its category for logs and the adaptive limit) and described in words, and
when an endpoint counts as down (`Health`): a call that fails through all its retries rejects
only its own dialogue; the run stops only when the endpoint keeps failing."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque

from ..core.errors import UtcgenError
from ..core.redaction import redact
from .registry import quiet_litellm


class LLMError(UtcgenError):
    """A call the server refused for this request's own sake (a 4xx such as a prompt too long):
    the dialogue that made it is rejected and the run goes on."""


class LLMFatalError(LLMError):
    """A failure no other dialogue would get past (a rejected key, an unknown model, an endpoint
    that keeps failing through its retries, call after call): the run stops instead of spending
    its seeds on it, and the unfinished job is not journaled, so the re-run does it."""


WINDOW = 50  # the recent calls of an endpoint whose failure rate `Health` watches


class Health:
    """Whether an endpoint is persistently failing, from its calls' final outcomes (after retries).

    Down when the last `consecutive` calls to end all failed (calls of different dialogues: one
    call that exhausts its retries is not enough), or when at least `rate` of the last `WINDOW`
    calls failed (once 20 have ended). Thread-safe: orchestrators share a gateway across threads."""

    def __init__(self, consecutive: int = 10, rate: float = 0.5) -> None:
        self.consecutive, self.rate = consecutive, rate
        self._recent: dict[str, deque[bool]] = {}
        self._streak: dict[str, int] = {}
        self._lock = threading.Lock()

    def ok(self, endpoint: str) -> None:
        with self._lock:
            self._recent.setdefault(endpoint, deque(maxlen=WINDOW)).append(True)
            self._streak[endpoint] = 0

    def failed(self, endpoint: str) -> str | None:
        """Records a call that failed through its retries; says why the endpoint is down, or None."""
        with self._lock:
            recent = self._recent.setdefault(endpoint, deque(maxlen=WINDOW))
            recent.append(False)
            streak = self._streak[endpoint] = self._streak.get(endpoint, 0) + 1
            failures = recent.count(False)
        if streak >= self.consecutive:
            return f"the last {streak} calls to it failed through their retries (llm.abort_after_failures)"
        if len(recent) >= 20 and failures / len(recent) >= self.rate:
            return (f"{failures} of its last {len(recent)} calls failed through their retries "
                    f"(llm.abort_failure_rate {self.rate:g})")
        return None


KEPT = "Finished work is kept: re-running the same command resumes where this run stopped."


def retry_after(exc: Exception) -> float | None:
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


def is_retryable(exc: Exception) -> bool:
    litellm = quiet_litellm().exceptions
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


def is_fatal(exc: Exception) -> bool:
    """A bad key, a forbidden or an unknown model. By status too: litellm maps an OpenAI-style
    body of type invalid_request_error to BadRequestError whatever the status was."""
    litellm = quiet_litellm().exceptions
    fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
    return isinstance(exc, fatal) or getattr(exc, "status_code", None) in (401, 403, 404)


def category(exc: Exception) -> str:
    """A retryable failure's kind, for logs, counters and the adaptive limit."""
    litellm = quiet_litellm().exceptions
    if isinstance(exc, litellm.RateLimitError) or getattr(exc, "status_code", None) == 429:
        return "rate limited"
    if isinstance(exc, (litellm.Timeout, asyncio.TimeoutError)):
        return "timeout"
    if refused(exc):
        return "connection refused"
    if isinstance(exc, litellm.APIConnectionError):
        return "connection error"
    status = getattr(exc, "status_code", None)
    return f"server error {status}" if isinstance(status, int) else f"server error ({type(exc).__name__})"


def refused(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError) or "connection refused" in str(exc).lower() \
                or "connect call failed" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def describe(exc: Exception, api_base: str | None) -> str:
    """What went wrong, in words: a refused connection is called that, not InternalServerError."""
    if refused(exc):
        return f"connection refused at {api_base or 'the provider'} (is the server running?)"
    return f"{type(exc).__name__}: {short(exc).rstrip('.')}"


def short(exc: Exception, limit: int = 300) -> str:
    """The exception's message on one line, redacted (a server may echo the request's key), cut to `limit`."""
    text = redact(" ".join(str(exc).split()))
    return text if len(text) <= limit else text[:limit] + "..."
