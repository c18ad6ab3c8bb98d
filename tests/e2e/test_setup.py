"""Set-up that finds its way: the interpreter `make` builds the virtualenv with, and when it rebuilds one.

The interpreters are real ones: the one running the tests (supported: it runs this suite) and, where the
machine has one, an interpreter outside pyproject.toml's requires-python.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import REPO

FIND = REPO / ".ci" / "find-python"
SPEC = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]


def _version(python: str) -> tuple[int, int]:
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True)
    major, minor = out.stdout.split()
    return int(major), int(minor)


def _allowed(version: tuple[int, int]) -> bool:
    """requires-python read independently of the script: >=A.B and <C.D bounds only."""
    low = re.search(r">=\s*(\d+)\.(\d+)", SPEC)
    high = re.search(r"<\s*(\d+)\.(\d+)", SPEC)
    return (not low or version >= (int(low[1]), int(low[2]))) and (not high or version < (int(high[1]), int(high[2])))


def _unsupported() -> str | None:
    """An interpreter on this machine that requires-python excludes, if there is one."""
    names = [f"python3.{minor}" for minor in range(8, 16)]
    found = [shutil.which(n) for n in names] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3")))
    for path in filter(None, found):
        try:
            if not _allowed(_version(path)):
                return path
        except (OSError, ValueError):
            continue
    return None


def _tools(tmp_path: Path) -> Path:
    """A PATH folder with only the shell tools the script needs (no python)."""
    folder = tmp_path / "tools"
    folder.mkdir()
    for tool in ("sed", "dirname"):
        (folder / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    return folder


def find(*args: str, path: str, py: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": path, "PYENV_ROOT": "/nonexistent", "HOME": "/nonexistent", **({"PY": py} if py else {})}
    return subprocess.run(["/bin/sh", str(FIND), *args], env=env, capture_output=True, text=True, timeout=60)


def test_the_running_interpreter_is_supported_and_found_by_name(tmp_path: Path) -> None:
    assert _allowed(sys.version_info[:2])
    tools = _tools(tmp_path)
    (tools / "python3").symlink_to(sys.executable)
    run = find(path=str(tools))
    assert run.returncode == 0, run.stderr
    assert _version(run.stdout.strip()) == sys.version_info[:2]
    assert find("--check", sys.executable, path=str(tools)).returncode == 0


def test_none_supported_says_which_versions_are_needed(tmp_path: Path) -> None:
    tools = _tools(tmp_path)
    run = find(path=str(tools))
    assert run.returncode == 1 and run.stdout == ""
    assert f"utcgen needs Python {SPEC}" in run.stderr and "Interpreters found: none" in run.stderr
    assert "make PY=" in run.stderr


@pytest.mark.skipif(_unsupported() is None, reason="no interpreter outside requires-python on this machine")
def test_an_unsupported_python3_is_passed_over(tmp_path: Path) -> None:
    bad = _unsupported()
    assert bad is not None
    tools = _tools(tmp_path)
    (tools / "python3").symlink_to(bad)
    alone = find(path=str(tools))
    major, minor = _version(bad)
    assert alone.returncode == 1 and f"({major}.{minor}." in alone.stderr  # named with its version
    assert find("--check", bad, path=str(tools)).returncode == 1
    (tools / "python3.11").symlink_to(sys.executable)  # a supported one further down the list
    both = find(path=str(tools), py=bad)
    assert both.returncode == 0 and _version(both.stdout.strip()) == sys.version_info[:2]
    assert f"PY={bad} is not a Python {SPEC}" in both.stderr


def _checkout(tmp_path: Path) -> Path:
    """The files `make install` reads, in a folder of its own."""
    root = tmp_path / "repo"
    (root / ".ci").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", ".ci/find-python"):
        shutil.copy2(REPO / name, root / name)
    return root


def _plan(root: Path) -> str:
    """What `make install` would run (-n: nothing runs but the Makefile's own checks)."""
    # a clean environment for make: run under `make VENV=... test`, MAKEFLAGS would carry that VENV here
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PY", "VENV")}
    run = subprocess.run(["make", "-n", "install"], cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_a_venv_with_a_missing_or_unsupported_interpreter_is_rebuilt(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    bin_ = root / ".venv" / "bin"
    bin_.mkdir(parents=True)
    stamp = root / ".venv" / ".installed"

    (bin_ / "python").symlink_to(sys.executable)  # a venv made by a supported interpreter, installed
    stamp.touch()
    assert "pip install" not in _plan(root) and stamp.exists()

    (bin_ / "python").unlink()
    (bin_ / "python").symlink_to(tmp_path / "gone" / "python3")  # its interpreter was removed
    stamp.touch()
    plan = _plan(root)
    assert not stamp.exists() and "pip install" in plan  # the install recipe runs, and replaces the venv

    if (bad := _unsupported()) is not None:  # made by an unsupported interpreter (python3 was 3.12)
        (bin_ / "python").unlink()
        (bin_ / "python").symlink_to(bad)
        stamp.touch()
        assert "pip install" in _plan(root) and not stamp.exists()
