"""`--skip-invalid` and the warning summary as a user meets them: `utcgen catalog validate|convert`
and `utcgen generate` on a catalog with one broken tool, run as the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import REPO, UTCGEN, generate
from utcgen.pipeline.ingest.reader import read_catalog

pytestmark = pytest.mark.slow


def _utcgen(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([UTCGEN, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def _catalog(tmp_path: Path) -> Path:
    """Eight tools of the shipped catalog, then one whose enum does not fit its type."""
    tools = [t.model_dump(mode="json") for t in read_catalog(REPO / "catalog" / "tools").tools[:8]]
    broken = json.loads(json.dumps(tools[0]))
    broken["name"] = "broken_tool"
    broken["parameters"]["properties"]["level"] = {"type": "integer", "enum": ["high", 2]}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([*tools, broken]))
    return path


def test_validate_blocks_without_the_flag_and_skips_with_it(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    run = _utcgen("catalog", "validate", str(path))
    assert run.returncode == 2 and run.stdout == ""
    err = run.stderr.splitlines()
    assert err[0] == (f"error: {path}: tool #8 'broken_tool': parameters.properties.level.enum: "
                      "value 'high' is not of the declared type integer")
    assert err[1] == "1 tool cannot be imported; --skip-invalid (skip_invalid: true in a config) leaves it out " \
                     "and keeps the other 8"
    run = _utcgen("catalog", "validate", str(path), "--skip-invalid")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 8 tools from {path} (native); 1 broken tool skipped\n"
    assert run.stderr.splitlines() == [
        "skipped 1 broken tool; 8 usable tools kept:",
        f"skipped: {path}: tool #8 'broken_tool': parameters.properties.level.enum: "
        "value 'high' is not of the declared type integer",
    ]


def test_convert_with_skip_invalid_writes_the_usable_tools(tmp_path: Path) -> None:
    out = tmp_path / "fixed.yaml"
    run = _utcgen("catalog", "convert", str(_catalog(tmp_path)), "--out", str(out), "--skip-invalid")
    assert run.returncode == 0, run.stderr
    assert "1 broken tool skipped" in run.stdout
    assert [t.name for t in read_catalog(out).tools][-1] != "broken_tool"
    assert len(read_catalog(out).tools) == 8


def test_generate_skips_the_broken_tool_only_when_asked(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    run = generate(tmp_path, tmp_path / "a", "--catalog", str(path), "--num-dialogues", "1")
    assert run.returncode == 2
    assert "--skip-invalid" in run.stderr and "broken_tool" in run.stderr
    assert not (tmp_path / "a" / "data").exists()
    run = generate(tmp_path, tmp_path / "b", "--catalog", str(path), "--num-dialogues", "1", "--skip-invalid")
    assert run.returncode == 0, run.stderr
    assert "catalog: skipped 1 broken tool; 8 usable tools kept:" in run.stderr
    assert f"catalog: {path}: tool #8 'broken_tool': parameters.properties.level.enum" in run.stderr
