"""One cheap request per server before a run: a server that is down is reported in seconds.

For every distinct API base of the non-offline roles, `GET {api_base}/models` with a short
timeout. Any HTTP answer (even 404: not every server lists models) means the server is up;
a refused connection, an unknown host or silence is a problem, named with the URL and the
roles that use it. Hosted providers without an `api_base` are not probed (their endpoint
is litellm's business and a probe there would need their own API).
"""

from __future__ import annotations

import httpx

from utcgen.pipeline.config import RunConfig
from utcgen.pipeline.llm import offline

PROBE_TIMEOUT = 5.0


def probe_servers(config: RunConfig, timeout: float = PROBE_TIMEOUT) -> list[str]:
    """Problems found, one line per unreachable server; empty when every server answered."""
    base = config.llm.api_base
    roles = [role for role, model in config.models.model_dump().items()
             if not model.startswith(offline.PROVIDER + "/")]
    if not roles or not base:
        return []
    url = base.rstrip("/") + "/models"
    who = f"models.{'/'.join(roles)} via llm.api_base"
    try:
        with httpx.Client(timeout=timeout, trust_env=False) as client:
            client.get(url)
    except httpx.ConnectError as exc:
        text = str(exc).lower()
        if "refused" in text or "connect call failed" in text or "errno 111" in text:
            return [f"{who}: connection refused at {base}: is the server running on that port?"]
        return [f"{who}: cannot connect to {base}: {exc}"]
    except httpx.TimeoutException:
        return [f"{who}: no answer from {base} within {timeout:g}s: the server is not responding"]
    except httpx.HTTPError as exc:
        return [f"{who}: {base}: {type(exc).__name__}: {exc}"]
    return []
