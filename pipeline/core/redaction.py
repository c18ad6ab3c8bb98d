"""Secrets never reach a file or a terminal: the one `redact(text)` every writer and printer applies.

A server or a proxy may echo the request's `Authorization` header in an error body; that text
becomes a rejection reason, a journal record, a `rejected` row, the card, `stats.json` (all of
which `utcgen publish` uploads) and a line on stderr. So every boundary where text leaves the
process (the LLM error description, the journal, the dataset-folder writer, the CLI's error
line, log records) passes it through `redact`, which replaces with `***`:

- the value of every key variable: the one the config names (`llm.api_key_env`, registered with
  `watch`), the provider variables litellm reads (`PROVIDER_KEY_VARIABLES`), `HF_TOKEN`, and any
  variable whose name ends like a credential (`_API_KEY`, `_TOKEN`, `_SECRET`, ...);
- anything shaped like a credential: `Bearer <token>`, `sk-...`, `hf_...`, and a long token after
  a word such as "key", "token", "secret" or "authorization" followed by ":" or "=". A token must mix
  letters and digits, as generated credentials do, so prose ("basic information", "the bearer
  instrument") is left alone.

Values shorter than `MIN_SECRET` characters are not treated as secrets: a local server that
ignores keys is often given "x" or "none", and replacing those everywhere would damage data.
Redaction is idempotent and keeps JSON valid (a token never spans a quote or a backslash).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable

MASK = "***"
MIN_SECRET = 8

# Variables litellm reads for providers' keys (and the Hub's token): their values are always secret.
PROVIDER_KEY_VARIABLES = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "VERTEXAI_CREDENTIALS", "MISTRAL_API_KEY", "COHERE_API_KEY",
    "CO_API_KEY", "GROQ_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_AI_API_KEY",
    "DEEPSEEK_API_KEY", "XAI_API_KEY", "OPENROUTER_API_KEY", "PERPLEXITYAI_API_KEY", "REPLICATE_API_KEY",
    "HUGGINGFACE_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "DATABRICKS_API_KEY", "CEREBRAS_API_KEY",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "NVIDIA_NIM_API_KEY", "VOYAGE_API_KEY",
    "LITELLM_API_KEY", "LITELLM_MASTER_KEY", "UTCGEN_API_KEY",
)
_SECRET_NAME = re.compile(r"(?:API_KEY|APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|_PASSWORD)$", re.IGNORECASE)

_TOKEN = r"[A-Za-z0-9._~+/=-]"  # no quote, backslash or space: a replacement never breaks JSON
_PATTERNS = (
    re.compile(rf"(?i)\b(bearer|basic)(\s+){_TOKEN}{{8,}}"),
    re.compile(rf"\bsk-(?:ant-|proj-)?{_TOKEN}{{16,}}"),
    re.compile(rf"\bhf_{_TOKEN}{{16,}}"),
    re.compile(rf"\b(?:gh[pousr]|github_pat)_{_TOKEN}{{16,}}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    # "api_key": "...", token=..., Authorization: ..., x-api-key: ...
    re.compile(rf"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|authorization)"
               rf"[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*)({_TOKEN}{{20,}})"),
)

_watched: set[str] = set()
_lock = threading.Lock()


def watch(names: Iterable[str | None]) -> None:
    """Also treat these environment variables' values as secrets (e.g. the config's `llm.api_key_env`)."""
    with _lock:
        _watched.update(n for n in names if n)


def secret_values() -> list[str]:
    """The current values of every key variable, longest first (so a value inside another is masked whole)."""
    with _lock:
        names = set(_watched)
    names.update(PROVIDER_KEY_VARIABLES)
    names.update(n for n in os.environ if _SECRET_NAME.search(n))
    values = {os.environ[n].strip() for n in names if n in os.environ}
    return sorted((v for v in values if len(v) >= MIN_SECRET and v != MASK), key=len, reverse=True)


def _secretish(token: str) -> bool:
    """A credential is random: letters and digits mixed. Prose after "bearer" or "token:" is not."""
    return len(token) >= 8 and any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _mask_pattern(match: re.Match[str]) -> str:
    if match.re is _PATTERNS[0]:
        token = match.group(0)[match.end(2) - match.start(0):]
        return f"{match.group(1)}{match.group(2)}{MASK}" if _secretish(token) else match.group(0)
    if match.re is _PATTERNS[-1]:
        return f"{match.group(1)}{MASK}" if _secretish(match.group(2)) else match.group(0)
    return MASK if _secretish(match.group(0)) else match.group(0)


class Redactor:
    """`redact` with the secret values read once: for redacting many strings in a row (a table's cells)."""

    def __init__(self, values: list[str]) -> None:
        self._exact = re.compile("|".join(map(re.escape, values))) if values else None

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self._exact is not None:
            text = self._exact.sub(MASK, text)
        for pattern in _PATTERNS:
            text = pattern.sub(_mask_pattern, text)
        return text


def snapshot() -> Redactor:
    """A redactor for the key variables' values as they are now."""
    return Redactor(secret_values())


def redact(text: str) -> str:
    """`text` with every key variable's value and every credential-shaped token replaced by `***`."""
    return snapshot()(text) if text else text


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's final message (arguments included) in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True  # a malformed record: logging reports it itself
        clean = redact(message)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install_log_filter() -> None:
    """Redact every record that reaches a handler of the root logger, of litellm's loggers or Python's
    last-resort handler (what prints a warning when no handler is configured), once each."""
    handlers = [*logging.getLogger().handlers, *(h for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
                                                 for h in logging.getLogger(name).handlers)]
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
