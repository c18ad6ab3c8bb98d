"""One cheap request per server before a run: a server that is down is reported in seconds.

For every distinct API base of the non-offline roles, `GET {api_base}/models` with a short
timeout. Any HTTP answer (even 404: not every server lists models) means the server is up;
a refused connection, an unknown host or silence is a problem, named with the URL and the
roles that use it. Hosted providers without an `api_base` are not probed (their endpoint
is litellm's business and a probe there would need their own API).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from .registry import ModelRegistry, is_local, registry_of

if TYPE_CHECKING:
    from ..settings.config import RunConfig

PROBE_TIMEOUT = 5.0
# A server on this machine often runs one request at a time and answers even `GET /models` only
# after the request in progress (llama-cpp-python does): connected but silent is "busy", not "down".
LOCAL_PROBE_TIMEOUT = 60.0


def probe_servers(models: ModelRegistry | RunConfig, timeout: float | None = None) -> list[str]:
    """Problems found, one line per unreachable server; empty when every server answered.
    Connecting takes at most PROBE_TIMEOUT; the answer may take `timeout` (default: PROBE_TIMEOUT,
    LOCAL_PROBE_TIMEOUT for a server on this machine)."""
    registry = registry_of(models)
    roles_at: dict[str, list[str]] = {}
    for role in registry.remote():
        if base := registry.entries[role].api_base:
            roles_at.setdefault(base, []).append(role)
    problems = []
    for base, roles in roles_at.items():
        via = "llm.api_base" if base == registry.llm.api_base else "their api_base"
        problems += _probe(base, f"models.{'/'.join(roles)} via {via}", timeout)
    return problems


def _probe(base: str, who: str, timeout: float | None) -> list[str]:
    local = is_local(base)
    if timeout is None:
        timeout = LOCAL_PROBE_TIMEOUT if local else PROBE_TIMEOUT
    url = base.rstrip("/") + "/models"
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, PROBE_TIMEOUT)),
                          trust_env=False) as client:
            client.get(url)
    except httpx.ConnectError as exc:
        text = str(exc).lower()
        if "refused" in text or "connect call failed" in text or "errno 111" in text:
            return [f"{who}: connection refused at {base}: is the server running on that port?"]
        return [f"{who}: cannot connect to {base}: {exc}"]
    except httpx.ConnectTimeout:
        return [f"{who}: no connection to {base} within {min(timeout, PROBE_TIMEOUT):g}s: "
                "the server is not responding"]
    except httpx.TimeoutException:
        busy = (" (a local server that runs one request at a time answers only after the one in progress: "
                "wait for it to finish, or restart it)") if local else ""
        return [f"{who}: {base} accepted the connection but sent no answer within {timeout:g}s{busy}"]
    except httpx.HTTPError as exc:
        return [f"{who}: {base}: {type(exc).__name__}: {exc}"]
    return []
