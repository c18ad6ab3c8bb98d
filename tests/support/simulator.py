"""A competent-LLM simulator for ScriptedOpenAIServer: every utcgen role, over real HTTP.

No state travels to the server: the simulator gets each call's typed request its own way.
While :func:`recording_gateway` is active (a test asks for the ``simulated_gateway`` fixture),
`Gateway.chat` in this process records every request under a hash of its prompt (the messages
as sent); the server thread looks the prompt it received up and answers with
:func:`utcgen.pipeline.simulator.respond`, i.e. exactly what the offline backend would say, but
reached through litellm, httpx and a socket::

    def test_x(tmp_path, simulated_gateway):
        with ScriptedOpenAIServer(simulator_responder, latency=0.3) as srv:
            config = simulator_config(srv.base_url, out=tmp_path / "out")

Importing this module changes nothing. A run in a subprocess records into a spool file instead:
start it with :func:`recording_command` and the environment from :func:`spool_env`.

Fault plans are layered on top with predicates over the recorded request
(:func:`role_is`, :func:`for_job`), e.g. ``FaultPlan().when(role_is("critic"), RateLimited(1))``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
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
from utcgen.pipeline import simulator as offline
from utcgen.pipeline.llm.gateway import Gateway
from utcgen.pipeline.llm.requests import Request, parse_request
from utcgen.pipeline.settings.models import ROLES

SIM_MODEL = "openai/sim"
API_KEY_ENV = "UTCGEN_SIM_API_KEY"
"""Name of the (dummy) environment variable the simulator configs point `api_key_env` at."""
SPOOL_ENV = "UTCGEN_TEST_REQUEST_SPOOL"
"""A test-only variable: the file a recording subprocess appends its requests to."""

Predicate = Callable[[ChatRequest], bool]

_seen: dict[str, Request] = {}
_lock = threading.Lock()
_spool: list = ["", 0]  # the spool file this process reads, and how far it has read it
recorder_cpu_s = [0.0]  # CPU this process spent recording requests (a benchmark leaves it out of utcgen's)


def prompt_key(messages: list[dict[str, Any]]) -> str:
    """A hash of a prompt: each message's role and text, in order."""
    shown = [[m.get("role"), m.get("content") or ""] for m in messages]
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode()).hexdigest()


def record(request: Request, messages: list[dict[str, Any]]) -> None:
    started = time.thread_time()
    try:
        _record(request, messages)
    finally:
        recorder_cpu_s[0] += time.thread_time() - started


def _record(request: Request, messages: list[dict[str, Any]]) -> None:
    key = prompt_key(messages)
    with _lock:
        _seen[key] = request
        spool = os.environ.get(SPOOL_ENV)
        if spool:
            with open(spool, "a", encoding="utf-8") as f:
                f.write(json.dumps({"key": key, "request": request.model_dump(mode="json")}) + "\n")


_sending: dict[tuple[int, str], Any] = {}  # (event loop, prompt key) -> the lock of the call sending it


def recording(chat: Callable[..., Any]) -> Callable[..., Any]:
    """`chat` (a `Gateway.chat`) wrapped so every request is recorded before it is sent.

    The server knows a request by its prompt alone, so two calls with the same prompt but different
    typed requests (two attempts of one job run at once, whose goal prompts match but whose seeds do
    not) must not be in flight together: the second waits for the first's reply."""

    async def chat_recorded(self: Gateway, request: Request, messages: list[dict], **kwargs: Any) -> Any:
        slot = (id(asyncio.get_running_loop()), prompt_key(messages))
        lock = _sending.setdefault(slot, asyncio.Lock())
        try:
            async with lock:
                record(request, messages)
                return await chat(self, request, messages, **kwargs)
        finally:
            if not lock.locked() and _sending.get(slot) is lock:
                del _sending[slot]

    chat_recorded._records = True  # type: ignore[attr-defined]
    return chat_recorded


@contextmanager
def recording_gateway() -> Iterator[None]:
    """`Gateway.chat` records every request while the block runs (nested blocks record once), then is itself
    again: the tests that talk to the simulator server record, the others run the real gateway."""
    original = Gateway.chat
    if not getattr(original, "_records", False):
        Gateway.chat = recording(original)  # type: ignore[method-assign]
    try:
        yield
    finally:
        Gateway.chat = original  # type: ignore[method-assign]


def install() -> None:
    """Records every request for the rest of this process: for a process that talks to the simulator and to
    nothing else (a recording subprocess, a benchmark)."""
    if not getattr(Gateway.chat, "_records", False):
        Gateway.chat = recording(Gateway.chat)  # type: ignore[method-assign]


def spool_env(path: Path) -> dict[str, str]:
    """Environment entries that make a recording subprocess spool its requests to `path`."""
    return {SPOOL_ENV: str(path)}


def recording_command(*args: str) -> list[str]:
    """`utcgen ARGS` run by this interpreter with the recorder installed (see `spool_env`)."""
    code = ("import sys, tests.support.simulator as s; s.install(); from utcgen.pipeline.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-c", code, *args]


def lookup(request: ChatRequest) -> Request | None:
    """The typed request whose prompt this HTTP request carries, or None if none was recorded."""
    key = prompt_key(request.messages)
    with _lock:
        found = _seen.get(key)
        spool = os.environ.get(SPOOL_ENV)
        if found is None and spool and os.path.exists(spool):
            if _spool[0] != spool:
                _spool[:] = [spool, 0]
            with open(spool, "rb") as f:
                f.seek(_spool[1])
                for line in f:
                    if not line.endswith(b"\n"):
                        break  # a line still being written: not this request's, read it next time
                    _spool[1] += len(line)
                    entry = json.loads(line)
                    _seen[entry["key"]] = parse_request(entry["request"])
            found = _seen.get(key)
    return found


def decoded(request: ChatRequest) -> tuple[str, dict] | None:
    """(role, facts) of the typed request behind this HTTP request, or None if none was recorded."""
    found = lookup(request)
    return None if found is None else (found.role, found.model_dump(mode="json", exclude={"role"}))


def role_of(request: ChatRequest) -> str | None:
    """The utcgen role that made this request (None if it was not recorded)."""
    found = lookup(request)
    return found.role if found else None


def simulator_responder(request: ChatRequest) -> str | dict[str, Any]:
    """The reply the role would get from a faithful model: ``offline.respond`` on the recorded request.

    An assistant request that carries ``tools`` is answered as a native tool-calling model
    answers: calls in ``tool_calls``, the thought in ``reasoning_content``."""
    found = lookup(request)
    if found is None:
        raise ValueError(f"request {request.index}: no typed request was recorded for its prompt")
    text = offline.respond(found, request.messages)
    if found.role in ("assistant", "under_test") and request.tools:
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

    def __call__(self, request: ChatRequest) -> str | dict[str, Any]:
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
        "llm": {"api_base": base_url, "api_key_env": API_KEY_ENV, "cache": False},
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
