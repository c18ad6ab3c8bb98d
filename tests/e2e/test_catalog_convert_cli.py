"""`utcgen catalog convert` and `utcgen catalog validate` run as a user runs them: exit status, stdout, and
importer warnings on stderr, one line each."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.ingest.reader import read_catalog
from utcgen.pipeline.ingest.writer import write_native


def utcgen(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [UTCGEN, *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def test_convert_command_writes_native_and_reports_warnings(tmp_path: Path) -> None:
    out = tmp_path / "edit" / "store.yaml"
    src = "tests/fixtures/catalogs/store_openapi.yaml"
    run = utcgen("catalog", "convert", src, "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"wrote 10 tools from {src} (openapi) to {out} (native); 3 warnings\n"
    warnings = run.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith(f"warning: {src}: tool #") for w in warnings)
    assert "'uploadFile' (POST /pet/{petId}/uploadImage)" in warnings[0]
    assert "'application/octet-stream' cannot be passed as tool arguments" in warnings[0]
    assert read_catalog(out).tools == read_catalog(REPO / src).tools
    assert [p.name for p in out.parent.iterdir()] == ["store.yaml"]  # no temporary left behind


def test_convert_refuses_an_output_it_cannot_write(tmp_path: Path) -> None:
    run = utcgen("catalog", "convert", "tests/fixtures/catalogs/openai_tools.json", "--out", str(tmp_path / "t.txt"))
    assert run.returncode == 2
    assert run.stderr == (
        f"error: {tmp_path / 't.txt'}: cannot tell how to write '.txt': "
        "name it .json (a list), .jsonl (one tool per line) or .yaml/.yml\n"
    )
    assert not (tmp_path / "t.txt").exists()
    with pytest.raises(InputError, match="cannot tell how to write"):
        write_native([], tmp_path / "tools")


def test_convert_of_a_broken_catalog_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("[]")
    run = utcgen("catalog", "convert", "tests/fixtures/catalogs/broken_catalog.json", "--out", str(out))
    assert run.returncode == 2
    assert run.stderr.startswith("error: 8 problems in catalog tests/fixtures/catalogs/broken_catalog.json:")
    assert out.read_text() == "[]"


def test_validate_summarises_warnings_by_kind() -> None:
    src = "tests/fixtures/catalogs/bfcl_live_cases.json"
    run = utcgen("catalog", "validate", src)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 3 tools from {src} (bfcl); 6 warnings\n"
    lines = run.stderr.splitlines()
    assert lines[0] == "warning: 6 warnings of 3 kinds (--verbose lists each):"
    assert lines[1] == (
        "warning: 3 x a boolean with the string enum ... (BFCL style) is read as a string enum (e.g. "
        "tool #0 'weather.get_forecast' parameters.properties.include_alerts.type; "
        "tool #1 'restaurant.search' parameters.properties.has_parking.type; "
        "tool #2 'calendar.add_event' parameters.properties.reminder.type)"
    )
    assert len(lines) == 4


def test_validate_verbose_prints_each_warning_on_stderr_then_ok() -> None:
    src = "tests/fixtures/catalogs/bfcl_live_cases.json"
    run = utcgen("catalog", "validate", src, "--verbose")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"OK: 3 tools from {src} (bfcl); 6 warnings\n"
    lines = run.stderr.splitlines()
    expected = [f"warning: {w}".replace(str(REPO / src), src) for w in read_catalog(REPO / src).warnings]
    assert lines == expected
    assert lines[1] == (
        f"warning: {src}: tool #0 'weather.get_forecast' (line 1, entry 'live_simple_0-0-0'): "
        "entry 'live_simple_3-1-1' (line 4) defines 'weather.get_forecast' differently "
        "('description' and 'parameters.properties.unit.enum' differ); kept this definition, skipped that one"
    )
