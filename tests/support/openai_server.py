"""A scripted, OpenAI-compatible chat-completions server for offline tests.

Tests start it on 127.0.0.1 (free port) and point a real client (litellm,
openai, httpx, aiohttp) at ``srv.base_url``; nothing touches the internet::

    with ScriptedOpenAIServer(echo_responder, latency=0.3,
                              faults=FaultPlan({0: RateLimited(1.0)})) as srv:
        litellm.completion(model="openai/test", api_base=srv.base_url, ...)
        assert srv.status_counts[429] == 1

A responder returns the reply's content (a str), or a whole assistant message (a dict
with ``content``, ``tool_calls``, ``reasoning_content``...) to answer as a native
tool-calling or reasoning model does. ``ChatRequest.response_format`` and ``.tools``
show what a request asked for; ``LLAMA_CPP_REFUSAL`` is a fault rule that answers
OpenAI's ``json_schema`` response_format with the HTTP 500 llama-cpp-python's server
gives, and ``needs_json`` makes a responder answer JSON only when a JSON
response_format was sent (as a small model that follows no prompt would).

Every chat request gets a 0-based global ``index``. A fault plan may turn the
request at an index (or the ones matching a predicate) into a 429, a 5xx, a slow
reply, an overridden content or a non-JSON 200; ``tests.support.fault_mix.FaultMix`` draws
them at random, in given shares, as a flaky endpoint would. Every request and every answer
is logged with ``time.monotonic()`` timestamps.

Implementation: ``ThreadingHTTPServer`` (one thread per connection, HTTP/1.1
keep-alive, TCP_NODELAY on accepted sockets, headers and body sent in a single
write). Delays wait on an event, so they never block other requests and are cut
short by ``stop()``.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self, TypeAlias
from urllib.parse import urlsplit

__all__ = [
    "CHAT_PATHS",
    "LLAMA_CPP_REFUSAL",
    "ChatRequest",
    "Exchange",
    "Fault",
    "FaultPlan",
    "FaultSpec",
    "Headers",
    "Malformed",
    "RateLimited",
    "Reply",
    "Responder",
    "ScriptedOpenAIServer",
    "ServerError",
    "Slow",
    "echo_responder",
    "llama_cpp_refuses",
    "needs_json",
    "rough_tokens",
]

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})


# --------------------------------------------------------------------------- requests


class Headers(Mapping[str, str]):
    """Read-only, case-insensitive header mapping that keeps the original spelling."""

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._data: dict[str, tuple[str, str]] = {k.lower(): (k, v) for k, v in pairs}

    def __getitem__(self, key: str) -> str:
        return self._data[key.lower()][1]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._data

    def __iter__(self) -> Iterator[str]:
        return (original for original, _ in self._data.values())

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


@dataclass(frozen=True)
class ChatRequest:
    """One received chat-completions request, as given to responders and fault plans."""

    index: int
    """0-based global counter over chat requests received by this server."""
    body: dict[str, Any]
    """The parsed JSON body (model, messages, tools, any extra_body keys...)."""
    headers: Headers
    """Case-insensitive request headers."""
    path: str = "/v1/chat/completions"
    received_at: float = 0.0
    """``time.monotonic()`` when the request line arrived (its headers and body are read after)."""

    @property
    def model(self) -> str:
        """The requested model name ('' if absent)."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request messages ([] if absent or not a list)."""
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The request's response_format (None if absent)."""
        value = self.body.get("response_format")
        return value if isinstance(value, dict) else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The request's tools ([] if absent)."""
        value = self.body.get("tools")
        return value if isinstance(value, list) else []

    @property
    def last_user_text(self) -> str:
        """Text of the last user message ('' if none)."""
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""


@dataclass
class Exchange:
    """A chat request and what the server answered (recorded just before sending)."""

    request: ChatRequest
    status: int
    fault: Fault | None
    responded_at: float
    """``time.monotonic()`` just before the response was written."""
    delivered: bool = True
    """False if the client had gone away (e.g. it timed out) when we wrote."""


Responder: TypeAlias = Callable[[ChatRequest], "str | dict[str, Any]"]


def echo_responder(request: ChatRequest) -> str:
    """Reply with ``echo: <last user text>``."""
    return f"echo: {request.last_user_text}"


