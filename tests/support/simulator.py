"""A competent-LLM simulator for ScriptedOpenAIServer: every utcgen role, over real HTTP.

The gateway (with ``llm.send_state: true``) sends each call's role and structured state
in the ``X-Utcgen-State`` header; :func:`simulator_responder` decodes it and answers
with :func:`utcgen.pipeline.llm.offline.respond`, i.e. exactly what the offline backend would say,
but reached through litellm, httpx and a socket::

    with ScriptedOpenAIServer(simulator_responder, latency=0.3) as srv:
        config = simulator_config(srv.base_url, out=tmp_path / "out")

Fault plans are layered on top with predicates over the decoded header
(:func:`role_is`, :func:`for_job`), e.g. ``FaultPlan().when(role_is("critic"), RateLimited(1))``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import (
    ChatRequest,
    Fault,
    FaultPlan,
    Malformed,
    RateLimited,
    Responder,
    ServerError,
    Slow,
)
from utcgen.pipeline.config import ROLES
from utcgen.pipeline.llm import offline

SIM_MODEL = "openai/sim"
API_KEY_ENV = "UTCGEN_SIM_API_KEY"
"""Name of the (dummy) environment variable the simulator configs point `api_key_env` at."""

Predicate = Callable[[ChatRequest], bool]


def decoded(request: ChatRequest) -> tuple[str, dict] | None:
    """(role, state) carried by the request's X-Utcgen-State header, or None if absent."""
    value = request.headers.get(offline.STATE_HEADER)
    return offline.decode_state(value) if value else None


def role_of(request: ChatRequest) -> str | None:
    """The utcgen role that made this request (None without a state header)."""
    found = decoded(request)
    return found[0] if found else None


def simulator_responder(request: ChatRequest) -> str | dict[str, Any]:
    """The reply the role would get from a faithful model: ``offline.respond`` on the sent state.

    An assistant request that carries ``tools`` is answered as a native tool-calling model
    answers: calls in ``tool_calls``, the thought in ``reasoning_content``."""
    found = decoded(request)
    if found is None:
        raise ValueError(f"request {request.index} has no {offline.STATE_HEADER} header (send_state off?)")
    role, state = found
    text = offline.respond(role, state, request.messages)
    if role == "assistant" and request.tools:
        return offline.native_message(text)
    return text


def think_tag_responder(request: ChatRequest) -> str | dict[str, Any]:
    """As `simulator_responder`, but a native reply carries its thought as a leading
    ``<think>...</think>`` block of the content (no ``reasoning_content``), as many open models do."""
    reply = simulator_responder(request)
    if isinstance(reply, dict):
        reply = dict(reply)
        thought = reply.pop("reasoning_content", "")
        reply["content"] = f"<think>{thought}</think>\n{reply.get('content') or ''}"
    return reply


def role_is(*roles: str, phase: str | None = None) -> Predicate:
    """Matches requests made by one of `roles` (and, if given, in that dialogue phase)."""

    def predicate(request: ChatRequest) -> bool:
        found = decoded(request)
        if found is None or found[0] not in roles:
            return False
        return phase is None or found[1].get("phase") == phase

    return predicate


def for_job(tool: str, candidates: Iterable[str], *, role: str | None = None, phase: str | None = None,
            turn: int | None = None) -> Predicate:
    """Matches the requests of the dialogue about seed `tool` whose candidate pool is `candidates`.

    Generation roles carry the seed tool, the tool-selection assistant only its candidate
    pool, the judges the whole dialogue; all three are recognised. `turn` (1-based)
    restricts to the call made after that many user messages.
    """
    pool = frozenset(candidates)

    def predicate(request: ChatRequest) -> bool:
        found = decoded(request)
        if found is None or (role is not None and found[0] != role):
            return False
        state = found[1]
        if phase is not None and state.get("phase") != phase:
            return False
        if "dialogue" in state:  # judges
            dialogue = state["dialogue"]
            return dialogue["seed_tool"]["name"] == tool and {c["name"] for c in dialogue["candidate_tools"]} == pool
        own = (state.get("tool") or {}).get("name")
        if own is not None and own != tool:
            return False
        if own is None and {c["name"] for c in state.get("candidates") or []} != pool:
            return False
        if turn is not None:
            return sum(m["role"] == "user" for m in state.get("history") or []) == turn
        return True

    return predicate


class FaultLog:
    """A fault decider that delegates to a plan and records which request got which fault.

    Slow requests may never be answered before the run ends, so the server's exchange log
    alone cannot list them; this log can.
    """

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self.fired: dict[int, Fault] = {}
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Fault | type[Malformed] | None:
        fault = self.plan(request)
        if fault is not None:
            with self._lock:
                self.fired[request.index] = fault
        return fault

    def of_type(self, kind: type | tuple[type, ...]) -> list[int]:
        """Indices of the requests that got a fault of this type, in order."""
        return [i for i, f in self.items() if isinstance(f, kind)]

    def transient(self) -> list[int]:
        """Indices of the requests whose fault a client should retry: 429, 5xx, timeouts, bad bodies."""
        return [i for i, f in self.items() if isinstance(f, RateLimited | Slow | Malformed)
                or (isinstance(f, ServerError) and f.status >= 500)]

    def items(self) -> list[tuple[int, Fault]]:
        """(request index, fault) pairs, in index order."""
        with self._lock:
            return sorted(self.fired.items(), key=lambda item: item[0])


@dataclass
class ConcurrencyProbe:
    """A responder wrapper that holds each request `hold` seconds and records peak concurrency.

    Use it with server ``latency=0`` so the hold is the whole service time and the count
    covers every request the server is working on.
    """

    responder: Responder = simulator_responder
    hold: float = 0.0
    current: int = 0
    peak: int = 0
    served: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            self.current += 1
            self.peak = max(self.peak, self.current)
        try:
            if self.hold:
                time.sleep(self.hold)
            return self.responder(request)
        finally:
            with self._lock:
                self.current -= 1
                self.served += 1


def peak_overlap(intervals: Iterable[tuple[float, float]]) -> int:
    """Most intervals open at one instant (an interval closing at t ends before one opening at t)."""
    spans = list(intervals)
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def simulator_config(base_url: str, **overrides: Any) -> dict[str, Any]:
    """A run-config mapping that sends every role to the simulator at `base_url`.

    Sets the dummy key variable. `overrides` are merged one level deep
    (``llm={"timeout": 1}`` keeps the other llm keys).
    """
    os.environ.setdefault(API_KEY_ENV, "sk-simulator-dummy")
    raw: dict[str, Any] = {
        "models": {role: SIM_MODEL for role in ROLES},
        "llm": {"api_base": base_url, "api_key_env": API_KEY_ENV, "send_state": True, "cache": False},
    }
    return merged(raw, overrides)


def merged(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`raw` with `overrides` applied one level deep: a mapping updates a mapping, anything else replaces."""
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(raw.get(key), dict):
            raw[key] = {**raw[key], **value}
        else:
            raw[key] = value
    return raw
