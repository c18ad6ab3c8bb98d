"""Runs over real HTTP that meet random faults, two servers behind one model name, a server
that is down, and a run's progress reported per call."""

from __future__ import annotations

import asyncio
import random
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import UTCGEN
from tests.support.openai_server import ChatRequest, Malformed, RateLimited, ScriptedOpenAIServer, ServerError, Slow
from tests.support.paths import REPO
from tests.support.simulator import FaultLog, simulator_config, simulator_responder
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.synthesis.journal import select
from utcgen.pipeline.synthesis.run import Engine

pytestmark = pytest.mark.slow  # real servers, a full engine, a subprocess

TIMEOUT = 1.0


class RandomFaults:
    """10% 429 with Retry-After, 5% 500, 5% slower than the timeout, 5% malformed bodies (seeded)."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest):
        with self.lock:
            x = self.rng.random()
        if x < 0.10:
            return RateLimited(0.2)
        if x < 0.15:
            return ServerError(500)
        if x < 0.20:
            return Slow(TIMEOUT + 0.5)
        if x < 0.25:
            return Malformed
        return None


def test_random_transport_faults_lose_nothing_and_every_retry_is_counted(simulated_gateway: None,
        tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    n = 3
    log = FaultLog(RandomFaults())  # type: ignore[arg-type]
    with ScriptedOpenAIServer(simulator_responder, latency=0.01, faults=log) as srv:
        raw = simulator_config(srv.base_url, num_dialogues=n, out=str(tmp_path / "out"),
                               synthesis={"max_jobs_in_flight": 4},
                               llm={"timeout": TIMEOUT, "backoff_base": 0.05, "backoff_max": 0.3,
                                    "max_retries": 12, "max_in_flight": 8})
        engine = Engine(RunConfig.model_validate(raw), embedder=embedder)
        try:
            records = asyncio.run(engine.run())
            summary = engine.export(records)
            gw = engine.gateway
            retries, reasons, calls = gw.retries, dict(gw.retry_reasons), gw.usage.calls
            [limit] = gw.limits.report()
        finally:
            engine.close()
        requests = srv.requests

    accepted, _, complete = select(records, n)
    assert complete and summary.accepted == n
    ids = [d.id for d in accepted]
    assert len(set(ids)) == n
    fired = dict(log.items())
    assert len(fired) >= 10  # the plan really injected faults
    # Every request the server answered without a fault is one counted call; every faulted one was
    # retried and counted as a retry of its kind. A retry beyond those is a client-side timeout of an
    # attempt the server never saw (on a loaded machine a connection can take longer than TIMEOUT).
    assert calls == len(requests) - len(fired)
    unseen = retries - len(fired)
    assert unseen >= 0 and calls + retries - unseen == len(requests)
    assert reasons.get("rate limited", 0) == sum(isinstance(f, RateLimited) for f in fired.values())
    assert reasons.get("timeout", 0) == sum(isinstance(f, Slow) for f in fired.values()) + unseen
    assert sum(v for k, v in reasons.items() if k.startswith("server error")) == \
        sum(isinstance(f, ServerError | Malformed) or f is Malformed for f in fired.values())
    # Rate limits lowered the adaptive limit at least once, within [1, maximum].
    assert limit["decreases"] >= 1 and 1 <= limit["low"] <= limit["limit"] <= limit["maximum"] == 8


def test_the_same_model_name_on_two_servers_never_shares_a_cached_reply(tmp_path: Path, clean_env: Path) -> None:
    from tests.support.factories import make_persona, make_tool
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.registry import ModelRegistry
    from utcgen.pipeline.llm.requests import GoalRequest

    msgs = [{"role": "user", "content": "Which server are you?"}]
    request = GoalRequest(tool=make_tool(), persona=make_persona())
    replies = []
    with ScriptedOpenAIServer(lambda r: "server A") as a, ScriptedOpenAIServer(lambda r: "server B") as b:
        for srv in (a, b, a, b):
            raw = simulator_config(srv.base_url, llm={"cache": True, "cache_dir": str(tmp_path / "cache")})
            gw = Gateway(ModelRegistry.from_config(RunConfig.model_validate(raw)))
            replies.append(asyncio.run(gw.chat(request, msgs)))
            gw.close()
        assert len(a.requests) == 1 and len(b.requests) == 1  # the second round came from the cache
    assert [r.text for r in replies] == ["server A", "server B", "server A", "server B"]
    assert [r.cached for r in replies] == [False, False, True, True]


def test_a_server_that_is_down_fails_the_command_in_seconds(tmp_path: Path, clean_env: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(simulator_config(url, num_dialogues=2)), encoding="utf-8")
    started = time.monotonic()
    result = subprocess.run([UTCGEN, "generate", "--config", str(config), "--out", str(tmp_path / "out"),
                             "--no-progress"], cwd=REPO, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert f"connection refused at {url}" in result.stderr
    assert "retry" not in result.stderr and "InternalServerError" not in result.stderr
    assert elapsed < 60  # imports included; the probe itself takes milliseconds


def test_progress_moves_with_every_call_before_any_dialogue_ends(tmp_path: Path, clean_env: Path,
                                                                 embedder: Any) -> None:
    config = load_config(None, {"num_dialogues": 2, "out": str(tmp_path / "out")})
    config.synthesis.max_jobs_in_flight = 1
    engine = Engine(config, embedder=embedder)
    seen: list[tuple[int, int]] = []
    try:
        asyncio.run(engine.run(lambda p: seen.append((p.done, p.spent.calls))))
    finally:
        engine.close()
    before_first_job = [calls for jobs, calls in seen if jobs == 0]
    assert len(before_first_job) > 3 and before_first_job == sorted(before_first_job)
    assert max(before_first_job) > 0
