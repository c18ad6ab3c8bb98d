"""The generate flow on a real Dask cluster: a `dask scheduler` and two `dask worker` processes.

A `LocalCluster` forks its workers from the flow's own process, so they share its imports and
hide a task pickled under a name only that process can import (a flow loaded from a file
path is pickled under the file's bare name). Here the scheduler and the workers are separate
processes started from another folder, as on a cluster: they can only unpickle a task by a
module name the installed package provides. The flow is loaded the way a deployment's worker
loads it (its `prefect.yaml` entrypoint), runs with `dask_address`, and must give the same rows
as a local run; each worker's own log must show jobs it ran, and together the journal's jobs.
The run's paths are relative to the flow's folder, which the workers do not share as theirs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import yaml

from tests.support.paths import REPO
from tests.support.runs import lines_subset, rows

pytestmark = pytest.mark.slow

DASK = str(Path(sys.executable).with_name("dask"))

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from prefect.flows import load_flow_from_entrypoint

    entrypoint, address = sys.argv[1:3]
    flow = load_flow_from_entrypoint(entrypoint)
    common = dict(config="run.yaml", num_dialogues=6, seed=5, batch_size=2)  # paths relative to this folder
    local = flow(out="local", task_runner="local", **common)
    dask = flow(out="dask", task_runner="dask", dask_address=address, **common)
    print("RESULT " + json.dumps({"local": local, "dask": dask}))
    """
)

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate_entrypoint() -> str:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    entries = [d["entrypoint"] for d in spec["deployments"] if d["entrypoint"].endswith(":generate_dialogues")]
    assert len(entries) == 1, entries
    return entries[0]


class Processes:
    """Processes this test started, each in a session of its own, stopped with their children at the end."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.started: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []

    def start(self, args: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
        cwd.mkdir(parents=True, exist_ok=True)
        handle = log.open("wb")
        proc = subprocess.Popen(args, cwd=cwd, env=self.env, stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.started.append((proc, handle))
        return proc

    def stop(self) -> None:
        for proc, _ in reversed(self.started):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc, handle in reversed(self.started):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            handle.close()


@pytest.fixture
def env(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.getbasetemp() / "flows-utcgen-cache"
    cache.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DASK_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               UTCGEN_CACHE_DIR=str(cache), LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")
    env.pop("UTCGEN_MODEL", None)
    env.pop("UTCGEN_API_BASE", None)
    return env


@pytest.fixture
def cluster(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[str, list[Path]]]:
    """A scheduler on a free port of 127.0.0.1 and two single-threaded workers, each in its own folder."""
    from distributed import Client

    procs = Processes(env)
    address = f"tcp://127.0.0.1:{free_port()}"
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    try:
        procs.start([DASK, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                     "--no-dashboard"], tmp_path / "scheduler", tmp_path / "scheduler.log")
        for log in logs:
            procs.start([DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--name", log.stem,
                         "--no-dashboard", "--local-directory", str(tmp_path / log.stem)],
                        tmp_path / log.stem, log)
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, logs
    finally:
        procs.stop()


def jobs_in(log: Path) -> set[int]:
    """Job numbers a worker's log says it finished (the batch task logs one line per job)."""
    return {int(m) for m in re.findall(r"job (\d+) \([^)]*\): (?:accepted|rejected) after", log.read_text(errors="replace"))}


def test_generate_flow_runs_on_a_separate_dask_scheduler_and_workers(
    tmp_path: Path, env: dict[str, str], cluster: tuple[str, list[Path]]
) -> None:
    from distributed import Client

    address, logs = cluster
    here = tmp_path / "flow"
    here.mkdir()
    lines_subset(here, ("finance", "procurement"))  # few texts to embed: the test stays short
    (here / "run.yaml").write_text("catalog: tools.json\npersonas: personas.jsonl\nllm:\n  cache: false\n",
                                   encoding="utf-8")
    local_out, dask_out = here / "local", here / "dask"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, generate_entrypoint(), address],
                          cwd=here, env=env, capture_output=True, text=True, timeout=300)
    worker_logs = "\n".join(log.read_text(errors="replace") for log in logs)
    assert proc.returncode == 0, proc.stderr[-4000:] + "\n--- workers ---\n" + worker_logs[-4000:]
    result: dict[str, Any] = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert result["local"]["accepted"] == result["dask"]["accepted"] == 6
    assert "Creating a new Dask cluster" not in proc.stderr  # the given scheduler ran them
    assert "ModuleNotFoundError" not in worker_logs
    assert "Starting temporary server" not in worker_logs  # the workers reported to the flow's server

    # every journaled job was run by a worker process, and both workers had a share
    ran = [jobs_in(log) for log in logs]
    journaled = {int(p.stem.split("-")[1]) for p in (dask_out / "journal").glob("job-*.json")}
    assert all(ran), [sorted(r) for r in ran]
    assert not ran[0] & ran[1]
    assert ran[0] | ran[1] == journaled and len(journaled) >= 6

    def probe() -> dict[str, Any]:  # defined here, so it is pickled by value: the workers cannot import tests
        return {"cwd": os.getcwd(), "flow_module": "utcgen.flows.generate_dialogues" in sys.modules,
                "bare_module": "generate_dialogues" in sys.modules}

    with Client(address, timeout=30) as client:
        seen = list(client.run(probe).values())
    assert len(seen) == 2 and all(s["flow_module"] and not s["bare_module"] for s in seen)
    assert all(Path(s["cwd"]).name in ("worker-a", "worker-b") for s in seen)  # not the flow's folder

    local_rows, dask_rows = rows(local_out, "dialogues"), rows(dask_out, "dialogues")
    assert len({r["id"] for r in local_rows}) == 6
    assert local_rows == dask_rows
    for config_name in ("sft", "rejected"):
        assert rows(local_out, config_name) == rows(dask_out, config_name)