def _content_text(content: object) -> str:
    """Flatten an OpenAI message content (str, list of parts, None) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "".join(str(p) for p in parts)
    return json.dumps(content)


def rough_tokens(text: str) -> int:
    """Rough token count used for ``usage``: ``len(text) // 4 + 1``."""
    return len(text) // 4 + 1


def _prompt_text(body: Mapping[str, Any]) -> str:
    """All prompt-side text a real model would tokenize (contents, tool calls, tools)."""
    chunks: list[str] = []
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        chunks.append(_content_text(message.get("content")))
        if message.get("tool_calls"):
            chunks.append(json.dumps(message["tool_calls"]))
    if body.get("tools"):
        chunks.append(json.dumps(body["tools"]))
    return "\n".join(chunks)


# --------------------------------------------------------------------------- faults


@dataclass(frozen=True)
class RateLimited:
    """HTTP 429 with ``Retry-After`` (seconds) and ``retry-after-ms`` headers."""

    retry_after: float = 1.0
    message: str = "Rate limit reached for requests (scripted)."


@dataclass(frozen=True)
class ServerError:
    """An error status (normally 5xx; 4xx allowed) with an OpenAI-style error body."""

    status: int = 500
    message: str = "The server had an error while processing your request (scripted)."

    def __post_init__(self) -> None:
        if not 400 <= self.status <= 599:
            raise ValueError(f"ServerError status must be 4xx/5xx, got {self.status}")


@dataclass(frozen=True)
class Slow:
    """Wait ``delay`` seconds (on top of the server latency), then answer normally."""

    delay: float


@dataclass(frozen=True)
class Reply:
    """Answer normally but with this content instead of the responder's."""

    content: str


@dataclass(frozen=True)
class Malformed:
    """A 200 ``application/json`` response whose body is not valid JSON.

    The class itself may be used in a plan (``{2: Malformed}``)."""

    body: str = '{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{'


Fault: TypeAlias = RateLimited | ServerError | Slow | Reply | Malformed
FaultDecider: TypeAlias = Callable[[ChatRequest], "Fault | type[Malformed] | None"]


@dataclass
class _Rule:
    predicate: Callable[[ChatRequest], bool]
    fault: Fault
    remaining: int | None  # None = unlimited


class FaultPlan:
    """Decides, per chat request, which fault (if any) to inject. Thread-safe.

    Index entries fire for the request with that global index (hence once).
    Predicate rules fire for matching requests, ``times`` times (default once,
    ``None`` = always); index entries win over rules, earlier rules over later.
    """

    def __init__(self, by_index: Mapping[int, Fault | type[Malformed]] | None = None) -> None:
        self.by_index: dict[int, Fault] = {int(i): _as_fault(f) for i, f in (by_index or {}).items()}
        self.rules: list[_Rule] = []
        self._lock = threading.Lock()

    @classmethod
    def first_n(cls, n: int, fault: Fault | type[Malformed]) -> FaultPlan:
        """Inject ``fault`` into requests 0..n-1."""
        return cls({i: fault for i in range(n)})

    @classmethod
    def matching(
        cls,
        predicate: Callable[[ChatRequest], bool],
        fault: Fault | type[Malformed],
        times: int | None = 1,
    ) -> FaultPlan:
        """A plan with one predicate rule (see :meth:`when`)."""
        return cls().when(predicate, fault, times)

    @classmethod
    def always(cls, fault: Fault | type[Malformed]) -> FaultPlan:
        """Inject ``fault`` into every request."""
        return cls.matching(lambda _request: True, fault, times=None)

    def when(
        self,
        predicate: Callable[[ChatRequest], bool],
        fault: Fault | type[Malformed],
        times: int | None = 1,
    ) -> Self:
        """Add a rule: the first ``times`` matching requests get ``fault``. Chainable."""
        if times is not None and times < 0:
            raise ValueError("times must be >= 0 or None")
        with self._lock:
            self.rules.append(_Rule(predicate, _as_fault(fault), times))
        return self

    def __call__(self, request: ChatRequest) -> Fault | None:
        """The fault for this request, consuming one use of a matching rule."""
        with self._lock:
            if request.index in self.by_index:
                return self.by_index[request.index]
            for rule in self.rules:
                if rule.remaining == 0 or not rule.predicate(request):
                    continue
                if rule.remaining is not None:
                    rule.remaining -= 1
                return rule.fault
        return None

    def __repr__(self) -> str:
        return f"FaultPlan(by_index={self.by_index!r}, rules={self.rules!r})"


