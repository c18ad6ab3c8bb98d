"""Request parameters by model: how a role's sampling settings are sent, the prompt-cache mark of an
Anthropic model's system prompt, and the parameters an endpoint refused, left out of its later calls.

Reasoning models (OpenAI's o-series and the gpt-5 family) take `max_completion_tokens`, not
`max_tokens`: litellm renames it when it makes the call, the direct client (`direct`) would not, so
the gateway sends the new name itself. They also refuse any temperature but 1, as some providers
refuse `top_p` or other sampling parameters: litellm raises `UnsupportedParamsError` before the call
(o-series: "O-series models don't support temperature=0.7"), a server answers 400 ("Unsupported
parameter: 'temperature' is not supported with this model."). Either way the parameter is the one
the message names first; `Dropped` leaves it out of that endpoint's calls for the rest of the run.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from .registry import quiet_litellm

# Request fields that are never dropped: the call itself, and the reply's form (`structured` owns it).
_NEVER_DROPPED = frozenset({"model", "messages", "api_base", "api_key", "timeout", "num_retries", "metadata",
                            "response_format", "tools", "_skip_mcp_handler"})
_UNSUPPORTED = re.compile(r"unsupported|not supported|does not support|doesn't support|only supports", re.I)
_REASONING = re.compile(r"^(o\d|gpt-5(?!-chat))")
CACHE_CONTROL = {"type": "ephemeral"}


def reasoning_model(model: str) -> bool:
    """OpenAI's o-series (o1, o3, o4-mini, ...) and gpt-5 family, under any provider prefix."""
    return bool(_REASONING.match(model.rsplit("/", 1)[-1]))


def completion_params(model: str, temperature: float, max_tokens: int) -> dict[str, Any]:
    """The sampling fields of a call: `max_completion_tokens` for a reasoning model, else `max_tokens`."""
    return {"temperature": temperature,
            ("max_completion_tokens" if reasoning_model(model) else "max_tokens"): max_tokens}


def anthropic_model(model: str) -> bool:
    return model.startswith(("anthropic/", "claude"))


def with_prompt_cache(model: str, messages: list[dict]) -> list[dict]:
    """For an Anthropic model, the leading system prompt as content blocks, the last one marked for
    Anthropic's prompt cache (litellm passes `cache_control` through): every call of a role shares that
    prefix. Other models get `messages` unchanged."""
    if not anthropic_model(model):
        return messages
    lead = 0
    while lead < len(messages) and messages[lead].get("role") == "system":
        lead += 1
    if not lead:
        return messages
    out = [dict(m) for m in messages[:lead]] + list(messages[lead:])
    last = out[lead - 1]
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content or []]
    if blocks:
        blocks[-1] = {**blocks[-1], "cache_control": dict(CACHE_CONTROL)}
        last["content"] = blocks
    return out


def unsupported_param(kwargs: dict[str, Any], exc: Exception) -> str | None:
    """The request parameter `exc` says the model does not support, if it is one the call sent: the one
    its message names first. None for any other failure."""
    litellm = quiet_litellm().exceptions
    status = getattr(exc, "status_code", None)
    if not isinstance(exc, litellm.UnsupportedParamsError | litellm.BadRequestError) and status != 400:
        return None
    text = str(exc)
    if not _UNSUPPORTED.search(text):
        return None
    first: tuple[int, str] | None = None
    for key in kwargs:
        if key in _NEVER_DROPPED:
            continue
        found = re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", text)
        if found and (first is None or found.start() < first[0]):
            first = (found.start(), key)
    return first[1] if first else None


class Dropped:
    """Per endpoint (model, api_base), the request parameters it refused: each is left out of its later
    calls (`max_tokens` is sent as `max_completion_tokens` when the server asks for that). Thread-safe."""

    def __init__(self) -> None:
        self._by_endpoint: dict[tuple[str, str | None], dict[str, str | None]] = {}
        self._lock = threading.Lock()

    def learn(self, endpoint: tuple[str, str | None], kwargs: dict[str, Any],
              exc: Exception) -> tuple[str, bool] | None:
        """The parameter of `kwargs` that `exc` says `endpoint` refuses (see `unsupported_param`), recorded,
        and whether it is news (the caller warns once); None when `exc` is another failure."""
        param = unsupported_param(kwargs, exc)
        if param is None:
            return None
        rename = "max_completion_tokens" if param == "max_tokens" and "max_completion_tokens" in str(exc) else None
        with self._lock:
            known = self._by_endpoint.setdefault(endpoint, {})
            if param in known:
                return param, False
            known[param] = rename
            return param, True

    def apply(self, endpoint: tuple[str, str | None], kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` without the parameters `endpoint` refused (a renamed one under its new name)."""
        with self._lock:
            known = dict(self._by_endpoint.get(endpoint, {}))
        if not known or not known.keys() & kwargs.keys():
            return kwargs
        out = dict(kwargs)
        for param, rename in known.items():
            if param in out:
                value = out.pop(param)
                if rename:
                    out.setdefault(rename, value)
        return out

    def report(self) -> dict[str, list[str]]:
        """'model at api_base' -> the parameters left out of its calls, for stats.json."""
        with self._lock:
            return {(f"{m} at {b}" if b else m): sorted(params) for (m, b), params in self._by_endpoint.items()
                    if params}
