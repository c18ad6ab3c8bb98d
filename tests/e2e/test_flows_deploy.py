"""End to end through a real Prefect server: `make server deploy`, then
`prefect deployment run 'generate-dialogues/default'`, then `make stop`.

Everything runs on a free port with its state (PREFECT_HOME, pid files, logs) in a
temporary folder, and is stopped even when the test fails.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.support.paths import REPO

pytestmark = pytest.mark.slow

PREFECT = str(REPO / ".venv" / "bin" / "prefect")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _kill_group(pidfile: Path) -> None:
    """Last resort after `make stop`: the group of a process it did not stop."""
    try:
        pid = int(pidfile.read_text().strip())
        os.killpg(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


@pytest.fixture
def stack(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], list[str]]]:
    """(environment, make arguments) for a server + worker; torn down afterwards."""
    cache = tmp_path_factory.getbasetemp() / "flows-utcgen-cache"
    cache.mkdir(exist_ok=True)
    state = tmp_path / "state"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MAKE", "MFLAGS"))}
    env.update(PREFECT_HOME=str(state / "prefect"), PREFECT_API_URL=f"http://127.0.0.1:{port}/api",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_WORKER_QUERY_SECONDS="1",
               UTCGEN_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("UTCGEN_MODEL", None)
    make_args = [f"STATE={state}", f"PREFECT_PORT={port}", "-o", "install"]
    try:
        yield env, make_args
    finally:
        subprocess.run(["make", "--no-print-directory", "stop", *make_args], cwd=REPO, env=env,
                       capture_output=True, timeout=60)
        for name in ("worker", "server"):
            _kill_group(state / f"{name}.pid")


def test_deployment_run_writes_a_dataset(stack: tuple[dict[str, str], list[str]], tmp_path: Path) -> None:
    env, make_args = stack
    start = time.monotonic()
    up = subprocess.run(["make", "--no-print-directory", "server", "deploy", *make_args], cwd=REPO, env=env,
                        capture_output=True, text=True, timeout=120)
    state = Path(make_args[0].split("=", 1)[1])
    assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
    for name in ("generate-dialogues/default", "publish-dataset/default", "generate-and-publish/default",
                 "evaluate-model/default"):
        assert f"Deployment '{name}' successfully created" in " ".join(up.stdout.split())
    deployed = time.monotonic()

    out = tmp_path / "dataset"
    run = subprocess.run([PREFECT, "deployment", "run", "generate-dialogues/default", "-p", "num_dialogues=6",
                          "-p", f"out={json.dumps(str(out))}", "--watch", "--watch-timeout", "150"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    logs = "".join((state / f).read_text(errors="replace")[-3000:] for f in ("worker.log",) if (state / f).exists())
    assert run.returncode == 0 and "Completed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:] + logs
    finished = time.monotonic()

    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---", 2)[1])
    assert {c["config_name"] for c in front["configs"]} >= {"dialogues", "sft", "rejected"}
    assert pq.read_table(out / "data" / "sft").num_rows > 0
    assert pq.read_table(out / "data" / "dialogues").num_rows == 6
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["counts"]["accepted"] == 6
    print(f"server+deploy+worker {deployed - start:.1f}s, deployment run {finished - deployed:.1f}s")