FaultSpec: TypeAlias = FaultPlan | Mapping[int, Fault | type[Malformed]] | FaultDecider


def _as_fault(fault: Fault | type[Malformed]) -> Fault:
    """Accept the ``Malformed`` class as shorthand for ``Malformed()``; validate type."""
    if fault is Malformed:
        return Malformed()
    if not isinstance(fault, RateLimited | ServerError | Slow | Reply | Malformed):
        raise TypeError(f"not a fault: {fault!r}")
    return fault


def _as_decider(faults: FaultSpec | None) -> FaultDecider | None:
    if faults is None or isinstance(faults, FaultPlan):
        return faults
    if isinstance(faults, Mapping):
        return FaultPlan(faults)
    if callable(faults):
        return faults
    raise TypeError(f"faults must be a FaultPlan, a mapping or a callable, got {faults!r}")


def _error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


# --------------------------------------------------------------------------- HTTP layer


class _Handler(BaseHTTPRequestHandler):
    """Per-connection handler; all application logic lives in ScriptedOpenAIServer."""

    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "ScriptedOpenAI/1.0"
    sys_version = ""
    wbufsize = 1 << 16  # buffered: status line, headers and body leave in one send()
    disable_nagle_algorithm = True  # belt and braces: also set in get_request
    server: _HTTPServer
    arrived_at = 0.0  # time.monotonic() when the current request's first line was read

    def setup(self) -> None:
        self.timeout = self.server.owner.idle_timeout  # closes idle keep-alive sockets
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    def parse_request(self) -> bool:
        # A request's latency counts from its first line: reading and parsing the rest is the server's work.
        self.arrived_at = time.monotonic()
        return super().parse_request()

    def do_GET(self) -> None:
        path = self._path()
        if path in MODELS_PATHS:
            owner = self.server.owner
            model = {"id": owner.model_id, "object": "model", "created": owner.created,
                     "owned_by": "utcgen-tests"}
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.send_json(404, _error_body(f"Unknown path {path}", "invalid_request_error",
                                            "not_found"))

    def do_POST(self) -> None:
        raw = self._read_body()
        if raw is None:
            return
        path = self._path()
        if path not in CHAT_PATHS:
            self.send_json(404, _error_body(f"Unknown path {path}", "invalid_request_error",
                                            "not_found"))
            return
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self.send_json(400, _error_body(f"Request body is not valid JSON: {exc}",
                                            "invalid_request_error", None))
            return
        if not isinstance(body, dict):
            self.send_json(400, _error_body("Request body must be a JSON object",
                                            "invalid_request_error", None))
            return
        self.server.owner._handle_chat(self, body, path)

    def _path(self) -> str:
        return urlsplit(self.path).path.rstrip("/") or "/"

    def _read_body(self) -> bytes | None:
        """Read a Content-Length or chunked body; on a bad framing answer 400 and close."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(65537)
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    break
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        else:
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if length >= 0:
                return self.rfile.read(length)
        self.close_connection = True
        self.send_json(400, _error_body("Bad request body framing", "invalid_request_error",
                                        None))
        return None

    def send_json(self, status: int, payload: object,
                  extra_headers: Mapping[str, str] | None = None) -> bool:
        """Send a JSON response; see :meth:`send_raw`."""
        return self.send_raw(status, json.dumps(payload).encode(), "application/json",
                             extra_headers)

    def send_raw(self, status: int, body: bytes, content_type: str,
                 extra_headers: Mapping[str, str] | None = None) -> bool:
        """Write a complete response; returns False if the client has gone away."""
        self.server.owner._count_status(status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra_headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            self.close_connection = True
            return False
        return True


class _HTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer bound to 127.0.0.1:0 that tracks its connections and threads."""

    daemon_threads = True
    block_on_close = False  # we join handler threads ourselves, with a timeout
    request_queue_size = 1024  # listen() backlog; the default 5 drops SYNs under bursts

    def __init__(self, owner: ScriptedOpenAIServer) -> None:
        self.owner = owner
        self._track_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse-DNS ``getfqdn`` lookup."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._track_lock:
            self._connections.add(sock)
        return sock, addr

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._serve_connection, args=(request, client_address),
                                  name=f"scripted-openai-{self.server_port}-conn", daemon=True)
        with self._track_lock:
            self._handler_threads.add(thread)
        thread.start()

    def _serve_connection(self, request: socket.socket, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._track_lock:
                self._connections.discard(request)
                self._handler_threads.discard(threading.current_thread())

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that disconnect (and our own stop()); report anything else."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError) or self.owner.stopping:
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Shut down every open client socket so blocked handler reads return."""
        with self._track_lock:
            connections = list(self._connections)
        for sock in connections:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed

    def join_handlers(self, timeout: float) -> list[threading.Thread]:
        """Join handler threads until ``timeout``; return those still alive."""
        deadline = time.monotonic() + timeout
        with self._track_lock:
            threads = list(self._handler_threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return [t for t in threads if t.is_alive()]


# --------------------------------------------------------------------------- public server


class ScriptedOpenAIServer:
    """Real OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies and faults.

    Args:
        responder: ``(ChatRequest) -> str`` giving the assistant content.
        latency: seconds every normal reply takes from its receipt, the responder's time included (not faults'
            error replies); waits never block other requests.
        faults: a :class:`FaultPlan`, a ``{index: fault}`` mapping, or a callable
            ``(ChatRequest) -> fault | None``.
        model_id: the model listed by ``GET /v1/models``.
        idle_timeout: seconds before an idle keep-alive connection is closed.

    Single use: ``start()`` (or ``with``) once, then ``stop()``.
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        latency: float = 0.0,
        faults: FaultSpec | None = None,
        model_id: str = "test",
        idle_timeout: float = 30.0,
    ) -> None:
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.responder = responder
        self.latency = latency
        self.faults: FaultDecider | None = _as_decider(faults)
        self.model_id = model_id
        self.idle_timeout = idle_timeout
        self.created = int(time.time())
        self._lock = threading.Lock()
        self._requests: list[ChatRequest] = []
        self._exchanges: list[Exchange] = []
        self._status_counts: Counter[int] = Counter()
        self._responder_errors: list[Exception] = []
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._used = False

    # -- lifecycle

    def start(self) -> Self:
        """Bind a free port and serve in a background thread."""
        if self._used:
            raise RuntimeError("ScriptedOpenAIServer is single-use; create a new one")
        self._used = True
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.01},  # fast stop()
                                        name=f"scripted-openai-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, cut pending delays, close connections, join all threads."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None or self._stopping.is_set():
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join(timeout)
        httpd.server_close()
        httpd.close_connections()
        stuck = httpd.join_handlers(timeout)
        if stuck or thread.is_alive():
            raise RuntimeError(f"ScriptedOpenAIServer: {len(stuck)} handler thread(s) did not"
                               " stop (a responder is blocking?)")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def stopping(self) -> bool:
        """True once stop() has begun."""
        return self._stopping.is_set()

    # -- addresses

    @property
    def port(self) -> int:
        """The bound TCP port."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — pass as ``api_base`` / ``base_url``."""
        return f"{self.url}/v1"

    # -- recorded traffic (copies, safe to read while serving)

    @property
    def requests(self) -> list[ChatRequest]:
        """Chat requests received so far, in index order."""
        with self._lock:
            return sorted(self._requests, key=lambda r: r.index)

    @property
    def exchanges(self) -> list[Exchange]:
        """Answered chat requests, in the order the answers were written."""
        with self._lock:
            return list(self._exchanges)

    @property
    def status_counts(self) -> Counter[int]:
        """Status codes of every response sent (chat, models, 404s, 400s)."""
        with self._lock:
            return Counter(self._status_counts)

    @property
    def responder_errors(self) -> list[Exception]:
        """Exceptions raised by the responder (each answered with a 500)."""
        with self._lock:
            return list(self._responder_errors)

    def exchange(self, index: int) -> Exchange:
        """The answer given to the request with this index."""
        for ex in self.exchanges:
            if ex.request.index == index:
                return ex
        raise KeyError(index)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """Poll until ``n`` chat requests have been received; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self._requests) >= n:
                    return True
            time.sleep(0.005)
        return False

    # -- request handling (called from handler threads)

    def _count_status(self, status: int) -> None:
        with self._lock:
            self._status_counts[status] += 1

    def _register(self, body: dict[str, Any], headers: Headers, path: str, arrived_at: float) -> ChatRequest:
        with self._lock:
            request = ChatRequest(index=len(self._requests), body=body, headers=headers,
                                  path=path, received_at=arrived_at)
            self._requests.append(request)
        return request

    def _answer(self, handler: _Handler, request: ChatRequest, fault: Fault | None,
                status: int, payload: bytes, content_type: str = "application/json",
                headers: Mapping[str, str] | None = None) -> None:
        exchange = Exchange(request, status, fault, time.monotonic())
        with self._lock:
            self._exchanges.append(exchange)
        exchange.delivered = handler.send_raw(status, payload, content_type, headers)

    def _handle_chat(self, handler: _Handler, body: dict[str, Any], path: str) -> None:
        request = self._register(body, Headers(list(handler.headers.items())), path, handler.arrived_at)

        def error(status: int, message: str, type_: str, code: str | None = None,
                  fault: Fault | None = None, headers: Mapping[str, str] | None = None) -> None:
            payload = json.dumps(_error_body(message, type_, code)).encode()
            self._answer(handler, request, fault, status, payload, headers=headers)

        if body.get("stream"):
            error(400, "stream=true is not supported by ScriptedOpenAIServer; "
                       "send stream=false", "invalid_request_error", "stream_not_supported")
            return
        if not isinstance(body.get("messages"), list):
            error(400, "'messages' must be a list", "invalid_request_error")
            return

        fault = self.faults(request) if self.faults is not None else None
        if fault is not None:
            fault = _as_fault(fault)
        match fault:
            case RateLimited(retry_after=retry_after, message=message):
                seconds = f"{retry_after:g}" if retry_after != int(retry_after) \
                    else str(int(retry_after))
                error(429, message, "requests", "rate_limit_exceeded", fault,
                      {"Retry-After": seconds,
                       "retry-after-ms": str(round(retry_after * 1000))})
                return
            case ServerError(status=status, message=message):
                error(status, message, "server_error" if status >= 500 else
                      "invalid_request_error", None, fault)
                return
            case Malformed(body=raw):
                self._answer(handler, request, fault, 200, raw.encode())
                return
            case Slow(delay=delay):
                if self._stopping.wait(delay):
                    handler.close_connection = True
                    return

        if isinstance(fault, Reply):
            content = fault.content
        else:
            try:
                content = self.responder(request)
            except Exception as exc:  # responder bugs become a visible 500, not a hang
                with self._lock:
                    self._responder_errors.append(exc)
                error(500, f"responder raised {type(exc).__name__}: {exc}", "server_error",
                      "responder_error", fault)
                return
            if not isinstance(content, str | dict):
                error(500, f"responder returned {type(content).__name__}, expected str or dict",
                      "server_error", "responder_error", fault)
                return
        payload = json.dumps(self._completion(request, content)).encode()
        # a reply takes `latency` from receipt, the responder's own time included: a fixed-latency server
        if self.latency and self._stopping.wait(max(0.0, self.latency - (time.monotonic() - request.received_at))):
            handler.close_connection = True
            return
        self._answer(handler, request, fault, 200, payload)

    def _completion(self, request: ChatRequest, content: str | dict[str, Any]) -> dict[str, Any]:
        message = {"role": "assistant", **content} if isinstance(content, dict) \
            else {"role": "assistant", "content": content}
        prompt_tokens = rough_tokens(_prompt_text(request.body))
        spoken = _content_text(message.get("content")) + (json.dumps(message["tool_calls"])
                                                          if message.get("tool_calls") else "")
        completion_tokens = rough_tokens(spoken)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or self.model_id,
            "system_fingerprint": None,
            "choices": [{
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


# --------------------------------------------------------------------------- structured output


def llama_cpp_refuses(request: ChatRequest) -> bool:
    """True for a request llama-cpp-python's server refuses: OpenAI's json_schema response_format."""
    return (request.response_format or {}).get("type") == "json_schema"


# What llama-cpp-python 0.3.x answers to {"type": "json_schema", ...}: its request model only
# knows "text" and "json_object", and the failed validation surfaces as a 500.
LLAMA_CPP_REFUSAL = ServerError(
    500, "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be "
         "'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]")


def needs_json(responder: Responder, unconstrained: Callable[[ChatRequest, str], str]) -> Responder:
    """`responder`'s reply when the request asked for JSON (json_object, with or without a schema,
    or json_schema); `unconstrained(request, reply)` otherwise, e.g. the reply wrapped in prose."""

    def answer(request: ChatRequest) -> str | dict[str, Any]:
        reply = responder(request)
        if request.response_format is None and isinstance(reply, str):
            return unconstrained(request, reply)
        return reply

    return answer
