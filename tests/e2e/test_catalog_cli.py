"""`utcgen catalog validate` run as a user runs it: a subprocess, exit status, stdout/stderr."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.reader import load_catalog

FIXTURES = "tests/fixtures/catalogs"


def utcgen(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [UTCGEN, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def test_validate_ok_file() -> None:
    run = utcgen("catalog", "validate", f"{FIXTURES}/openai_tools.json")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 3 tools from {FIXTURES}/openai_tools.json (openai)\n"
    assert run.stderr == ""


def test_validate_ok_directory_lists_formats() -> None:
    run = utcgen("catalog", "validate", f"{FIXTURES}/mixed_dir")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 5 tools from {FIXTURES}/mixed_dir (native, openai)\n"


def test_validate_ok_single_tool(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text("name: ping\ndescription: Check the service is up.\n")
    run = utcgen("catalog", "validate", str(path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 1 tool from {path} (native)\n"


def test_validate_broken_prints_every_problem_on_its_own_line() -> None:
    path = f"{FIXTURES}/broken_catalog.json"
    with pytest.raises(InputError) as info:
        load_catalog(REPO / path)
    expected = [p.replace(str(REPO / path), path) for p in info.value.problems]
    assert len(expected) == 8

    run = utcgen("catalog", "validate", path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.splitlines() == [f"error: 8 problems in catalog {path}:", *expected]
    assert f"{path}: tool #0 'get_order': parameters.required: 'order_id' is not in properties" in run.stderr


def test_validate_single_problem_is_one_line(tmp_path: Path) -> None:
    run = utcgen("catalog", "validate", "no/such/catalog.json")
    assert run.returncode == 2
    assert run.stderr == "error: no/such/catalog.json: no such file or directory\n"


def test_validate_forced_format(tmp_path: Path) -> None:
    run = utcgen("catalog", "validate", f"{FIXTURES}/openai_tools.json", "--format", "mcp")
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert lines[0] == f"error: 9 problems in catalog {FIXTURES}/openai_tools.json:"
    assert lines[1:] == [
        f"{FIXTURES}/openai_tools.json: tool #{i}: {field}: missing"
        for i in range(3) for field in ("inputSchema", "name", "description")
    ]

    path = tmp_path / "plain.json"
    path.write_text(json.dumps([{"name": "a", "description": "A."}]))
    run = utcgen("catalog", "validate", str(path), "--format", "openai")
    assert (run.returncode, run.stdout) == (0, f"OK: 1 tool from {path} (openai)\n")


def test_bad_usage_exits_2() -> None:
    run = utcgen("catalog", "validate", f"{FIXTURES}/openai_tools.json", "--format", "langchain")
    assert run.returncode == 2
    assert "invalid choice: 'langchain'" in run.stderr
    assert utcgen("catalog").returncode == 2
