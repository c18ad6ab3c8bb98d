"""A server that echoes the request's Authorization header in a 400 error (some proxies do): the key
reaches no file of the output folder (journal, parquet, card, stats.json) and not stderr."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from tests.support.openai_server import ChatRequest, ScriptedOpenAIServer, ServerError
from tests.support.paths import REPO
from tests.support.simulator import (
    API_KEY_ENV,
    SPOOL_ENV,
    recording_command,
    role_is,
    simulator_config,
    simulator_responder,
    spool_env,
)

pytestmark = pytest.mark.slow  # a server and a subprocess

# Neither sk- nor hf_ nor long after "key": only the configured variable's value marks it as a key.
KEY = "Zr9vQ2mW8xK4pL7nT3bY6cH1"


class EchoesAuthorization:
    """The first two relevancy-judge calls get a 400 whose message carries the Authorization header,
    once with its "Bearer" and once bare."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.echoed = 0

    def __call__(self, request: ChatRequest) -> ServerError | None:
        if not role_is("relevancy")(request):
            return None
        with self.lock:
            if self.echoed >= 2:
                return None
            self.echoed += 1
            header = request.headers.get("authorization", "")
            bare = header.split()[-1] if header else ""
        return ServerError(400, f"invalid request (proxy debug: Authorization: {header}; token {bare})"
                                if self.echoed == 1 else f"bad request for key {bare}")


def test_an_echoed_key_reaches_no_file_and_not_stderr(tmp_path: Path) -> None:
    out = tmp_path / "out"
    echo = EchoesAuthorization()
    with ScriptedOpenAIServer(simulator_responder, latency=0.01, faults=echo) as srv:
        config = tmp_path / "run.yaml"
        config.write_text(yaml.safe_dump(simulator_config(
            srv.base_url, num_dialogues=3, out=str(out), synthesis={"max_jobs_in_flight": 2},
            llm={"timeout": 5, "backoff_base": 0.1, "backoff_max": 0.5})), encoding="utf-8")
        env = {**os.environ, API_KEY_ENV: KEY, "UTCGEN_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", **spool_env(tmp_path / "requests.jsonl")}
        env.pop("UTCGEN_MODEL", None)
        env.pop("UTCGEN_API_BASE", None)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(SPOOL_ENV, str(tmp_path / "requests.jsonl"))
            result = subprocess.run(
                recording_command("generate", "--config", str(config), "--out", str(out), "--no-progress"),
                cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        sent = [r.headers.get("authorization") for r in srv.requests]
    assert result.returncode == 0, result.stderr[-3000:]
    assert echo.echoed == 2 and f"Bearer {KEY}" in sent  # the key was really sent, and really echoed back
    assert KEY not in result.stdout and KEY not in result.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(p.parent.name == "journal" for p in files)
    leaked = [p for p in files if KEY.encode() in p.read_bytes()]
    assert leaked == []
    # the rejections were recorded, with the key masked: the journal and the card name the reasons
    journal_text = "".join(p.read_text(encoding="utf-8") for p in (out / "journal").glob("job-*.json"))
    assert "Authorization: Bearer ***" in journal_text and "bad request for key ***" in journal_text
