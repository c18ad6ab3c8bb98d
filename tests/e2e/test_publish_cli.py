"""`utcgen publish` run as a user runs it, against things that exist locally (offline mode, a closed port, a
server that never answers, one that answers 401): exit status, one error line, the token never echoed."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN
from tests.support.hub import REPO_ID, TOKEN, AuthFailServer, closed_port, write_dataset
from tests.support.paths import REPO


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "out")


def _cli(tmp: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would. Tests always set HF_HUB_OFFLINE or point HF_ENDPOINT at
    loopback (huggingface_hub's telemetry fetch also goes to HF_ENDPOINT); HF_HOME is a
    throw-away folder so nothing is cached in the real home."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    base["HF_HOME"] = str(tmp / "hf_home")
    return subprocess.run([UTCGEN, "publish", *args], cwd=REPO, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The CLI's final stderr line (warnings such as an empty config may precede it)."""
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.mark.slow
def test_cli_offline_exits_nonzero_with_clear_message(dataset_dir: Path) -> None:
    proc = _cli(dataset_dir.parent, str(dataset_dir), "--repo-id", REPO_ID, env={"HF_HUB_OFFLINE": "1", "HF_TOKEN": TOKEN})
    assert proc.returncode == 3
    assert _error_line(proc).startswith("error: cannot reach the Hugging Face Hub (offline?)")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert TOKEN not in proc.stderr + proc.stdout


@pytest.mark.slow
def test_cli_closed_port_exits_nonzero_quickly(dataset_dir: Path) -> None:
    start = time.monotonic()
    proc = _cli(dataset_dir.parent, str(dataset_dir), "--repo-id", REPO_ID,
                env={"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_TOKEN": TOKEN})
    assert proc.returncode == 3, proc.stderr
    assert _error_line(proc).startswith("error: cannot reach the Hugging Face Hub (offline?)")
    assert TOKEN not in proc.stderr + proc.stdout
    assert time.monotonic() - start < 30


@pytest.mark.slow
def test_cli_connect_timeout_bounds_a_silent_network(dataset_dir: Path) -> None:
    """A listener with a full accept queue drops SYNs, like a firewall: without a connect
    timeout huggingface_hub (timeout=None) would wait for the kernel's ~2 min SYN retries.
    Expect ~5 s: huggingface_hub first spends its own 3 s timeout on a telemetry fetch of
    {HF_ENDPOINT}/api/agent-harnesses, then our 1 s connect timeout fails create_repo."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        try:
            start = time.monotonic()
            proc = _cli(dataset_dir.parent, str(dataset_dir), "--repo-id", REPO_ID, "--connect-timeout", "1",
                        env={"HF_ENDPOINT": f"http://127.0.0.1:{port}"})
            elapsed = time.monotonic() - start
        finally:
            for filler in fillers:
                filler.close()
    assert proc.returncode == 3, proc.stderr
    assert _error_line(proc).startswith("error: cannot reach the Hugging Face Hub (offline?)")
    assert elapsed < 20


@pytest.mark.slow
def test_cli_unauthorised_against_401_server(dataset_dir: Path) -> None:
    with AuthFailServer(401) as server:
        proc = _cli(dataset_dir.parent, str(dataset_dir), "--repo-id", REPO_ID, env={"HF_ENDPOINT": server.url, "HF_TOKEN": TOKEN})
    assert proc.returncode == 3
    assert _error_line(proc).startswith("error: unauthorised: check HF_TOKEN")
    assert TOKEN not in proc.stderr + proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("repo_id", ["noslash", "org/bad--name", "a/b/c"])
def test_cli_malformed_repo_id_exits_2(dataset_dir: Path, repo_id: str) -> None:
    proc = _cli(dataset_dir.parent, str(dataset_dir), "--repo-id", repo_id, env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 2
    assert _error_line(proc).startswith("error: ") and "repo id" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_cli_bad_folder_exits_2(tmp_path: Path) -> None:
    proc = _cli(tmp_path, str(tmp_path / "nope"), "--repo-id", REPO_ID, env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 2 and "does not exist" in proc.stderr
